// serialize.comp: the output's samples, packed by pack.comp into an integer texture, as the bytes of
// PNG rows (what write_png_samples takes), so that one plain buffer copy brings them back.
//
// Reads:  u_samples, the packed output (RGBA8UI or RGBA16UI; grey in .r, grey+alpha in .rg, RGB in
//         .rgb), u_image_size x u_channels samples.
// Writes: u_bytes, 32-bit words: rows of pixels of u_channels samples, one byte each, or with WIDE
//         two (16 bits, the machine's order). One invocation writes one word, so that no two
//         invocations share a word; samples past the end are zero.
// Variants: WIDE.
layout(local_size_x = 256) in;

uniform usampler2DRect u_samples;
layout(std430, binding = 2) writeonly buffer Bytes { uint u_bytes[]; };
uniform ivec2 u_image_size;
uniform int u_channels;
uniform ivec2 u_fold;  // as pack.comp stored the pixels: (x % u_fold.x, y + (x / u_fold.x) * u_fold.y)

#ifdef WIDE
const uint kPerWord = 2u, kBits = 16u;
#else
const uint kPerWord = 4u, kBits = 8u;
#endif

// Sample i of the image, row by row.
uint sample_at(uint i) {
    uint pixel = i / uint(u_channels), c = i % uint(u_channels);
    int x = int(pixel % uint(u_image_size.x)), y = int(pixel / uint(u_image_size.x));
    uvec4 s = texelFetch(u_samples, ivec2(x % u_fold.x, y + (x / u_fold.x) * u_fold.y));
    return c == 0u ? s.r : c == 1u ? s.g : c == 2u ? s.b : s.a;
}

void main() {
    uint word = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    uint samples = uint(u_image_size.x) * uint(u_image_size.y) * uint(u_channels);
    uint first = word * kPerWord;
    if (first >= samples) return;
    uint w = 0u;
    for (uint k = 0u; k < kPerWord && first + k < samples; ++k) w |= sample_at(first + k) << (k * kBits);
    u_bytes[word] = w;
}
