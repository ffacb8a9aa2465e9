// findDeepNesting: a walk of the protobuf wire format with an explicit stack (proto_nesting.h).
#include "compiler_passes/onnx/proto_nesting.h"

#include <cstdint>
#include <vector>

namespace mlir {
namespace disc_ral {
namespace onnx {
namespace {

// The ONNX messages on a path that can nest without bound, and the fields of each that hold one
// (onnx.proto's field numbers).
enum class Kind {
  kOther,
  kModel,
  kGraph,
  kNode,
  kAttribute,
  kValueInfo,
  kType,
  kTypeElement,  // TypeProto.Sequence and .Optional: elem_type = 1
  kTypeMap,      // TypeProto.Map: value_type = 2
  kFunction,
  kTrainingInfo,
};

Kind childKind(Kind parent, uint64_t field) {
  switch (parent) {
    case Kind::kModel:
      return field == 7    ? Kind::kGraph
             : field == 25 ? Kind::kFunction
             : field == 20 ? Kind::kTrainingInfo
                           : Kind::kOther;
    case Kind::kTrainingInfo:
      return field == 1 || field == 2 ? Kind::kGraph : Kind::kOther;
    case Kind::kGraph:
      return field == 1                                  ? Kind::kNode
             : field == 11 || field == 12 || field == 13 ? Kind::kValueInfo
                                                         : Kind::kOther;
    case Kind::kNode:
      return field == 5 ? Kind::kAttribute : Kind::kOther;
    case Kind::kAttribute:
      return field == 6 || field == 11    ? Kind::kGraph
             : field == 14 || field == 15 ? Kind::kType
                                          : Kind::kOther;
    case Kind::kValueInfo:
      return field == 2 ? Kind::kType : Kind::kOther;
    case Kind::kType:
      return field == 4 || field == 9 ? Kind::kTypeElement
             : field == 5             ? Kind::kTypeMap
                                      : Kind::kOther;
    case Kind::kTypeElement:
      return field == 1 ? Kind::kType : Kind::kOther;
    case Kind::kTypeMap:
      return field == 2 ? Kind::kType : Kind::kOther;
    case Kind::kFunction:
      return field == 7    ? Kind::kNode
             : field == 11 ? Kind::kAttribute
             : field == 12 ? Kind::kValueInfo
                           : Kind::kOther;
    case Kind::kOther:
      break;
  }
  return Kind::kOther;
}

class Reader {
 public:
  Reader(llvm::StringRef bytes, size_t pos, size_t end) : bytes_(bytes), pos_(pos), end_(end) {}
  bool done() const { return pos_ >= end_; }
  size_t pos() const { return pos_; }
  bool varint(uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= end_) return false;
      const uint8_t byte = static_cast<uint8_t>(bytes_[pos_++]);
      *v |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return true;
    }
    return false;
  }
  bool skip(uint64_t n) {
    if (n > end_ - pos_) return false;
    pos_ += n;
    return true;
  }
  // One field: its number, and for a length-delimited one the range of its bytes.
  bool field(uint64_t* number, bool* delimited, size_t* begin, size_t* size) {
    uint64_t key, v;
    if (!varint(&key)) return false;
    *number = key >> 3;
    *delimited = false;
    switch (key & 7) {
      case 0:
        return varint(&v);
      case 1:
        return skip(8);
      case 5:
        return skip(4);
      case 2:
        if (!varint(&v) || v > end_ - pos_) return false;
        *delimited = true;
        *begin = pos_;
        *size = v;
        pos_ += v;
        return true;
      default:  // groups: not in ONNX
        return false;
    }
  }

 private:
  llvm::StringRef bytes_;
  size_t pos_, end_;
};

// The string field `number` of the message at [begin, begin + size), "" without one.
std::string stringField(llvm::StringRef bytes, size_t begin, size_t size, uint64_t number) {
  Reader r(bytes, begin, begin + size);
  std::string value;
  while (!r.done()) {
    uint64_t n;
    bool delimited;
    size_t b = 0, s = 0;
    if (!r.field(&n, &delimited, &b, &s)) break;
    if (delimited && n == number) value = bytes.substr(b, s).str();
  }
  return value;
}

struct Span {
  size_t begin = 0, size = 0;
  Kind kind = Kind::kOther;
  uint64_t field = 0;  // its field number in its parent
};

struct Frame {
  Reader reader;
  Kind kind;
  int depth;
  Span top;        // the outermost message below the model's graph that holds this one
  Span attribute;  // the attribute of `top` (a node) that holds it, when there is one
};

std::string describe(llvm::StringRef bytes, const Span& top, const Span& attribute) {
  std::string where;
  switch (top.kind) {
    case Kind::kNode: {
      const std::string name = stringField(bytes, top.begin, top.size, 3);
      where = "node '" + (name.empty() ? std::string("?") : name) + "' (" +
              stringField(bytes, top.begin, top.size, 4) + ")";
      if (attribute.kind == Kind::kAttribute)
        where += ", attribute '" + stringField(bytes, attribute.begin, attribute.size, 1) + "'";
      return where;
    }
    case Kind::kValueInfo:
      return std::string(top.field == 11   ? "graph input '"
                         : top.field == 12 ? "graph output '"
                                           : "value_info '") +
             stringField(bytes, top.begin, top.size, 1) + "'";
    case Kind::kFunction:
      return "function '" + stringField(bytes, top.begin, top.size, 1) + "'";
    case Kind::kTrainingInfo:
      return "training_info";
    default:
      return "the model";
  }
}

}  // namespace

std::optional<DeepNesting> findDeepNesting(llvm::StringRef bytes, int limit) {
  std::vector<Frame> stack;
  stack.push_back(Frame{Reader(bytes, 0, bytes.size()), Kind::kModel, 0, Span(), Span()});
  int deepest = 0;
  Span deepest_top, deepest_attribute;
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (f.reader.done()) {
      stack.pop_back();
      continue;
    }
    uint64_t number;
    bool delimited;
    size_t begin = 0, size = 0;
    if (!f.reader.field(&number, &delimited, &begin, &size)) return std::nullopt;
    if (!delimited) continue;
    const Kind child = childKind(f.kind, number);
    if (child == Kind::kOther) continue;
    Frame next{Reader(bytes, begin, begin + size), child, f.depth + 1, f.top, f.attribute};
    const Span here{begin, size, child, number};
    // The outermost node, value info, function or training info below the model's graph.
    const bool top_level = (f.kind == Kind::kGraph && f.depth == 1) || f.kind == Kind::kModel;
    if (top_level && child != Kind::kGraph) next.top = here;
    if (child == Kind::kAttribute && f.kind == Kind::kNode && f.depth == 2) next.attribute = here;
    if (next.depth > deepest) {
      deepest = next.depth;
      deepest_top = next.top;
      deepest_attribute = next.attribute;
    }
    stack.push_back(next);
  }
  if (deepest <= limit) return std::nullopt;
  return DeepNesting{deepest, describe(bytes, deepest_top, deepest_attribute)};
}

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir
