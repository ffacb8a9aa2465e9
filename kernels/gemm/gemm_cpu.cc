// ral_gemm and ral_batch_gemm on the CPU (kernels/gemm/gemm.h has the contract): oneDNN's sgemm
// (OpenBLAS's without RAL_ENABLE_DNNL) and OpenBLAS's dgemm; f16 and bf16 are converted to f32,
// multiplied with sgemm and rounded back.
// Any strides work: row- or column-major operands (leading dimension >= the row length) go to
// BLAS directly, others are packed first.
#include <algorithm>
#include <climits>
#include <cstring>
#include <type_traits>

#ifdef RAL_ENABLE_DNNL
#include "kernels/common/omp_threads.h"
#include "oneapi/dnnl/dnnl.h"
#endif

#include "drivers/cpu/cpu_info.h"
#include "kernels/blas/openblas.h"
#include "kernels/common/devices.h"
#include "kernels/common/kernel_util.h"
#include "kernels/common/parallel.h"
#include "kernels/gemm/gemm.h"
#include "ral/driver_services.h"
#include "ral/registration.h"

namespace ral::kernels::cpu {
namespace {

// A strided matrix view.
template <typename T>
struct Mat {
  T* data;
  int64_t rows, cols, rs, cs;
  T& at(int64_t i, int64_t j) const { return data[i * rs + j * cs]; }
};

template <typename T>
Mat<T> matOf(const MemRef<T, 2>& m) {
  return {m.data(), m.sizes[0], m.sizes[1], m.strides[0], m.strides[1]};
}

// Whether a matrix is stored row-major with a BLAS-valid leading dimension.
template <typename T>
bool rowMajorLd(const Mat<T>& m, int64_t* ld) {
  if (m.cols > 1 && m.cs != 1) return false;
  const int64_t min_ld = std::max<int64_t>(1, m.cols);
  const int64_t l = m.rows <= 1 ? min_ld : m.rs;
  if (l < min_ld || l > INT_MAX) return false;
  *ld = l;
  return true;
}
template <typename T>
Mat<T> transposed(const Mat<T>& m) {
  return {m.data, m.cols, m.rows, m.cs, m.rs};
}

// A BLAS operand in row-major terms: data, whether BLAS must transpose it, leading dimension.
struct BlasOperand {
  const void* data;
  bool trans;
  int ld;
};

template <typename Blas, typename T>
Blas toBlas(T v) {
  if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
    return v.toFloat();
  } else {
    return static_cast<Blas>(v);
  }
}

template <typename Blas, typename T>
Status pack(Driver* driver, const Mat<const T>& m, Scratch* scratch, Blas** out) {
  RAL_RETURN_IF_ERROR(scratch->allocate(driver, sizeof(Blas) * m.rows * m.cols));
  Blas* p = scratch->as<Blas>();
  for (int64_t i = 0; i < m.rows; ++i)
    for (int64_t j = 0; j < m.cols; ++j) p[i * m.cols + j] = toBlas<Blas>(m.at(i, j));
  *out = p;
  return Status();
}

// Stored operand `m` (before op) as a BLAS operand in Blas precision, packing when needed.
template <typename Blas, typename T>
Status operand(Driver* driver, const Mat<const T>& m, bool trans, Scratch* scratch,
               BlasOperand* out) {
  int64_t ld = 0;
  if constexpr (std::is_same_v<Blas, T>) {
    if (rowMajorLd(m, &ld)) {
      *out = {m.data, trans, static_cast<int>(ld)};
      return Status();
    }
    if (rowMajorLd(transposed(m), &ld)) {
      *out = {m.data, !trans, static_cast<int>(ld)};
      return Status();
    }
  }
  Blas* packed = nullptr;
  RAL_RETURN_IF_ERROR(pack<Blas>(driver, m, scratch, &packed));
  *out = {packed, trans, static_cast<int>(std::max<int64_t>(1, m.cols))};
  return Status();
}

template <typename Blas>
Status callBlas(const OpenBlas& blas, int m, int n, int k, const BlasOperand& a,
                const BlasOperand& b, Blas* c, int ldc) {
  if constexpr (std::is_same_v<Blas, float>) {
#ifdef RAL_ENABLE_DNNL
    // oneDNN's sgemm runs AVX-512 kernels where this OpenBLAS build stops at AVX2 (about twice
    // as fast on such CPUs); OpenBLAS keeps f64, which oneDNN lacks.
    const dnnl_status_t status =
        dnnl_sgemm(a.trans ? 'T' : 'N', b.trans ? 'T' : 'N', m, n, k, 1.0f,
                   static_cast<const float*>(a.data), a.ld, static_cast<const float*>(b.data),
                   b.ld, 0.0f, c, ldc);
    if (status != dnnl_success)
      return internalError("ral_gemm: oneDNN sgemm failed (status ", int(status), ") for m=", m,
                           " n=", n, " k=", k);
    return Status();
#else
    blas.sgemm(CblasRowMajor, a.trans ? CblasTrans : CblasNoTrans,
               b.trans ? CblasTrans : CblasNoTrans, m, n, k, 1.0f,
               static_cast<const float*>(a.data), a.ld, static_cast<const float*>(b.data), b.ld,
               0.0f, c, ldc);
#endif
  } else {
    blas.dgemm(CblasRowMajor, a.trans ? CblasTrans : CblasNoTrans,
               b.trans ? CblasTrans : CblasNoTrans, m, n, k, 1.0,
               static_cast<const double*>(a.data), a.ld, static_cast<const double*>(b.data), b.ld,
               0.0, c, ldc);
  }
  return Status();
}

// c = op(a) * op(b) for one matrix; shapes already checked.
template <typename T>
Status gemm2d(Driver* driver, const OpenBlas& blas, const Mat<const T>& a, const Mat<const T>& b,
              const Mat<T>& c, bool ta, bool tb, int64_t k, bool c_aliases_input) {
  using Blas = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const int64_t m = c.rows, n = c.cols;
  if (m == 0 || n == 0) return Status();
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c.at(i, j) = T(0.0f);
    return Status();
  }
  Scratch sa, sb, sc;
  BlasOperand oa, ob;
  RAL_RETURN_IF_ERROR(operand<Blas>(driver, a, ta, &sa, &oa));
  RAL_RETURN_IF_ERROR(operand<Blas>(driver, b, tb, &sb, &ob));
  int64_t ldc = 0;
  if constexpr (std::is_same_v<Blas, T>) {
    if (!c_aliases_input && rowMajorLd(c, &ldc)) {
      return callBlas<Blas>(blas, int(m), int(n), int(k), oa, ob, c.data, int(ldc));
    }
    if (!c_aliases_input && rowMajorLd(transposed(c), &ldc)) {
      // c^T = op(b)^T op(a)^T, row-major.
      const BlasOperand ob_t{ob.data, !ob.trans, ob.ld}, oa_t{oa.data, !oa.trans, oa.ld};
      return callBlas<Blas>(blas, int(n), int(m), int(k), ob_t, oa_t, c.data, int(ldc));
    }
  }
  RAL_RETURN_IF_ERROR(sc.allocate(driver, sizeof(Blas) * m * n));
  Blas* tmp = sc.as<Blas>();
  RAL_RETURN_IF_ERROR(callBlas<Blas>(blas, int(m), int(n), int(k), oa, ob, tmp, int(n)));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) c.at(i, j) = T(tmp[i * n + j]);
  return Status();
}

