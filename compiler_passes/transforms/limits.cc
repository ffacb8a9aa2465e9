// The input limits of limits.h and disc-ral-check-limits, the pass that enforces them on parsed IR.
#include "compiler_passes/transforms/limits.h"

#include <string>
#include <vector>

#include "compiler_passes/passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir {
namespace disc_ral {

#define GEN_PASS_DEF_CHECKLIMITSPASS
#include "compiler_passes/Passes.h.inc"

namespace {

// Elements of a static shape (dynamic dims count as 1); nullopt when the count overflows int64.
std::optional<int64_t> staticElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (ShapedType::isDynamic(d)) continue;
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return std::nullopt;
  }
  return n;
}

// What is wrong with the size of a shaped type, or an empty string.
std::string sizeProblem(ShapedType type) {
  if (!type.hasRank()) return "";
  std::optional<int64_t> elements = staticElements(type.getShape());
  if (!elements) return "has more elements than int64 can count";
  if (*elements > kMaxElements)
    return "has " + std::to_string(*elements) + " elements; at most 2^48 are supported";
  std::optional<int64_t> element_bytes = elementBytes(type.getElementType());
  int64_t bytes = 0;
  if (!element_bytes || __builtin_mul_overflow(*elements, *element_bytes, &bytes) ||
      bytes > kMaxBytes)
    return "has more than 2^56 bytes";
  return "";
}

}  // namespace

std::optional<int64_t> elementBytes(Type type) {
  if (type.isIndex()) return 8;
  if (type.isIntOrFloat()) return (static_cast<int64_t>(type.getIntOrFloatBitWidth()) + 7) / 8;
  if (auto complex = dyn_cast<ComplexType>(type)) {
    std::optional<int64_t> part = elementBytes(complex.getElementType());
    if (!part) return std::nullopt;
    return 2 * *part;
  }
  if (auto vector = dyn_cast<VectorType>(type)) {
    std::optional<int64_t> elements = staticElements(vector.getShape());
    std::optional<int64_t> each = elementBytes(vector.getElementType());
    int64_t bytes = 0;
    if (!elements || !each || __builtin_mul_overflow(*elements, *each, &bytes) || bytes > kMaxBytes)
      return std::nullopt;
    return bytes;
  }
  return std::nullopt;
}

LogicalResult checkTextNesting(const llvm::SourceMgr& source_mgr, unsigned buffer_id,
                               MLIRContext* context, int limit) {
  const llvm::MemoryBuffer* buffer = source_mgr.getMemoryBuffer(buffer_id);
  const StringRef text = buffer->getBuffer();
  if (text.starts_with("ML\xefR")) return success();  // bytecode: checked once parsed
  // An open bracket. Inside affine_map<...>, affine_set<...> and the operands of affine.* ops,
  // operators nest too (the parser recurses once per operator of `d0 + d0 + ...` or `- - d0`, and
  // so does every walk of the expression it builds): they count as levels, up to the next comma.
  struct Open {
    char bracket;
    bool affine;
    int operators;
  };
  std::vector<Open> open;  // on the heap, however deep the text
  size_t deepest = 0;
  const char* first_too_deep = nullptr;
  auto reached = [&](size_t depth, const char* at) {
    deepest = std::max(deepest, depth);
    if (!first_too_deep && depth > static_cast<size_t>(limit)) first_too_deep = at;
  };
  auto close = [&](char opening) {
    if (!open.empty() && open.back().bracket == opening) open.pop_back();
  };
  auto affine_operator = [&](const char* at) {
    if (open.empty() || !open.back().affine) return;
    ++open.back().operators;
    reached(open.size() + open.back().operators, at);
  };
  StringRef identifier;         // the last identifier, while only whitespace followed it
  bool affine_op_line = false;  // an affine.* op name was seen on this line
  const char* p = text.begin();
  const char* const end = text.end();
  auto is_identifier_char = [](char c) {
    return llvm::isAlnum(c) || c == '_' || c == '.' || c == '$';
  };
  while (p < end) {
    const char c = *p;
    if (c == ' ' || c == '\t' || c == '\r') {
      ++p;
      continue;
    }
    if (c == '\n') {
      affine_op_line = false;
      ++p;
      continue;
    }
    if (llvm::isAlpha(c) || c == '_') {
      const char* begin = p;
      while (p < end && is_identifier_char(*p)) ++p;
      identifier = StringRef(begin, p - begin);
      if (identifier.starts_with("affine.")) affine_op_line = true;
      if (identifier == "floordiv" || identifier == "ceildiv" || identifier == "mod")
        affine_operator(begin);
      continue;
    }
    const StringRef before = identifier;
    identifier = StringRef();
    if (c == '/' && p + 1 < end && p[1] == '/') {  // comment, to the end of the line
      while (p < end && *p != '\n') ++p;
      continue;
    }
    if (c == '"') {  // string: no brackets inside; the lexer ends one at a newline too
      for (++p; p < end && *p != '"' && *p != '\n'; ++p)
        if (*p == '\\' && p + 1 < end) ++p;
      ++p;
      continue;
    }
    if (c == '-' && p + 1 < end && p[1] == '>') {  // `->` of a function type or affine map
      p += 2;
      continue;
    }
    switch (c) {
      case '{':
      case '(':
      case '[':
      case '<': {
        // A region's body is statements, not an expression, even under an affine.for.
        const bool affine = c != '{' && ((!open.empty() && open.back().affine) || affine_op_line ||
                                         before == "affine_map" || before == "affine_set");
        open.push_back({c, affine, 0});
        reached(open.size(), p);
        break;
      }
      case '}':
        close('{');
        break;
      case ')':
        close('(');
        break;
      case ']':
        close('[');
        break;
      case '>':
        close('<');
        break;
      case ',':
        if (!open.empty()) open.back().operators = 0;
        break;
      case '+':
      case '-':
      case '*':
        affine_operator(p);
        break;
      default:
        break;
    }
    ++p;
  }
  if (!first_too_deep) return success();
  auto [line, column] =
      source_mgr.getLineAndColumn(llvm::SMLoc::getFromPointer(first_too_deep), buffer_id);
  Location loc = FileLineColLoc::get(context, buffer->getBufferIdentifier(), line, column);
  return emitError(loc) << "nesting depth " << deepest << " exceeds the limit " << limit
                        << " (brackets, regions and the operators of an affine expression nest "
                           "at most "
                        << limit << " levels deep)";
}

