#version 450
// ral_topk / ral_sort rows of i32 (order_rows.glsl).
#define ELEM int
bool before(int a, int b, bool descending) { return descending ? a > b : a < b; }
#include "order_rows.glsl"
