#version 450
// ral_topk / ral_sort rows of f64 (order_rows.glsl).
#define ELEM double
bool before(double a, double b, bool descending) {
  const bool na = isnan(a), nb = isnan(b);
  if (na || nb) return descending ? (na && !nb) : (!na && nb);
  return descending ? a > b : a < b;
}
#include "order_rows.glsl"
