// fft_radix.frag: the FFT program of Figure 3 at mixed radix (2 to 28: powers of two, 3, 5, 7 and
// their products), each fragment computing B outputs of a stage (B = 4, or 2 along an axis of
// 2 mod 4) and writing them, real and imaginary parts, to 2B render targets (the planes of
// common.glsl). Passes on this chip are
// bound by the bytes they write (README: "What bounds a fragment pass"), so the fewer full passes
// the better: log16 L per axis instead of log2 L, with the untangle, multiply and tangle steps
// riding on loads, stores and one pass between the stages.
//
// Eq. 6 at radix R: after a stage the array of length L holds P = L / S partitions of size S at
// stride P, where S = R S_previous. A fragment at q < L/B writes A'[q + b L/B], b < B (stage()
// below: where B divides R, the B outputs of one butterfly; else two or four butterflies'),
// natural order in and out: no bit reversal. The twiddles W_L^(t u P) come from a table made in
// double on the CPU: texel (a, j) = (W_L^((2j+1) a), W_L^((2j+2) a)).
//
// Variants
//   AXIS_ROWS | AXIS_COLUMNS, RADIX (2 .. 28), INVERSE (conjugate twiddles, W_4^(-b s)),
//   ROW_BLOCKS, COLUMN_BLOCKS (B of the row and column planes: 4 or 2; B above is the axis's),
//   TWIDDLE_COMPUTED (W from sin and cos in the shader instead of the table: measured, not default)
//   where the inputs come from:
//     LOAD_PLANES         the planes of the previous stage (SRC_ROW_PLANES / SRC_COLUMN_PLANES)
//     LOAD_IMAGE          the real image: rows r and r + N/2 as one complex row (Eq. 7)
//     LOAD_UNTANGLE_ROWS  the row stage's output untangled (Eq. 8) and scaled by u_scale (the rows' factor of 1/(MN): sizes.h, normalisation)
//                         on the way into the column stage; PAIR_TANGLED (columns 0 and M/2) or
//                         PAIR_MIRROR (columns p and M - p)
//     LOAD_SPECTRUM       a spectrum in the compressed layout of Eq. 10 (the inverse transform)
//     LOAD_MULTIPLY       the column stage's output times the kernel's spectrum (Eq. 10, u_kernel)
//                         times u_gain, untangled and tangled again for pair 0 (where the last
//                         forward column stage has radix 16)
//     LOAD_ROW_PAIRS      the tangled row pairs that STORE_ROW_PAIRS left in the column planes
//   what the pass computes:
//     (default)           one stage: B outputs of one, two or four butterflies
//     MULTIPLY_BETWEEN    the last forward column stage (stride 1), the filter's multiply by the
//                         kernel's spectrum (Eq. 10, u_kernel) times u_gain, and the first inverse
//                         column stage (stride N/R = u_stride): the forward butterfly u' leaves its
//                         R outputs at v = u' + k N/R, exactly the inputs of inverse butterfly u'.
//                         PAIR_TANGLED untangles columns 0 and M/2 (Eq. 8) around the multiply.
//                         For radix 4 and 8 (so B = 4): at 16 its arrays spill (57 ms instead of
//                         ~9 at 4096^2).
//   where the outputs go:
//     STORE_PLANES        B complex outputs to the 2B planes
//     STORE_ROW_PAIRS     the last inverse column stage: its outputs c_p(q + b N/B) hold rows q and
//                         q + N/2 (b = 0, B/2) and, where B = 4, q + N/4 and q + 3N/4 (b = 1, 3), so
//                         it can write the row pairs H_r(u) = F_r(u) + i F_(r+N/2)(u) of Eq. 7
//                         directly: layers (0,1) H_q(u_hi), (2,3) H_q(u_lo), and where B = 4 (4,5)
//                         H_(q+N/4)(u_hi), (6,7) H_(q+N/4)(u_lo), with (u_hi, u_lo) = (M - p, p), or
//                         (M/2, 0) for pair 0
//     STORE_IMAGE         one texel of the M x N image (the last inverse row stage): the real part
//                         for rows y < N/2, the imaginary part (row y - N/2's values) above

