#include "plugins/standalone/host_tensor.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "plugins/standalone/npy.h"
#include "ral/dlpack_util.h"
#include "ral/half.h"
#include "ral/memref.h"
#include "ral/module_spec.h"

namespace ral::cli {

namespace {

// Calls f(T{}) with the C++ element type of `t`.
template <typename F>
void visit(DType t, F&& f) {
  switch (t) {
    case DType::kBool:
      return f(bool{});
    case DType::kI8:
      return f(int8_t{});
    case DType::kI16:
      return f(int16_t{});
    case DType::kI32:
      return f(int32_t{});
    case DType::kI64:
      return f(int64_t{});
    case DType::kUI8:
      return f(uint8_t{});
    case DType::kUI16:
      return f(uint16_t{});
    case DType::kUI32:
      return f(uint32_t{});
    case DType::kUI64:
      return f(uint64_t{});
    case DType::kF16:
      return f(float16{});
    case DType::kBF16:
      return f(bfloat16{});
    case DType::kF32:
      return f(float{});
    case DType::kF64:
      return f(double{});
    case DType::kInvalid:
      return;
  }
}

template <typename T>
constexpr bool kIsFloat =
    std::is_floating_point_v<T> || std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

template <typename T>
double toDouble(T v) {
  if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
    return static_cast<double>(v.toFloat());
  } else {
    return static_cast<double>(v);
  }
}

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

template <typename T>
Status parseValue(std::string_view text, T* out) {
  const std::string s = trim(text);
  if (s.empty()) return invalidArgument("empty value");
  char* end = nullptr;
  errno = 0;
  if constexpr (std::is_same_v<T, bool>) {
    if (s == "1" || s == "true" || s == "True") {
      *out = true;
    } else if (s == "0" || s == "false" || s == "False") {
      *out = false;
    } else {
      return invalidArgument("'", s, "' is not a bool (use 0, 1, true or false)");
    }
  } else if constexpr (kIsFloat<T>) {
    const double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size()) return invalidArgument("'", s, "' is not a number");
    if constexpr (std::is_floating_point_v<T>) {
      *out = static_cast<T>(v);
    } else {
      *out = T(static_cast<float>(v));
    }
  } else if constexpr (std::is_signed_v<T>) {
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (end != s.c_str() + s.size()) return invalidArgument("'", s, "' is not an integer");
    if (errno == ERANGE || v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max())
      return invalidArgument("'", s, "' is out of range for ", dtypeName(kDTypeOf<T>));
    *out = static_cast<T>(v);
  } else {
    if (s[0] == '-') return invalidArgument("'", s, "' is negative; the type is unsigned");
    const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
    if (end != s.c_str() + s.size()) return invalidArgument("'", s, "' is not an integer");
    if (errno == ERANGE || v > std::numeric_limits<T>::max())
      return invalidArgument("'", s, "' is out of range for ", dtypeName(kDTypeOf<T>));
    *out = static_cast<T>(v);
  }
  return Status();
}

template <typename T>
std::string formatValue(T v) {
  char buf[64];
  if constexpr (std::is_same_v<T, bool>) {
    return v ? "1" : "0";
  } else if constexpr (std::is_same_v<T, float>) {
    std::snprintf(buf, sizeof(buf), "%.9g", static_cast<double>(v));
  } else if constexpr (kIsFloat<T>) {
    std::snprintf(buf, sizeof(buf), std::is_same_v<T, double> ? "%.17g" : "%.5g", toDouble(v));
  } else if constexpr (std::is_signed_v<T>) {
    std::snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(v));
  } else {
    std::snprintf(buf, sizeof(buf), "%llu", static_cast<unsigned long long>(v));
  }
  return buf;
}

