// libFuzzer target for the ONNX importer (mlir::disc_ral::onnx::importModel): each input is a
// serialized ModelProto. Built twice: ral_onnx_import_fuzzer mutates bytes (libFuzzer's own
// mutators: the protobuf wire format, field by field), ral_onnx_structure_fuzzer adds
// onnx_structure_mutator.cc, which mutates the parsed model's attributes, initializers and wiring.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/onnx_import_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ral::fuzz::importAndCheck(data, size);
  return 0;
}
