#version 450
// ral_topk / ral_sort rows of i64, stored as uvec2 (low, high words) so the shader needs no
// 64-bit integer support from the device (order_rows.glsl).
#define ELEM uvec2
bool less64(uvec2 a, uvec2 b) {
  const int ha = int(a.y), hb = int(b.y);
  return ha < hb || (ha == hb && a.x < b.x);
}
bool before(uvec2 a, uvec2 b, bool descending) { return descending ? less64(b, a) : less64(a, b); }
#include "order_rows.glsl"
