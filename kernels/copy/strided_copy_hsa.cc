// The HSA primitive of the strided copy (kernels/copy/strided_copy.h): one grid-stride launch of
// the library's ral_strided_copy_<bytes> / ral_strided_fill_<bytes> kernel on the execution's
// stream.
#include "kernels/copy/strided_copy.h"
#include "kernels/hsa/hsa_env.h"

namespace ral::kernels {
namespace {

using hsa::Entry;

// Entries of one element size follow each other: 1, 2, 4, 8 bytes.
Entry entryFor(Entry first, int size_index) {
  return static_cast<Entry>(static_cast<uint32_t>(first) + static_cast<uint32_t>(size_index));
}

Status tooManyDims(const char* kernel, int rank) {
  return unsupported(kernel, ": rank ", rank, " exceeds the ", hsa::kMaxRank,
                     " dims of the HSA strided kernels");
}

}  // namespace

Status copyPrimitive(hsa::Tag, const KernelEnv& kenv, const StridedCopy& w) {
  RAL_RETURN_IF_ERROR(checkOperands(kenv, w));
  hsa::CopyArgs p{};
  int64_t unused[hsa::kMaxRank];
  if (!hsa::padView(w.rank, w.sizes, w.src_strides, p.sizes, p.src_strides) ||
      !hsa::padView(w.rank, w.sizes, w.dst_strides, unused, p.dst_strides))
    return tooManyDims(w.kernel, w.rank);
  RAL_ASSIGN_OR_RETURN(hsa::HsaEnv env, hsa::hsaEnv(kenv));
  p.src = w.src;
  p.dst = w.dst;
  p.count = w.count;
  return hsa::launchLinear(env, entryFor(Entry::kCopy1, w.size_index), w.count, p);
}

Status fillPrimitive(hsa::Tag, const KernelEnv& kenv, const StridedFill& w) {
  RAL_RETURN_IF_ERROR(checkOperands(kenv, w));
  hsa::FillArgs p{};
  if (!hsa::padView(w.rank, w.sizes, w.dst_strides, p.sizes, p.dst_strides))
    return tooManyDims(w.kernel, w.rank);
  RAL_ASSIGN_OR_RETURN(hsa::HsaEnv env, hsa::hsaEnv(kenv));
  p.dst = w.dst;
  p.count = w.count;
  p.value = w.value;
  return hsa::launchLinear(env, entryFor(Entry::kFill1, w.size_index), w.count, p);
}

// The HSA driver's copy finds each side's memory by its pools (kHostToHost only says neither side
// must be device memory): device memory, the driver's host memory and pageable host memory
// (locked for the copy) alike, so the indices are read the same way wherever they live.
Status readIndices(hsa::Tag, const KernelEnv& kenv, const int64_t* src, int64_t stride, int n,
                   int64_t* out) {
  for (int d = 0; d < n; ++d)
    RAL_RETURN_IF_ERROR(kenv.driver->copy(&out[d], src + d * stride, sizeof(int64_t),
                                          CopyKind::kHostToHost, kenv.stream));
  return kenv.driver->synchronize(kenv.stream);
}

}  // namespace ral::kernels
