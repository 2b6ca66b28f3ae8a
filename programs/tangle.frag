// tangle.frag: the inverse of untangle.frag. Packs two real sequences' spectra F and G, stored in
// the Figure 1 / Eq. 9 layout, into H = F + jG (Eq. 7), so that one inverse FFT of H returns f in
// the real half and g in the imaginary half.
//
// Reads:  the real half of the pair holds F (index k <= L/2: F_re(k), k > L/2: F_im(k)), its
//         partner holds G likewise. With F(k) = F(L-k)*:
//           0 < k < L/2:  F_re(k) = A_f[k],    F_im(k) = -A_f[L-k]
//           L/2 < k < L:  F_re(k) = A_f[L-k],  F_im(k) = A_f[k]
// Writes: PART_REAL: H_re(k) = F_re(k) - G_im(k);  PART_IMAG: H_im(k) = F_im(k) + G_re(k).
// Variants: AXIS_ROWS | AXIS_COLUMNS; PART_REAL | PART_IMAG; HALF_LOW | HALF_HIGH.
//           k = 0 and k = L/2 are copied unchanged (pass.frag).

void main() {
    float k = along_index();
    float a = across_index();
    float mk = along_length() - k;
    float p = partner(a);
#if defined(PART_REAL) && defined(HALF_LOW)
    gl_FragColor = fetch(k, a) + fetch(mk, p);    // A_f[k] + A_g[L-k]
#elif defined(PART_REAL) && defined(HALF_HIGH)
    gl_FragColor = fetch(mk, a) - fetch(k, p);    // A_f[L-k] - A_g[k]
#elif defined(PART_IMAG) && defined(HALF_LOW)
    gl_FragColor = fetch(k, a) - fetch(mk, p);    // A_g[k] - A_f[L-k]  (self = g, partner = f)
#elif defined(PART_IMAG) && defined(HALF_HIGH)
    gl_FragColor = fetch(k, p) + fetch(mk, a);    // A_f[k] + A_g[L-k]
#else
#error "tangle.frag needs PART_REAL | PART_IMAG and HALF_LOW | HALF_HIGH"
#endif
}
