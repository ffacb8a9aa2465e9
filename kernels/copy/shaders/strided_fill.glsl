// dst[j] = value over a strided view: ral_memset of non-contiguous operands. ELEM is the element
// type; VALUE(v) turns the 64-bit pattern (uvec2, little-endian) into an ELEM.
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) writeonly buffer Dst { ELEM dst[]; };
layout(push_constant) uniform Push {
  uvec2 value;
  uint n;
  uint rank;
  int dst_base;
  int pad;
  int sizes[kMaxRank];
  int dst_strides[kMaxRank];
} pc;

void main() {
  const uint step = gl_NumWorkGroups.x * kGroupSize;
  const ELEM v = VALUE(pc.value);
  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += step) {
    int d = pc.dst_base, unused = 0;
    stridedOffsets(i, pc.rank, pc.sizes, pc.dst_strides, pc.dst_strides, d, unused);
    dst[d] = v;
  }
}
