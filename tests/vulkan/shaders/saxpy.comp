#version 450
// y = a * x + y over n elements; two bindings and a mixed push-constant block.
layout(local_size_x = 32, local_size_y = 2) in;
layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform Push {
  float a;
  uint n;
} pc;
void main() {
  const uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 32;
  if (i < pc.n) y[i] = pc.a * x[i] + y[i];
}
