// TensorView: a non-owning view (pointer, dtype, shape, strides in elements, device).
// Buffer: an owning allocation in host memory or, when built with CUDA, device memory.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "mlaspec/core/dtype.h"
#include "mlaspec/core/status.h"

namespace mlaspec {

enum class Device : uint8_t { kCPU, kCUDA };
constexpr std::string_view device_name(Device d) {
  return d == Device::kCPU ? "cpu" : "cuda";
}

// True when mlaspec was built with CUDA support (the CUDA runtime may still find no GPU).
bool built_with_cuda();

inline constexpr int kMaxDims = 6;

class TensorView {
 public:
  TensorView() = default;
  // Contiguous (row-major) view.
  TensorView(void* data, DType dtype, std::initializer_list<int64_t> shape,
             Device device = Device::kCPU);
  // View with explicit strides (in elements).
  TensorView(void* data, DType dtype, std::initializer_list<int64_t> shape,
             std::initializer_list<int64_t> strides, Device device = Device::kCPU);

  void* data() const { return data_; }
  template <typename T>
  T* data_as() const {
    return static_cast<T*>(data_);
  }
  DType dtype() const { return dtype_; }
  Device device() const { return device_; }
  int ndim() const { return ndim_; }
  int64_t size(int dim) const { return shape_[check_dim(dim)]; }
  int64_t stride(int dim) const { return strides_[check_dim(dim)]; }
  int64_t numel() const;
  bool empty() const { return data_ == nullptr; }
  bool is_contiguous() const;
  // Bytes spanned from data() to one past the last element (0 for an empty view).
  int64_t span_bytes() const;

  // "[2, 8, 16, 576] bf16 cuda"
  std::string describe() const;

  // Checked element offset (in elements): throws Error on rank or index out of range.
  int64_t offset(std::initializer_list<int64_t> index) const;

  // Checked host access; throws Error if the view is on the device, the dtype does not match T,
  // or an index is out of range.
  template <typename T>
  T& at(std::initializer_list<int64_t> index) const {
    check_host_access(sizeof(T));
    return data_as<T>()[offset(index)];
  }

  // Validation helper for API edges: checks dtype, rank, exact shape (entries < 0 are wildcards),
  // device and contiguity of the last dimension; the message names `what`.
  Status expect(std::string_view what, DType dtype, std::initializer_list<int64_t> shape,
                Device device) const;

 private:
  int check_dim(int dim) const;
  void check_host_access(size_t elem_size) const;

  void* data_ = nullptr;
  DType dtype_ = DType::kF32;
  Device device_ = Device::kCPU;
  int ndim_ = 0;
  std::array<int64_t, kMaxDims> shape_{};
  std::array<int64_t, kMaxDims> strides_{};
};

// Owning, 256-byte aligned allocation. Move-only.
class Buffer {
 public:
  Buffer() = default;
  // Allocates `bytes` on `device`. Throws Error on failure (including Device::kCUDA without CUDA).
  Buffer(size_t bytes, Device device);
  static Result<Buffer> allocate(size_t bytes, Device device);
  ~Buffer();
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  Device device() const { return device_; }

  // Contiguous view of the buffer's start; fails if the shape needs more bytes than it holds.
  TensorView view(DType dtype, std::initializer_list<int64_t> shape) const;

  // Byte copies between buffers/host memory on either device (synchronous).
  Status copy_from_host(const void* src, size_t bytes, size_t dst_offset = 0);
  Status copy_to_host(void* dst, size_t bytes, size_t src_offset = 0) const;
  // Fills every byte with `value` (e.g. a poison pattern).
  Status fill_bytes(uint8_t value);

 private:
  void release();
  void* data_ = nullptr;
  size_t bytes_ = 0;
  Device device_ = Device::kCPU;
};

}  // namespace mlaspec
