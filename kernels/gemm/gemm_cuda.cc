// ral_gemm and ral_batch_gemm for device "cuda" (kernels/gemm/gemm.h has the contract) through
// cuBLAS (dlopen-ed, kernels/blas/cublas.h). f16/bf16 accumulate in f32.
// Row-major and column-major operands (unit stride in either dim) go to cuBLAS as they are; any
// other layout, or an operand that overlaps c, is first copied to a dense temporary. Batches whose
// matrices are evenly spaced become one strided-batched call.
#include <climits>
#include <memory>
#include <type_traits>
#include <vector>

#include "kernels/blas/cublas.h"
#include "kernels/copy/strided_copy.h"
#include "kernels/cuda/cuda_env.h"
#include "kernels/gemm/gemm.h"
#include "ral/context.h"
#include "ral/half.h"
#include "ral/registration.h"

namespace ral::kernels::cuda {
namespace {

template <typename T>
constexpr BlasType blasType() {
  if constexpr (std::is_same_v<T, float>) return BlasType::kF32;
  if constexpr (std::is_same_v<T, double>) return BlasType::kF64;
  if constexpr (std::is_same_v<T, float16>) return BlasType::kF16;
  return BlasType::kBF16;
}

// A matrix as cuBLAS sees it: column-major storage `ptr` with leading dimension `ld`, holding the
// row-major matrix itself (col_major) or its transpose.
struct Operand {
  const void* ptr;
  bool col_major;
  int64_t ld;
};

// Classifies a rows x cols matrix with element strides (rs, cs); false for other layouts.
bool classify(int64_t rows, int64_t cols, int64_t rs, int64_t cs, bool* col_major, int64_t* ld) {
  if (rs < 0 || cs < 0) return false;
  if ((cs == 1 || cols <= 1) && (rows <= 1 || rs >= cols)) {
    *col_major = false;
    *ld = rows <= 1 ? std::max<int64_t>(cols, 1) : std::max<int64_t>(rs, 1);
    return true;
  }
  if ((rs == 1 || rows <= 1) && (cols <= 1 || cs >= rows)) {
    *col_major = true;
    *ld = cols <= 1 ? std::max<int64_t>(rows, 1) : std::max<int64_t>(cs, 1);
    return true;
  }
  return false;
}

struct BlasHandles {
  std::unique_ptr<CublasHandle> handle;
};

StatusOr<CublasHandle*> blasHandle(ExecutionContext* ctx, const CudaEnv& env) {
  // One handle per Context and stream: a handle is bound to one stream at a time.
  RAL_ASSIGN_OR_RETURN(BlasHandles * h,
                       ctx->context()->getOrCreate<BlasHandles>(
                           env.stream, [&]() -> StatusOr<std::unique_ptr<BlasHandles>> {
                             RAL_ASSIGN_OR_RETURN(auto handle, CublasHandle::create(*env.queue));
                             return std::make_unique<BlasHandles>(BlasHandles{std::move(handle)});
                           }));
  return h->handle.get();
}

// A batch of equally laid-out matrices: the element offset of each from `base`.
template <typename T>
struct Batch {
  T* base;
  int64_t rows, cols, rs, cs;
  std::vector<int64_t> offsets;
};

// Evenly spaced offsets (including a single matrix or a broadcast one) give a stride.
bool evenStride(const std::vector<int64_t>& offsets, int64_t* stride) {
  *stride = offsets.size() > 1 ? offsets[1] - offsets[0] : 0;
  for (size_t i = 0; i < offsets.size(); ++i)
    if (offsets[i] != offsets[0] + static_cast<int64_t>(i) * *stride) return false;
  return offsets.empty() || offsets[0] == 0;
}

// Copies every matrix of `b` into a dense row-major temporary and describes that instead.
template <typename T>
Status densify(const KernelEnv& kenv, Batch<T>& b, DeviceScratch& scratch) {
  const int64_t count = static_cast<int64_t>(b.offsets.size());
  const int64_t elems = b.rows * b.cols;
  RAL_RETURN_IF_ERROR(scratch.allocate(sizeof(T) * std::max<int64_t>(1, elems * count)));
  T* dense = reinterpret_cast<T*>(scratch.get());
  const int64_t sizes[2] = {b.rows, b.cols};
  const int64_t src_strides[2] = {b.rs, b.cs}, dst_strides[2] = {b.cols, 1};
  for (int64_t i = 0; i < count; ++i)
    RAL_RETURN_IF_ERROR(stridedCopy(Tag{}, kenv, "ral_gemm", sizeof(T), 2, sizes,
                                    b.base + b.offsets[i], src_strides, dense + i * elems,
                                    dst_strides));
  b.base = dense;
  b.rs = b.cols;
  b.cs = 1;
  for (int64_t i = 0; i < count; ++i) b.offsets[i] = i * elems;
  return Status();
}

// c = op(a) * op(b) for every matrix of the batches (a and b already broadcast to c's batch).
template <typename T>
Status runGemm(ExecutionContext* ctx, Batch<T> a, Batch<T> b, Batch<T> c, bool ta, bool tb,
               int64_t k, bool a_aliases, bool b_aliases) {
  const int64_t m = c.rows, n = c.cols;
  if (m == 0 || n == 0 || c.offsets.empty()) return Status();
  RAL_ASSIGN_OR_RETURN(CudaEnv env, cudaEnv(ctx));
  RAL_ASSIGN_OR_RETURN(KernelEnv kenv, kernelEnv(ctx, DeviceKind::kCuda));
  bool c_col = false;
  int64_t ldc = 0;
  if (!classify(c.rows, c.cols, c.rs, c.cs, &c_col, &ldc))
    return unsupported(
        "ral_gemm: the output needs a unit stride in one dimension on cuda (got "
        "strides ",
        c.rs, ", ", c.cs, ")");
  DeviceScratch a_tmp(env.driver, env.stream), b_tmp(env.driver, env.stream);
  bool a_col = false, b_col = false;
  int64_t lda = 0, ldb = 0;
  if (a_aliases || !classify(a.rows, a.cols, a.rs, a.cs, &a_col, &lda)) {
    RAL_RETURN_IF_ERROR(densify(kenv, a, a_tmp));
    classify(a.rows, a.cols, a.rs, a.cs, &a_col, &lda);
  }
  if (b_aliases || !classify(b.rows, b.cols, b.rs, b.cs, &b_col, &ldb)) {
    RAL_RETURN_IF_ERROR(densify(kenv, b, b_tmp));
    classify(b.rows, b.cols, b.rs, b.cs, &b_col, &ldb);
  }
  RAL_ASSIGN_OR_RETURN(CublasHandle * blas, blasHandle(ctx, env));
  // Column-major C: C = op(A) op(B). Row-major C: C^T = op(B)^T op(A)^T, so the operands swap.
  // A stored row-major is seen by cuBLAS as its transpose, which flips its transpose flag.
  GemmDesc d;
  d.type = blasType<T>();
  d.k = k;
  d.ldc = ldc;
  int64_t sa = 0, sb = 0, sc = 0;
  const bool even =
      evenStride(a.offsets, &sa) && evenStride(b.offsets, &sb) && evenStride(c.offsets, &sc);
  if (c_col) {
    d.m = m, d.n = n;
    d.transpose_a = a_col ? ta : !ta;
    d.transpose_b = b_col ? tb : !tb;
    d.lda = lda, d.ldb = ldb;
  } else {
    d.m = n, d.n = m;
    d.transpose_a = b_col ? !tb : tb;
    d.transpose_b = a_col ? !ta : ta;
    d.lda = ldb, d.ldb = lda;
  }
  auto issue = [&](const T* pa, const T* pb, T* pc, int64_t batch) {
    d.a = c_col ? static_cast<const void*>(pa) : static_cast<const void*>(pb);
    d.b = c_col ? static_cast<const void*>(pb) : static_cast<const void*>(pa);
    d.c = pc;
    d.batch = batch;
    d.stride_a = c_col ? sa : sb;
    d.stride_b = c_col ? sb : sa;
    d.stride_c = sc;
    return blas->gemm(env.stream, d);
  };
  if (even && c.offsets.size() <= static_cast<size_t>(INT_MAX))
    return issue(a.base, b.base, c.base, static_cast<int64_t>(c.offsets.size()));
  for (size_t i = 0; i < c.offsets.size(); ++i)
    RAL_RETURN_IF_ERROR(
        issue(a.base + a.offsets[i], b.base + b.offsets[i], c.base + c.offsets[i], 1));
  return Status();
}

// Offsets of the matrices of `m` over c's batch shape (size-1 batch dims broadcast).
template <typename T, int R, int RC>
std::vector<int64_t> batchOffsets(const MemRef<T, R>& m, const int64_t* c_sizes, int64_t count) {
  std::vector<int64_t> offsets(static_cast<size_t>(count));
  int64_t idx[RC > 2 ? RC - 2 : 1] = {};
  for (int64_t bi = 0; bi < count; ++bi) {
    int64_t off = 0;
    for (int d = 0; d < R - 2; ++d) {
      const int64_t i = idx[(RC - 2) - (R - 2) + d];
      off += (m.sizes[d] == 1 ? 0 : i) * m.strides[d];
    }
    offsets[static_cast<size_t>(bi)] = off;
    for (int d = RC - 3; d >= 0; --d) {
      if (++idx[d] < c_sizes[d]) break;
      idx[d] = 0;
    }
  }
  return offsets;
}

// a, b and c are memory the GPU can access.
template <typename T, int RA, int RB, int RC>
Status checkOperands(ExecutionContext* ctx, const char* kernel, const MemRef<T, RA>& a,
                     const MemRef<T, RB>& b, const MemRef<T, RC>& c) {
  RAL_ASSIGN_OR_RETURN(KernelEnv env, kernelEnv(ctx, DeviceKind::kCuda));
  RAL_RETURN_IF_ERROR(checkDeviceAccess(*env.driver, a, kernel, "a"));
  RAL_RETURN_IF_ERROR(checkDeviceAccess(*env.driver, b, kernel, "b"));
  return checkDeviceAccess(*env.driver, c, kernel, "c");
}

struct Impl {
  template <typename T>
  static Status gemm(ExecutionContext* ctx, const MemRef<T, 2>& a, const MemRef<T, 2>& b,
                     const MemRef<T, 2>& c, bool ta, bool tb, int64_t k) {
    RAL_RETURN_IF_ERROR(checkOperands(ctx, "ral_gemm", a, b, c));
    Batch<T> ba{a.data(), a.sizes[0], a.sizes[1], a.strides[0], a.strides[1], {0}};
    Batch<T> bb{b.data(), b.sizes[0], b.sizes[1], b.strides[0], b.strides[1], {0}};
    Batch<T> bc{c.data(), c.sizes[0], c.sizes[1], c.strides[0], c.strides[1], {0}};
    return runGemm<T>(ctx, ba, bb, bc, ta, tb, k, overlaps(c, a), overlaps(c, b));
  }

