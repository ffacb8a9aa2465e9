#version 450
// ral_rng_uniform for f64: element i <- block i/2, words a = w[2(i%2)], b = w[2(i%2)+1];
// u = ((a >> 5) * 2^26 + (b >> 6)) * 2^-53 (exact); r = low + u * span, separately rounded,
// exactly as kernels/philox.h.
#include "philox.glsl"
#include "rng_layout.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) writeonly buffer Out { double data[]; };
layout(push_constant) uniform Push {
  double low;
  double span;
  uint n;
  uint rank;
  int out_base;
  uint seed_lo, seed_hi, offset_lo, offset_hi;
  int sizes[kMaxRank];
  int strides[kMaxRank];
  uint pad;  // the block is as large as the C++ struct (8-byte aligned)
} pc;

void main() {
  const uint blocks = (pc.n + 1u) / 2u;
  const uint step = gl_NumWorkGroups.x * kGroupSize;
  for (uint b = gl_GlobalInvocationID.x; b < blocks; b += step) {
    const uvec4 w = streamBlock(pc.seed_lo, pc.seed_hi, pc.offset_lo, pc.offset_hi, b);
    for (uint j = 0; j < 2u; ++j) {
      const uint i = b * 2u + j;
      if (i >= pc.n) break;
      precise double bits = double(w[2 * j] >> 5) * 67108864.0lf + double(w[2 * j + 1] >> 6);
      precise double u = bits * (1.0lf / 9007199254740992.0lf);
      precise double r = pc.low + u * pc.span;
      data[elementOffset(i, pc.rank, pc.out_base, pc.sizes, pc.strides)] = r;
    }
  }
}
