// Safetensors reader: mmap, a defensive header parser, sharded checkpoints, dtype conversion.
#include "mlaspec/model/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "mlaspec/core/dtype.h"
#include "mlaspec/core/parallel.h"

namespace mlaspec::model {
namespace {

using nlohmann::json;

// A header larger than this is refused before parsing (the largest real ones are a few MB).
constexpr uint64_t kMaxHeaderBytes = uint64_t{100} << 20;
constexpr int kMaxRank = 8;

struct DTypeEntry {
  std::string_view name;
  StDType dtype;
  int size;
};
constexpr DTypeEntry kDTypes[] = {
    {"BF16", StDType::kBF16, 2},      {"F16", StDType::kF16, 2},   {"F32", StDType::kF32, 4},
    {"F8_E4M3", StDType::kF8E4M3, 1}, {"F64", StDType::kF64, 8},   {"I8", StDType::kI8, 1},
    {"U8", StDType::kU8, 1},          {"I16", StDType::kI16, 2},   {"I32", StDType::kI32, 4},
    {"I64", StDType::kI64, 8},        {"BOOL", StDType::kBool, 1}, {"F8_E5M2", StDType::kF8E5M2, 1},
    {"U16", StDType::kU16, 2},        {"U32", StDType::kU32, 4},   {"U64", StDType::kU64, 8},
};

bool lookup_dtype(std::string_view name, StDType* out) {
  for (const auto& e : kDTypes) {
    if (e.name == name) {
      *out = e.dtype;
      return true;
    }
  }
  return false;
}

std::string known_dtypes() {
  std::string s;
  for (const auto& e : kDTypes) s += (s.empty() ? "" : ", ") + std::string(e.name);
  return s;
}

// IEEE binary16 -> binary32, exact.
float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  float f;
  if (exp == 0) {
    f = std::ldexp(static_cast<float>(mant), -24);  // zero or subnormal
    return sign ? -f : f;
  }
  uint32_t bits;
  if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);  // inf / NaN
  } else {
    bits = sign | ((exp + 112u) << 23) | (mant << 13);
  }
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

Status bad(const std::string& file, const std::string& what) {
  return data_loss(file + ": " + what);
}

// Reads a non-negative integer that fits in int64 from a JSON number.
bool as_index(const json& v, uint64_t* out) {
  if (v.is_number_unsigned()) {
    *out = v.get<uint64_t>();
    return *out <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  }
  if (v.is_number_integer()) {
    const int64_t i = v.get<int64_t>();
    if (i < 0) return false;
    *out = static_cast<uint64_t>(i);
    return true;
  }
  return false;
}

}  // namespace

std::string_view st_dtype_name(StDType t) {
  for (const auto& e : kDTypes) {
    if (e.dtype == t) return e.name;
  }
  return "?";
}

int st_dtype_size(StDType t) {
  for (const auto& e : kDTypes) {
    if (e.dtype == t) return e.size;
  }
  return 0;
}

bool st_dtype_is_float_weight(StDType t) {
  return t == StDType::kBF16 || t == StDType::kF16 || t == StDType::kF32 || t == StDType::kF8E4M3;
}

std::string TensorInfo::describe() const {
  std::ostringstream os;
  os << name << " [";
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  os << "] " << st_dtype_name(dtype) << " in " << file;
  return os.str();
}

struct SafetensorsFile::Mapping {
  void* addr = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (addr != nullptr && size > 0) munmap(addr, size);
  }
};