#if !defined(RADIX) || !(defined(AXIS_ROWS) || defined(AXIS_COLUMNS))
#error "fft_radix.frag needs RADIX and an AXIS_ variant"
#endif
#if !(defined(STORE_PLANES) || defined(STORE_IMAGE) || defined(STORE_ROW_PAIRS))
#error "fft_radix.frag needs a STORE_ variant"
#endif
#if !defined(ROW_BLOCKS) || !defined(COLUMN_BLOCKS)
#error "fft_radix.frag needs ROW_BLOCKS and COLUMN_BLOCKS"
#endif

// BLOCKS (B above): the blocks of this axis's planes, the outputs each fragment computes.
#if defined(AXIS_ROWS)
#define BLOCKS ROW_BLOCKS
#else
#define BLOCKS COLUMN_BLOCKS
#endif
#if defined(MULTIPLY_BETWEEN) && BLOCKS != 4
#error "MULTIPLY_BETWEEN needs 4 blocks (radix 4 or 8 last)"
#endif

// G: how many of a fragment's B outputs share a butterfly (plan.cpp's butterfly_outputs(), which
// the twiddle table and the cost model read). Q and Q + L/G are outputs k and k + R/G of one
// butterfly where G divides R (and B).
#if BLOCKS == 4 && RADIX % 4 == 0
#define G 4
#elif RADIX % 2 == 0
#define G 2
#else
#define G 1
#endif

uniform sampler2DRect u_twiddle;
uniform sampler2DRect u_kernel;
uniform float u_stride;   // P
uniform float u_scale;    // LOAD_UNTANGLE_ROWS: the rows' factor of 1/(MN), 1/2^k
uniform float u_gain;     // MULTIPLY_BETWEEN: 2^k, the image's row factor given back (the kernel spectrum carries 1/(MN))

// The value selected by `flag` (0 or 1), without branching.
vec4 pick(vec4 a, vec4 b, float flag) { return mix(a, b, flag); }

// W_16^m = exp(-2 pi i m / 16), from cos(pi/8), sin(pi/8) and sqrt(1/2) in double, rounded once.
const float C1 = 0.92387953251128676, S1 = 0.38268343236508977, H = 0.70710678118654752;
const vec2 W16[16] = vec2[16](vec2(1.0, 0.0), vec2(C1, -S1), vec2(H, -H), vec2(S1, -C1), vec2(0.0, -1.0), vec2(-S1, -C1),
                              vec2(-H, -H), vec2(-C1, -S1), vec2(-1.0, 0.0), vec2(-C1, S1), vec2(-H, H), vec2(-S1, C1),
                              vec2(0.0, 1.0), vec2(S1, C1), vec2(H, H), vec2(C1, S1));
// W_R^m, forward.
vec2 root(int m) { return W16[(m - RADIX * (m / RADIX)) * (16 / RADIX)]; }

// x * w for complex x (two vec4: the four channels) and w.
void rotate(inout vec4 re, inout vec4 im, vec2 w) {
    vec4 r = re * w.x - im * w.y;
    im = re * w.y + im * w.x;
    re = r;
}

// W_L^(t a) from the table (or computed), for t = 1 .. R-1 and a < L (L/4 where B = 4 divides every radix).
vec2 twiddle(int t, float a, float L) {
#ifdef TWIDDLE_COMPUTED
    // The exponent reduced exactly, the angle rounded once to float, then the GPU's sin and cos.
    float angle = -6.2831853071795865 * imod(float(t) * a, L) / L;
    return vec2(cos(angle), sin(angle));
#else
    vec4 pair = texture2DRect(u_twiddle, vec2(a + 0.5, float((t - 1) / 2) + 0.5));
    return (t - 1) == 2 * ((t - 1) / 2) ? pair.xy : pair.zw;
#endif
}

#if defined(LOAD_SPECTRUM) || defined(LOAD_MULTIPLY) || defined(MULTIPLY_BETWEEN)
// F(x, v) for x = 0 or M/2 from Eq. 9 along v: v in {0, N/2}: (A[v], 0); 0 < v < N/2: (A[v], -A[N-v]);
// v > N/2: (A[N-v], A[v]).
void real_column(sampler2DRect tex, float x, float v, out vec4 re, out vec4 im) {
    float n = u_size.y;
    vec4 a = texture2DRect(tex, vec2(x + 0.5, v + 0.5));
    vec4 b = texture2DRect(tex, vec2(x + 0.5, imod(n - v, n) + 0.5));
    float low = step(1.0, v) * step(v, 0.5 * n - 1.0), high = step(0.5 * n + 1.0, v);
    re = pick(a, b, high);
    im = high * a - low * b;
}
#endif

