// HostTensor: a tensor in host memory for the command-line tools (inputs from text or .npy,
// outputs to print, save and compare).
#ifndef RAL_PLUGINS_STANDALONE_HOST_TENSOR_H_
#define RAL_PLUGINS_STANDALONE_HOST_TENSOR_H_

#include <dlpack/dlpack.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ral/standalone_context.h"
#include "ral/dtype.h"
#include "ral/status.h"

namespace ral::cli {

struct HostTensor {
  DType dtype = DType::kInvalid;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  // elements; empty: dense row-major
  std::vector<uint8_t> bytes;

  int rank() const { return static_cast<int>(shape.size()); }
  int64_t numel() const;  // -1 when a size is negative or the product overflows
  // "2x3xf32"
  std::string typeString() const;
  // A view for StandaloneExecutionContext::bindInput (valid while this tensor lives).
  standalone::TensorRef ref();
};

// A dense copy of any DLPack CPU tensor (strides honoured).
StatusOr<HostTensor> fromDLTensor(const DLTensor& t);

// "2x3xf32=1,2,3,4,5,6", "f32=2.5" (a scalar), "0xi64=" (empty). Values in row-major order;
// integers in decimal, floats as strtod reads them (inf, nan allowed), bools as 0/1/true/false.
StatusOr<HostTensor> parseTensorLiteral(std::string_view text);
// The same form, for printing (floats with enough digits to read back exactly).
std::string formatTensor(const HostTensor& t);

// An --input/--expected_output argument: "@path.npy" or a literal.
StatusOr<HostTensor> tensorFromArgument(std::string_view arg);

struct Tolerance {
  double rtol = 1e-5;
  double atol = 1e-6;
};
// OK when shapes and types match and every element is close (floats: |a - e| <= atol +
// rtol * |e|, NaN matches NaN; integers and bools: equal). Otherwise says where and by how much.
Status compareTensors(const HostTensor& actual, const HostTensor& expected, const Tolerance& tol);

}  // namespace ral::cli

#endif  // RAL_PLUGINS_STANDALONE_HOST_TENSOR_H_
