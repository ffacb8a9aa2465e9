// cuDNN for ral_conv on CUDA, loaded with dlopen like the driver and cuBLAS: $RAL_CUDNN_PATH,
// else libcudnn.so.9, libcudnn.so.8, libcudnn.so. cuDNN's C API is declared here (the few types,
// values and functions RAL uses), so building needs no cuDNN header; the fake cuDNN of the tests
// (tests/cuda/fake_cudnn.cc) checks every declaration against cudnn.h where the toolkit has it.
// Calls are queued on a RAL stream through the driver's CudaQueueService::enqueue, so they wait
// behind semaphore waits like every other operation.
// The library is process-wide and immutable once loaded (one load attempt per process, its
// failure remembered); a handle serves one stream at a time.
#ifndef RAL_KERNELS_CONV_CUDNN_H_
#define RAL_KERNELS_CONV_CUDNN_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "ral/driver.h"
#include "ral/driver_services.h"
#include "ral/status.h"

namespace ral::kernels::cuda {

inline constexpr char kCudnnPathEnv[] = "RAL_CUDNN_PATH";

// cuDNN's C types and the enum values RAL passes (cudnn_graph.h, cudnn_ops.h, cudnn_cnn.h of
// cuDNN 8 and 9; status codes differ between them, see CudnnLibrary::check).
namespace cudnn {
struct Context;
struct TensorStruct;
struct FilterStruct;
struct ConvolutionStruct;
struct ActivationStruct;
struct OpTensorStruct;
using Handle = Context*;
using TensorDesc = TensorStruct*;
using FilterDesc = FilterStruct*;
using ConvDesc = ConvolutionStruct*;
using ActivationDesc = ActivationStruct*;
using OpTensorDesc = OpTensorStruct*;
using Status = int;  // cudnnStatus_t

inline constexpr Status kSuccess = 0;
inline constexpr int kDataFloat = 0;                    // CUDNN_DATA_FLOAT
inline constexpr int kTensorNchw = 0;                   // CUDNN_TENSOR_NCHW (filters: KCRS)
inline constexpr int kTensorNhwc = 1;                   // CUDNN_TENSOR_NHWC (filters: KRSC)
inline constexpr int kCrossCorrelation = 1;             // CUDNN_CROSS_CORRELATION
inline constexpr int kTensorOpMath = 1;                 // CUDNN_TENSOR_OP_MATH
inline constexpr int kTensorOpMathAllowConversion = 2;  // CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION
inline constexpr int kFmaMath = 3;                      // CUDNN_FMA_MATH: no TF32
inline constexpr int kNotPropagateNan = 0;              // CUDNN_NOT_PROPAGATE_NAN
inline constexpr int kActivationSigmoid = 0;            // CUDNN_ACTIVATION_SIGMOID
inline constexpr int kActivationRelu = 1;               // CUDNN_ACTIVATION_RELU
inline constexpr int kActivationClippedRelu = 3;        // CUDNN_ACTIVATION_CLIPPED_RELU
inline constexpr int kActivationSwish = 6;              // CUDNN_ACTIVATION_SWISH
inline constexpr int kOpTensorMin = 2;                  // CUDNN_OP_TENSOR_MIN
inline constexpr int kOpTensorMax = 3;                  // CUDNN_OP_TENSOR_MAX
inline constexpr int kFwdAlgoCount = 8;                 // CUDNN_CONVOLUTION_FWD_ALGO_COUNT
inline constexpr int kBwdDataAlgoCount = 6;             // CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT

// cudnnConvolutionFwdAlgoPerf_t and cudnnConvolutionBwdDataAlgoPerf_t (the same layout).
struct AlgoPerf {
  int algo;
  Status status;
  float time;
  size_t memory;
  int determinism;
  int math_type;
  int reserved[3];
};
}  // namespace cudnn

// Every cuDNN function RAL calls, by its C name. Required ones must all resolve for the library
// to load; an optional one that is missing leaves its pointer null (what needs it is then
// UNSUPPORTED, naming it).
#define RAL_CUDNN_REQUIRED_SYMBOLS(X)             \
  X(cudnnGetVersion)                              \
  X(cudnnGetErrorString)                          \
  X(cudnnCreate)                                  \
  X(cudnnDestroy)                                 \
  X(cudnnSetStream)                               \
  X(cudnnCreateTensorDescriptor)                  \
  X(cudnnDestroyTensorDescriptor)                 \
  X(cudnnSetTensorNdDescriptor)                   \
  X(cudnnCreateFilterDescriptor)                  \
  X(cudnnDestroyFilterDescriptor)                 \
  X(cudnnSetFilterNdDescriptor)                   \
  X(cudnnCreateConvolutionDescriptor)             \
  X(cudnnDestroyConvolutionDescriptor)            \
  X(cudnnSetConvolutionNdDescriptor)              \
  X(cudnnSetConvolutionGroupCount)                \
  X(cudnnSetConvolutionMathType)                  \
  X(cudnnGetConvolutionNdForwardOutputDim)        \
  X(cudnnCreateActivationDescriptor)              \
  X(cudnnDestroyActivationDescriptor)             \
  X(cudnnSetActivationDescriptor)                 \
  X(cudnnCreateOpTensorDescriptor)                \
  X(cudnnDestroyOpTensorDescriptor)               \
  X(cudnnSetOpTensorDescriptor)                   \
  X(cudnnGetConvolutionForwardAlgorithm_v7)       \
  X(cudnnGetConvolutionForwardWorkspaceSize)      \
  X(cudnnConvolutionForward)                      \
  X(cudnnConvolutionBiasActivationForward)        \
  X(cudnnGetConvolutionBackwardDataAlgorithm_v7)  \
  X(cudnnGetConvolutionBackwardDataWorkspaceSize) \
  X(cudnnConvolutionBackwardData)                 \
  X(cudnnAddTensor)                               \
  X(cudnnActivationForward)                       \
  X(cudnnOpTensor)                                \
  X(cudnnSetTensor)                               \
  X(cudnnTransformTensor)
// cuDNN 8.2 and later: silu (CUDNN_ACTIVATION_SWISH with beta 1); cuDNN 9: the text of the last
// error, added to statuses.
#define RAL_CUDNN_OPTIONAL_SYMBOLS(X) \
  X(cudnnSetActivationDescriptorSwishBeta) X(cudnnGetLastErrorString)

struct CudnnSymbols {
  using S = cudnn::Status;
  using H = cudnn::Handle;
  using T = cudnn::TensorDesc;
  using F = cudnn::FilterDesc;
  using C = cudnn::ConvDesc;
  using A = cudnn::ActivationDesc;
  using O = cudnn::OpTensorDesc;
  size_t (*cudnnGetVersion)() = nullptr;
  const char* (*cudnnGetErrorString)(S) = nullptr;
  S (*cudnnCreate)(H*) = nullptr;
  S (*cudnnDestroy)(H) = nullptr;
  S (*cudnnSetStream)(H, void*) = nullptr;
  S (*cudnnCreateTensorDescriptor)(T*) = nullptr;
  S (*cudnnDestroyTensorDescriptor)(T) = nullptr;
  S (*cudnnSetTensorNdDescriptor)(T, int, int, const int*, const int*) = nullptr;
  S (*cudnnCreateFilterDescriptor)(F*) = nullptr;
  S (*cudnnDestroyFilterDescriptor)(F) = nullptr;
  S (*cudnnSetFilterNdDescriptor)(F, int, int, int, const int*) = nullptr;
  S (*cudnnCreateConvolutionDescriptor)(C*) = nullptr;
  S (*cudnnDestroyConvolutionDescriptor)(C) = nullptr;
  S(*cudnnSetConvolutionNdDescriptor)
  (C, int, const int*, const int*, const int*, int, int) = nullptr;
  S (*cudnnSetConvolutionGroupCount)(C, int) = nullptr;
  S (*cudnnSetConvolutionMathType)(C, int) = nullptr;
  S (*cudnnGetConvolutionNdForwardOutputDim)(C, T, F, int, int*) = nullptr;
  S (*cudnnCreateActivationDescriptor)(A*) = nullptr;
  S (*cudnnDestroyActivationDescriptor)(A) = nullptr;
  S (*cudnnSetActivationDescriptor)(A, int, int, double) = nullptr;
  S (*cudnnCreateOpTensorDescriptor)(O*) = nullptr;
  S (*cudnnDestroyOpTensorDescriptor)(O) = nullptr;
  S (*cudnnSetOpTensorDescriptor)(O, int, int, int) = nullptr;
  S (*cudnnGetConvolutionForwardAlgorithm_v7)(H, T, F, C, T, int, int*, cudnn::AlgoPerf*) = nullptr;
  S (*cudnnGetConvolutionForwardWorkspaceSize)(H, T, F, C, T, int, size_t*) = nullptr;
  S(*cudnnConvolutionForward)
  (H, const void*, T, const void*, F, const void*, C, int, void*, size_t, const void*, T,
   void*) = nullptr;
  S(*cudnnConvolutionBiasActivationForward)
  (H, const void*, T, const void*, F, const void*, C, int, void*, size_t, const void*, T,
   const void*, T, const void*, A, T, void*) = nullptr;
  S(*cudnnGetConvolutionBackwardDataAlgorithm_v7)
  (H, F, T, C, T, int, int*, cudnn::AlgoPerf*) = nullptr;
  S (*cudnnGetConvolutionBackwardDataWorkspaceSize)(H, F, T, C, T, int, size_t*) = nullptr;
  S(*cudnnConvolutionBackwardData)
  (H, const void*, F, const void*, T, const void*, C, int, void*, size_t, const void*, T,
   void*) = nullptr;
  S (*cudnnAddTensor)(H, const void*, T, const void*, const void*, T, void*) = nullptr;
  S (*cudnnActivationForward)(H, A, const void*, T, const void*, const void*, T, void*) = nullptr;
  S(*cudnnOpTensor)
  (H, O, const void*, T, const void*, const void*, T, const void*, const void*, T, void*) = nullptr;
  S (*cudnnSetTensor)(H, T, void*, const void*) = nullptr;
  S (*cudnnTransformTensor)(H, const void*, T, const void*, const void*, T, void*) = nullptr;
  S (*cudnnSetActivationDescriptorSwishBeta)(A, double) = nullptr;
  void (*cudnnGetLastErrorString)(char*, size_t) = nullptr;
};

class CudnnLibrary {
 public:
  // Loaded once per process; UNAVAILABLE, naming what was tried and how to fix it, when missing,
  // older than cuDNN 8 or without one of the required symbols.
  static StatusOr<const CudnnLibrary*> get();
  const CudnnSymbols& symbols() const { return *symbols_; }
  // The name or path the library was loaded from.
  const std::string& path() const { return path_; }
  // cudnnGetVersion() as text, e.g. "9.1.0".
  const std::string& versionString() const { return version_string_; }
  // OK for CUDNN_STATUS_SUCCESS, else a status naming `call` and cuDNN's text for the code.
  Status check(cudnn::Status status, const char* call) const;
  // CUDNN_STATUS_NOT_SUPPORTED or (cuDNN 9) one of its refinements.
  bool notSupported(cudnn::Status status) const {
    return major_ >= 9 ? status / 1000 == 3 : status == 9;
  }

