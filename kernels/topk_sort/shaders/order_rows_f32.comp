#version 450
// ral_topk / ral_sort rows of f32 (order_rows.glsl).
#define ELEM float
#define ORDER_FLOAT
#include "order_rows.glsl"