// Element offsets (in elements) of a tensor in row-major order.
template <typename F>
void forEachOffset(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides, F&& f) {
  const int rank = static_cast<int>(shape.size());
  for (int64_t s : shape)
    if (s == 0) return;  // empty (its other sizes may be huge: no products of them below)
  int64_t numel = 1;
  for (int64_t s : shape) numel *= s;  // non-empty tensors here are held in memory: no overflow
  std::vector<int64_t> st = strides;
  if (st.empty()) {
    st.resize(rank);
    int64_t s = 1;
    for (int d = rank - 1; d >= 0; --d) {
      st[d] = s;
      s *= shape[d];
    }
  }
  std::vector<int64_t> idx(rank, 0);
  for (int64_t k = 0; k < numel; ++k) {
    int64_t off = 0;
    for (int d = 0; d < rank; ++d) off += idx[d] * st[d];
    f(k, off);
    for (int d = rank - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

}  // namespace

int64_t HostTensor::numel() const {
  for (int64_t s : shape)
    if (s == 0) return 0;  // empty, however large the other sizes
  int64_t n = 1;
  for (int64_t s : shape)
    if (s < 0 || __builtin_mul_overflow(n, s, &n)) return -1;
  return n;
}

std::string HostTensor::typeString() const { return shapeString(dtype, shape.data(), rank()); }

standalone::TensorRef HostTensor::ref() {
  standalone::TensorRef r;
  r.data = bytes.empty() ? nullptr : bytes.data();
  r.dtype = dtype;
  r.rank = rank();
  r.shape = shape.data();
  r.strides = strides.empty() ? nullptr : strides.data();
  return r;
}

StatusOr<HostTensor> fromDLTensor(const DLTensor& t) {
  RAL_ASSIGN_OR_RETURN(DType dtype, standalone::dtypeFromDLPack(t.dtype));
  if (t.device.device_type != kDLCPU) return unsupported("only CPU tensors can be read here");
  if (t.ndim < 0 || t.ndim > kMaxMemRefRank) return invalidArgument("bad rank ", t.ndim);
  HostTensor h;
  h.dtype = dtype;
  h.shape.assign(t.shape, t.shape + t.ndim);
  std::vector<int64_t> strides;
  if (t.strides != nullptr) strides.assign(t.strides, t.strides + t.ndim);
  const size_t elem = dtypeSize(dtype);
  if (h.numel() < 0 || h.numel() > (int64_t{1} << 48))
    return invalidArgument("bad shape ", h.typeString(), ": negative or too many elements");
  h.bytes.resize(static_cast<size_t>(h.numel()) * elem);
  const char* base = static_cast<const char*>(t.data) + t.byte_offset;
  forEachOffset(h.shape, strides, [&](int64_t k, int64_t off) {
    std::memcpy(h.bytes.data() + k * static_cast<int64_t>(elem),
                base + off * static_cast<int64_t>(elem), elem);
  });
  return h;
}

StatusOr<HostTensor> parseTensorLiteral(std::string_view text) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos)
    return invalidArgument("bad tensor '", text,
                           "': expected TYPE=VALUES, e.g. 2x3xf32=1,2,3,4,5,6 (or @file.npy)");
  auto sig = parseTensorSignature(text.substr(0, eq));
  if (!sig.ok()) return sig.status();
  HostTensor t;
  t.dtype = sig->dtype;
  for (int64_t d : sig->dims) {
    if (d == kDynamicDim)
      return invalidArgument("bad tensor '", text, "': a value needs concrete sizes, not '?'");
    t.shape.push_back(d);
  }
  if (t.numel() < 0 || t.numel() > (int64_t{1} << 32))
    return invalidArgument("bad tensor '", text, "': too many elements for a literal");
  std::vector<std::string_view> values;
  std::string_view rest = text.substr(eq + 1);
  if (!trim(rest).empty()) {
    size_t start = 0;
    while (true) {
      const size_t comma = rest.find(',', start);
      values.push_back(rest.substr(start, comma == std::string_view::npos ? comma : comma - start));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
  }
  if (static_cast<int64_t>(values.size()) != t.numel())
    return invalidArgument("bad tensor '", text, "': ", t.typeString(), " needs ", t.numel(),
                           " value(s), got ", values.size());
  const size_t elem = dtypeSize(t.dtype);
  t.bytes.resize(values.size() * elem);
  Status status;
  visit(t.dtype, [&](auto zero) {
    using T = decltype(zero);
    for (size_t i = 0; i < values.size() && status.ok(); ++i) {
      T v{};
      status = parseValue<T>(values[i], &v);
      if (status.ok())
        std::memcpy(t.bytes.data() + i * elem, &v, elem);
      else
        status = status.withContext(internal::strCat("bad tensor '", text, "', value ", i));
    }
  });
  RAL_RETURN_IF_ERROR(status);
  return t;
}

std::string formatTensor(const HostTensor& t) {
  std::string s = t.typeString() + "=";
  const size_t elem = dtypeSize(t.dtype);
  visit(t.dtype, [&](auto zero) {
    using T = decltype(zero);
    forEachOffset(t.shape, t.strides, [&](int64_t k, int64_t off) {
      T v;
      std::memcpy(&v, t.bytes.data() + off * static_cast<int64_t>(elem), elem);
      if (k > 0) s += ',';
      s += formatValue(v);
    });
  });
  return s;
}

StatusOr<HostTensor> tensorFromArgument(std::string_view arg) {
  if (!arg.empty() && arg[0] == '@') return readNpy(std::string(arg.substr(1)));
  return parseTensorLiteral(arg);
}

Status compareTensors(const HostTensor& actual, const HostTensor& expected, const Tolerance& tol) {
  if (actual.dtype != expected.dtype || actual.shape != expected.shape)
    return invalidArgument("got ", actual.typeString(), ", expected ", expected.typeString());
  const size_t elem = dtypeSize(actual.dtype);
  int64_t mismatches = 0, first = -1;
  double worst = 0;
  std::string first_got, first_want;
  visit(actual.dtype, [&](auto zero) {
    using T = decltype(zero);
    std::vector<int64_t> actual_offsets(static_cast<size_t>(actual.numel()));
    forEachOffset(actual.shape, actual.strides,
                  [&](int64_t k, int64_t off) { actual_offsets[k] = off; });
    forEachOffset(expected.shape, expected.strides, [&](int64_t k, int64_t off) {
      T a, e;
      std::memcpy(&a, actual.bytes.data() + actual_offsets[k] * static_cast<int64_t>(elem), elem);
      std::memcpy(&e, expected.bytes.data() + off * static_cast<int64_t>(elem), elem);
      bool ok;
      if constexpr (kIsFloat<T>) {
        const double x = toDouble(a), y = toDouble(e);
        const double diff = std::fabs(x - y);
        ok = (std::isnan(x) && std::isnan(y)) || x == y ||
             diff <= tol.atol + tol.rtol * std::fabs(y);
        if (!ok && !std::isnan(diff) && diff > worst) worst = diff;
      } else {
        ok = a == e;
      }
      if (!ok) {
        if (first < 0) {
          first = k;
          first_got = formatValue(a);
          first_want = formatValue(e);
        }
        ++mismatches;
      }
    });
  });
  if (mismatches == 0) return Status();
  std::string message =
      internal::strCat(mismatches, " of ", actual.numel(), " elements differ; first at flat index ",
                       first, ": got ", first_got, ", expected ", first_want);
  if (isFloatingPoint(actual.dtype))
    message +=
        internal::strCat(" (max abs diff ", worst, ", rtol ", tol.rtol, ", atol ", tol.atol, ")");
  return Status(StatusCode::kFailedPrecondition, std::move(message));
}

}  // namespace ral::cli
