// Reads named f32-convertible tensors of a checkpoint with their expected shapes, counting what it
// took: take_tensor() is the lookup every weight loader shares (the target's in weights.cc too),
// TensorLoader the drafters' (DFlash / DSpark) loader around it. Internal to src/model.
#pragma once

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "mlaspec/core/status.h"
#include "mlaspec/model/safetensors.h"
#include "mlaspec/model/weights.h"

namespace mlaspec::model {

// A drafter's config.json (`path` is the file or its directory): its text, and the file's name for
// errors.
inline Status read_config_file(const std::filesystem::path& path, std::string* text,
                               std::string* file_name) {
  std::filesystem::path file = path;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) file = path / "config.json";
  std::ifstream in(file, std::ios::binary);
  if (!in) return not_found(file.string() + ": cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  *text = ss.str();
  *file_name = file.string();
  return Status::Ok();
}

inline std::string shape_text(std::initializer_list<int64_t> shape) {
  std::string s = "[";
  for (int64_t d : shape) s += (s.size() > 1 ? ", " : "") + std::to_string(d);
  return s + "]";
}

// The lookup every weight loader shares: `name` must exist, have a float dtype (F8_E4M3 only when
// `allow_fp8`) and exactly `shape`; it is then marked used (for the leftover check).
inline Status take_tensor(const Checkpoint& ckpt, const std::string& name,
                          std::initializer_list<int64_t> shape, bool allow_fp8,
                          std::set<std::string, std::less<>>& used, const TensorInfo** out) {
  const TensorInfo* t = ckpt.find(name);
  if (t == nullptr) {
    return not_found(ckpt.dir().string() + ": tensor \"" + name + "\" " + shape_text(shape) +
                     " is missing");
  }
  const bool fp8 = t->dtype == StDType::kF8E4M3;
  if (!st_dtype_is_float_weight(t->dtype) || (fp8 && !allow_fp8)) {
    return unsupported(t->describe() + ": dtype " + std::string(st_dtype_name(t->dtype)) +
                       " is unsupported; supported: BF16, F16, F32" +
                       (allow_fp8 ? ", F8_E4M3" : ""));
  }
  bool same = t->shape.size() == shape.size();
  size_t i = 0;
  for (int64_t d : shape) same = same && t->shape[i++] == d;
  if (!same) {
    return data_loss(t->describe() + ": shape does not match the config's " + shape_text(shape));
  }
  used.insert(name);
  *out = t;
  return Status::Ok();
}

class TensorLoader {
 public:
  explicit TensorLoader(const Checkpoint& ckpt) : ckpt_(ckpt) {}

  Status vector(const std::string& name, int64_t len, std::vector<float>* out) {
    const TensorInfo* t = nullptr;
    MLASPEC_RETURN_IF_ERROR(take(name, {len}, &t));
    out->resize(static_cast<size_t>(len));
    return convert_to_f32(*t, *out);
  }
  Status matrix(const std::string& name, int64_t rows, int64_t cols, Matrix* out) {
    const TensorInfo* t = nullptr;
    MLASPEC_RETURN_IF_ERROR(take(name, {rows, cols}, &t));
    out->rows = static_cast<int>(rows);
    out->cols = static_cast<int>(cols);
    out->data.resize(static_cast<size_t>(rows * cols));
    return convert_to_f32(*t, out->data);
  }
  // Every tensor taken, except names starting with one of `ignored` (another loader's).
  Status check_leftovers(std::string_view what,
                         std::initializer_list<std::string_view> ignored = {}) const {
    for (const auto& [name, t] : ckpt_.tensors()) {
      bool skip = used_.count(name) != 0;
      for (std::string_view pre : ignored) skip = skip || name.starts_with(pre);
      if (!skip) {
        return data_loss(t->describe() + ": unexpected tensor (not part of " + std::string(what) +
                         " with this config.json)");
      }
    }
    return Status::Ok();
  }
  int64_t parameters = 0;

 private:
  Status take(const std::string& name, std::initializer_list<int64_t> shape,
              const TensorInfo** out) {
    MLASPEC_RETURN_IF_ERROR(take_tensor(ckpt_, name, shape, /*allow_fp8=*/false, used_, out));
    parameters += (*out)->numel;
    return Status::Ok();
  }

  const Checkpoint& ckpt_;
  std::set<std::string, std::less<>> used_;
};

}  // namespace mlaspec::model
