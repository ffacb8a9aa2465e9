// What the ONNX importer fuzzers check on every input: the importer's contract. A model either
// imports into a module that verifies, or fails with errors that say what is wrong. A crash, a
// sanitizer report, a module that does not verify (also the importer's own "does not verify"
// error), a failure without a message or a success with errors is a bug: the check aborts with a
// message naming the broken rule, and libFuzzer keeps the input.
#ifndef RAL_TESTS_FUZZ_ONNX_IMPORT_CHECK_H_
#define RAL_TESTS_FUZZ_ONNX_IMPORT_CHECK_H_

#include <cstddef>
#include <cstdint>

namespace ral::fuzz {

// The constant bytes an import may hold under the fuzzers (ImportOptions::max_constant_bytes).
// Below the default so that a model folding a legal but large constant does not spend seconds
// per input or reach libFuzzer's RSS limit; a malloc-limit hit (2 GiB) is therefore the importer
// allocating far beyond its own limit, not a large but honest model.
constexpr int64_t kFuzzMaxConstantBytes = int64_t{64} << 20;

// Imports `size` bytes as a serialized ModelProto into a fresh MLIRContext (single-threaded,
// diagnostics captured) and checks the result; twice, with the options ral-compile uses for a
// GPU and for the CPU.
void importAndCheck(const uint8_t* data, size_t size);

}  // namespace ral::fuzz

#endif  // RAL_TESTS_FUZZ_ONNX_IMPORT_CHECK_H_
