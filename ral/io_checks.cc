#include "ral/io_checks.h"

#include "ral/layout.h"
#include "ral/module_spec.h"

namespace ral::io_checks {

int64_t numelOf(const int64_t* sizes, int rank) {
  // On every binding and output: a multiply with an overflow check, not a division per dim.
  int64_t n = 1;
  for (int d = 0; d < rank; ++d) {
    if (sizes[d] < 0 || __builtin_mul_overflow(n, sizes[d], &n) || n > kMaxElements) return -1;
  }
  return n;
}

bool byteSpanOf(const int64_t* sizes, const int64_t* strides, int rank, int64_t elem_size,
                ByteSpan* span) {
  // One pass on every binding and output. While the view is not empty every size is at most
  // kMaxElements, so a reach (size - 1) * stride fits in 111 bits and eight of them in 128.
  *span = ByteSpan();
  int64_t numel = 1;
  __int128 low = 0, high = 0;  // elements relative to the first
  for (int d = 0; d < rank; ++d) {
    if (sizes[d] < 0 || __builtin_mul_overflow(numel, sizes[d], &numel) || numel > kMaxElements)
      return false;
    const __int128 reach = static_cast<__int128>(sizes[d] - 1) * strides[d];
    if (numel != 0) (reach < 0 ? low : high) += reach;
  }
  if (elem_size < 0) return false;
  if (numel == 0) return true;
  if (high > kMaxElements || low < -kMaxElements) return false;
  return !__builtin_mul_overflow(static_cast<int64_t>(low), elem_size, &span->begin) &&
         !__builtin_mul_overflow(static_cast<int64_t>(high) + 1, elem_size, &span->end);
}

namespace {

// Whether module code that reads or writes elements as `code` binds a tensor of signature type
// `sig`: the same type, or an unsigned integer read as the signed integer of its width (compiled
// code's integers are signless, MLIR's arith ops take no unsigned types; the signature carries
// the sign for hosts).
bool codeMatches(DType code, DType sig) {
  if (code == sig) return true;
  switch (sig) {
    case DType::kUI8:
      return code == DType::kI8;
    case DType::kUI16:
      return code == DType::kI16;
    case DType::kUI32:
      return code == DType::kI32;
    case DType::kUI64:
      return code == DType::kI64;
    default:
      return false;
  }
}

}  // namespace

Status checkInputRequest(const Module& module, int64_t index, DType dtype, int rank) {
  const auto& inputs = module.inputs();
  if (index < 0 || index >= static_cast<int64_t>(inputs.size()))
    return outOfRange("ral_recv_input: input index ", index, " is out of range: module '",
                      module.name(), "' takes ", inputs.size(), " input(s)");
  const TensorSignature& sig = inputs[index];
  if (!codeMatches(dtype, sig.dtype) || rank != sig.rank())
    return invalidArgument("ral_recv_input: the module reads input ", index, " as rank ", rank, " ",
                           dtypeName(dtype), " but its signature is ", sig.typeString());
  return Status();
}

Status checkOutput(const Module& module, int64_t index, DType dtype, int rank, const int64_t* sizes,
                   const int64_t* strides, const void* data) {
  const auto& outputs = module.outputs();
  if (index < 0 || index >= static_cast<int64_t>(outputs.size()))
    return outOfRange("ral_send_output: output index ", index, " is out of range: module '",
                      module.name(), "' has ", outputs.size(), " output(s)");
  const TensorSignature& sig = outputs[index];
  if (!codeMatches(dtype, sig.dtype) || rank != sig.rank())
    return invalidArgument("ral_send_output: the module sends output ", index, " as rank ", rank,
                           " ", dtypeName(dtype), " but its signature is ", sig.typeString());
  // The shape and the elements the strides reach, in one overflow-checked pass.
  ByteSpan span;
  if (!byteSpanOf(sizes, strides, rank, static_cast<int64_t>(dtypeSize(dtype)), &span)) {
    if (numelOf(sizes, rank) < 0)
      return invalidArgument("ral_send_output: output ", index, " (",
                             shapeString(dtype, sizes, rank),
                             ") has an invalid shape: a negative size or more than 2^48 elements");
    return invalidArgument("ral_send_output: output ", index, " (", shapeString(dtype, sizes, rank),
                           ") has strides ", stridesString(strides, rank),
                           " that reach more than 2^48 elements");
  }
  for (int d = 0; d < rank; ++d)
    if (sig.dims[d] != kDynamicDim && sig.dims[d] != sizes[d])
      return invalidArgument("ral_send_output: output ", index, " dimension ", d, " is ", sizes[d],
                             " but the signature says ", sig.dims[d]);
  if (data == nullptr && span.end > 0)
    return invalidArgument("ral_send_output: output ", index, " has null data");
  return Status();
}

}  // namespace ral::io_checks
