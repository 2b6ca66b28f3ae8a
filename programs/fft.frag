// fft.frag: one iteration of the radix-2 FFT in natural order (Eq. 6), along rows or columns.
//
// At iteration i the array A of length L holds L / 2^i partitions of size 2^i, interleaved at
// stride P = L / 2^i (Section 3). Each output is
//     A[n] <- A[e] + W_{2^i}^u A[o],   u = n div P,  e = (n + uP) mod L,  o = e + P,
// with W_{2^i}^u = W_L^(uP) read from the twiddle table. o < L always: e = p + 2P (u mod 2^(i-1))
// with p = n mod P < P, so e + P <= L - P + p < L.
//
// Reads:  u_src, complex values split across a pair (common.glsl); u_twiddle, texel k of its only
//         row = (cos, -sin)(2 pi k / T) = W_T^k, computed in double on the CPU.
// Writes: PART_REAL: the real part of A[n];  PART_IMAG: its imaginary part.
// Variants: AXIS_ROWS | AXIS_COLUMNS; PAIR_TANGLED (Figure 3's "tangled FFT") | PAIR_MIRROR
//           (its "standard FFT"); PART_REAL | PART_IMAG; INVERSE (W^-u: the conjugate twiddle).

#if !(defined(AXIS_ROWS) || defined(AXIS_COLUMNS)) || !(defined(PAIR_TANGLED) || defined(PAIR_MIRROR))
#error "fft.frag needs an AXIS_ and a PAIR_ variant"
#endif

uniform sampler2DRect u_twiddle;
uniform float u_stride;         // P
uniform float u_twiddle_step;   // T / L: table entries per step of W_L

void main() {
    float n = along_index();
    float a = across_index();
    float u = floor(n / u_stride);
    float e = mod(n + u * u_stride, along_length());
    float o = e + u_stride;
    vec2 w = texture2DRect(u_twiddle, vec2(u * u_stride * u_twiddle_step + 0.5, 0.5)).xy;
#ifdef INVERSE
    w.y = -w.y;
#endif
    vec4 even = fetch(e, a);
    vec4 odd = fetch(o, a);
    vec4 odd_other = fetch(o, partner(a));   // the other part of the odd value
#if defined(PART_REAL)
    // Re(E + W O) = E_re + W_re O_re - W_im O_im
    gl_FragColor = even + w.x * odd - w.y * odd_other;
#elif defined(PART_IMAG)
    // Im(E + W O) = E_im + W_re O_im + W_im O_re
    gl_FragColor = even + w.x * odd + w.y * odd_other;
#else
#error "fft.frag needs PART_REAL or PART_IMAG"
#endif
}
