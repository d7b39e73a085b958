// Helpers for the model tests: the golden checkpoints of tests/data/models and a small session
// (model + pool + per-request pages) to run forwards on.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "mlaspec/kvcache/pool.h"
#include "mlaspec/model/model.h"
#include "mlaspec/model/safetensors.h"

namespace mlaspec::model::testing {

inline std::filesystem::path models_dir() {
  return std::filesystem::path(MLASPEC_TEST_DATA_DIR) / "models";
}

// Every golden checkpoint written by python/golden/make_model_goldens.py.
inline const std::vector<std::string>& golden_models() {
  static const std::vector<std::string> names = {"v3_qlora_moe_yarn", "v3_plain_q_tied",
                                                 "v2_lite_greedy", "v2_group_limited_yarn",
                                                 "kimi_k2_fp8"};
  return names;
}

struct GoldenPrompt {
  std::vector<int32_t> prompt, continuation;
  std::vector<int32_t> sequence() const {
    std::vector<int32_t> s = prompt;
    s.insert(s.end(), continuation.begin(), continuation.end());
    return s;
  }
  std::vector<float> logits_hf, logits_bf16;  // [S, vocab]
  std::vector<float> hidden_hf, hidden_bf16;  // [L, S, hidden]
};

struct Golden {
  std::vector<GoldenPrompt> prompts;
};

inline std::vector<float> tensor_f32(const SafetensorsFile& f, const std::string& name) {
  for (const TensorInfo& t : f.tensors()) {
    if (t.name == name) {
      std::vector<float> v(static_cast<size_t>(t.numel));
      throw_if_error(convert_to_f32(t, v));
      return v;
    }
  }
  throw Error(not_found("golden tensor " + name + " missing in " + f.name()));
}

inline Golden load_golden(const std::string& name) {
  const std::filesystem::path dir = models_dir() / name;
  std::ifstream in(dir / "goldens.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  SafetensorsFile f = SafetensorsFile::open(dir / "goldens.safetensors").value();
  Golden g;
  int k = 0;
  for (const auto& p : j["prompts"]) {
    GoldenPrompt gp;
    gp.prompt = p["prompt"].get<std::vector<int32_t>>();
    gp.continuation = p["continuation"].get<std::vector<int32_t>>();
    const std::string pre = "p" + std::to_string(k++) + ".";
    gp.logits_hf = tensor_f32(f, pre + "logits_hf");
    gp.logits_bf16 = tensor_f32(f, pre + "logits_bf16");
    gp.hidden_hf = tensor_f32(f, pre + "hidden_hf");
    gp.hidden_bf16 = tensor_f32(f, pre + "hidden_bf16");
    g.prompts.push_back(std::move(gp));
  }
  return g;
}

// A model (loaded once per name and kept for the test binary's lifetime) and a pool.
inline Model& cached_model(const std::string& name) {
  static std::map<std::string, std::unique_ptr<Model>> models;
  auto& slot = models[name];
  if (!slot) {
    LoadOptions o;
    o.attention_policy = "cpu_reference";
    slot = std::make_unique<Model>(Model::load(models_dir() / name, o).value());
  }
  return *slot;
}

// Requests with fixed, disjoint page ranges in one pool.
class Session {
 public:
  static constexpr int kPageSize = 16;
  static constexpr int kPagesPerRequest = 8;  // 128 tokens per request

  Session(Model& model, int max_requests, DType dtype = DType::kBF16,
          std::vector<float> scales = {})
      : model_(model),
        pool_(kv::KvPool::create(model.kv_pool_spec(max_requests * kPagesPerRequest, kPageSize,
                                                    dtype, std::move(scales)))
                  .value()) {
    for (int r = 0; r < max_requests; ++r) {
      // Pages in a scrambled order, so a request's tokens are not contiguous in the pool.
      std::vector<int32_t> pages(kPagesPerRequest);
      for (int j = 0; j < kPagesPerRequest; ++j) {
        pages[static_cast<size_t>(j)] = (kPagesPerRequest - 1 - j) * max_requests + r;
      }
      pages_.push_back(pages);
      lengths_.push_back(0);
    }
  }

  struct Step {
    int request;
    std::vector<int32_t> tokens;
    LogitsMode logits;
  };

  // Runs one forward of several requests; each continues at its current length.
  ForwardOutput run(const std::vector<Step>& steps, const ForwardOptions& options = {}) {
    std::vector<std::vector<int32_t>> positions;
    std::vector<ForwardRequest> batch;
    positions.reserve(steps.size());
    for (const Step& s : steps) {
      std::vector<int32_t> pos(s.tokens.size());
      std::iota(pos.begin(), pos.end(), lengths_[static_cast<size_t>(s.request)]);
      positions.push_back(std::move(pos));
    }
    for (size_t i = 0; i < steps.size(); ++i) {
      batch.push_back(ForwardRequest{steps[i].tokens, positions[i],
                                     pages_[static_cast<size_t>(steps[i].request)],
                                     steps[i].logits});
    }
    ForwardOutput out = model_.forward(batch, pool_, options).value();
    for (const Step& s : steps) {
      lengths_[static_cast<size_t>(s.request)] += static_cast<int32_t>(s.tokens.size());
    }
    return out;
  }
  // One request alone.
  RequestOutput run_one(int request, std::vector<int32_t> tokens, LogitsMode mode,
                        const ForwardOptions& options = {}) {
    return std::move(run({Step{request, std::move(tokens), mode}}, options).requests[0]);
  }

  kv::KvPool& pool() { return pool_; }
  const std::vector<int32_t>& pages(int r) const { return pages_[static_cast<size_t>(r)]; }
  int32_t length(int r) const { return lengths_[static_cast<size_t>(r)]; }

 private:
  Model& model_;
  kv::KvPool pool_;
  std::vector<std::vector<int32_t>> pages_;
  std::vector<int32_t> lengths_;
};

// ---- writing safetensors files (for the loader's tests)
// ------------------------------------------

struct StEntry {
  std::string dtype;  // "BF16", "F32", ... (written as given, valid or not)
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};
using StTensors = std::map<std::string, StEntry>;

// A well-formed file: header with data_offsets in name order, then the data.
inline std::vector<uint8_t> safetensors_bytes(const StTensors& tensors) {
  nlohmann::json header = nlohmann::json::object();
  uint64_t offset = 0;
  std::vector<uint8_t> data;
  for (const auto& [name, e] : tensors) {
    header[name] = {{"dtype", e.dtype},
                    {"shape", e.shape},
                    {"data_offsets", {offset, offset + e.bytes.size()}}};
    offset += e.bytes.size();
    data.insert(data.end(), e.bytes.begin(), e.bytes.end());
  }
  const std::string h = header.dump();
  // Sized once and filled in place (inserting into the 8-byte prefix trips GCC 12's bounds
  // warnings).
  std::vector<uint8_t> out(8 + h.size() + data.size());
  for (int i = 0; i < 8; ++i)
    out[static_cast<size_t>(i)] = static_cast<uint8_t>(h.size() >> (8 * i));
  std::copy(h.begin(), h.end(), out.begin() + 8);
  std::copy(data.begin(), data.end(), out.begin() + 8 + static_cast<std::ptrdiff_t>(h.size()));
  return out;
}

inline void write_file(const std::filesystem::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

// Every tensor of a golden checkpoint's (single) file, as entries to edit.
inline StTensors read_tensors(const std::filesystem::path& file) {
  SafetensorsFile f = SafetensorsFile::open(file).value();
  StTensors t;
  for (const TensorInfo& info : f.tensors()) {
    t[info.name] = StEntry{std::string(st_dtype_name(info.dtype)), info.shape,
                           std::vector<uint8_t>(info.bytes.begin(), info.bytes.end())};
  }
  return t;
}

// A scratch directory removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = "mlaspec_model_test_" + std::string(info->test_suite_name()) + "_" +
                       info->name() + "_" + std::to_string(::getpid());
    std::replace(name.begin(), name.end(), '/', '_');
    path_ = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline float max_abs(const float* a, size_t n) {
  float m = 0.0f;
  for (size_t i = 0; i < n; ++i) m = std::max(m, std::fabs(a[i]));
  return m;
}

inline float max_abs_diff(const float* a, const float* b, size_t n) {
  float m = 0.0f;
  for (size_t i = 0; i < n; ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

inline int argmax(const float* row, int n) {
  return static_cast<int>(std::max_element(row, row + n) - row);
}

inline float top2_gap(const float* row, int n) {
  float a = -INFINITY, b = -INFINITY;
  for (int i = 0; i < n; ++i) {
    if (row[i] > a) {
      b = a;
      a = row[i];
    } else if (row[i] > b) {
      b = row[i];
    }
  }
  return a - b;
}

}  // namespace mlaspec::model::testing
