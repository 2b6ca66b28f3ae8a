// common.glsl: texel addressing shared by the programs of the chain; prepended to each of them
// after its #version line and variant #defines.
//
// Texel (x, y) of an M x N image is column x, row y. It is fetched at the unnormalised coordinate
// (x + 0.5, y + 0.5) of a rectangle texture with GL_NEAREST, so every fetch returns one stored
// value exactly. Indices are floats holding integers below 2^24: sums, differences, floor(), and
// division by powers of two are exact in float arithmetic.
//
// A 1D transform runs ALONG an axis of length L (AXIS_ROWS: along x, L = M; AXIS_COLUMNS: along
// y, L = N). Its complex values are split ACROSS the other axis: the real part at across index a,
// the imaginary part at partner(a):
//   PAIR_TANGLED  two real sequences packed as one complex sequence (Eq. 7): row y < N/2 with
//                 row y + N/2, or column 0 with column M/2;  partner(a) = (a + K/2) mod K
//   PAIR_MIRROR   a complex column of the compressed layout (Eq. 10): column x in (0, M/2) holds
//                 the real part, column M - x the imaginary part;  partner(a) = K - a
// (K is the across length.)

uniform sampler2DRect u_src;   // the array A being transformed
uniform vec2 u_size;           // (M, N)

vec4 fetch_xy(float x, float y) { return texture2DRect(u_src, vec2(x + 0.5, y + 0.5)); }
float x_index() { return floor(gl_FragCoord.x); }
float y_index() { return floor(gl_FragCoord.y); }

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
float partner(float a) { return mod(a + 0.5 * across_length(), across_length()); }
#elif defined(PAIR_MIRROR)
float partner(float a) { return across_length() - a; }
#endif