// ---- load(m, a, re, im): element m of line a (row pair r, or column pair p) of the sequence this
// stage transforms.
#if defined(LOAD_PLANES) && defined(AXIS_ROWS)
void load(float m, float a, out vec4 re, out vec4 im) { row_element(m, a, re, im); }

#elif defined(LOAD_PLANES) && defined(AXIS_COLUMNS)
void load(float m, float a, out vec4 re, out vec4 im) { column_element(m, a, re, im); }

#elif defined(LOAD_IMAGE)
void load(float m, float a, out vec4 re, out vec4 im) {
    re = fetch_xy(m, a);
    im = fetch_xy(m, a + 0.5 * u_size.y);
}

#elif defined(LOAD_UNTANGLE_ROWS) && defined(PAIR_MIRROR)
// Element y of column pair p is F_y(M - p), the spectrum of real row y at M - p. With r = y mod N/2,
// H = H_r(M - p) and H' = H_r(p) = H_r(M - u): 2 F = H + conj H' for y < N/2 (row r), and
// 2 F = -i (H - conj H') for y >= N/2 (row r + N/2): Eq. 8.
void load(float y, float p, out vec4 re, out vec4 im) {
    float half_n = 0.5 * u_size.y, upper = step(half_n, y), r = y - upper * half_n;
    vec4 hr, hi, gr, gi;
    row_element(u_size.x - p, r, hr, hi);
    row_element(p, r, gr, gi);
    re = 0.5 * u_scale * pick(hr + gr, hi + gi, upper);
    im = 0.5 * u_scale * pick(hi - gi, gr - hr, upper);
}

#elif defined(LOAD_UNTANGLE_ROWS) && defined(PAIR_TANGLED)
// Element y of column pair 0 is F_y(0) + i F_y(M/2), both real: the real or imaginary parts of
// H_r(0) and H_r(M/2) (Eq. 8 at k = 0 and M/2).
void load(float y, float p, out vec4 re, out vec4 im) {
    float half_n = 0.5 * u_size.y, upper = step(half_n, y), r = y - upper * half_n;
    vec4 h0r, h0i, hmr, hmi;
    row_element(0.0, r, h0r, h0i);
    row_element(0.5 * u_size.x, r, hmr, hmi);
    re = u_scale * pick(h0r, h0i, upper);
    im = u_scale * pick(hmr, hmi, upper);
}

#elif defined(LOAD_SPECTRUM) && defined(PAIR_MIRROR)
// Column p holds the real part and column M - p the imaginary part of F(M - p, v) (Eq. 10).
void load(float v, float p, out vec4 re, out vec4 im) {
    re = fetch_xy(p, v);
    im = fetch_xy(u_size.x - p, v);
}

#elif defined(LOAD_SPECTRUM) && defined(PAIR_TANGLED)
// Columns 0 and M/2 tangled again: F(0, v) + i F(M/2, v) (Eq. 7).
void load(float v, float p, out vec4 re, out vec4 im) {
    vec4 ar, ai, br, bi;
    real_column(u_src, 0.0, v, ar, ai);
    real_column(u_src, 0.5 * u_size.x, v, br, bi);
    re = ar - bi;
    im = ai + br;
}

#elif defined(LOAD_MULTIPLY) && defined(PAIR_MIRROR)
// G_p(v) K(M - p, v) u_gain: the filter's multiply on the way into the first inverse column stage
// (where the last forward stage has radix 16: MULTIPLY_BETWEEN would need too many registers).
void load(float v, float p, out vec4 re, out vec4 im) {
    vec4 gr, gi;
    column_element(v, p, gr, gi);
    vec4 kr = texture2DRect(u_kernel, vec2(p + 0.5, v + 0.5));
    vec4 ki = texture2DRect(u_kernel, vec2(u_size.x - p + 0.5, v + 0.5));
    re = u_gain * (gr * kr - gi * ki);
    im = u_gain * (gr * ki + gi * kr);
}

