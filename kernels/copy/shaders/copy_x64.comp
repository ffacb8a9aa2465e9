#version 450
// Strided copy of 64-bit elements.
#define ELEM uvec2
#include "strided.glsl"
#include "strided_copy.glsl"
