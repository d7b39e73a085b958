#include "mlaspec/core/tensor.h"

#include <cstdlib>
#include <cstring>
#include <sstream>

#if defined(MLASPEC_WITH_CUDA)
#include <cuda_runtime.h>
#endif

namespace mlaspec {

bool built_with_cuda() {
#if defined(MLASPEC_WITH_CUDA)
  return true;
#else
  return false;
#endif
}

namespace {

void init_shape(std::initializer_list<int64_t> shape, int* ndim,
                std::array<int64_t, kMaxDims>* out) {
  if (shape.size() > static_cast<size_t>(kMaxDims)) {
    throw Error(invalid_argument("tensor rank " + std::to_string(shape.size()) +
                                 " exceeds the maximum " + std::to_string(kMaxDims)));
  }
  *ndim = static_cast<int>(shape.size());
  int i = 0;
  for (int64_t s : shape) {
    if (s < 0) {
      throw Error(invalid_argument("tensor dimension " + std::to_string(i) + " has negative size " +
                                   std::to_string(s)));
    }
    (*out)[i++] = s;
  }
}

std::string shape_string(const int64_t* shape, int ndim) {
  std::ostringstream os;
  os << "[";
  for (int i = 0; i < ndim; ++i) os << (i ? ", " : "") << shape[i];
  os << "]";
  return os.str();
}

}  // namespace

TensorView::TensorView(void* data, DType dtype, std::initializer_list<int64_t> shape, Device device)
    : data_(data), dtype_(dtype), device_(device) {
  init_shape(shape, &ndim_, &shape_);
  int64_t stride = 1;
  for (int i = ndim_ - 1; i >= 0; --i) {
    strides_[i] = stride;
    stride *= shape_[i];
  }
}

TensorView::TensorView(void* data, DType dtype, std::initializer_list<int64_t> shape,
                       std::initializer_list<int64_t> strides, Device device)
    : data_(data), dtype_(dtype), device_(device) {
  init_shape(shape, &ndim_, &shape_);
  if (strides.size() != shape.size()) {
    throw Error(invalid_argument("tensor has " + std::to_string(shape.size()) + " dims but " +
                                 std::to_string(strides.size()) + " strides"));
  }
  int i = 0;
  for (int64_t s : strides) strides_[i++] = s;
}

int TensorView::check_dim(int dim) const {
  if (dim < 0 || dim >= ndim_) {
    throw Error(out_of_range("dimension " + std::to_string(dim) + " out of range for a rank-" +
                             std::to_string(ndim_) + " tensor"));
  }
  return dim;
}

int64_t TensorView::numel() const {
  if (ndim_ == 0) return data_ ? 1 : 0;
  int64_t n = 1;
  for (int i = 0; i < ndim_; ++i) n *= shape_[i];
  return n;
}

bool TensorView::is_contiguous() const {
  int64_t stride = 1;
  for (int i = ndim_ - 1; i >= 0; --i) {
    if (shape_[i] != 1 && strides_[i] != stride) return false;
    stride *= shape_[i];
  }
  return true;
}

int64_t TensorView::span_bytes() const {
  if (data_ == nullptr || numel() == 0) return 0;
  int64_t last = 0;
  for (int i = 0; i < ndim_; ++i) last += (shape_[i] - 1) * strides_[i];
  return (last + 1) * dtype_size(dtype_);
}

std::string TensorView::describe() const {
  return shape_string(shape_.data(), ndim_) + " " + std::string(dtype_name(dtype_)) + " " +
         std::string(device_name(device_));
}

int64_t TensorView::offset(std::initializer_list<int64_t> index) const {
  if (static_cast<int>(index.size()) != ndim_) {
    throw Error(invalid_argument("index has " + std::to_string(index.size()) +
                                 " coordinates for a rank-" + std::to_string(ndim_) + " tensor"));
  }
  int64_t off = 0;
  int i = 0;
  for (int64_t v : index) {
    if (v < 0 || v >= shape_[i]) {
      throw Error(out_of_range("index " + std::to_string(v) + " out of range [0, " +
                               std::to_string(shape_[i]) + ") in dimension " + std::to_string(i) +
                               " of " + describe()));
    }
    off += v * strides_[i];
    ++i;
  }
  return off;
}

void TensorView::check_host_access(size_t elem_size) const {
  if (device_ != Device::kCPU) {
    throw Error(invalid_argument("host access to a " + std::string(device_name(device_)) +
                                 " tensor " + describe()));
  }
  if (data_ == nullptr) throw Error(invalid_argument("access to an empty tensor view"));
  if (elem_size != static_cast<size_t>(dtype_size(dtype_))) {
    throw Error(invalid_argument("element size " + std::to_string(elem_size) + " does not match " +
                                 std::string(dtype_name(dtype_)) + " (" +
                                 std::to_string(dtype_size(dtype_)) + " bytes)"));
  }
}

Status TensorView::expect(std::string_view what, DType dtype, std::initializer_list<int64_t> shape,
                          Device device) const {
  const std::string name(what);
  if (data_ == nullptr) return invalid_argument(name + " is missing (empty view)");
  if (dtype_ != dtype) {
    return invalid_argument(name + " has dtype " + std::string(dtype_name(dtype_)) + ", expected " +
                            std::string(dtype_name(dtype)));
  }
  if (device_ != device) {
    return invalid_argument(name + " is on " + std::string(device_name(device_)) + ", expected " +
                            std::string(device_name(device)));
  }
  if (ndim_ != static_cast<int>(shape.size())) {
    return invalid_argument(name + " has rank " + std::to_string(ndim_) + " " +
                            shape_string(shape_.data(), ndim_) + ", expected rank " +
                            std::to_string(shape.size()));
  }
  int i = 0;
  for (int64_t s : shape) {
    if (s >= 0 && shape_[i] != s) {
      return invalid_argument(name + " dimension " + std::to_string(i) + " is " +
                              std::to_string(shape_[i]) + ", expected " + std::to_string(s) +
                              " (shape " + shape_string(shape_.data(), ndim_) + ")");
    }
    ++i;
  }
  if (ndim_ > 0 && shape_[ndim_ - 1] > 1 && strides_[ndim_ - 1] != 1) {
    return invalid_argument(name + " last dimension has stride " +
                            std::to_string(strides_[ndim_ - 1]) + ", expected 1 (contiguous)");
  }
  for (int d = 0; d < ndim_; ++d) {
    if (strides_[d] < 0) {
      return invalid_argument(name + " dimension " + std::to_string(d) + " has negative stride " +
                              std::to_string(strides_[d]));
    }
  }
  return Status::Ok();
}

// ---- Buffer -------------------------------------------------------------------------------------

namespace {
constexpr size_t kAlign = 256;
size_t round_up(size_t n) {
  return (n + kAlign - 1) / kAlign * kAlign;
}

#if defined(MLASPEC_WITH_CUDA)
Status cuda_status(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return Status::Ok();
  return internal_error(std::string(what) + " failed: " + cudaGetErrorString(err));
}
#endif
}  // namespace

Result<Buffer> Buffer::allocate(size_t bytes, Device device) {
  Buffer b;
  b.device_ = device;
  b.bytes_ = bytes;
  if (bytes == 0) return b;
  if (device == Device::kCPU) {
    b.data_ = std::aligned_alloc(kAlign, round_up(bytes));
    if (b.data_ == nullptr) {
      return resource_exhausted("host allocation of " + std::to_string(bytes) + " bytes failed");
    }
    return b;
  }
#if defined(MLASPEC_WITH_CUDA)
  void* p = nullptr;
  const cudaError_t err = cudaMalloc(&p, bytes);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    b.bytes_ = 0;
    return resource_exhausted("cudaMalloc of " + std::to_string(bytes) +
                              " bytes failed: " + cudaGetErrorString(err));
  }
  b.data_ = p;
  return b;
#else
  b.bytes_ = 0;
  return unsupported("device memory requested but mlaspec was built without CUDA");
#endif
}

