// unpack.comp: stored PNG samples to the float RGBA grid a filter transforms, on the GPU, so that
// only the samples as stored (8 or 16 bits) cross the bus.
//
// Reads:  u_stored, the image's samples exactly as the PNG reader gives them: rows of pixels of
//         u_channels samples (grey, grey+alpha, RGB, RGBA), one byte each, or with WIDE two
//         (16 bits, the machine's order), packed in 32-bit words; and u_table, RG32F 256 x N: the float value of each stored value,
//         .r for colour (linear light with --linear) and .g for alpha. The table is made on the
//         CPU by the code that converts on the CPU, so both paths give the same floats.
// Writes: u_grid, one FFT grid (or overlap-save tile): texel g holds image pixel u_origin + g,
//         extended beyond the edges by the boundary rule (BOUNDARY_REFLECT, _CLAMP, _ZERO, _WRAP),
//         grey expanded to R = G = B, a missing alpha 1, colour times alpha with PREMULTIPLY.
//         With STRIP, u_stored holds one strip of an image streamed by rows (strips.h): its rows are
//         the image rows that rows u_strip_origin, u_strip_origin + 1, ... of the boundary-extended
//         image read, already resolved on the CPU (beyond the top and bottom edges too), so only
//         columns are extended here; BOUNDARY_ZERO rows beyond the edges are zero.
//         With TEXTURE, the image is not samples but an RGBA texture, u_src: a frame the public API
//         copies in or pads to its filter's grid (extend_texture() in gpu_samples.cpp), a
//         rectangle texture, or a 2D one (level 0) with SOURCE_2D, of any float or normalised
//         format.
// Variants: BOUNDARY_*, PREMULTIPLY, WIDE, STRIP, TEXTURE, SOURCE_2D. u_channels (1-4) is a uniform: one program serves every format.
layout(local_size_x = 16, local_size_y = 16) in;

#if defined(TEXTURE) && defined(SOURCE_2D)
uniform sampler2D u_src;
#define fetch_src(p) texelFetch(u_src, p, 0)
#elif defined(TEXTURE)
uniform sampler2DRect u_src;
#define fetch_src(p) texelFetch(u_src, p)
#else
layout(std430, binding = 1) readonly buffer Stored { uint u_stored[]; };
uniform sampler2DRect u_table;
#endif
layout(rgba32f, binding = 0) writeonly uniform image2DRect u_grid;
uniform ivec2 u_image_size;
uniform ivec2 u_origin;
uniform ivec2 u_extent;  // the grid's size
uniform int u_channels;
uniform int u_strip_origin;  // STRIP: the extended image's row held in u_stored's first row

// The source index of coordinate i on an axis of n pixels (boundary_index in convolve.cpp); -1: zero.
// GLSL leaves % of negative numbers undefined, so negative coordinates are folded first.
int source_index(int i, int n) {
    if (i >= 0 && i < n) return i;
#if defined(BOUNDARY_ZERO)
    return -1;
#elif defined(BOUNDARY_CLAMP)
    return i < 0 ? 0 : n - 1;
#elif defined(BOUNDARY_WRAP)
    return i >= 0 ? i % n : n - 1 - (-1 - i) % n;
#elif defined(BOUNDARY_REFLECT)
    int r = (i >= 0 ? i : -1 - i) % (2 * n);  // period 2n: 0 1 .. n-1 n-1 .. 1 0, and i mirrors to -1 - i
    return r < n ? r : 2 * n - 1 - r;
#else
#error "one of BOUNDARY_REFLECT, BOUNDARY_CLAMP, BOUNDARY_ZERO, BOUNDARY_WRAP"
#endif
}

#ifndef TEXTURE
// Sample c of pixel (x, y).
uint stored(int x, int y, int c) {
    uint i = (uint(y) * uint(u_image_size.x) + uint(x)) * uint(u_channels) + uint(c);
#ifdef WIDE
    return (u_stored[i >> 1] >> ((i & 1u) * 16u)) & 65535u;
#else
    return (u_stored[i >> 2] >> ((i & 3u) * 8u)) & 255u;
#endif
}

vec2 value(uint stored) { return texelFetch(u_table, ivec2(int(stored & 255u), int(stored >> 8))).rg; }
#endif

void main() {
    ivec2 g = ivec2(gl_GlobalInvocationID.xy);
    if (g.x >= u_extent.x || g.y >= u_extent.y) return;
    int x = source_index(u_origin.x + g.x, u_image_size.x);
#ifdef STRIP
    int v = u_origin.y + g.y;  // a row of the extended image
#  ifdef BOUNDARY_ZERO
    int y = v >= 0 && v < u_image_size.y ? v - u_strip_origin : -1;
#  else
    int y = v - u_strip_origin;
#  endif
#else
    int y = source_index(u_origin.y + g.y, u_image_size.y);
#endif
    vec4 p = vec4(0.0);
#ifdef TEXTURE
    if (x >= 0 && y >= 0) p = fetch_src(ivec2(x, y));
#else
    if (x >= 0 && y >= 0) {
        p.rgb = u_channels <= 2 ? vec3(value(stored(x, y, 0)).r)
                                : vec3(value(stored(x, y, 0)).r, value(stored(x, y, 1)).r, value(stored(x, y, 2)).r);
        p.a = u_channels == 2 || u_channels == 4 ? value(stored(x, y, u_channels - 1)).g : 1.0;
#ifdef PREMULTIPLY
        precise vec3 premultiplied = p.rgb * p.a;  // one rounding each, as on the CPU
        p.rgb = premultiplied;
#endif
    }
#endif
    imageStore(u_grid, g, p);
}
