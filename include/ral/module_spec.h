// Plain descriptions of what a module file (.ralm) holds: the signatures of the
// entry's inputs and outputs, device executables, constants. Shared by the builder (which writes
// them) and the loader (which reads them); no FlatBuffers types appear here.
#ifndef RAL_MODULE_SPEC_H_
#define RAL_MODULE_SPEC_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ral/abi.h"
#include "ral/driver.h"
#include "ral/dtype.h"
#include "ral/status.h"

namespace ral {

// A dimension whose size is only known when the module runs.
inline constexpr int64_t kDynamicDim = -1;

// One input or output of a module's entry.
//
// Its layout is the memory layout the compiled code addresses it with (the layout contract of
// ral/layout.h): empty `strides` is the identity layout (dense row-major, what a memref type
// without a layout means); otherwise one element stride per dimension, each a fixed value or
// kDynamicDim (any stride, read from the bound view at run time), as in the memref type
// `memref<?x?xf32, strided<[?, 1], offset: ?>>`. Offsets are not part of it: hosts pass the
// address of the first element. ral/layout.h checks views against it.
struct TensorSignature {
  std::string name;  // optional, for messages and tools
  DType dtype = DType::kInvalid;
  std::vector<int64_t> dims;  // kDynamicDim for dynamic dimensions; rank = dims.size()
  DeviceKind device = DeviceKind::kCpu;
  std::vector<int64_t> strides;  // empty: identity (row-major); else rank entries

  int rank() const { return static_cast<int>(dims.size()); }
  bool hasIdentityLayout() const { return strides.empty(); }
  // "2x?xf32" (the dims, then the element type; "f32" for a scalar), then ",strided<[?,1]>" for
  // a strided layout, then "@cuda" off the CPU.
  std::string toString() const;
  // toString() without the layout: "2x?xf32", "2xf16@cuda" (for messages about types).
  std::string typeString() const;
  // "row-major" or "strided<[?,1]>".
  std::string layoutString() const;
};

// Parses the form toString() prints: "2x3xf32", "?x4xi64", "f32", "2xf16@cuda",
// "?x?xf32,strided<[?,1]>" (spaces inside the layout allowed). A leading "name:" sets the name.
StatusOr<TensorSignature> parseTensorSignature(std::string_view text);

// "2x3xf32"-style text for a dtype and concrete shape.
std::string shapeString(DType dtype, const int64_t* dims, int rank);

// The code of an executable for one device architecture ("sm_80", "gfx90a").
struct ExecutableVariantDef {
  std::string target;
  std::vector<uint8_t> data;
};

// The host library compiled for a newer level of the host's CPU architecture (ral/host_variant.h
// names the targets a loader knows): same symbols, faster instructions.
struct HostVariantDef {
  std::string target;         // "x86-64-v3", "x86-64-v4"
  std::vector<uint8_t> data;  // ELF shared object
};

// A device executable stored in the module (a PTX/CUBIN/SPIR-V/HSACO blob, or host code): either
// `data`, for any device of the format's kind, or `variants`, one per target architecture (then
// `data` is empty).
struct ExecutableDef {
  std::string name;
  ExecutableFormat format = ExecutableFormat::kHostFunction;
  std::vector<uint8_t> data;
  std::vector<EntryPoint> entries;
  std::vector<ExecutableVariantDef> variants = {};
};

// A constant tensor, dense row-major; data.size() == numel * dtypeSize(dtype).
struct ConstantDef {
  std::string name;
  DType dtype = DType::kInvalid;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};

// Everything a module file holds.
struct ModuleSpec {
  uint32_t abi_version = RAL_ABI_VERSION;
  std::string name;
  std::string entry = "ral_entry";
  std::vector<TensorSignature> inputs;
  std::vector<TensorSignature> outputs;
  std::vector<uint8_t> host_library;          // ELF shared object following ral/abi.h
  std::vector<HostVariantDef> host_variants;  // loaded instead where the CPU runs them
  std::vector<ExecutableDef> executables;
  std::vector<ConstantDef> constants;
  std::vector<std::string> imports;  // the names of the library's ral_imports table, in order
};

// The integrity checksum stored for code blobs (64-bit, not cryptographic: it catches corrupt
// files, not forged ones).
uint64_t moduleChecksum(const void* data, size_t size);

// Alignment of constant data within a module file (and hence in a mapped module).
inline constexpr size_t kConstantAlignment = 64;

}  // namespace ral

#endif  // RAL_MODULE_SPEC_H_
