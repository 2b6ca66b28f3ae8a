// sm_count.comp: the GPU's streaming multiprocessors, as NVIDIA's GL_NV_shader_thread_group tells
// a shader (gl_SMCountNV), for the compute backend's row tails (ComputeFft::row_tail): GL has no
// query of its own for it.
//
// Writes: u_count[0], the count. One invocation.
#extension GL_NV_shader_thread_group : require
layout(local_size_x = 1) in;

layout(std430, binding = 0) writeonly buffer Count { uint u_count[]; };

void main() { u_count[0] = gl_SMCountNV; }
