#version 450
// data[i] += 1 for i < n: each launch depends on the previous one, which makes ordering visible.
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) buffer Data { uint data[]; };
layout(push_constant) uniform Push { uint n; } pc;
void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i < pc.n) data[i] += 1u;
}
