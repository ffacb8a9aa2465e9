#version 450
// C = op(A) * op(B) in f32, tiled: a 16x16 workgroup computes a 64x64 block of C, each invocation
// a 4x4 sub-block, staging 64x16 slices of op(A) and 16x64 slices of op(B) in shared memory.
// Operands are strided (element strides and base offsets in push constants), so transposes and
// views need no copies: op(A)(i, k) = a[a_base + i * a_rs + k * a_cs].
layout(local_size_x = 16, local_size_y = 16) in;

layout(std430, set = 0, binding = 0) readonly buffer A { float a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { float b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer C { float c[]; };

layout(push_constant) uniform Push {
  uint m, n, k;
  int a_base, b_base, c_base;
  int a_rs, a_cs, b_rs, b_cs, c_rs, c_cs;
} pc;

const uint TILE = 64, DEPTH = 16, THREADS = 256;

shared float As[DEPTH][TILE];
shared float Bs[DEPTH][TILE];

void main() {
  const uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  const uint tid = ty * 16 + tx;
  const uint row0 = gl_WorkGroupID.y * TILE, col0 = gl_WorkGroupID.x * TILE;
  float acc[4][4];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) acc[i][j] = 0.0;

  for (uint k0 = 0; k0 < pc.k; k0 += DEPTH) {
    for (uint l = 0; l < 4; ++l) {
      const uint e = tid + l * THREADS;  // 0..1023
      // A slice: 64 rows x 16 columns of k, k fastest (contiguous for row-major A).
      const uint r = e / DEPTH, kk = e % DEPTH;
      const uint gr = row0 + r, gk = k0 + kk;
      As[kk][r] = (gr < pc.m && gk < pc.k)
                      ? a[pc.a_base + int(gr) * pc.a_rs + int(gk) * pc.a_cs] : 0.0;
      // B slice: 16 rows of k x 64 columns, columns fastest.
      const uint kb = e / TILE, cb = e % TILE;
      const uint gkb = k0 + kb, gc = col0 + cb;
      Bs[kb][cb] = (gkb < pc.k && gc < pc.n)
                       ? b[pc.b_base + int(gkb) * pc.b_rs + int(gc) * pc.b_cs] : 0.0;
    }
    barrier();
    for (uint kk = 0; kk < DEPTH; ++kk) {
      float av[4], bv[4];
      for (uint i = 0; i < 4; ++i) av[i] = As[kk][ty + 16 * i];
      for (uint j = 0; j < 4; ++j) bv[j] = Bs[kk][tx + 16 * j];
      for (uint i = 0; i < 4; ++i)
        for (uint j = 0; j < 4; ++j) acc[i][j] += av[i] * bv[j];
    }
    barrier();
  }

  for (uint i = 0; i < 4; ++i) {
    const uint gr = row0 + ty + 16 * i;
    if (gr >= pc.m) continue;
    for (uint j = 0; j < 4; ++j) {
      const uint gc = col0 + tx + 16 * j;
      if (gc < pc.n) c[pc.c_base + int(gr) * pc.c_rs + int(gc) * pc.c_cs] = acc[i][j];
    }
  }
}