#elif defined(LOAD_MULTIPLY) && defined(PAIR_TANGLED)
// Pair 0 holds the transforms of the two real columns 0 and M/2 tangled: untangle them (Eq. 8 along
// v), multiply each by the kernel's, tangle again (Eq. 7).
void load(float v, float p, out vec4 re, out vec4 im) {
    float n = u_size.y;
    vec4 hr, hi, gr, gi, k0r, k0i, kmr, kmi;
    column_element(v, 0.0, hr, hi);
    column_element(imod(n - v, n), 0.0, gr, gi);
    vec4 f0r = 0.5 * (hr + gr), f0i = 0.5 * (hi - gi);   // F(0, v)
    vec4 fmr = 0.5 * (hi + gi), fmi = 0.5 * (gr - hr);   // F(M/2, v)
    real_column(u_kernel, 0.0, v, k0r, k0i);
    real_column(u_kernel, 0.5 * u_size.x, v, kmr, kmi);
    vec4 p0r = f0r * k0r - f0i * k0i, p0i = f0r * k0i + f0i * k0r;
    vec4 pmr = fmr * kmr - fmi * kmi, pmi = fmr * kmi + fmi * kmr;
    re = u_gain * (p0r - pmi);
    im = u_gain * (p0i + pmr);
}

#elif defined(LOAD_ROW_PAIRS)
// H_r(u) from the layers STORE_ROW_PAIRS wrote: u > M/2 is pair M - u, slot u_hi; 0 < u < M/2 pair u,
// slot u_lo; u = 0 and u = M/2 are pair 0's u_lo and u_hi.
void load(float u, float r, out vec4 re, out vec4 im) {
    float half_m = 0.5 * u_size.x;
    vec2 size = column_plane_size();   // (N/B, M/2), B = COLUMN_BLOCKS: row pairs q + N/4 from layer 4 where B = 4
    float above = step(half_m, u), p = above * imod(u_size.x - u, half_m) + (1.0 - above) * u;
    float upper = step(size.x, r);
    float layer = 4.0 * upper + 2.0 * (1.0 - above);
    vec2 position = vec2(r - upper * size.x, p);
    re = plane(position, size, layer);
    im = plane(position, size, layer + 1.0);
}

#else
#error "fft_radix.frag needs a LOAD_ variant (and PAIR_ for the first column stage)"
#endif

// ---- The radix-4 DFT of four values Z_s into four outputs: X_b = sum_s W_4^(turn b s) Z_s, with
// W_4 = -i forward (turn = -1) and +i inverse (turn = 1).
void radix4(vec4 zr[4], vec4 zi[4], float turn, out vec4 xr[4], out vec4 xi[4]) {
    vec4 er = zr[0] + zr[2], ei = zi[0] + zi[2];   // Z0 + Z2
    vec4 dr = zr[0] - zr[2], di = zi[0] - zi[2];   // Z0 - Z2
    vec4 sr = zr[1] + zr[3], si = zi[1] + zi[3];   // Z1 + Z3
    vec4 tr = zr[1] - zr[3], ti = zi[1] - zi[3];   // Z1 - Z3
    xr[0] = er + sr;
    xi[0] = ei + si;
    xr[2] = er - sr;
    xi[2] = ei - si;
    xr[1] = dr - turn * ti;   // Z0 - Z2 + (turn i)(Z1 - Z3)
    xi[1] = di + turn * tr;
    xr[3] = dr + turn * ti;   // Z0 - Z2 - (turn i)(Z1 - Z3)
    xi[3] = di - turn * tr;
}

#ifdef INVERSE
const float TURN = 1.0;
#else
const float TURN = -1.0;
#endif

// One stage: the outputs q + b L/B (b < B) on line a, in B/G groups: group h holds the outputs
// Q + j L/G (Q = q + h L/B, j < G) of the butterfly through Q, b = h + j B/G. With u_Q = Q div P,
// p = Q mod P and x_t = A[p + t P + (u_Q mod S/R) P R]:
//     A'[Q + j L/G] = sum_s W_G^(j s) Z_s,   Z_s = sum_{t = s mod G} W_L^(t u_Q P) x_t
// (Eq. 6 at radix R: W_L^(t u_Q P) is the butterfly's twiddle times W_R^(t k)).
void stage(float q, float a, out vec4 xr[BLOCKS], out vec4 xi[BLOCKS]) {
    const float R = float(RADIX);
    float L = along_length(), P = u_stride;
    for (int h = 0; h < BLOCKS / G; ++h) {
        float Q = q + float(h) * L / float(BLOCKS);
        float uq = idiv(Q, P), p = Q - uq * P;
        float first = p + imod(uq, idiv(L, P * R)) * P * R;   // index of x_0
        vec4 zr[4], zi[4];
        for (int s = 0; s < G; ++s) zr[s] = zi[s] = vec4(0.0);
        for (int t = 0; t < RADIX; ++t) {
            vec4 yr, yi;
            load(first + float(t) * P, a, yr, yi);
            if (t > 0) {
                vec2 w = twiddle(t, uq * P, L);
                rotate(yr, yi, vec2(w.x, -TURN * w.y));   // conjugated when inverse
            }
            int s = t - G * (t / G);
            zr[s] += yr;
            zi[s] += yi;
        }
#if G == 4
        radix4(zr, zi, TURN, xr, xi);
#elif G == 2
        xr[h] = zr[0] + zr[1];
        xi[h] = zi[0] + zi[1];
        xr[h + BLOCKS / 2] = zr[0] - zr[1];
        xi[h + BLOCKS / 2] = zi[0] - zi[1];
#else
        xr[h] = zr[0];
        xi[h] = zi[0];
#endif
    }
}

