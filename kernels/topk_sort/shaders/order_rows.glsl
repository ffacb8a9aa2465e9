// ral_topk / ral_sort on Vulkan (kernels/topk_sort/topk_sort_vulkan.cc launches it): each
// workgroup orders rows gl_WorkGroupID.x, + gl_NumWorkGroups.x, ... by a bitonic sort of
// (value, index) pairs in its own slot of the scratch buffers, then writes the first k. The
// order is the CPU kernel's: by value (NaN largest), equal values by lower index, so the result
// is exact, ties included.
//
// The including shader defines ELEM (the stored element type) and either ORDER_FLOAT (ELEM is
// float or double: NaN ranks above every number) or its own before(a, b, descending), strict
// "a comes first" on values (the integer types).
layout(local_size_x = 256) in;
const uint kGroupSize = 256;
const uint kLeadRank = 3;  // ranks 1-4: up to three leading dims

layout(std430, set = 0, binding = 0) readonly buffer In { ELEM x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Values { ELEM values[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Indices { uvec2 indices[]; };
layout(std430, set = 0, binding = 3) coherent buffer ScratchIndex { uint s_index[]; };
layout(std430, set = 0, binding = 4) coherent buffer ScratchValue { ELEM s_value[]; };
layout(push_constant) uniform Push {
  uint rows;         // product of the leading dims
  uint n;            // row length
  uint padded;       // n rounded up to a power of two (the scratch slot's length)
  uint log2_padded;
  uint k;            // entries written per row
  uint descending;
  uint lead_rank;    // rank - 1
  int x_base, values_base, indices_base, s_index_base, s_value_base;
  int x_step, values_step, indices_step;  // strides of the last dim
  int sizes[kLeadRank];
  int x_strides[kLeadRank];
  int values_strides[kLeadRank];
  int indices_strides[kLeadRank];
} pc;

#ifdef ORDER_FLOAT
bool before(ELEM a, ELEM b, bool descending) {
  const bool na = isnan(a), nb = isnan(b);
  if (na || nb) return descending ? (na && !nb) : (!na && nb);
  return descending ? a > b : a < b;
}
#endif

// Pair a = (va, ia) comes strictly before b = (vb, ib): by value, then by index; indices >= n
// (padding) last.
bool precedes(ELEM va, uint ia, ELEM vb, uint ib) {
  if (ia >= pc.n) return false;
  if (ib >= pc.n) return true;
  const bool desc = pc.descending != 0u;
  if (before(va, vb, desc)) return true;
  if (before(vb, va, desc)) return false;
  return ia < ib;
}

void rowOffsets(uint r, out int xo, out int vo, out int io) {
  xo = pc.x_base;
  vo = pc.values_base;
  io = pc.indices_base;
  uint rem = r;
  for (int d = int(pc.lead_rank) - 1; d >= 0; --d) {
    const uint size = uint(pc.sizes[d]);
    const int idx = int(rem % size);
    rem /= size;
    xo += idx * pc.x_strides[d];
    vo += idx * pc.values_strides[d];
    io += idx * pc.indices_strides[d];
  }
}

void syncScratch() {
  memoryBarrierBuffer();
  barrier();
}

void main() {
  const uint tid = gl_LocalInvocationID.x;
  // This workgroup's slot of the scratch buffers.
  const uint si = uint(pc.s_index_base) + gl_WorkGroupID.x * pc.padded;
  const uint sv = uint(pc.s_value_base) + gl_WorkGroupID.x * pc.padded;
  for (uint r = gl_WorkGroupID.x; r < pc.rows; r += gl_NumWorkGroups.x) {
    int xo, vo, io;
    rowOffsets(r, xo, vo, io);
    for (uint i = tid; i < pc.padded; i += kGroupSize) {
      s_index[si + i] = i;
      if (i < pc.n) s_value[sv + i] = x[xo + int(i) * pc.x_step];
    }
    syncScratch();
    // Stage (s, t) compares i and i + j, j = 2^(s-1-t), in blocks of 2^s that alternate
    // direction; each invocation takes pairs, so all work on every stage.
    for (uint s = 1u; s <= pc.log2_padded; ++s) {
      for (uint t = 0u; t < s; ++t) {
        const uint shift = s - 1u - t;
        const uint j = 1u << shift;
        for (uint p = tid; p < pc.padded / 2u; p += kGroupSize) {
          const uint i = ((p >> shift) << (shift + 1u)) + (p & (j - 1u));
          const uint l = i + j;
          const uint ia = s_index[si + i], ib = s_index[si + l];
          const ELEM va = s_value[sv + i], vb = s_value[sv + l];
          const bool ascending_block = (i & (1u << s)) == 0u;
          const bool swap = ascending_block ? precedes(vb, ib, va, ia) : precedes(va, ia, vb, ib);
          if (swap) {
            s_index[si + i] = ib;
            s_index[si + l] = ia;
            s_value[sv + i] = vb;
            s_value[sv + l] = va;
          }
        }
        syncScratch();
      }
    }
    // Every read of this row's input is behind the barrier above, so values may be the input.
    for (uint i = tid; i < pc.k; i += kGroupSize) {
      values[vo + int(i) * pc.values_step] = s_value[sv + i];
      indices[io + int(i) * pc.indices_step] = uvec2(s_index[si + i], 0u);
    }
    // Every loop over the slot gives invocation t the entries t, t + 256, ..., so the next
    // row's load could not race with these reads; the barrier keeps the rows apart regardless.
    syncScratch();
  }
}