struct Setup {
  Driver* driver;
  const OpenBlas* blas;
  int threads;
};

StatusOr<Setup> setup(ExecutionContext* ctx) {
  RAL_ASSIGN_OR_RETURN(KernelEnv env, kernelEnv(ctx, DeviceKind::kCpu));
  RAL_ASSIGN_OR_RETURN(const OpenBlas* blas, openBlas());
  // One thread count for RAL's pool and OpenBLAS's.
  auto* threads = env.driver->service<HostThreadsService>();
  const int count = threads ? threads->threadCount() : ::ral::cpu::usableCpuCount();
  RAL_RETURN_IF_ERROR(setOpenBlasThreads(count));
  return Setup{env.driver, blas, count};
}

// The 2-D slice of a rank-R MemRef at batch index `batch` (over c's batch shape), with size-1
// batch dims broadcast.
template <typename T, int R, int RC>
Mat<T> batchSlice(const MemRef<T, R>& m, const int64_t* batch_idx) {
  int64_t off = 0;
  if constexpr (R > 2) {
    // m's batch dims align with the trailing batch dims of c.
    for (int d = 0; d < R - 2; ++d) {
      const int64_t i = batch_idx[(RC - 2) - (R - 2) + d];
      off += (m.sizes[d] == 1 ? 0 : i) * m.strides[d];
    }
  }
  return {m.data() + off, m.sizes[R - 2], m.sizes[R - 1], m.strides[R - 2], m.strides[R - 1]};
}

