// dst[j] = src[i] over a strided view: ral_memcpy of non-contiguous operands and ral_transpose
// (the source strides arrive permuted). ELEM is the element type (by size).
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer Src { ELEM src[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Dst { ELEM dst[]; };
layout(push_constant) uniform Push {
  uint n;
  uint rank;
  int src_base;
  int dst_base;
  int sizes[kMaxRank];
  int src_strides[kMaxRank];
  int dst_strides[kMaxRank];
} pc;

void main() {
  const uint step = gl_NumWorkGroups.x * kGroupSize;
  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += step) {
    int s = pc.src_base, d = pc.dst_base;
    stridedOffsets(i, pc.rank, pc.sizes, pc.src_strides, pc.dst_strides, s, d);
    dst[d] = src[s];
  }
}
