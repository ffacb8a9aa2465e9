#version 450
// ral_rng_uniform for f32: element i <- block i/4, word i%4; u = (w >> 8) * 2^-24 (exact);
// r = low + u * span with each operation rounded separately (`precise`: no fused multiply-add),
// exactly as kernels/philox.h, so the bits equal the CPU's.
#include "philox.glsl"
#include "rng_layout.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) writeonly buffer Out { float data[]; };
layout(push_constant) uniform Push {
  uint n;
  uint rank;
  int out_base;
  uint seed_lo, seed_hi, offset_lo, offset_hi;
  float low;
  float span;
  int sizes[kMaxRank];
  int strides[kMaxRank];
} pc;

void main() {
  const uint blocks = (pc.n + 3u) / 4u;
  const uint step = gl_NumWorkGroups.x * kGroupSize;
  for (uint b = gl_GlobalInvocationID.x; b < blocks; b += step) {
    const uvec4 w = streamBlock(pc.seed_lo, pc.seed_hi, pc.offset_lo, pc.offset_hi, b);
    for (uint j = 0; j < 4u; ++j) {
      const uint i = b * 4u + j;
      if (i >= pc.n) break;
      precise float u = float(w[j] >> 8) * (1.0 / 16777216.0);
      precise float r = pc.low + u * pc.span;
      data[elementOffset(i, pc.rank, pc.out_base, pc.sizes, pc.strides)] = r;
    }
  }
}
