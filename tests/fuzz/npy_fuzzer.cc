// libFuzzer target for the tools' tensor readers: the .npy parser (headers, versions, shapes,
// dtypes, Fortran order) and the TYPE=VALUES literal parser, on arbitrary bytes. Any input must
// give a tensor whose bytes match its shape, or a Status with a message: never a crash, a
// sanitizer report, a hang or an allocation beyond what the input justifies.
#include <cstdint>
#include <string_view>
#include <vector>

#include "plugins/standalone/host_tensor.h"
#include "plugins/standalone/npy.h"
#include "ral/dtype.h"

namespace {

void check(const ral::StatusOr<ral::cli::HostTensor>& t) {
  if (!t.ok()) {
    if (t.status().message().empty()) __builtin_trap();  // failures must explain themselves
    return;
  }
  const int64_t numel = t->numel();
  if (numel < 0 || t->bytes.size() != static_cast<size_t>(numel) * ral::dtypeSize(t->dtype))
    __builtin_trap();  // a tensor whose bytes do not match its shape
  if (!t->strides.empty() && t->strides.size() != t->shape.size()) __builtin_trap();
  // What was read can be written back and read again to the same tensor.
  auto encoded = ral::cli::encodeNpy(*t);
  if (encoded.ok() && t->strides.empty()) {
    auto again = ral::cli::parseNpy(*encoded);
    if (!again.ok() || again->shape != t->shape || again->bytes != t->bytes) __builtin_trap();
  }
  (void)ral::cli::formatTensor(*t);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  check(ral::cli::parseNpy(std::vector<uint8_t>(data, data + size)));
  check(ral::cli::parseTensorLiteral(std::string_view(reinterpret_cast<const char*>(data), size)));
  return 0;
}
