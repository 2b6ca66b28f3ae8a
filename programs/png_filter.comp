// png_filter.comp: the output's PNG rows under Paeth (filter type 4, the PNG specification's
// section 9), as the fast writer filters every row, made on the GPU for run_coder.comp to
// deflate there.
//
// Reads:  u_bytes, serialize.comp's rows: u_row_shape.y rows of u_row_shape.x bytes, pixels of
//         u_row_shape.z bytes; with u_row_shape.w 16-bit samples in the machine's order.
// Writes: u_filtered, the stream deflate takes: each row its filter byte (4), then each byte x
//         less the Paeth predictor of its left (a), upper (b) and upper-left (c) bytes, mod 256,
//         16-bit samples big-endian as the file stores them (bytes before a row or above the
//         first are 0). One invocation writes one 32-bit word (four bytes, the first lowest).
layout(local_size_x = 256) in;

layout(std430, binding = 2) readonly buffer Bytes { uint u_bytes[]; };
layout(std430, binding = 3) writeonly buffer Filtered { uint u_filtered[]; };
uniform ivec4 u_row_shape;  // bytes a row, rows, bytes a pixel, 1 for 16-bit samples

// Byte k of a row as the file stores it.
uint stored(uint row, uint k) {
    uint i = row * uint(u_row_shape.x) + (u_row_shape.w != 0 ? k ^ 1u : k);
    return (u_bytes[i >> 2] >> ((i & 3u) * 8u)) & 255u;
}

// The predictor: of a, b and c the one nearest a + b - c, ties to a, then b.
uint paeth(uint a, uint b, uint c) {
    int p = int(a) + int(b) - int(c);
    int pa = abs(p - int(a)), pb = abs(p - int(b)), pc = abs(p - int(c));
    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

uint filtered(uint at) {
    uint stride = uint(u_row_shape.x) + 1u, bpp = uint(u_row_shape.z);
    uint row = at / stride, k = at % stride;
    if (k == 0u) return 4u;
    k -= 1u;
    uint a = k >= bpp ? stored(row, k - bpp) : 0u;
    uint b = row > 0u ? stored(row - 1u, k) : 0u;
    uint c = row > 0u && k >= bpp ? stored(row - 1u, k - bpp) : 0u;
    return (stored(row, k) - paeth(a, b, c)) & 255u;
}

void main() {
    uint word = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    uint length = (uint(u_row_shape.x) + 1u) * uint(u_row_shape.y);
    uint first = word * 4u;
    if (first >= length) return;
    uint w = 0u;
    for (uint j = 0u; j < 4u && first + j < length; ++j) w |= filtered(first + j) << (8u * j);
    u_filtered[word] = w;
}
