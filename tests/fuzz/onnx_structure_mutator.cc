// libFuzzer's custom mutator and crossover for ral_onnx_structure_fuzzer: inputs that parse as a
// ModelProto are mutated as models (onnx_model_mutator.h), one to three mutations at a time, and
// serialized again; the rest, and one input in 16, get libFuzzer's byte mutations, so damage to
// the wire format itself still happens next to the structure.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>

#include "onnx/onnx_pb.h"
#include "tests/fuzz/onnx_model_mutator.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

bool parse(const uint8_t* data, size_t size, ::onnx::ModelProto* model) {
  return size <= static_cast<size_t>(INT32_MAX) &&
         model->ParseFromArray(data, static_cast<int>(size)) && model->has_graph();
}

size_t store(const ::onnx::ModelProto& model, uint8_t* data, size_t max_size) {
  std::string bytes;
  if (!model.SerializeToString(&bytes) || bytes.size() > max_size) return 0;
  std::memcpy(data, bytes.data(), bytes.size());
  return bytes.size();
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  std::mt19937_64 rng(seed);
  ::onnx::ModelProto model;
  if (rng() % 16 == 0 || !parse(data, size, &model)) return LLVMFuzzerMutate(data, size, max_size);
  bool changed = false;
  for (int tries = 0, want = 1 + static_cast<int>(rng() % 3); tries < 12 && want > 0; ++tries) {
    if (ral::fuzz::mutateModel(model, rng)) {
      changed = true;
      --want;
    }
  }
  const size_t stored = changed ? store(model, data, max_size) : 0;
  return stored > 0 ? stored : LLVMFuzzerMutate(data, size, max_size);
}

extern "C" size_t LLVMFuzzerCustomCrossOver(const uint8_t* data1, size_t size1,
                                            const uint8_t* data2, size_t size2, uint8_t* out,
                                            size_t max_out_size, unsigned int seed) {
  std::mt19937_64 rng(seed);
  ::onnx::ModelProto model, other;
  if (!parse(data1, size1, &model) || !parse(data2, size2, &other)) return 0;
  if (!ral::fuzz::crossOverModels(model, other, rng)) return 0;
  return store(model, out, max_out_size);
}
