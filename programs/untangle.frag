// untangle.frag: splits the transform H = F + jG of two tangled real sequences f, g (Eq. 7) into
// F and G (Eq. 8) and scales them by u_scale (the row or column stage's factor of
// 1/(MN): sizes.h, normalisation).
//
// Reads:  the real half of the pair (rows y < N/2, or column 0) holds H_re; its partner H_im.
// Writes: Figure 1 / Eq. 9 layout along the axis: index k <= L/2 holds the real part of F(k)
//         (or G(k)), index k > L/2 its imaginary part. F(L-k) = F(k)* because f is real, so
//         k and L - k together give every value.
// Variants: AXIS_ROWS | AXIS_COLUMNS; PART_REAL (writes F, into the real half) | PART_IMAG (writes
//           G, into the imaginary half); HALF_LOW (0 < k < L/2) | HALF_HIGH (L/2 < k < L).
//           k = 0 and k = L/2 need no untangling (F(0) = H_re(0), G(0) = H_im(0)): scale.frag.

uniform float u_scale;

void main() {
    float k = along_index();
    float a = across_index();
    float mk = along_length() - k;   // L - k
#if defined(PART_REAL) && defined(HALF_LOW)
    vec4 twice = fetch(k, a) + fetch(mk, a);                     // 2 F_re(k) = H_re(k) + H_re(L-k)
#elif defined(PART_REAL) && defined(HALF_HIGH)
    vec4 twice = fetch(k, partner(a)) - fetch(mk, partner(a));   // 2 F_im(k) = H_im(k) - H_im(L-k)
#elif defined(PART_IMAG) && defined(HALF_LOW)
    vec4 twice = fetch(k, a) + fetch(mk, a);                     // 2 G_re(k) = H_im(k) + H_im(L-k)
#elif defined(PART_IMAG) && defined(HALF_HIGH)
    vec4 twice = fetch(mk, partner(a)) - fetch(k, partner(a));   // 2 G_im(k) = H_re(L-k) - H_re(k)
#else
#error "untangle.frag needs PART_REAL | PART_IMAG and HALF_LOW | HALF_HIGH"
#endif
    gl_FragColor = twice * (0.5 * u_scale);   // 0.5 * 2^-k: exact
}
