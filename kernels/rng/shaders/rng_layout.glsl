// Output view of the RNG shaders: element i (row-major logical order) lives at
// out_base + sum idx_d * strides[d].
const uint kMaxRank = 4;
const uint kGroupSize = 256;

int elementOffset(uint i, uint rank, int base, int sizes[kMaxRank], int strides[kMaxRank]) {
  uint rem = i;
  int off = base;
  for (int d = int(rank) - 1; d >= 0; --d) {
    const uint size = uint(sizes[d]);
    off += int(rem % size) * strides[d];
    rem /= size;
  }
  return off;
}
