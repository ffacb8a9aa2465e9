// ONNX element types and TensorProto data as MLIR types and dense constants.
#include <cstring>
#include <string>
#include <vector>

#include "compiler_passes/onnx/checked_int.h"
#include "compiler_passes/onnx/node_context.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace mlir {
namespace disc_ral {
namespace onnx {

using ::onnx::TensorProto_DataType;

Type elementTypeOf(MLIRContext* ctx, int32_t dtype) {
  Builder b(ctx);
  switch (dtype) {
    case TensorProto_DataType::TensorProto_DataType_FLOAT:
      return b.getF32Type();
    case TensorProto_DataType::TensorProto_DataType_DOUBLE:
      return b.getF64Type();
    case TensorProto_DataType::TensorProto_DataType_FLOAT16:
      return b.getF16Type();
    case TensorProto_DataType::TensorProto_DataType_BFLOAT16:
      return b.getBF16Type();
    case TensorProto_DataType::TensorProto_DataType_INT8:
      return b.getIntegerType(8);
    case TensorProto_DataType::TensorProto_DataType_INT16:
      return b.getIntegerType(16);
    case TensorProto_DataType::TensorProto_DataType_INT32:
      return b.getIntegerType(32);
    case TensorProto_DataType::TensorProto_DataType_INT64:
      return b.getIntegerType(64);
    case TensorProto_DataType::TensorProto_DataType_BOOL:
      return b.getIntegerType(1);
    // Unsigned integers would need unsigned arithmetic throughout; strings and complex numbers
    // have no RAL dtype.
    default:
      return Type();
  }
}

Type storageTypeOf(MLIRContext* ctx, int32_t dtype, bool* is_unsigned) {
  *is_unsigned = false;
  if (Type t = elementTypeOf(ctx, dtype)) return t;
  unsigned width = 0;
  switch (dtype) {
    case TensorProto_DataType::TensorProto_DataType_UINT8:
      width = 8;
      break;
    case TensorProto_DataType::TensorProto_DataType_UINT16:
      width = 16;
      break;
    case TensorProto_DataType::TensorProto_DataType_UINT32:
      width = 32;
      break;
    case TensorProto_DataType::TensorProto_DataType_UINT64:
      width = 64;
      break;
    default:
      return Type();
  }
  *is_unsigned = true;
  return IntegerType::get(ctx, width);
}

std::string dtypeName(int32_t dtype) {
  if (::onnx::TensorProto_DataType_IsValid(dtype))
    return ::onnx::TensorProto_DataType_Name(static_cast<TensorProto_DataType>(dtype));
  return "dtype " + std::to_string(dtype);
}

namespace {

size_t byteWidth(Type t) { return t.isInteger(1) ? 1 : t.getIntOrFloatBitWidth() / 8; }

// The typed-field elements of `t` as little-endian bytes of `element`.
bool typedBytes(const ::onnx::TensorProto& t, Type element, int64_t count, std::vector<char>* bytes,
                std::string* error) {
  const size_t width = byteWidth(element);
  // The element count is checked against the typed field before anything is allocated for it.
  const int have =
      t.data_type() == TensorProto_DataType::TensorProto_DataType_FLOAT    ? t.float_data_size()
      : t.data_type() == TensorProto_DataType::TensorProto_DataType_DOUBLE ? t.double_data_size()
      : t.data_type() == TensorProto_DataType::TensorProto_DataType_INT64  ? t.int64_data_size()
      : t.data_type() == TensorProto_DataType::TensorProto_DataType_UINT32 ||
              t.data_type() == TensorProto_DataType::TensorProto_DataType_UINT64
          ? t.uint64_data_size()
          : t.int32_data_size();
  if (have != count) {
    *error = "has " + std::to_string(have) + " elements for a shape of " + std::to_string(count);
    return false;
  }
  bytes->resize(static_cast<size_t>(count) * width);
  auto put = [&](int64_t i, uint64_t bits) {
    std::memcpy(bytes->data() + i * width, &bits, width);  // little-endian host
  };
  switch (t.data_type()) {
    case TensorProto_DataType::TensorProto_DataType_FLOAT:
      for (int64_t i = 0; i < count; ++i) {
        float v = t.float_data(static_cast<int>(i));
        uint32_t bits;
        std::memcpy(&bits, &v, 4);
        put(i, bits);
      }
      return true;
    case TensorProto_DataType::TensorProto_DataType_DOUBLE:
      for (int64_t i = 0; i < count; ++i) {
        double v = t.double_data(static_cast<int>(i));
        uint64_t bits;
        std::memcpy(&bits, &v, 8);
        put(i, bits);
      }
      return true;
    case TensorProto_DataType::TensorProto_DataType_INT64:
      for (int64_t i = 0; i < count; ++i)
        put(i, static_cast<uint64_t>(t.int64_data(static_cast<int>(i))));
      return true;
    case TensorProto_DataType::TensorProto_DataType_UINT32:
    case TensorProto_DataType::TensorProto_DataType_UINT64:
      for (int64_t i = 0; i < count; ++i) put(i, t.uint64_data(static_cast<int>(i)));
      return true;
    default:
      // int8/16/32, bool, float16 and bfloat16 (their bits) live in int32_data.
      for (int64_t i = 0; i < count; ++i)
        put(i, static_cast<uint64_t>(static_cast<int64_t>(t.int32_data(static_cast<int>(i)))));
      return true;
  }
}

}  // namespace

FailureOr<DenseElementsAttr> constantOf(MLIRContext* ctx, const ::onnx::TensorProto& t,
                                        int64_t max_bytes, std::string* error, bool* unsupported,
                                        bool* is_unsigned) {
  bool data_unsigned = false;
  Type element = storageTypeOf(ctx, t.data_type(), &data_unsigned);
  if (data_unsigned && !is_unsigned) element = Type();
  if (is_unsigned) *is_unsigned = data_unsigned;
  if (!element) {
    *unsupported = true;
    *error = "unsupported element type " + dtypeName(t.data_type());
    return failure();
  }
  if (t.data_location() == ::onnx::TensorProto_DataLocation_EXTERNAL) {
    *unsupported = true;
    *error = "unsupported external data (save the model with its weights inside the file)";
    return failure();
  }
  SmallVector<int64_t> shape;
  CheckedInt checked_count = 1;
  for (int64_t d : t.dims()) {
    if (d < 0) {
      *error = "negative dim " + std::to_string(d);
      return failure();
    }
    shape.push_back(d);
    checked_count *= d;
  }
  if (!checked_count.isSize()) {
    *error = "dims whose element count is beyond the limit of 2^48";
    return failure();
  }
  const int64_t count = checked_count.value();
  // Checked before anything is copied: the data is already in memory once (in the protobuf).
  const int64_t byte_count = count * static_cast<int64_t>(byteWidth(element));
  if (byte_count > max_bytes) {
    *error = std::to_string(byte_count) + " bytes of data exceed the " + std::to_string(max_bytes) +
             " bytes of constants the compile may still hold (a module holds at most 1.94 GiB "
             "of constants, and --max-memory may set less)";
    return failure();
  }
  auto type = RankedTensorType::get(shape, element);
  std::vector<char> bytes;
  if (t.has_raw_data()) {
    const std::string& raw = t.raw_data();
    if (raw.size() != static_cast<size_t>(count) * byteWidth(element)) {
      *error = "raw data of " + std::to_string(raw.size()) + " bytes for " + std::to_string(count) +
               " elements";
      return failure();
    }
    bytes.assign(raw.begin(), raw.end());
  } else if (!typedBytes(t, element, count, &bytes, error)) {
    return failure();
  }
  if (element.isInteger(1)) {
    llvm::SmallVector<bool> values;
    for (char c : bytes) values.push_back(c != 0);
    return DenseElementsAttr::get(type, llvm::ArrayRef<bool>(values));
  }
  if (count == 0) return DenseElementsAttr::get(type, llvm::ArrayRef<Attribute>{});
  // One element for a larger shape would read as a splat: only a one-element tensor has one.
  return DenseElementsAttr::getFromRawBuffer(type, llvm::ArrayRef<char>(bytes));
}

Tensor tensorOfData(DenseElementsAttr data) {
  Tensor t;
  t.type = cast<RankedTensorType>(data.getType());
  t.data = data;
  Type element = t.type.getElementType();
  if (isa<IntegerType>(element) && !element.isInteger(1) && t.type.getRank() <= 1 &&
      t.type.getNumElements() <= 64) {
    SmallVector<OpFoldResult> elems;
    Builder b(data.getContext());
    for (const APInt& v : data.getValues<APInt>())
      elems.push_back(b.getIndexAttr(v.getSExtValue()));
    t.elems = std::move(elems);
  }
  return t;
}

Tensor elemsTensor(SmallVector<OpFoldResult> elems, Type element, bool scalar) {
  Tensor t;
  t.type = scalar ? RankedTensorType::get({}, element)
                  : RankedTensorType::get({static_cast<int64_t>(elems.size())}, element);
  // All constant: also its data, so every consumer sees a plain constant.
  bool constant = true;
  SmallVector<APInt> values;
  for (OpFoldResult e : elems) {
    auto c = getConstantIntValue(e);
    constant &= c.has_value();
    if (c)
      values.push_back(
          APInt(64, static_cast<uint64_t>(*c), true).trunc(element.getIntOrFloatBitWidth()));
  }
  if (constant) t.data = DenseElementsAttr::get(t.type, values);
  t.elems = std::move(elems);
  return t;
}

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir
