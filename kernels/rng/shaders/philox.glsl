// Philox4x32-10, line for line as kernels/philox.h (the definition every device follows).
const uint kMul0 = 0xD2511F53u;
const uint kMul1 = 0xCD9E8D57u;
const uint kWeyl0 = 0x9E3779B9u;
const uint kWeyl1 = 0xBB67AE85u;

uvec4 philox4x32_10(uvec4 c, uint k0, uint k1) {
  for (int round = 0; round < 10; ++round) {
    uint hi0, lo0, hi1, lo1;
    umulExtended(kMul0, c.x, hi0, lo0);
    umulExtended(kMul1, c.z, hi1, lo1);
    c = uvec4(hi1 ^ c.y ^ k0, lo1, hi0 ^ c.w ^ k1, lo0);
    k0 += kWeyl0;
    k1 += kWeyl1;
  }
  return c;
}

// Block `block` of the stream (seed, offset): counter = offset + block as a 64-bit sum.
uvec4 streamBlock(uint seed_lo, uint seed_hi, uint offset_lo, uint offset_hi, uint block) {
  const uint lo = offset_lo + block;
  const uint hi = offset_hi + (lo < block ? 1u : 0u);
  return philox4x32_10(uvec4(lo, hi, 0u, 0u), seed_lo, seed_hi);
}