 private:
  CudnnLibrary() = default;
  std::string path_;
  std::string version_string_;
  int major_ = 0;
  std::unique_ptr<CudnnSymbols> symbols_;
};

// One cuDNN handle, for one RAL stream at a time (kernels keep one per Context and stream via
// Context::getOrCreate).
class CudnnHandle {
 public:
  // On the device of `queue` (a CUDA driver's service), which must outlive the handle.
  static StatusOr<std::unique_ptr<CudnnHandle>> create(CudaQueueService& queue);
  ~CudnnHandle();
  CudnnHandle(const CudnnHandle&) = delete;
  CudnnHandle& operator=(const CudnnHandle&) = delete;

  // Queues `issue` on `stream` (nullptr: the driver's default stream): it runs now or later on
  // another thread with the handle bound to the stream's CUstream, so it must own what it uses.
  Status enqueue(Stream* stream,
                 std::function<Status(const CudnnLibrary&, cudnn::Handle)> issue) const;
  // The raw handle, for host-side queries (algorithm heuristics) made with the device current.
  cudnn::Handle raw() const { return handle_; }
  CudaQueueService& queue() const { return *queue_; }
  const CudnnLibrary& library() const { return *lib_; }

 private:
  CudnnHandle(CudaQueueService* queue, const CudnnLibrary* lib, cudnn::Handle handle)
      : queue_(queue), lib_(lib), handle_(handle) {}
  CudaQueueService* const queue_;
  const CudnnLibrary* const lib_;
  const cudnn::Handle handle_;
};

}  // namespace ral::kernels::cuda

#endif  // RAL_KERNELS_CONV_CUDNN_H_
