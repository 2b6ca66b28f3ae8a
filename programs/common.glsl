// common.glsl: texel addressing shared by the programs of the chain; prepended to each of them
// after its #version line and variant #defines.
//
// Texel (x, y) of an M x N image is column x, row y. It is fetched at the unnormalised coordinate
// (x + 0.5, y + 0.5) of a rectangle texture with GL_NEAREST, so every fetch returns one stored
// value exactly. Indices are floats holding integers below 2^24: sums, differences, floor(), and
// division by powers of two are exact in float arithmetic. Division by other lengths (the fast
// chain's sizes with factors 3, 5, 7) goes through idiv() and imod().
//
// A 1D transform runs ALONG an axis of length L (AXIS_ROWS: along x, L = M; AXIS_COLUMNS: along
// y, L = N). Its complex values are split ACROSS the other axis: the real part at across index a,
// the imaginary part at partner(a):
//   PAIR_TANGLED  two real sequences packed as one complex sequence (Eq. 7): row y < N/2 with
//                 row y + N/2, or column 0 with column M/2;  partner(a) = (a + K/2) mod K
//   PAIR_MIRROR   a complex column of the compressed layout (Eq. 10): column x in (0, M/2) holds
//                 the real part, column M - x the imaginary part;  partner(a) = K - a
// (K is the across length.)

uniform sampler2DRect u_src;   // the array A being transformed (an M x N texture)
uniform vec2 u_size;           // (M, N)

// x div y and x mod y for integer-valued x >= 0 and y > 0 (below 2^21). The quotient of x + 0.5
// lies at least 0.5 / y from an integer, so a division a few ulps off (GPUs do not round it
// correctly: 15.0 / 5.0 may give 2.9999998) still floors to the right integer.
float idiv(float x, float y) { return floor((x + 0.5) / y); }
float imod(float x, float y) { return x - y * idiv(x, y); }

float x_index() { return floor(gl_FragCoord.x); }
float y_index() { return floor(gl_FragCoord.y); }

// The fast chain (fft_radix.frag) keeps its arrays in planes: the layers of an array texture,
// written at once as render targets. Along the transformed axis of length L the array is cut into
// B blocks of L/B (B = ROW_BLOCKS for rows, COLUMN_BLOCKS for columns: 4 where 4 divides L, else
// 2); layer 2b holds the real parts of block b, layer 2b + 1 the imaginary parts.
//   SRC_ROW_PLANES     after the row FFT: complex element u (0..M-1) of row pair r (0..N/2-1),
//                      H_r(u) = FFT(row r + i row r + N/2), at (u mod M/B, r); layers (M/B) x (N/2)
//   SRC_COLUMN_PLANES  after the column FFT: complex element y (0..N-1) of column pair p
//                      (0..M/2-1: pair 0 is columns 0 and M/2 tangled, pair p the complex column
//                      of columns p and M - p), at (y mod N/B, p); layers (N/B) x (M/2)
// Both keep the transformed axis along x: a column stage reading 16 neighbours along y ran 1.4
// times slower on the H200 than the same stage reading them along x. fetch_xy then reads the
// texel the radix-2 chain would hold at (x, y).
#if defined(SRC_ROW_PLANES) || defined(SRC_COLUMN_PLANES)
#if !defined(ROW_BLOCKS) || !defined(COLUMN_BLOCKS)
#error "planes need ROW_BLOCKS and COLUMN_BLOCKS"
#endif
uniform sampler2DArray u_planes;
vec4 plane(vec2 position, vec2 layer_size, float layer) {
    return texture2DArray(u_planes, vec3((position + 0.5) / layer_size, layer));
}
// Complex element `along` of line `line` in planes whose layers are `size` (block length, lines).
void plane_element(float along, float line, vec2 size, out vec4 re, out vec4 im) {
    float b = idiv(along, size.x);
    vec2 position = vec2(along - b * size.x, line);
    re = plane(position, size, 2.0 * b);
    im = plane(position, size, 2.0 * b + 1.0);
}
#endif

#if defined(SRC_ROW_PLANES)
vec2 row_plane_size() { return vec2(u_size.x / float(ROW_BLOCKS), 0.5 * u_size.y); }
void row_element(float u, float r, out vec4 re, out vec4 im) { plane_element(u, r, row_plane_size(), re, im); }
vec4 fetch_xy(float x, float y) {
    vec2 size = row_plane_size();
    float b = idiv(x, size.x), imaginary = step(size.y, y);
    return plane(vec2(x - b * size.x, y - imaginary * size.y), size, 2.0 * b + imaginary);
}
#elif defined(SRC_COLUMN_PLANES)
vec2 column_plane_size() { return vec2(u_size.y / float(COLUMN_BLOCKS), 0.5 * u_size.x); }
void column_element(float y, float p, out vec4 re, out vec4 im) { plane_element(y, p, column_plane_size(), re, im); }
vec4 fetch_xy(float x, float y) {
    // Column x in (0, M/2) is the real part of pair x, column M - x its imaginary part; columns 0
    // and M/2 are the two parts of pair 0.
    float half_m = 0.5 * u_size.x, imaginary = step(half_m, x);
    float p = imaginary * imod(u_size.x - x, u_size.x) + (1.0 - imaginary) * x;
    p = p == half_m ? 0.0 : p;
    vec2 size = column_plane_size();
    float b = idiv(y, size.x);
    return plane(vec2(y - b * size.x, p), size, 2.0 * b + imaginary);
}
#else
vec4 fetch_xy(float x, float y) { return texture2DRect(u_src, vec2(x + 0.5, y + 0.5)); }
#endif

#if defined(AXIS_ROWS)
float along_length() { return u_size.x; }
float across_length() { return u_size.y; }
float along_index() { return x_index(); }
float across_index() { return y_index(); }
vec4 fetch(float along, float across) { return fetch_xy(along, across); }
#elif defined(AXIS_COLUMNS)
float along_length() { return u_size.y; }
float across_length() { return u_size.x; }
float along_index() { return y_index(); }
float across_index() { return x_index(); }
vec4 fetch(float along, float across) { return fetch_xy(across, along); }
#endif

#if defined(PAIR_TANGLED)
float partner(float a) { return imod(a + 0.5 * across_length(), across_length()); }
#elif defined(PAIR_MIRROR)
float partner(float a) { return across_length() - a; }
#endif
