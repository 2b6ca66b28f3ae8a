// pack.comp: the filtered float grid to the output PNG's samples, on the GPU, so that only the
// samples as stored (8 or 16 bits) cross the bus back.
//
// Reads:  u_src, the filter's float RGBA result; output pixel u_offset + q is grid texel
//         u_origin + q (the overlap-save crop). u_table, RG32F 256 x N: for each output value k
//         >= 1, the smallest float that the CPU's conversion (write_png's rounding, after the
//         --linear encoding for colour) takes to k or more; .r colour, .g alpha.
// Writes: u_out, unsigned integer samples in the output's layout (rows wider than a texture
//         folded below each other, u_fold): grey in .r, grey+alpha in .rg,
//         RGB in .rgb, RGBA. A binary search over the table gives exactly the CPU's value for every
//         float (NaN and values <= 0 to 0, >= 1 to the maximum), whatever the GPU's own rounding.
// Variants: OUT_FORMAT (rgba8ui or rgba16ui). Uniforms, so that one program serves every format:
//           u_channels (1-4), u_max (2^depth - 1), u_top (the largest power of two <= u_max).
layout(local_size_x = 16, local_size_y = 16) in;

uniform sampler2DRect u_src;
uniform sampler2DRect u_table;
layout(OUT_FORMAT, binding = 0) writeonly uniform uimage2DRect u_out;
uniform ivec2 u_origin;
uniform ivec2 u_offset;
uniform ivec2 u_extent;  // the tile's output pixels
uniform int u_channels;
uniform uint u_max;
uniform uint u_top;
uniform ivec2 u_fold;  // output pixel (x, y) is stored at (x % u_fold.x, y + (x / u_fold.x) * u_fold.y)

float threshold(uint k, int part) {
    vec2 t = texelFetch(u_table, ivec2(int(k & 255u), int(k >> 8))).rg;
    return part == 0 ? t.r : t.g;
}

// The number of output values k in 1..OUT_MAX whose threshold v reaches: the CPU's sample.
uint quantise(float v, int part) {
    uint k = 0u;
    for (uint step = u_top; step > 0u; step >>= 1)
        if (k + step <= u_max && v >= threshold(k + step, part)) k += step;
    return k;
}

void main() {
    ivec2 q = ivec2(gl_GlobalInvocationID.xy);
    if (q.x >= u_extent.x || q.y >= u_extent.y) return;
    vec4 v = texelFetch(u_src, u_origin + q);
    uvec4 o = uvec4(quantise(v.r, 0), 0u, 0u, 0u);
    if (u_channels == 2) o.g = quantise(v.a, 1);
    if (u_channels >= 3) o.gb = uvec2(quantise(v.g, 0), quantise(v.b, 0));
    if (u_channels == 4) o.a = quantise(v.a, 1);
    ivec2 p = u_offset + q;
    imageStore(u_out, ivec2(p.x % u_fold.x, p.y + (p.x / u_fold.x) * u_fold.y), o);
}
