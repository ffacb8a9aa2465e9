#include "drivers/vulkan/spirv_reflect.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>

namespace ral::vulkan {
namespace {

constexpr uint32_t kMagic = 0x07230203;

// Opcodes, decorations, storage classes and modes from the SPIR-V specification.
enum Op : uint32_t {
  kOpEntryPoint = 15,
  kOpCapability = 17,
  kOpExecutionMode = 16,
  kOpTypeBool = 20,
  kOpTypeInt = 21,
  kOpTypeFloat = 22,
  kOpTypeVector = 23,
  kOpTypeMatrix = 24,
  kOpTypeImage = 25,
  kOpTypeSampler = 26,
  kOpTypeSampledImage = 27,
  kOpTypeArray = 28,
  kOpTypeRuntimeArray = 29,
  kOpTypeStruct = 30,
  kOpTypePointer = 32,
  kOpConstant = 43,
  kOpVariable = 59,
  kOpDecorate = 71,
  kOpMemberDecorate = 72,
  kOpExecutionModeId = 331,
};
constexpr uint32_t kExecutionModelGLCompute = 5;
constexpr uint32_t kModeLocalSize = 17;
constexpr uint32_t kModeLocalSizeId = 38;
constexpr uint32_t kDecorationBlock = 2;
constexpr uint32_t kDecorationBufferBlock = 3;
constexpr uint32_t kDecorationArrayStride = 6;
constexpr uint32_t kDecorationBinding = 33;
constexpr uint32_t kDecorationDescriptorSet = 34;
constexpr uint32_t kDecorationOffset = 35;
constexpr uint32_t kStorageUniformConstant = 0;
constexpr uint32_t kStorageUniform = 2;
constexpr uint32_t kStoragePushConstant = 9;
constexpr uint32_t kStorageStorageBuffer = 12;

struct Type {
  uint32_t op = 0;
  std::vector<uint32_t> operands;  // after the result id
};

struct Module {
  std::map<uint32_t, Type> types;
  std::map<uint32_t, uint32_t> constants;                                     // id → low 32 bits
  std::map<uint32_t, std::map<uint32_t, std::vector<uint32_t>>> decorations;  // id → dec → args
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> member_offsets;
  struct Variable {
    uint32_t type, storage;
  };
  std::map<uint32_t, Variable> variables;
};

std::optional<uint32_t> decoration(const Module& m, uint32_t id, uint32_t dec) {
  auto it = m.decorations.find(id);
  if (it == m.decorations.end()) return std::nullopt;
  auto d = it->second.find(dec);
  if (d == it->second.end()) return std::nullopt;
  return d->second.empty() ? 0u : d->second[0];
}

StatusOr<uint32_t> typeSize(const Module& m, uint32_t id, int depth = 0) {
  if (depth > 16) return invalidArgument("spirv: type nesting too deep");
  auto it = m.types.find(id);
  if (it == m.types.end()) return invalidArgument("spirv: unknown type %", id);
  const Type& t = it->second;
  auto operand = [&](size_t i) -> StatusOr<uint32_t> {
    if (i >= t.operands.size()) return invalidArgument("spirv: truncated type %", id);
    return t.operands[i];
  };
  switch (t.op) {
    case kOpTypeBool:
      return 4u;
    case kOpTypeInt:
    case kOpTypeFloat: {
      RAL_ASSIGN_OR_RETURN(uint32_t width, operand(0));
      return width / 8;
    }
    case kOpTypeVector:
    case kOpTypeMatrix: {
      RAL_ASSIGN_OR_RETURN(uint32_t comp, operand(0));
      RAL_ASSIGN_OR_RETURN(uint32_t count, operand(1));
      RAL_ASSIGN_OR_RETURN(uint32_t comp_size, typeSize(m, comp, depth + 1));
      return comp_size * count;
    }
    case kOpTypeArray: {
      RAL_ASSIGN_OR_RETURN(uint32_t elem, operand(0));
      RAL_ASSIGN_OR_RETURN(uint32_t length_id, operand(1));
      auto length = m.constants.find(length_id);
      if (length == m.constants.end())
        return unsupported("spirv: array length is not a plain constant");
      uint32_t stride = decoration(m, id, kDecorationArrayStride).value_or(0);
      if (stride == 0) {
        RAL_ASSIGN_OR_RETURN(stride, typeSize(m, elem, depth + 1));
      }
      return stride * length->second;
    }
    case kOpTypeStruct: {
      uint32_t size = 0;
      for (uint32_t i = 0; i < t.operands.size(); ++i) {
        auto off = m.member_offsets.find({id, i});
        const uint32_t offset = off == m.member_offsets.end() ? size : off->second;
        RAL_ASSIGN_OR_RETURN(uint32_t member, typeSize(m, t.operands[i], depth + 1));
        size = std::max(size, offset + member);
      }
      return size;
    }
    default:
      return unsupported("spirv: cannot size type %", id, " (opcode ", t.op, ")");
  }
}

// The pointee of pointer type `id`, with arrays of resources unwrapped.
StatusOr<uint32_t> pointee(const Module& m, uint32_t pointer_type) {
  auto it = m.types.find(pointer_type);
  if (it == m.types.end() || it->second.op != kOpTypePointer || it->second.operands.size() < 2)
    return invalidArgument("spirv: variable type %", pointer_type, " is not a pointer");
  return it->second.operands[1];
}

}  // namespace

StatusOr<SpirvInfo> reflectSpirv(const void* data, size_t size) {
  if (data == nullptr || size < 20 || size % 4 != 0)
    return invalidArgument("spirv: ", size,
                           " bytes is not a SPIR-V module (needs a multiple of 4, "
                           "at least 20)");
  std::vector<uint32_t> words(size / 4);
  std::memcpy(words.data(), data, size);
  if (words[0] != kMagic) return invalidArgument("spirv: bad magic number 0x", std::hex, words[0]);

  Module m;
  struct RawEntry {
    uint32_t id;
    std::string name;
  };
  std::vector<RawEntry> raw_entries;
  std::map<uint32_t, std::vector<uint32_t>> local_size, local_size_id;
  std::vector<uint32_t> capabilities;
  for (size_t pc = 5; pc < words.size();) {
    const uint32_t count = words[pc] >> 16, op = words[pc] & 0xffff;
    if (count == 0 || pc + count > words.size())
      return invalidArgument("spirv: truncated instruction at word ", pc);
    const uint32_t* w = &words[pc];
    switch (op) {
      case kOpCapability:
        if (count >= 2) capabilities.push_back(w[1]);
        break;
      case kOpEntryPoint:
        if (count >= 4 && w[1] == kExecutionModelGLCompute) {
          const char* s = reinterpret_cast<const char*>(&w[3]);
          const size_t max = (count - 3) * 4;
          raw_entries.push_back({w[2], std::string(s, strnlen(s, max))});
        }
        break;
      case kOpExecutionMode:
      case kOpExecutionModeId:
        if (count >= 6 && w[2] == kModeLocalSize) local_size[w[1]] = {w[3], w[4], w[5]};
        if (count >= 6 && w[2] == kModeLocalSizeId) local_size_id[w[1]] = {w[3], w[4], w[5]};
        break;
      case kOpTypeBool:
      case kOpTypeInt:
      case kOpTypeFloat:
      case kOpTypeVector:
      case kOpTypeMatrix:
      case kOpTypeImage:
      case kOpTypeSampler:
      case kOpTypeSampledImage:
      case kOpTypeArray:
      case kOpTypeRuntimeArray:
      case kOpTypeStruct:
        if (count >= 2) m.types[w[1]] = Type{op, std::vector<uint32_t>(w + 2, w + count)};
        break;
      case kOpTypePointer:
        if (count >= 4) m.types[w[1]] = Type{op, {w[2], w[3]}};
        break;
      case kOpConstant:
        if (count >= 4) m.constants[w[2]] = w[3];
        break;
      case kOpVariable:
        if (count >= 4) m.variables[w[2]] = {w[1], w[3]};
        break;
      case kOpDecorate:
        if (count >= 3) m.decorations[w[1]][w[2]] = std::vector<uint32_t>(w + 3, w + count);
        break;
      case kOpMemberDecorate:
        if (count >= 5 && w[3] == kDecorationOffset) m.member_offsets[{w[1], w[2]}] = w[4];
        break;
      default:
        break;
    }
    pc += count;
  }

  SpirvInfo info;
  info.capabilities = std::move(capabilities);
  for (const auto& e : raw_entries) {
    SpirvEntry entry;
    entry.name = e.name;
    if (auto it = local_size.find(e.id); it != local_size.end()) {
      entry.workgroup_size = Dim3{it->second[0], it->second[1], it->second[2]};
    } else if (auto id = local_size_id.find(e.id); id != local_size_id.end()) {
      uint32_t dims[3] = {0, 0, 0};
      for (int d = 0; d < 3; ++d) {
        auto c = m.constants.find(id->second[d]);
        dims[d] = c == m.constants.end() ? 0 : c->second;
      }
      entry.workgroup_size = Dim3{dims[0], dims[1], dims[2]};
    }
    info.entries.push_back(std::move(entry));
  }
  if (info.entries.empty()) return invalidArgument("spirv: the module has no compute entry point");

  for (const auto& [id, var] : m.variables) {
    if (var.storage == kStoragePushConstant) {
      RAL_ASSIGN_OR_RETURN(uint32_t block, pointee(m, var.type));
      RAL_ASSIGN_OR_RETURN(info.push_constant_size, typeSize(m, block));
      const Type& t = m.types[block];
      if (t.op == kOpTypeStruct) {
        for (uint32_t i = 0; i < t.operands.size(); ++i) {
          auto off = m.member_offsets.find({block, i});
          RAL_ASSIGN_OR_RETURN(uint32_t msize, typeSize(m, t.operands[i]));
          info.push_members.push_back({off == m.member_offsets.end() ? 0u : off->second, msize});
        }
      }
      continue;
    }
    if (var.storage != kStorageStorageBuffer && var.storage != kStorageUniform &&
        var.storage != kStorageUniformConstant)
      continue;
    const auto set = decoration(m, id, kDecorationDescriptorSet);
    const auto binding = decoration(m, id, kDecorationBinding);
    if (!set || !binding) continue;
    if (*set != 0)
      return unsupported("spirv: descriptor set ", *set, " is used; RAL binds set 0 only");
    if (var.storage == kStorageUniformConstant)
      return unsupported("spirv: binding ", *binding, " is an image or sampler; RAL binds buffers");
    RAL_ASSIGN_OR_RETURN(uint32_t block, pointee(m, var.type));
    BindingType type = BindingType::kStorageBuffer;
    if (var.storage == kStorageUniform && !decoration(m, block, kDecorationBufferBlock))
      type = BindingType::kUniformBuffer;
    if (m.types[block].op == kOpTypeArray || m.types[block].op == kOpTypeRuntimeArray)
      return unsupported("spirv: binding ", *binding, " is an array of buffers");
    info.bindings.push_back({*binding, type});
  }
  std::sort(info.bindings.begin(), info.bindings.end(),
            [](const SpirvBinding& a, const SpirvBinding& b) { return a.binding < b.binding; });
  for (size_t i = 1; i < info.bindings.size(); ++i)
    if (info.bindings[i].binding == info.bindings[i - 1].binding)
      return unsupported("spirv: two variables share binding ", info.bindings[i].binding);
  (void)kDecorationBlock;
  return info;
}

}  // namespace ral::vulkan