#if defined(MULTIPLY_BETWEEN)
// The forward butterfly u' of the last column stage (stride 1), all R outputs: X_k at v = u' + k N/R.
// X_(j + b R/4) = sum_s W_4^(b s) W_R^(j s) A_(s,j),  A_(s,j) = sum_r W_(R/4)^(j r) y_(s + 4 r),
// y_t = W_N^(t u') x_t: R/4 small DFTs, R - R/4 twiddles by constants, R/4 radix-4 DFTs.
void forward_butterfly(float u1, float p, out vec4 xr[RADIX], out vec4 xi[RADIX]) {
    const int Q = RADIX / 4;
    float N = along_length();
    vec4 yr[RADIX], yi[RADIX];
    for (int t = 0; t < RADIX; ++t) {
        load(u1 * float(RADIX) + float(t), p, yr[t], yi[t]);
        if (t > 0) rotate(yr[t], yi[t], twiddle(t, u1, N));
    }
    for (int j = 0; j < Q; ++j) {
        vec4 zr[4], zi[4], outr[4], outi[4];
        for (int s = 0; s < 4; ++s) {
            zr[s] = zi[s] = vec4(0.0);
            for (int r = 0; r < Q; ++r) {
                vec4 ar = yr[s + 4 * r], ai = yi[s + 4 * r];
                rotate(ar, ai, root(4 * j * r));
                zr[s] += ar;
                zi[s] += ai;
            }
            rotate(zr[s], zi[s], root(j * s));
        }
        radix4(zr, zi, -1.0, outr, outi);
        for (int b = 0; b < 4; ++b) {
            xr[j + Q * b] = outr[b];
            xi[j + Q * b] = outi[b];
        }
    }
}

// The spectrum times the kernel's: Y_k = u_gain X_k K(v_k).
void multiply(float u1, float p, vec4 xr[RADIX], vec4 xi[RADIX], out vec4 yr[RADIX], out vec4 yi[RADIX]) {
    float N = along_length(), step_v = N / float(RADIX);
#if defined(PAIR_MIRROR)
    for (int k = 0; k < RADIX; ++k) {
        float v = u1 + float(k) * step_v;
        vec4 kr = texture2DRect(u_kernel, vec2(p + 0.5, v + 0.5));                // K(M - p, v), Eq. 10
        vec4 ki = texture2DRect(u_kernel, vec2(u_size.x - p + 0.5, v + 0.5));
        yr[k] = u_gain * (xr[k] * kr - xi[k] * ki);
        yi[k] = u_gain * (xr[k] * ki + xi[k] * kr);
    }
#else
    // Pair 0 carries the transforms of the real columns 0 and M/2 tangled. G(N - v) lies in the
    // mirror butterfly u'' = N/R - u': output R - k (u' = 0) or R - 1 - k.
    float mirror = imod(step_v - u1, step_v);
    vec4 gr[RADIX], gi[RADIX];
    forward_butterfly(mirror, 0.0, gr, gi);
    for (int k = 0; k < RADIX; ++k) {
        float v = u1 + float(k) * step_v;
        int kk = u1 == 0.0 ? (RADIX - k) - RADIX * ((RADIX - k) / RADIX) : RADIX - 1 - k;
        vec4 hr = xr[k], hi = xi[k], mr = gr[kk], mi = gi[kk];
        vec4 f0r = 0.5 * (hr + mr), f0i = 0.5 * (hi - mi);   // F(0, v) = (G(v) + conj G(N-v)) / 2
        vec4 fmr = 0.5 * (hi + mi), fmi = 0.5 * (mr - hr);   // F(M/2, v) = (G(v) - conj G(N-v)) / 2i
        vec4 k0r, k0i, kmr, kmi;
        real_column(u_kernel, 0.0, v, k0r, k0i);
        real_column(u_kernel, 0.5 * u_size.x, v, kmr, kmi);
        vec4 p0r = f0r * k0r - f0i * k0i, p0i = f0r * k0i + f0i * k0r;
        vec4 pmr = fmr * kmr - fmi * kmi, pmi = fmr * kmi + fmi * kmr;
        yr[k] = u_gain * (p0r - pmi);   // tangled again: F0 + i FM (Eq. 7)
        yi[k] = u_gain * (p0i + pmr);
    }
#endif
}

