// The layout contract between a compiled module and its host: each input's
// signature records the layout the compiled code addresses it with (TensorSignature::strides);
// a host binds a view that matches it as it is, and copies any other view into a buffer laid out
// as the signature says, or refuses it in strict zero-copy mode. Every host context decides
// through chooseInputBinding(), so the same view gets the same treatment whichever host runs the
// module; the compiled code checks the strides it receives against the same rule.
//
// Sizes and strides are in elements. All functions are pure and thread-safe.
#ifndef RAL_LAYOUT_H_
#define RAL_LAYOUT_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "ral/module_spec.h"
#include "ral/status.h"

namespace ral {

// Whether the compiled code reads a view with these sizes and strides correctly when it is bound
// as it is. A dimension of size 0 or 1 matches any stride (its stride is never used), and so does
// every dimension of an empty view; the identity layout wants row-major strides, a strided
// layout its fixed strides.
bool layoutAccepts(const TensorSignature& sig, const int64_t* sizes, const int64_t* strides,
                   int rank);

// The strides of a fresh buffer holding `sizes` in `sig`'s layout: row-major where the layout
// leaves a stride open, its fixed stride elsewhere. Returns the number of elements the buffer
// needs, or an error when the fixed strides make elements overlap (such a layout can only be
// bound from a view that already has it).
StatusOr<int64_t> layoutFor(const TensorSignature& sig, const int64_t* sizes, int rank,
                            int64_t* strides);

enum class InputBinding {
  kAsIs,  // bind the caller's view without a copy
  kCopy,  // copy it into a buffer laid out by layoutFor() and bind that
};

// What a host does with input `index`: its view as it is when the layout accepts it, else a copy;
// with `strict_zero_copy`, an error naming the input, its strides and the layout wanted.
StatusOr<InputBinding> chooseInputBinding(const TensorSignature& sig, size_t index,
                                          const int64_t* sizes, const int64_t* strides, int rank,
                                          bool strict_zero_copy);

// Copies the elements of a view (src, src_strides) into another (dst, dst_strides) of the same
// sizes; `elem` is the element size in bytes. The views must not overlap.
void copyStrided(void* dst, const int64_t* dst_strides, const void* src, const int64_t* src_strides,
                 const int64_t* sizes, int rank, size_t elem);

// Row-major strides for `sizes`.
void rowMajorStrides(const int64_t* sizes, int rank, int64_t* strides);

// "[4,1]": strides as messages print them.
std::string stridesString(const int64_t* strides, int rank);

}  // namespace ral

#endif  // RAL_LAYOUT_H_
