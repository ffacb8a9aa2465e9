#version 450
// data[i] = i + add, for i < n.
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) buffer Data { uint data[]; };
layout(push_constant) uniform Push {
  uint n;
  uint add;
} pc;
void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i < pc.n) data[i] = i + pc.add;
}
