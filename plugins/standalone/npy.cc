#include "plugins/standalone/npy.h"

#include <cctype>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "ral/file_reader.h"
#include "ral/file_writer.h"
#include "ral/memref.h"

namespace ral::cli {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

Status bad(const std::string& what) { return invalidArgument("malformed .npy: ", what); }

// A tiny reader of the Python dict literal in a .npy header.
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view s) : s_(s) {}

  Status parse(std::string* descr, bool* fortran, std::vector<int64_t>* shape) {
    bool have_descr = false, have_fortran = false, have_shape = false;
    skip();
    if (!eat('{')) return bad("header is not a dict");
    while (true) {
      skip();
      if (eat('}')) break;
      std::string key;
      RAL_RETURN_IF_ERROR(string(&key));
      skip();
      if (!eat(':')) return bad("expected ':' after '" + key + "'");
      skip();
      if (key == "descr") {
        RAL_RETURN_IF_ERROR(string(descr));
        have_descr = true;
      } else if (key == "fortran_order") {
        if (word("True")) {
          *fortran = true;
        } else if (word("False")) {
          *fortran = false;
        } else {
          return bad("fortran_order is not True or False");
        }
        have_fortran = true;
      } else if (key == "shape") {
        RAL_RETURN_IF_ERROR(tuple(shape));
        have_shape = true;
      } else {
        return bad("unknown header key '" + key + "'");
      }
      skip();
      if (eat(',')) continue;
      skip();
      if (eat('}')) break;
      return bad("expected ',' or '}' in the header");
    }
    if (!have_descr || !have_fortran || !have_shape)
      return bad("header lacks one of descr, fortran_order, shape");
    return Status();
  }

 private:
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool eat(char c) {
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool word(std::string_view w) {
    if (s_.substr(i_, w.size()) == w) {
      i_ += w.size();
      return true;
    }
    return false;
  }
  Status string(std::string* out) {
    if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"')) return bad("expected a string");
    const char q = s_[i_++];
    const size_t end = s_.find(q, i_);
    if (end == std::string_view::npos) return bad("unterminated string");
    *out = std::string(s_.substr(i_, end - i_));
    i_ = end + 1;
    return Status();
  }
  Status tuple(std::vector<int64_t>* out) {
    if (!eat('(')) return bad("shape is not a tuple");
    out->clear();
    while (true) {
      skip();
      if (eat(')')) return Status();
      int64_t v = 0;
      size_t digits = 0;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) {
        ++digits;
        // Any int64 size is a valid dimension of an empty tensor; beyond that it is refused.
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s_[i_++] - '0', &v))
          return bad("shape dimension too large");
      }
      if (digits == 0) return bad("shape holds something other than sizes");
      if (eat('L')) {
      }
      out->push_back(v);
      if (out->size() > static_cast<size_t>(kMaxMemRefRank))
        return bad("rank above " + std::to_string(kMaxMemRefRank));
      skip();
      if (eat(',')) continue;
      skip();
      if (eat(')')) return Status();
      return bad("expected ',' or ')' in the shape");
    }
  }

  std::string_view s_;
  size_t i_ = 0;
};

StatusOr<DType> dtypeFromDescr(const std::string& d) {
  if (d.size() < 3) return bad("unknown dtype '" + d + "'");
  const char order = d[0];
  const std::string kind = d.substr(1);
  DType t = DType::kInvalid;
  if (kind == "b1")
    t = DType::kBool;
  else if (kind == "i1")
    t = DType::kI8;
  else if (kind == "i2")
    t = DType::kI16;
  else if (kind == "i4")
    t = DType::kI32;
  else if (kind == "i8")
    t = DType::kI64;
  else if (kind == "u1")
    t = DType::kUI8;
  else if (kind == "u2")
    t = DType::kUI16;
  else if (kind == "u4")
    t = DType::kUI32;
  else if (kind == "u8")
    t = DType::kUI64;
  else if (kind == "f2")
    t = DType::kF16;
  else if (kind == "f4")
    t = DType::kF32;
  else if (kind == "f8")
    t = DType::kF64;
  else
    return unsupported(".npy dtype '", d, "' has no RAL element type");
  if (order == '>' && dtypeSize(t) > 1)
    return unsupported(".npy dtype '", d, "' is big-endian; save it little-endian ('<')");
  if (order != '<' && order != '|' && order != '=' && order != '>')
    return bad("unknown byte order in dtype '" + d + "'");
  return t;
}

