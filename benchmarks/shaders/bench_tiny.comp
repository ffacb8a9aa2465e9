#version 450
// The benchmark's tiny kernel: one workgroup writes 64 words.
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) buffer Data { uint data[]; };
layout(push_constant) uniform Push { uint add; } pc;
void main() { data[gl_LocalInvocationID.x] += pc.add; }
