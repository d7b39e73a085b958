// Safetensors files: one file (mmap'ed) or a sharded checkpoint (model.safetensors.index.json).
//
// Format: 8-byte little-endian header length N, N bytes of JSON header, then the data. The header
// maps tensor names to {"dtype", "shape", "data_offsets": [begin, end]} (offsets relative to the
// data section) plus an optional "__metadata__" object of strings. These files come from the
// internet: every header field is checked (JSON well-formed, types, shape product and byte size
// without overflow, offsets inside the file, no two tensors overlapping) and a violation is a
// kDataLoss error naming the file and the tensor, never a crash.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mlaspec/core/status.h"

namespace mlaspec::model {

// The safetensors dtypes; only the first four convert to f32 (the weights mlaspec loads).
// clang-format off
enum class StDType : uint8_t {
  kBF16, kF16, kF32, kF8E4M3,
  kF64, kI8, kU8, kI16, kI32, kI64, kBool, kF8E5M2, kU16, kU32, kU64,
};
// clang-format on
std::string_view st_dtype_name(StDType t);  // "BF16", "F8_E4M3", ...
int st_dtype_size(StDType t);
bool st_dtype_is_float_weight(StDType t);  // BF16, F16, F32, F8_E4M3

struct TensorInfo {
  std::string name;
  StDType dtype = StDType::kF32;
  std::vector<int64_t> shape;
  int64_t numel = 1;
  std::span<const uint8_t> bytes;  // the tensor's data inside the mapped file
  std::string file;                // the file holding it (for errors)

  std::string describe() const;  // "model.norm.weight [64] BF16 in model.safetensors"
};

// One parsed file. The bytes stay owned by whoever owns the mapping (a SafetensorsFile keeps its
// mmap alive); parse() over caller memory leaves ownership with the caller.
class SafetensorsFile {
 public:
  // Maps `path` read-only and parses its header.
  static Result<SafetensorsFile> open(const std::filesystem::path& path);
  // Parses `data` (the whole file); `name` appears in errors. `data` must outlive the result.
  static Result<SafetensorsFile> parse(std::span<const uint8_t> data, std::string name);

  SafetensorsFile(SafetensorsFile&&) noexcept = default;
  SafetensorsFile& operator=(SafetensorsFile&&) noexcept = default;

  const std::string& name() const { return name_; }
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

 private:
  SafetensorsFile() = default;
  struct Mapping;
  std::shared_ptr<Mapping> mapping_;
  std::string name_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, std::string> metadata_;
};

// Every tensor of a checkpoint directory: model.safetensors, or the shards listed by
// model.safetensors.index.json (each name must live in the shard the index says, and every shard
// file must exist and parse).
class Checkpoint {
 public:
  static Result<Checkpoint> open(const std::filesystem::path& dir);

  // nullptr when absent.
  const TensorInfo* find(std::string_view name) const;
  const std::map<std::string, const TensorInfo*, std::less<>>& tensors() const { return index_; }
  const std::vector<SafetensorsFile>& files() const { return files_; }
  const std::filesystem::path& dir() const { return dir_; }

  Checkpoint(Checkpoint&&) noexcept = default;
  Checkpoint& operator=(Checkpoint&&) noexcept = default;

 private:
  Checkpoint() = default;
  std::filesystem::path dir_;
  std::vector<SafetensorsFile> files_;
  std::map<std::string, const TensorInfo*, std::less<>> index_;
};

// Converts a BF16/F16/F32/F8_E4M3 tensor to f32 (out has numel entries). Other dtypes: kUnsupported
// naming the tensor.
Status convert_to_f32(const TensorInfo& t, std::span<float> out);
// Values [begin, end) of `t` (row-major) widened to f32 into out[0, end - begin), on the calling
// thread: convert_to_f32's arithmetic for a part of the tensor (a deferred Matrix's rows). The
// dtype must be a weight dtype and the range inside the tensor (callers checked both at load).
void convert_range_to_f32(const TensorInfo& t, int64_t begin, int64_t end, float* out);

}  // namespace mlaspec::model
