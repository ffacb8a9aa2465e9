// Shared by the strided copy and fill shaders: the element offsets of logical (row-major) element
// i of a rank-`rank` view, for up to two views with their own strides.
const uint kMaxRank = 6;
const uint kGroupSize = 256;

void stridedOffsets(uint i, uint rank, int sizes[kMaxRank], int strides_a[kMaxRank],
                    int strides_b[kMaxRank], inout int a, inout int b) {
  uint rem = i;
  for (int d = int(rank) - 1; d >= 0; --d) {
    const uint size = uint(sizes[d]);
    const uint idx = rem % size;
    rem /= size;
    a += int(idx) * strides_a[d];
    b += int(idx) * strides_b[d];
  }
}
