#version 450
// The conformance suite's argument kernel: push constants of 1, 2, 4, 8 and 16 bytes, written
// back word by word so every byte of every argument is checked.
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x = 1) in;
layout(std430, set = 0, binding = 0) buffer Out { uint data[]; };
layout(push_constant) uniform Push {
  uint8_t a;
  uint16_t b;
  uint c;
  uint64_t d;
  uvec4 e;
} pc;
void main() {
  data[0] = uint(pc.a);
  data[1] = uint(pc.b);
  data[2] = pc.c;
  data[3] = uint(pc.d & 0xffffffffUL);
  data[4] = uint(pc.d >> 32);
  data[5] = pc.e.x;
  data[6] = pc.e.y;
  data[7] = pc.e.z;
  data[8] = pc.e.w;
}
