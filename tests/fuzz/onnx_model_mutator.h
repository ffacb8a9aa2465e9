// Structure-aware mutations of an ONNX ModelProto, for the importer's structure fuzzer: the values
// that break size and index arithmetic (0, ±1, 2^31, 2^32, 2^62, INT64_MIN/MAX, NaN, inf, 1e30)
// put where the importer computes with them — node attributes, initializer and Constant tensors
// (elements, dims, data types, lengths), graph input shapes — plus the graph's wiring: op types
// swapped, inputs dropped, added or rewired, output names duplicated, nodes duplicated or moved,
// inputs turned into constants, the opset changed. Byte-level mutation never gets there: nearly
// every flipped byte of a model breaks the protobuf or only renames something.
#ifndef RAL_TESTS_FUZZ_ONNX_MODEL_MUTATOR_H_
#define RAL_TESTS_FUZZ_ONNX_MODEL_MUTATOR_H_

#include <random>

#include "onnx/onnx_pb.h"

namespace ral::fuzz {

// Applies one mutation drawn from `rng`; false when the drawn one found nothing to change (the
// caller draws again).
bool mutateModel(::onnx::ModelProto& model, std::mt19937_64& rng);

// Copies one piece of `other` into `model`: an initializer's contents (keeping its name), the
// attributes of a node of the same op type, or a whole node. False when nothing fit.
bool crossOverModels(::onnx::ModelProto& model, const ::onnx::ModelProto& other,
                     std::mt19937_64& rng);

}  // namespace ral::fuzz

#endif  // RAL_TESTS_FUZZ_ONNX_MODEL_MUTATOR_H_
