#version 450
// Strided fill of 32-bit elements.
#define ELEM uint
#define VALUE(v) v.x
#include "strided.glsl"
#include "strided_fill.glsl"
