#version 450
// ral_topk / ral_sort rows of f64 (order_rows.glsl).
#define ELEM double
#define ORDER_FLOAT
#include "order_rows.glsl"
