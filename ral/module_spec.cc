#include "ral/module_spec.h"

#include <cstring>
#include <string>

#include "ral/memref.h"

namespace ral {

std::string shapeString(DType dtype, const int64_t* dims, int rank) {
  std::string s;
  for (int d = 0; d < rank; ++d) {
    s += dims[d] == kDynamicDim ? std::string("?") : std::to_string(dims[d]);
    s += 'x';
  }
  s += dtypeName(dtype);
  return s;
}

std::string TensorSignature::layoutString() const {
  if (strides.empty()) return "row-major";
  std::string s = "strided<[";
  for (size_t d = 0; d < strides.size(); ++d) {
    if (d > 0) s += ',';
    s += strides[d] == kDynamicDim ? std::string("?") : std::to_string(strides[d]);
  }
  return s + "]>";
}

namespace {
std::string withDevice(std::string s, DeviceKind device) {
  if (device != DeviceKind::kCpu) {
    s += '@';
    s += deviceKindName(device);
  }
  return s;
}
}  // namespace

std::string TensorSignature::typeString() const {
  return withDevice(shapeString(dtype, dims.data(), rank()), device);
}

std::string TensorSignature::toString() const {
  std::string s = shapeString(dtype, dims.data(), rank());
  if (!strides.empty()) s += ',' + layoutString();
  return withDevice(std::move(s), device);
}

namespace {

// "strided<[?,1]>" (spaces allowed) -> strides; dims.size() entries are required.
Status parseLayout(std::string_view text, size_t rank, const std::string& original,
                   std::vector<int64_t>* strides) {
  std::string compact;
  for (char c : text)
    if (c != ' ') compact += c;
  auto bad = [&](std::string_view why) {
    return invalidArgument("bad tensor type '", original, "': ", why,
                           " (write a layout as strided<[?,1]>: one stride per dimension, "
                           "? for any)");
  };
  std::string_view body = compact;
  if (body.substr(0, 9) != "strided<[" || body.size() < 11 || body.substr(body.size() - 2) != "]>")
    return bad("layout '" + compact + "' is not strided<[...]>");
  body = body.substr(9, body.size() - 11);
  strides->clear();
  while (!body.empty()) {
    const size_t comma = body.find(',');
    const std::string_view part = body.substr(0, comma);
    if (part == "?") {
      strides->push_back(kDynamicDim);
    } else {
      if (part.empty() || part.size() > 18) return bad("stride '" + std::string(part) + "'");
      int64_t v = 0;
      for (char c : part) {
        if (c < '0' || c > '9')
          return bad("stride '" + std::string(part) + "' is not a non-negative integer or ?");
        v = v * 10 + (c - '0');
      }
      strides->push_back(v);
    }
    if (comma == std::string_view::npos) break;
    body.remove_prefix(comma + 1);
  }
  if (strides->size() != rank)
    return bad("the layout has " + std::to_string(strides->size()) + " strides for rank " +
               std::to_string(rank));
  return Status();
}

}  // namespace

StatusOr<TensorSignature> parseTensorSignature(std::string_view text) {
  TensorSignature sig;
  const std::string original(text);
  // A name ends at the first ':' before any layout text.
  if (auto colon = text.find(':');
      colon != std::string_view::npos && text.substr(0, colon).find_first_of(",<[") == text.npos) {
    sig.name = std::string(text.substr(0, colon));
    text.remove_prefix(colon + 1);
  }
  if (auto at = text.rfind('@'); at != std::string_view::npos) {
    RAL_ASSIGN_OR_RETURN(sig.device, deviceKindFromName(text.substr(at + 1)));
    text = text.substr(0, at);
  }
  std::string_view layout;
  const bool has_layout = text.find(',') != std::string_view::npos;
  if (has_layout) {
    const size_t comma = text.find(',');
    layout = text.substr(comma + 1);
    text = text.substr(0, comma);
  }
  // dims are separated by 'x'; the last part is the element type.
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t x = text.find('x', start);
    parts.push_back(text.substr(start, x == std::string_view::npos ? x : x - start));
    if (x == std::string_view::npos) break;
    start = x + 1;
  }
  auto dtype = dtypeFromName(parts.back());
  if (!dtype.ok())
    return invalidArgument("bad tensor type '", original, "': ", dtype.status().message(),
                           " (write it as e.g. 2x3xf32, ?x4xi64 or f32)");
  sig.dtype = *dtype;
  parts.pop_back();
  if (parts.size() > static_cast<size_t>(kMaxMemRefRank))
    return invalidArgument("bad tensor type '", original, "': rank ", parts.size(),
                           " is above the maximum ", kMaxMemRefRank);
  for (std::string_view p : parts) {
    if (p == "?") {
      sig.dims.push_back(kDynamicDim);
      continue;
    }
    if (p.empty() || p.size() > 18)
      return invalidArgument("bad tensor type '", original, "': dimension '", p,
                             "' is not a size (use digits, or ? for dynamic)");
    int64_t v = 0;
    for (char c : p) {
      if (c < '0' || c > '9')
        return invalidArgument("bad tensor type '", original, "': dimension '", p,
                               "' is not a size (use digits, or ? for dynamic)");
      v = v * 10 + (c - '0');
    }
    sig.dims.push_back(v);
  }
  if (has_layout) RAL_RETURN_IF_ERROR(parseLayout(layout, sig.dims.size(), original, &sig.strides));
  return sig;
}

namespace {
inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
inline uint64_t fmix(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ull;
  k ^= k >> 33;
  return k;
}
}  // namespace

uint64_t moduleChecksum(const void* data, size_t size) {
  constexpr uint64_t k1 = 0x87c37b91114253d5ull, k2 = 0x4cf5ad432745937full;
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = 0x9E3779B97F4A7C15ull ^ (size * k1);
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h ^= rotl(w * k1, 31) * k2;
    h = rotl(h, 27) * 5 + 0x52dce729;
  }
  uint64_t tail = 0;
  for (size_t j = 0; i + j < size; ++j) tail |= uint64_t{p[i + j]} << (8 * j);
  h ^= rotl(tail * k2, 33) * k1;
  return fmix(h);
}

}  // namespace ral
