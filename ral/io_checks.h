// The checks every host context applies when a compiled module's entry function receives an
// input (ral_recv_input) or sends an output (ral_send_output), so a module gets the same errors
// whichever host runs it. The host adds its own (an input not bound, an output sent twice, ...).
#ifndef RAL_IO_CHECKS_H_
#define RAL_IO_CHECKS_H_

#include <cstdint>

#include "ral/dtype.h"
#include "ral/module.h"
#include "ral/status.h"

namespace ral::io_checks {

// Beyond this many elements (or elements apart) a view is refused: no real buffer is that large,
// and offsets in bytes then fit in int64_t for any element size.
inline constexpr int64_t kMaxElements = int64_t{1} << 48;

// numel of a shape, or -1 on a negative size or a product beyond kMaxElements.
int64_t numelOf(const int64_t* sizes, int rank);

// The bytes a strided view reaches, relative to its first element's first byte: [begin, end),
// begin <= 0 (negative strides reach below the first element), end >= elem_size, both 0 for an
// empty view. Zero strides count once. Strides are in elements.
struct ByteSpan {
  int64_t begin = 0;
  int64_t end = 0;
};
// False on a negative size or element size, a shape numelOf() refuses, or an element further
// than kMaxElements from the first. Every host computes extents with this, never by hand.
bool byteSpanOf(const int64_t* sizes, const int64_t* strides, int rank, int64_t elem_size,
                ByteSpan* span);

// ral_recv_input: `index` names one of the module's inputs, read with its signature's dtype (an
// unsigned integer also as the signed integer of its width: compiled code is signless) and
// rank.
Status checkInputRequest(const Module& module, int64_t index, DType dtype, int rank);

// ral_send_output: `index` names one of the module's outputs, sent with its signature's dtype and
// rank, a valid shape whose static dims match, strides byteSpanOf() accepts, and data unless it
// is empty.
Status checkOutput(const Module& module, int64_t index, DType dtype, int rank, const int64_t* sizes,
                   const int64_t* strides, const void* data);

}  // namespace ral::io_checks

#endif  // RAL_IO_CHECKS_H_
