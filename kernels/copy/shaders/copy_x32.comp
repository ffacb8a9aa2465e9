#version 450
// Strided copy of 32-bit elements.
#define ELEM uint
#include "strided.glsl"
#include "strided_copy.glsl"
