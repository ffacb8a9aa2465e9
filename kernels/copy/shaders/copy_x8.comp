#version 450
// Strided copy of 8-bit elements.
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#define ELEM uint8_t
#include "strided.glsl"
#include "strided_copy.glsl"