Buffer::Buffer(size_t bytes, Device device) {
  Result<Buffer> r = allocate(bytes, device);
  throw_if_error(r.status());
  *this = std::move(r.value());
}

Buffer::~Buffer() {
  release();
}

Buffer::Buffer(Buffer&& other) noexcept
    : data_(other.data_), bytes_(other.bytes_), device_(other.device_) {
  other.data_ = nullptr;
  other.bytes_ = 0;
}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = other.data_;
    bytes_ = other.bytes_;
    device_ = other.device_;
    other.data_ = nullptr;
    other.bytes_ = 0;
  }
  return *this;
}

void Buffer::release() {
  if (data_ == nullptr) return;
  if (device_ == Device::kCPU) {
    std::free(data_);
  } else {
#if defined(MLASPEC_WITH_CUDA)
    cudaFree(data_);
#endif
  }
  data_ = nullptr;
  bytes_ = 0;
}

TensorView Buffer::view(DType dtype, std::initializer_list<int64_t> shape) const {
  TensorView v(data_, dtype, shape, device_);
  const int64_t need = v.numel() * dtype_size(dtype);
  if (static_cast<size_t>(need) > bytes_) {
    throw Error(out_of_range("view " + v.describe() + " needs " + std::to_string(need) +
                             " bytes but the buffer holds " + std::to_string(bytes_)));
  }
  return v;
}

Status Buffer::copy_from_host(const void* src, size_t bytes, size_t dst_offset) {
  if (dst_offset + bytes > bytes_) {
    return out_of_range("copy of " + std::to_string(bytes) + " bytes at offset " +
                        std::to_string(dst_offset) + " exceeds the buffer's " +
                        std::to_string(bytes_) + " bytes");
  }
  if (bytes == 0) return Status::Ok();
  char* dst = static_cast<char*>(data_) + dst_offset;
  if (device_ == Device::kCPU) {
    std::memcpy(dst, src, bytes);
    return Status::Ok();
  }
#if defined(MLASPEC_WITH_CUDA)
  return cuda_status(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy H2D");
#else
  return unsupported("built without CUDA");
#endif
}

Status Buffer::copy_to_host(void* dst, size_t bytes, size_t src_offset) const {
  if (src_offset + bytes > bytes_) {
    return out_of_range("copy of " + std::to_string(bytes) + " bytes at offset " +
                        std::to_string(src_offset) + " exceeds the buffer's " +
                        std::to_string(bytes_) + " bytes");
  }
  if (bytes == 0) return Status::Ok();
  const char* src = static_cast<const char*>(data_) + src_offset;
  if (device_ == Device::kCPU) {
    std::memcpy(dst, src, bytes);
    return Status::Ok();
  }
#if defined(MLASPEC_WITH_CUDA)
  return cuda_status(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
#else
  return unsupported("built without CUDA");
#endif
}

Status Buffer::fill_bytes(uint8_t value) {
  if (bytes_ == 0) return Status::Ok();
  if (device_ == Device::kCPU) {
    std::memset(data_, value, bytes_);
    return Status::Ok();
  }
#if defined(MLASPEC_WITH_CUDA)
  return cuda_status(cudaMemset(data_, value, bytes_), "cudaMemset");
#else
  return unsupported("built without CUDA");
#endif
}

}  // namespace mlaspec