struct Impl {
  template <typename T>
  static Status gemm(ExecutionContext* ctx, const MemRef<T, 2>& a, const MemRef<T, 2>& b,
                     const MemRef<T, 2>& c, bool ta, bool tb, int64_t k) {
    RAL_ASSIGN_OR_RETURN(Setup s, setup(ctx));
#ifdef RAL_ENABLE_DNNL
    OmpThreads omp(s.threads);
#endif
    Mat<T> ma = matOf(a), mb = matOf(b);
    const bool alias = overlaps(c, a) || overlaps(c, b);
    return gemm2d<T>(s.driver, *s.blas, {ma.data, ma.rows, ma.cols, ma.rs, ma.cs},
                     {mb.data, mb.rows, mb.cols, mb.rs, mb.cs}, matOf(c), ta, tb, k, alias);
  }

  template <typename T, int RA, int RB, int RC>
  static Status batchGemm(ExecutionContext* ctx, const MemRef<T, RA>& a, const MemRef<T, RB>& b,
                          const MemRef<T, RC>& c, bool ta, bool tb, int64_t k) {
    RAL_ASSIGN_OR_RETURN(Setup s, setup(ctx));
#ifdef RAL_ENABLE_DNNL
    OmpThreads omp(s.threads);
#endif
    const bool alias = overlaps(c, a) || overlaps(c, b);
    int64_t batches = 1;
    for (int d = 0; d < RC - 2; ++d) batches *= c.sizes[d];
    // Matrices [begin, end) of the batch, in order.
    auto run = [&](int64_t begin, int64_t end) -> Status {
      if (begin >= end) return Status();  // an empty batch dim: no matrix at all
      int64_t idx[RC > 2 ? RC - 2 : 1] = {};
      for (int64_t d = RC - 3, rest = begin; d >= 0; --d) {
        idx[d] = rest % c.sizes[d];
        rest /= c.sizes[d];
      }
      for (int64_t bi = begin; bi < end; ++bi) {
        const Mat<T> sa = batchSlice<T, RA, RC>(a, idx), sb = batchSlice<T, RB, RC>(b, idx);
        RAL_RETURN_IF_ERROR(gemm2d<T>(s.driver, *s.blas,
                                      {sa.data, sa.rows, sa.cols, sa.rs, sa.cs},
                                      {sb.data, sb.rows, sb.cols, sb.rs, sb.cs},
                                      batchSlice<T, RC, RC>(c, idx), ta, tb, k, alias));
        for (int d = RC - 3; d >= 0; --d) {
          if (++idx[d] < c.sizes[d]) break;
          idx[d] = 0;
        }
      }
      return Status();
    };
#ifdef RAL_ENABLE_DNNL
    // Attention's products are many small matrices (12 heads of 128 x 64 x 128 in BERT): one
    // thread each, the batch spread over the pool, instead of every thread joining each small
    // sgemm in turn (3x slower on 2 threads). OpenBLAS (f64) keeps its own threads.
    if constexpr (!std::is_same_v<T, double>) {
      if (s.threads > 1 && batches > 1 && !alias && nonOverlapping(c))
        return parallelFor(s.driver, batches, 1, [&](int64_t begin, int64_t end) {
          OmpThreads one(1);
          return run(begin, end);
        });
    }
#endif
    return run(0, batches);
  }
};

constexpr char kDevice[] = "cpu";
RAL_KERNEL_FLOAT_TYPES(RAL_REGISTER_GEMM)

}  // namespace
}  // namespace ral::kernels::cpu

RAL_REGISTRATION_ANCHOR(kernels_gemm_cpu);
