#version 450
// Strided fill of 64-bit elements.
#define ELEM uvec2
#define VALUE(v) v
#include "strided.glsl"
#include "strided_fill.glsl"
