// The names the compiler encodes from MLIR types equal the names RAL_API derives from the
// matching C++ signatures, so a compiled call always finds its registration.
#include "compiler_passes/dialect/type_codes.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <tuple>

#include "compiler_passes/dialect/dialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/MLIRContext.h"
#include "ral/api.h"

namespace {

using ral::ExecutionContext;
using ral::MemRef;

void gemm(ExecutionContext*, MemRef<float, 2>, MemRef<float, 2>, MemRef<float, 2>, bool, bool) {}
void batchGemm(ExecutionContext*, MemRef<ral::bfloat16, 3>, MemRef<ral::bfloat16, 3>,
               MemRef<ral::bfloat16, 3>, bool, bool) {}
MemRef<double, 4> recvInput(ExecutionContext*, int64_t) { return {}; }
void* alloc(ExecutionContext*, int64_t) { return nullptr; }
std::tuple<MemRef<ral::float16, 1>, uint8_t> mixed(void*, MemRef<uint16_t, 0>, int8_t, int32_t,
                                                   uint64_t, void*, const void*) {
  return {};
}

class TypeCodesTest : public ::testing::Test {
 protected:
  TypeCodesTest() {
    context_.loadDialect<mlir::disc_ral::DiscRalDialect, mlir::LLVM::LLVMDialect>();
  }
  mlir::Type memref(llvm::ArrayRef<int64_t> shape, mlir::Type element) {
    return mlir::MemRefType::get(shape, element);
  }
  mlir::Type i(unsigned bits) { return mlir::IntegerType::get(&context_, bits); }
  mlir::Type ui(unsigned bits) {
    return mlir::IntegerType::get(&context_, bits, mlir::IntegerType::Unsigned);
  }
  mlir::MLIRContext context_;
};

TEST_F(TypeCodesTest, MatchesRalApiNames) {
  using mlir::disc_ral::encodeCallName;
  mlir::Builder b(&context_);
  const int64_t dyn = mlir::ShapedType::kDynamic;
  mlir::Type m2f32 = memref({dyn, 4}, b.getF32Type());
  EXPECT_EQ(encodeCallName("ral_gemm", "cpu", {m2f32, m2f32, m2f32, i(1), i(1)}, {}),
            (ral::apiName<&gemm>("ral_gemm", "cpu")));
  mlir::Type m3bf16 = memref({2, dyn, 8}, b.getBF16Type());
  EXPECT_EQ(encodeCallName("ral_batch_gemm", "cpu", {m3bf16, m3bf16, m3bf16, i(1), i(1)}, {}),
            (ral::apiName<&batchGemm>("ral_batch_gemm", "cpu")));
  EXPECT_EQ(encodeCallName("ral_recv_input", "cpu", {b.getIndexType()},
                           {memref({1, 2, 3, dyn}, b.getF64Type())}),
            (ral::apiName<&recvInput>("ral_recv_input", "cpu")));
  // LLVM pointers are opaque: each one is a void*.
  mlir::Type void_ptr = mlir::LLVM::LLVMPointerType::get(&context_);
  EXPECT_EQ(encodeCallName("ral_alloc", "cpu", {i(64)}, {void_ptr}),
            (ral::apiName<&alloc>("ral_alloc", "cpu")));
  EXPECT_EQ(
      encodeCallName("mixed", "cuda", {memref({}, ui(16)), i(8), i(32), ui(64), void_ptr, void_ptr},
                     {memref({dyn}, b.getF16Type()), ui(8)}),
      (ral::apiName<&mixed>("mixed", "cuda")));
}

TEST_F(TypeCodesTest, RejectsTypesWithoutEncoding) {
  mlir::Builder b(&context_);
  mlir::Type bad;
  EXPECT_EQ(mlir::disc_ral::encodeCallName(
                "f", "cpu", {mlir::RankedTensorType::get({4}, b.getF32Type())}, {}, &bad),
            "");
  EXPECT_TRUE(mlir::isa<mlir::RankedTensorType>(bad));
  EXPECT_EQ(mlir::disc_ral::typeCode(mlir::UnrankedMemRefType::get(b.getF32Type(), {})), "");
  EXPECT_EQ(mlir::disc_ral::typeCode(memref({4}, b.getIndexType())), "");
  EXPECT_EQ(mlir::disc_ral::typeCode(memref({1, 1, 1, 1, 1, 1, 1, 1, 1}, b.getF32Type())), "");
  EXPECT_EQ(mlir::disc_ral::typeCode(i(7)), "");
  EXPECT_EQ(mlir::disc_ral::typeCode(mlir::disc_ral::ContextType::get(&context_)), "pvoid");
}

}  // namespace
