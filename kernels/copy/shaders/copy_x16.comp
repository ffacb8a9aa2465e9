#version 450
// Strided copy of 16-bit elements.
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#define ELEM uint16_t
#include "strided.glsl"
#include "strided_copy.glsl"