// The first inverse column stage (stride N/R), its outputs q + b N/4 from the products Y_t.
void inverse_stage(float q, vec4 yr[RADIX], vec4 yi[RADIX], out vec4 xr[4], out vec4 xi[4]) {
    float P = u_stride;
    int uq = int(idiv(q, P));
    vec4 zr[4], zi[4];
    for (int s = 0; s < 4; ++s) zr[s] = zi[s] = vec4(0.0);
    for (int t = 0; t < RADIX; ++t) {
        vec4 ar = yr[t], ai = yi[t];
        vec2 w = root(uq * t);
        rotate(ar, ai, vec2(w.x, -w.y));   // W_R^(-uq t)
        int s = t - 4 * (t / 4);
        zr[s] += ar;
        zi[s] += ai;
    }
    radix4(zr, zi, 1.0, xr, xi);
}
#endif

void main() {
    float L = along_length(), block_length = L / float(BLOCKS);
#if defined(STORE_IMAGE)
    float n = along_index();
    float half_n = 0.5 * across_length(), upper = step(half_n, across_index());
    float a = across_index() - upper * half_n;
    float q = imod(n, block_length), block = idiv(n, block_length);
#else
    // Planes keep the transformed axis along x for rows and columns alike (common.glsl).
    float q = x_index(), a = y_index();
#endif
    vec4 xr[BLOCKS], xi[BLOCKS];
#if defined(MULTIPLY_BETWEEN)
    float u1 = imod(q, u_stride);   // the butterfly: q mod N/R
    vec4 fr[RADIX], fi[RADIX], yr[RADIX], yi[RADIX];
    forward_butterfly(u1, a, fr, fi);
    multiply(u1, a, fr, fi, yr, yi);
    inverse_stage(q, yr, yi, xr, xi);
#else
    stage(q, a, xr, xi);
#endif

#if defined(STORE_PLANES)
    for (int b = 0; b < BLOCKS; ++b) {
        gl_FragData[2 * b] = xr[b];
        gl_FragData[2 * b + 1] = xi[b];
    }
#elif defined(STORE_ROW_PAIRS)
    // c(r) = X_0, c(r + N/2) = X_(B/2) for r = q; X_1, X_3 for r = q + N/4 (B = 4). Pair p > 0:
    // F_y(M - p) = c(y), F_y(p) = conj c(y). Pair 0: F_y(M/2) = Im c(y), F_y(0) = Re c(y).
    // H_r(u) = F_r(u) + i F_(r+N/2)(u).
    float pair0 = a == 0.0 ? 1.0 : 0.0;
    for (int h = 0; h < BLOCKS / 2; ++h) {   // r = q, then r = q + N/4
        vec4 cr = xr[h], ci = xi[h], dr = xr[h + BLOCKS / 2], di = xi[h + BLOCKS / 2];   // c(r), c(r + N/2)
        gl_FragData[4 * h] = pick(cr - di, ci, pair0);       // H_r(u_hi)
        gl_FragData[4 * h + 1] = pick(ci + dr, di, pair0);
        gl_FragData[4 * h + 2] = pick(cr + di, cr, pair0);   // H_r(u_lo)
        gl_FragData[4 * h + 3] = pick(dr - ci, dr, pair0);
    }
#elif defined(STORE_IMAGE)
    vec4 outr = xr[0], outi = xi[0];
    for (int b = 1; b < BLOCKS; ++b) {
        if (block > float(b) - 0.5) {
            outr = xr[b];
            outi = xi[b];
        }
    }
    gl_FragColor = pick(outr, outi, upper);
#endif
}