const char* descrOf(DType t) {
  switch (t) {
    case DType::kBool:
      return "|b1";
    case DType::kI8:
      return "|i1";
    case DType::kI16:
      return "<i2";
    case DType::kI32:
      return "<i4";
    case DType::kI64:
      return "<i8";
    case DType::kUI8:
      return "|u1";
    case DType::kUI16:
      return "<u2";
    case DType::kUI32:
      return "<u4";
    case DType::kUI64:
      return "<u8";
    case DType::kF16:
      return "<f2";
    case DType::kF32:
      return "<f4";
    case DType::kF64:
      return "<f8";
    default:
      return nullptr;
  }
}

}  // namespace

StatusOr<HostTensor> parseNpy(const std::vector<uint8_t>& f) {
  if (f.size() < 10 || std::memcmp(f.data(), kMagic, kMagicLen) != 0)
    return bad("the file does not start with the NumPy magic string");
  const uint8_t major = f[6];
  size_t header_len, header_start;
  if (major == 1) {
    header_len = f[8] | (size_t{f[9]} << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (f.size() < 12) return bad("truncated header");
    header_len = f[8] | (size_t{f[9]} << 8) | (size_t{f[10]} << 16) | (size_t{f[11]} << 24);
    header_start = 12;
  } else {
    return unsupported(".npy format version ", int{major}, " (1, 2 and 3 are read)");
  }
  if (header_start + header_len > f.size()) return bad("truncated header");
  std::string descr;
  bool fortran = false;
  HostTensor t;
  HeaderParser parser(
      std::string_view(reinterpret_cast<const char*>(f.data()) + header_start, header_len));
  RAL_RETURN_IF_ERROR(parser.parse(&descr, &fortran, &t.shape));
  RAL_ASSIGN_OR_RETURN(t.dtype, dtypeFromDescr(descr));
  // An empty tensor is empty whatever its other sizes (0x1099511627776 is fine).
  const int64_t numel = t.numel();
  if (numel < 0 || numel > (int64_t{1} << 40)) return bad("too many elements");
  const size_t data_start = header_start + header_len;
  const uint64_t need = static_cast<uint64_t>(numel) * dtypeSize(t.dtype);
  const uint64_t have = f.size() - data_start;
  if (have != need)
    return bad(internal::strCat("shape ", t.typeString(), " needs ", need,
                                " data bytes, the file has ", have));
  t.bytes.assign(f.begin() + static_cast<std::ptrdiff_t>(data_start), f.end());
  // NumPy writes bools as 0 or 1; any other byte would be an invalid bool for the module's code.
  if (t.dtype == DType::kBool)
    for (size_t i = 0; i < t.bytes.size(); ++i)
      if (t.bytes[i] > 1)
        return bad(internal::strCat("bool element ", i, " is the byte ", int{t.bytes[i]},
                                    ", not 0 or 1"));
  if (fortran && t.rank() > 1 && numel > 0) {  // an empty tensor's layout does not matter
    t.strides.resize(t.rank());
    int64_t s = 1;
    for (int d = 0; d < t.rank(); ++d) {
      t.strides[d] = s;
      s *= t.shape[d];
    }
  }
  return t;
}

StatusOr<HostTensor> readNpy(const std::string& path) {
  RAL_ASSIGN_OR_RETURN(auto bytes, readRegularFile(path));
  auto t = parseNpy(bytes);
  if (!t.ok()) return t.status().withContext(internal::strCat("'", path, "'"));
  return t;
}

StatusOr<std::vector<uint8_t>> encodeNpy(const HostTensor& t) {
  const char* descr = descrOf(t.dtype);
  if (descr == nullptr)
    return unsupported("element type ", dtypeName(t.dtype),
                       " has no NumPy equivalent; print it instead of saving it as .npy");
  if (!t.strides.empty()) return invalidArgument("encodeNpy needs a dense tensor");
  std::string shape = "(";
  for (int64_t s : t.shape) shape += std::to_string(s) + ", ";
  if (t.rank() > 1) shape.erase(shape.size() - 2);  // (2, 3) but (4,) for rank 1
  if (t.rank() == 1) shape.erase(shape.size() - 1);
  shape += ")";
  std::string header =
      std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  const size_t unpadded = kMagicLen + 4 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::vector<uint8_t> out(kMagic, kMagic + kMagicLen);
  out.push_back(1);
  out.push_back(0);
  out.push_back(static_cast<uint8_t>(header.size() & 0xff));
  out.push_back(static_cast<uint8_t>(header.size() >> 8));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), t.bytes.begin(), t.bytes.end());
  return out;
}

Status writeNpy(const std::string& path, const HostTensor& t) {
  RAL_ASSIGN_OR_RETURN(auto bytes, encodeNpy(t));
  return writeFileAtomically(path, bytes.data(), bytes.size());
}

}  // namespace ral::cli