Result<SafetensorsFile> SafetensorsFile::parse(std::span<const uint8_t> data, std::string name) {
  const uint64_t size = data.size();
  if (size < 8) {
    return bad(name, "file of " + std::to_string(size) +
                         " bytes is too short for the 8-byte header length");
  }
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | data[static_cast<size_t>(i)];
  if (header_len > size - 8) {
    return bad(name, "header length " + std::to_string(header_len) + " exceeds the " +
                         std::to_string(size - 8) + " bytes after it (truncated file?)");
  }
  if (header_len > kMaxHeaderBytes) {
    return bad(name, "header length " + std::to_string(header_len) + " exceeds the limit of " +
                         std::to_string(kMaxHeaderBytes) + " bytes");
  }
  const char* hdr = reinterpret_cast<const char*>(data.data() + 8);
  const json root = json::parse(hdr, hdr + header_len, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return bad(name, "header is not valid JSON");
  if (!root.is_object()) return bad(name, "header is not a JSON object");

  SafetensorsFile f;
  f.name_ = std::move(name);
  const uint8_t* base = data.data() + 8 + header_len;
  const uint64_t data_size = size - 8 - header_len;
  struct Range {
    uint64_t begin, end;
    size_t index;
  };
  std::vector<Range> ranges;
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string& key = it.key();
    const json& v = it.value();
    if (key == "__metadata__") {
      if (!v.is_object()) return bad(f.name_, "__metadata__ is not an object");
      for (auto m = v.begin(); m != v.end(); ++m) {
        if (!m.value().is_string()) {
          return bad(f.name_, "__metadata__ value of \"" + m.key() + "\" is not a string");
        }
        f.metadata_[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    const std::string where = "tensor \"" + key + "\"";
    if (!v.is_object()) return bad(f.name_, where + ": entry is not an object");
    if (!v.contains("dtype") || !v["dtype"].is_string()) {
      return bad(f.name_, where + ": dtype missing or not a string");
    }
    TensorInfo t;
    t.name = key;
    t.file = f.name_;
    const std::string dtype = v["dtype"].get<std::string>();
    if (!lookup_dtype(dtype, &t.dtype)) {
      return bad(f.name_,
                 where + ": unknown dtype \"" + dtype + "\" (known: " + known_dtypes() + ")");
    }
    if (!v.contains("shape") || !v["shape"].is_array()) {
      return bad(f.name_, where + ": shape missing or not an array");
    }
    if (v["shape"].size() > kMaxRank) {
      return bad(f.name_, where + ": rank " + std::to_string(v["shape"].size()) +
                              " exceeds the maximum " + std::to_string(kMaxRank));
    }
    uint64_t numel = 1;
    for (const json& d : v["shape"]) {
      uint64_t dim = 0;
      if (!as_index(d, &dim)) {
        return bad(f.name_, where + ": shape entry " + d.dump() + " is not a non-negative integer");
      }
      if (dim != 0 && numel > std::numeric_limits<uint64_t>::max() / 8 / dim) {
        return bad(f.name_, where + ": shape " + v["shape"].dump() + " overflows");
      }
      numel *= dim;
      t.shape.push_back(static_cast<int64_t>(dim));
    }
    if (!v.contains("data_offsets") || !v["data_offsets"].is_array() ||
        v["data_offsets"].size() != 2) {
      return bad(f.name_, where + ": data_offsets missing or not [begin, end]");
    }
    uint64_t begin = 0, end = 0;
    if (!as_index(v["data_offsets"][0], &begin) || !as_index(v["data_offsets"][1], &end)) {
      return bad(f.name_, where + ": data_offsets " + v["data_offsets"].dump() +
                              " are not non-negative integers");
    }
    if (begin > end || end > data_size) {
      return bad(f.name_, where + ": data_offsets [" + std::to_string(begin) + ", " +
                              std::to_string(end) + "] do not lie within the " +
                              std::to_string(data_size) + "-byte data section");
    }
    const uint64_t bytes = numel * static_cast<uint64_t>(st_dtype_size(t.dtype));
    if (end - begin != bytes) {
      return bad(f.name_, where + ": data_offsets span " + std::to_string(end - begin) +
                              " bytes but shape " + v["shape"].dump() + " of " + dtype + " needs " +
                              std::to_string(bytes));
    }
    t.numel = static_cast<int64_t>(numel);
    t.bytes = std::span<const uint8_t>(base + begin, static_cast<size_t>(bytes));
    ranges.push_back({begin, end, f.tensors_.size()});
    f.tensors_.push_back(std::move(t));
  }
  std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  for (size_t i = 1; i < ranges.size(); ++i) {
    if (ranges[i].begin < ranges[i - 1].end) {
      return bad(f.name_, "tensor \"" + f.tensors_[ranges[i].index].name + "\" overlaps tensor \"" +
                              f.tensors_[ranges[i - 1].index].name + "\" in the data section");
    }
  }
  return f;
}

Result<SafetensorsFile> SafetensorsFile::open(const std::filesystem::path& path) {
  const std::string name = path.string();
  const int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return not_found(name + ": cannot open (" + std::strerror(errno) + ")");
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return not_found(name + ": not a regular file");
  }
  auto mapping = std::make_shared<Mapping>();
  mapping->size = static_cast<size_t>(st.st_size);
  if (mapping->size > 0) {
    mapping->addr = mmap(nullptr, mapping->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (mapping->addr == MAP_FAILED) {
      mapping->addr = nullptr;
      ::close(fd);
      return resource_exhausted(name + ": mmap failed (" + std::strerror(errno) + ")");
    }
  }
  ::close(fd);
  const std::span<const uint8_t> bytes(static_cast<const uint8_t*>(mapping->addr), mapping->size);
  Result<SafetensorsFile> f = parse(bytes, name);
  if (!f.ok()) return f.status();
  f->mapping_ = std::move(mapping);
  return f;
}

const TensorInfo* Checkpoint::find(std::string_view name) const {
  const auto it = index_.find(name);
  return it == index_.end() ? nullptr : it->second;
}

Result<Checkpoint> Checkpoint::open(const std::filesystem::path& dir) {
  Checkpoint c;
  c.dir_ = dir;
  const std::filesystem::path index_path = dir / "model.safetensors.index.json";
  const std::filesystem::path single = dir / "model.safetensors";
  std::error_code ec;
  std::map<std::string, std::string> weight_map;  // tensor -> shard file
  std::vector<std::string> shard_names;
  if (std::filesystem::exists(index_path, ec)) {
    std::ifstream in(index_path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    const std::string s = text.str();
    const json root = json::parse(s, nullptr, /*allow_exceptions=*/false);
    const std::string iname = index_path.string();
    if (root.is_discarded() || !root.is_object()) return bad(iname, "not a JSON object");
    if (!root.contains("weight_map") || !root["weight_map"].is_object()) {
      return bad(iname, "weight_map missing or not an object");
    }
    std::set<std::string> seen;
    for (auto it = root["weight_map"].begin(); it != root["weight_map"].end(); ++it) {
      if (!it.value().is_string()) {
        return bad(iname, "weight_map entry of \"" + it.key() + "\" is not a file name");
      }
      const std::string file = it.value().get<std::string>();
      // Shards live beside the index: no paths.
      if (file.empty() || file.find('/') != std::string::npos || file == "." || file == "..") {
        return bad(iname, "weight_map entry of \"" + it.key() + "\" names \"" + file +
                              "\", not a file in the checkpoint directory");
      }
      weight_map[it.key()] = file;
      if (seen.insert(file).second) shard_names.push_back(file);
    }
    std::sort(shard_names.begin(), shard_names.end());
  } else if (std::filesystem::exists(single, ec)) {
    shard_names.push_back("model.safetensors");
  } else {
    return not_found(dir.string() +
                     ": neither model.safetensors nor model.safetensors.index.json found");
  }

  for (const std::string& shard : shard_names) {
    Result<SafetensorsFile> f = SafetensorsFile::open(dir / shard);
    if (!f.ok()) return f.status();
    c.files_.push_back(std::move(*f));
  }
  for (const SafetensorsFile& f : c.files_) {
    const std::string shard = std::filesystem::path(f.name()).filename().string();
    for (const TensorInfo& t : f.tensors()) {
      if (!weight_map.empty()) {
        const auto it = weight_map.find(t.name);
        if (it == weight_map.end() || it->second != shard) {
          return data_loss(f.name() + ": tensor \"" + t.name + "\" is not listed for this shard " +
                           "in model.safetensors.index.json" +
                           (it == weight_map.end() ? "" : " (listed in " + it->second + ")"));
        }
      }
      if (!c.index_.emplace(t.name, &t).second) {
        return data_loss(f.name() + ": tensor \"" + t.name + "\" appears in two files");
      }
    }
  }
  for (const auto& [tensor, file] : weight_map) {
    if (c.index_.find(tensor) == c.index_.end()) {
      return data_loss((dir / file).string() + ": tensor \"" + tensor +
                       "\" listed in model.safetensors.index.json is missing from it");
    }
  }
  return c;
}

void convert_range_to_f32(const TensorInfo& t, int64_t begin, int64_t end, float* o) {
  const uint8_t* p = t.bytes.data();
  // The two 16-bit dtypes: read each value's bytes (unaligned-safe), then widen.
  const auto widen16 = [&](float (*widen)(uint16_t)) {
    for (int64_t i = begin; i < end; ++i) {
      uint16_t v;
      std::memcpy(&v, p + 2 * i, 2);
      o[i - begin] = widen(v);
    }
  };
  switch (t.dtype) {
    case StDType::kF32:
      std::memcpy(o, p + 4 * begin, static_cast<size_t>(end - begin) * 4);
      return;
    case StDType::kBF16:
      return widen16(bf16_bits_to_float);
    case StDType::kF16:
      return widen16(half_to_float);
    case StDType::kF8E4M3:
      for (int64_t i = begin; i < end; ++i) o[i - begin] = fp8e4m3_bits_to_float(p[i]);
      return;
    default:
      return;  // not a weight dtype: convert_to_f32 refuses it before any range is asked
  }
}

Status convert_to_f32(const TensorInfo& t, std::span<float> out) {
  if (static_cast<int64_t>(out.size()) != t.numel) {
    return invalid_argument("convert " + t.describe() + ": output holds " +
                            std::to_string(out.size()) + " values, the tensor " +
                            std::to_string(t.numel));
  }
  if (!st_dtype_is_float_weight(t.dtype)) {
    return unsupported(t.describe() + ": dtype " + std::string(st_dtype_name(t.dtype)) +
                       " is not a weight dtype; supported: BF16, F16, F32, F8_E4M3");
  }
  const int64_t n = t.numel;
  // An empty tensor has no data to read (and its spans may hold null pointers).
  if (n == 0) return Status::Ok();
  // Blocks of 1 Mi values in parallel: a 16 B-parameter checkpoint has 16 Gi values to widen, ~40 s
  // on one core (the real-size check's load took 52 s for 31 GB from the page cache).
  constexpr int64_t kBlock = int64_t{1} << 20;
  float* o = out.data();
  if (n <= kBlock) {
    convert_range_to_f32(t, 0, n, o);
  } else {
    parallel_for(0, (n + kBlock - 1) / kBlock, [&](int64_t b) {
      const int64_t begin = b * kBlock;
      convert_range_to_f32(t, begin, std::min(n, begin + kBlock), o + begin);
    });
  }
  return Status::Ok();
}

}  // namespace mlaspec::model
