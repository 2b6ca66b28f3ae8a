// multiply.frag: the complex product of two spectra in the 2D compressed layout (Eq. 10,
// Figure 2), written back in the same layout: the filtering step.
//
// Reads:  u_src (the image's spectrum A) and u_kernel (the impulse response's spectrum B), both
//         in the compressed layout. The texel written holds one part of a complex value whose
//         other part sits at its partner texel:
//           PARTNER_COLUMN  columns 0 < x < M/2 hold Re F(M-x, y), column M - x holds its Im
//           PARTNER_ROW     in columns 0 and M/2 (Eq. 9 along y): row 0 < y < N/2 holds Re F(x, y)
//                           and row N - y holds -Im F(x, y); row y > N/2 holds Im F(x, y) and
//                           row N - y its Re
//         The sign of -Im cancels in the product of the two imaginary parts.
// Writes: u_gain * (A B): PART_REAL Re(AB) = A_re B_re - A_im B_im; PART_IMAG Im(AB) =
//         A_re B_im + A_im B_re; PART_REAL_ONLY the four real values F(0|M/2, 0|N/2).
//         u_gain = M N undoes the second forward scaling (see filter.h).

uniform sampler2DRect u_kernel;
uniform float u_gain;

vec4 fetch_kernel(float x, float y) { return texture2DRect(u_kernel, vec2(x + 0.5, y + 0.5)); }

void main() {
    float x = x_index();
    float y = y_index();
#if defined(PARTNER_COLUMN)
    float px = u_size.x - x, py = y;
#elif defined(PARTNER_ROW)
    float px = x, py = u_size.y - y;
#endif
    vec4 a = fetch_xy(x, y), b = fetch_kernel(x, y);
#if defined(PART_REAL_ONLY)
    vec4 product = a * b;
#else
    vec4 a_other = fetch_xy(px, py), b_other = fetch_kernel(px, py);
#if defined(PART_REAL)
    vec4 product = a * b - a_other * b_other;   // self: re, partner: (+-) im
#elif defined(PART_IMAG)
    vec4 product = a_other * b + a * b_other;   // self: im, partner: re
#else
#error "multiply.frag needs PART_REAL_ONLY, PART_REAL or PART_IMAG"
#endif
#endif
    gl_FragColor = u_gain * product;
}