  template <typename T, int RA, int RB, int RC>
  static Status batchGemm(ExecutionContext* ctx, const MemRef<T, RA>& a, const MemRef<T, RB>& b,
                          const MemRef<T, RC>& c, bool ta, bool tb, int64_t k) {
    int64_t batches = 1;
    for (int d = 0; d < RC - 2; ++d) batches *= c.sizes[d];
    if (batches == 0) return Status();
    RAL_RETURN_IF_ERROR(checkOperands(ctx, "ral_batch_gemm", a, b, c));
    Batch<T> ba{a.data(),          a.sizes[RA - 2],   a.sizes[RA - 1],
                a.strides[RA - 2], a.strides[RA - 1], batchOffsets<T, RA, RC>(a, c.sizes, batches)};
    Batch<T> bb{b.data(),          b.sizes[RB - 2],   b.sizes[RB - 1],
                b.strides[RB - 2], b.strides[RB - 1], batchOffsets<T, RB, RC>(b, c.sizes, batches)};
    Batch<T> bc{c.data(),          c.sizes[RC - 2],   c.sizes[RC - 1],
                c.strides[RC - 2], c.strides[RC - 1], batchOffsets<T, RC, RC>(c, c.sizes, batches)};
    return runGemm<T>(ctx, std::move(ba), std::move(bb), std::move(bc), ta, tb, k, overlaps(c, a),
                      overlaps(c, b));
  }
};

constexpr char kDevice[] = "cuda";
RAL_KERNEL_FLOAT_TYPES(RAL_REGISTER_GEMM)

}  // namespace
}  // namespace ral::kernels::cuda

RAL_REGISTRATION_ANCHOR(kernels_gemm_cuda);