LogicalResult checkRegionNesting(Operation* root, int limit) {
  // (op, depth of the regions it holds); an explicit stack, so no recursion here either.
  SmallVector<std::pair<Operation*, int>> stack{{root, 1}};
  Operation* first_too_deep = nullptr;
  int deepest = 0;
  while (!stack.empty()) {
    auto [op, depth] = stack.pop_back_val();
    if (op->getNumRegions() == 0) continue;
    deepest = std::max(deepest, depth);
    if (depth > limit && !first_too_deep) first_too_deep = op;
    for (Region& region : op->getRegions())
      for (Block& block : region)
        for (Operation& inner : block)
          if (inner.getNumRegions() > 0) stack.emplace_back(&inner, depth + 1);
  }
  if (!first_too_deep) return success();
  // At the op's location, without the op: printing it would recurse through all its levels.
  return emitError(first_too_deep->getLoc())
         << "nesting depth " << deepest << " exceeds the limit " << limit
         << " (regions nest at most " << limit << " levels deep)";
}

namespace {

class CheckLimitsPass : public impl::CheckLimitsPassBase<CheckLimitsPass> {
 public:
  void runOnOperation() override {
    Operation* root = getOperation();
    if (failed(checkRegionNesting(root))) return signalPassFailure();
    llvm::DenseSet<Type> checked;
    llvm::DenseSet<Attribute> constants;
    int64_t constant_bytes = 0;
    // Every shaped type inside `type` (a function type's inputs, a tuple's members, ...).
    auto check = [&](Operation* op, Type type, const llvm::Twine& what) -> LogicalResult {
      if (!checked.insert(type).second) return success();
      std::string problem;
      ShapedType bad;
      type.walk([&](ShapedType shaped) {
        if (!problem.empty()) return;
        problem = sizeProblem(shaped);
        bad = shaped;
      });
      if (problem.empty()) return success();
      return op->emitOpError() << what << " has type " << bad << ", which " << problem
                               << " (a tensor or buffer holds at most 2^48 elements and 2^56 "
                                  "bytes)";
    };
    WalkResult result = root->walk([&](Operation* op) -> WalkResult {
      if (auto alloca = dyn_cast<memref::AllocaOp>(op)) {
        std::optional<int64_t> elements = staticElements(alloca.getType().getShape());
        std::optional<int64_t> each = elementBytes(alloca.getType().getElementType());
        int64_t bytes = 0;
        if (!elements || !each || __builtin_mul_overflow(*elements, *each, &bytes) ||
            bytes > kMaxStackBytes) {
          alloca.emitOpError() << "allocates " << alloca.getType() << " on the stack, more than "
                               << kMaxStackBytes
                               << " bytes (a stack overflow would kill the host process); "
                                  "use memref.alloc";
          return WalkResult::interrupt();
        }
      }
      for (OpResult r : op->getResults())
        if (failed(check(op, r.getType(), "result #" + llvm::Twine(r.getResultNumber()))))
          return WalkResult::interrupt();
      for (Region& region : op->getRegions())
        for (Block& block : region)
          for (BlockArgument arg : block.getArguments())
            if (failed(
                    check(op, arg.getType(), "block argument #" + llvm::Twine(arg.getArgNumber()))))
              return WalkResult::interrupt();
      // Types held in attributes: a function's signature (declarations have no block
      // arguments), a memref.global's type, a constant's value.
      for (NamedAttribute attr : op->getAttrs()) {
        LogicalResult ok = success();
        attr.getValue().walk([&](Attribute a) {
          if (failed(ok)) return;
          if (auto type_attr = dyn_cast<TypeAttr>(a))
            ok = check(op, type_attr.getValue(), "attribute '" + attr.getName().strref() + "'");
          else if (auto typed = dyn_cast<TypedAttr>(a))
            ok = check(op, typed.getType(), "attribute '" + attr.getName().strref() + "'");
          if (failed(ok)) return;
          auto elements = dyn_cast<ElementsAttr>(a);
          if (!elements || !constants.insert(a).second) return;
          // The type's size was checked just above: this cannot overflow.
          constant_bytes += elements.getNumElements() *
                            elementBytes(elements.getShapedType().getElementType()).value_or(1);
          if (constant_bytes > kMaxConstantBytes)
            ok = op->emitOpError()
                 << "attribute '" << attr.getName().strref()
                 << "' brings the module's constants to " << constant_bytes << " bytes; at most "
                 << kMaxConstantBytes << " are supported (a module file holds at most 2 GiB)";
        });
        if (failed(ok)) return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted()) signalPassFailure();
  }
};

}  // namespace
}  // namespace disc_ral
}  // namespace mlir
