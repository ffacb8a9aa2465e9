#version 450
// ral_topk / ral_sort rows of f32 (order_rows.glsl).
#define ELEM float
bool before(float a, float b, bool descending) {
  const bool na = isnan(a), nb = isnan(b);
  if (na || nb) return descending ? (na && !nb) : (!na && nb);
  return descending ? a > b : a < b;
}
#include "order_rows.glsl"
