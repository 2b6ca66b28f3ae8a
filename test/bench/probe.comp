// probe.comp: the compute-shader counterpart of probe.frag (bin/bench/passprobe): one invocation per
// texel reads FETCHES texels and writes one, through image load/store. Not part of the chain.
layout(local_size_x = 16, local_size_y = 16) in;
layout(binding = 0) uniform sampler2DRect u_src;
layout(rgba32f, binding = 0) uniform writeonly image2DRect u_dst;
uniform vec2 u_size;
uniform float u_stride;

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (p.x >= int(u_size.x) || p.y >= int(u_size.y)) return;
    vec4 sum = vec4(0.0);
    for (int k = 0; k < FETCHES; ++k)
        sum += texelFetch(u_src, ivec2((p.x + k * int(u_stride)) % int(u_size.x), p.y));
    imageStore(u_dst, p, sum);
}
