// fft_line.comp: the compute backend. One workgroup transforms whole lines (a row pair, or a
// column pair of the compressed layout) in shared memory: the Intel article's one-dispatch-per-axis
// technique (seeds 000/001), Stockham stages of radix 16, 8, 4 (seed 002), with the paper's
// real-to-complex packing (Eq. 7-8) and compressed layout (Eq. 9-10) folded into the loads and
// stores. A filter is three dispatches: rows, columns (forward, multiply, inverse), rows.
//
// Each of the T = L / R threads holds R elements (vec4 real and imaginary parts: the four
// channels) in registers. A stage of radix r with output stride P = L / S (S the size of the
// partitions it produces) runs R / r butterflies per thread; butterfly b (= thread + i T) with
// p = b mod P and u = b div P reads the elements p + u P r + t P (t < r), multiplies them by
// W_S^(u t) = W_L^(u t P) (from a table made in double on the CPU) and writes its r outputs to
// b + k L / r: Eq. 6 at radix r, natural order in and out. Between stages the elements pass
// through shared memory, COMPONENTS real or imaginary parts of a channel at a time (as many as the
// GL's shared memory holds), with one float of padding per 32 against bank conflicts.
//
// Column variants come twice: with PAIR0 for columns 0 and M/2 (one workgroup), and without for
// column pairs 1 .. M/2 - 1 (M/2 - 1 workgroups).
// Variants (exactly one):
//   ROWS_FORWARD     line r < N/2: image rows r and r + N/2 as one complex row (Eq. 7); stores the
//                    transform H_r(u) tangled, as the paper's row stage leaves it: the real part in
//                    row r, the imaginary part in row r + N/2
//   COLUMNS_FORWARD  line p < M/2: untangles H on load (Eq. 8, times u_scale = 1/M), the column
//                    transform, stores the compressed layout of Eq. 10 times u_gain = 1/N (pair 0:
//                    columns 0 and M/2 untangled again, Eq. 9)
//   COLUMNS_FILTER   as COLUMNS_FORWARD up to the last forward stage, then the multiply by the
//                    kernel's spectrum (u_kernel, Eq. 10) times u_gain = M, then the inverse column
//                    transform; stores tangled row pairs for ROWS_INVERSE
//   COLUMNS_INVERSE  loads the compressed layout of Eq. 10 (pair 0 tangled again, Eq. 7), the
//                    inverse column transform, stores tangled row pairs
//   ROWS_INVERSE     loads the tangled row pairs, the inverse row transform, stores rows r (real
//                    part) and r + N/2 (imaginary part) of the image
// Defines also give LENGTH, RADIX (the largest stage radix), THREADS (LENGTH / RADIX), FORWARD_STAGES / FORWARD_RADICES,
// INVERSE_STAGES / INVERSE_RADICES (for COLUMNS_FILTER the inverse starts with the forward's last
// radix) and COMPONENTS.

const int L = LENGTH;
const int R = RADIX;
const int T = THREADS;   // L / R (a literal: layout qualifiers need one before GLSL 4.40)
layout(local_size_x = THREADS) in;

layout(binding = 0) uniform sampler2DRect u_src;      // the image, spectrum or intermediate read
layout(binding = 1) uniform sampler2DRect u_kernel;   // COLUMNS_FILTER: the kernel's spectrum (Eq. 10)
layout(binding = 2) uniform sampler2DRect u_twiddle;  // texel k of row 0: W_L^k, k < L
layout(IMAGE_FORMAT, binding = 0) uniform writeonly image2DRect u_dst;   // rgba32f, or rgba16f intermediates
uniform vec2 u_size;    // (M, N)
uniform float u_scale;  // 1/M: the row transform's normalisation, applied by the column loads
uniform float u_gain;   // COLUMNS_FORWARD: 1/N; COLUMNS_FILTER: M

const int PADDED = L + L / 32;
shared float s_buffer[COMPONENTS * PADDED];

vec4 xr[R], xi[R];   // this thread's elements

int pad(int position) { return position + position / 32; }
vec2 twiddle(int k) { return texelFetch(u_twiddle, ivec2(k & (L - 1), 0)).xy; }
// Column dispatches come in two: PAIR0 (one workgroup: columns 0 and M/2, two real columns tangled)
// and the rest (workgroup w: column pair w + 1, columns p and M - p), so neither branches on it.
#if defined(PAIR0)
int line() { return 0; }
#elif defined(ROWS_FORWARD) || defined(ROWS_INVERSE)
int line() { return int(gl_WorkGroupID.x); }
#else
int line() { return int(gl_WorkGroupID.x) + 1; }
#endif
int thread() { return int(gl_LocalInvocationID.x); }
int M() { return int(u_size.x); }
int N() { return int(u_size.y); }

vec4 fetch(sampler2DRect tex, int x, int y) { return texelFetch(tex, ivec2(x, y)); }

// x * w for a complex x of four channels.
void rotate(inout vec4 re, inout vec4 im, vec2 w) {
    vec4 r = re * w.x - im * w.y;
    im = re * w.y + im * w.x;
    re = r;
}

// ---- Small DFTs on registers, in place: dir = -1 forward, +1 inverse (W = exp(dir 2 pi i / n)).

void dft2(int e) {
    vec4 ar = xr[e], ai = xi[e];
    xr[e] = ar + xr[e + 1];
    xi[e] = ai + xi[e + 1];
    xr[e + 1] = ar - xr[e + 1];
    xi[e + 1] = ai - xi[e + 1];
}

// Four values at e, e + d, e + 2d, e + 3d.
void dft4(int e, int d, float dir) {
    vec4 ar = xr[e] + xr[e + 2 * d], ai = xi[e] + xi[e + 2 * d];           // x0 + x2
    vec4 br = xr[e] - xr[e + 2 * d], bi = xi[e] - xi[e + 2 * d];           // x0 - x2
    vec4 cr = xr[e + d] + xr[e + 3 * d], ci = xi[e + d] + xi[e + 3 * d];   // x1 + x3
    vec4 dr = xr[e + d] - xr[e + 3 * d], di = xi[e + d] - xi[e + 3 * d];   // x1 - x3
    xr[e] = ar + cr;
    xi[e] = ai + ci;
    xr[e + 2 * d] = ar - cr;
    xi[e + 2 * d] = ai - ci;
    xr[e + d] = br - dir * di;   // x0 - x2 + (dir i)(x1 - x3)
    xi[e + d] = bi + dir * dr;
    xr[e + 3 * d] = br + dir * di;
    xi[e + 3 * d] = bi - dir * dr;
}

const float C16 = 0.92387953251128676, S16 = 0.38268343236508977, H = 0.70710678118654752;

// W_n^m forward for n = 8, 16 and the products s k the DFTs below need (m in sixteenths of a turn).
vec2 sixteenth(int m) {
    return m == 1 ? vec2(C16, -S16) : m == 2 ? vec2(H, -H) : m == 3 ? vec2(S16, -C16) : m == 4 ? vec2(0.0, -1.0)
         : m == 6 ? vec2(-H, -H) : m == 9 ? vec2(-C16, S16) : vec2(1.0, 0.0);
}

// The n-point DFT (n = 2, 4, 8, 16) of registers e .. e + n - 1, in place. For n = 8 and 16 it runs
// n/4 small DFTs of the stride-4 subsequences (dft2 or dft4), twiddles W_n^(s k), then radix 4
// across them without moving anything: register e + 4k + b then holds output k + (n/4) b, a digit
// permutation that output_of() undoes when positions are computed.
void dft(int e, int n, float dir) {
    if (n == 2) {
        dft2(e);
    } else if (n == 4) {
        dft4(e, 1, dir);
    } else {
        int q = n / 4;
        for (int s = 0; s < 4; ++s) {   // subsequence s: registers e + s + 4 r, r < q
            if (q == 2) {
                vec4 ar = xr[e + s], ai = xi[e + s];
                xr[e + s] = ar + xr[e + s + 4];
                xi[e + s] = ai + xi[e + s + 4];
                xr[e + s + 4] = ar - xr[e + s + 4];
                xi[e + s + 4] = ai - xi[e + s + 4];
            } else {
                dft4(e + s, 4, dir);
            }
        }
        for (int s = 1; s < 4; ++s)
            for (int k = 1; k < q; ++k) {
                vec2 w = sixteenth(s * k * (16 / n));
                rotate(xr[e + s + 4 * k], xi[e + s + 4 * k], vec2(w.x, -dir * w.y));
            }
        for (int k = 0; k < q; ++k) dft4(e + 4 * k, 1, dir);   // registers e + 4k + s, s < 4
    }
}

// Which output of an n-point dft() register slot j holds.
int output_of(int j, int n) { return n <= 4 ? j : j / 4 + (n / 4) * (j % 4); }

// ---- Stages and exchanges.

// Input element t of butterfly b of a stage of radix r with output stride P.
int input_position(int b, int r, int P, int t) { return b % P + (b / P) * P * r + t * P; }
int output_position(int b, int r, int j) { return b + output_of(j, r) * (L / r); }   // slot j of the butterfly

void butterflies(int r, int P, float dir) {
    for (int i = 0; i < R / r; ++i) {
        int b = thread() + i * T, u = b / P;
        for (int t = 1; t < r; ++t) {
            vec2 w = twiddle(u * t * P);
            rotate(xr[i * r + t], xi[i * r + t], vec2(w.x, -dir * w.y));   // conjugated when inverse
        }
        dft(i * r, r, dir);
    }
}

// The outputs of a stage (radix r_out) to the inputs of the next (radix r_in, stride P_in),
// COMPONENTS at a time. Component c < 4 is the real part of channel c, c >= 4 the imaginary part
// of channel c - 4.
void exchange(int r_out, int r_in, int P_in) {
    for (int first = 0; first < 8; first += COMPONENTS) {
        for (int i = 0; i < R / r_out; ++i)
            for (int k = 0; k < r_out; ++k) {
                int at = pad(output_position(thread() + i * T, r_out, k));
                for (int c = 0; c < COMPONENTS; ++c) {
                    int component = first + c;
                    s_buffer[c * PADDED + at] = component < 4 ? xr[i * r_out + k][component] : xi[i * r_out + k][component - 4];
                }
            }
        barrier();
        for (int i = 0; i < R / r_in; ++i)
            for (int t = 0; t < r_in; ++t) {
                int at = pad(input_position(thread() + i * T, r_in, P_in, t));
                for (int c = 0; c < COMPONENTS; ++c) {
                    int component = first + c;
                    float v = s_buffer[c * PADDED + at];
                    if (component < 4) xr[i * r_in + t][component] = v;
                    else xi[i * r_in + t][component - 4] = v;
                }
            }
        barrier();
    }
}

// FORWARD_TRANSFORM and INVERSE_TRANSFORM are the stages spelled out by the C++ side with literal
// radices and strides, e.g. "butterflies(16, 64, -1.0); exchange(16, 16, 4); butterflies(16, 4,
// -1.0); ...": constants the compiler folds into dft() and every register index (through an array
// the radices would stay variables, every register access an indirect one).

// Position of element e of this thread before the first stage of radix r (inputs b + t L / r)...
int input_at(int e, int r) { return thread() + (e / r) * T + (e % r) * (L / r); }
// ... and after the last (outputs, in dft()'s register order).
int output_at(int e, int r) { return output_position(thread() + (e / r) * T, r, e % r); }

// The last stage's outputs to natural order in registers (element i r + k holds output k): the
// filter's first inverse stage takes them as its inputs.
void to_natural(int r) {
    if (r <= 4) return;
    for (int i = 0; i < R / r; ++i) {
        vec4 tr[16], ti[16];
        for (int j = 0; j < r; ++j) {
            tr[output_of(j, r)] = xr[i * r + j];
            ti[output_of(j, r)] = xi[i * r + j];
        }
        for (int k = 0; k < r; ++k) {
            xr[i * r + k] = tr[k];
            xi[i * r + k] = ti[k];
        }
    }
}

// ---- Loads and stores of each variant.

#if defined(COLUMNS_FORWARD) || defined(COLUMNS_FILTER)
// Element y of column pair p: F_y(M - p) for p > 0, F_y(0) + i F_y(M/2) for pair 0, from the row
// transforms H_r (tangled: real part in row r, imaginary part in row r + N/2) by Eq. 8, times 1/M.
void load_untangled(int y, int p, out vec4 re, out vec4 im) {
    int half_n = N() / 2, r = y % half_n;
    float upper = y >= half_n ? 1.0 : 0.0;
#if defined(PAIR0)
    vec4 h0r = fetch(u_src, 0, r), h0i = fetch(u_src, 0, r + half_n);               // H(0)
    vec4 hmr = fetch(u_src, M() / 2, r), hmi = fetch(u_src, M() / 2, r + half_n);   // H(M/2)
    re = u_scale * mix(h0r, h0i, upper);
    im = u_scale * mix(hmr, hmi, upper);
#else
    vec4 hr = fetch(u_src, M() - p, r), hi = fetch(u_src, M() - p, r + half_n);   // H(M - p)
    vec4 gr = fetch(u_src, p, r), gi = fetch(u_src, p, r + half_n);               // H(p)
    re = 0.5 * u_scale * mix(hr + gr, hi + gi, upper);
    im = 0.5 * u_scale * mix(hi - gi, gr - hr, upper);
#endif
}
#endif

#if defined(COLUMNS_FORWARD) || defined(COLUMNS_FILTER) || defined(COLUMNS_INVERSE)
// F(x, v) for x = 0 or M/2 from Eq. 9 along v.
void real_column(sampler2DRect tex, int x, int v, out vec4 re, out vec4 im) {
    int n = N();
    vec4 a = fetch(tex, x, v), b = fetch(tex, x, (n - v) % n);
    bool low = v > 0 && v < n / 2, high = v > n / 2;
    re = high ? b : a;
    im = high ? a : low ? -b : vec4(0.0);
}

#if defined(PAIR0)
// Pair 0 of a column transform holds G(v) = F(0, v) + i F(M/2, v) of two real columns; each needs
// G(N - v), which another thread holds: the whole line passes through shared memory once.
void mirror_of(out vec4 mr[R], out vec4 mi[R], int r_last) {
    for (int first = 0; first < 8; first += COMPONENTS) {
        for (int e = 0; e < R; ++e) {
            int at = pad(output_at(e, r_last));
            for (int c = 0; c < COMPONENTS; ++c) {
                int component = first + c;
                s_buffer[c * PADDED + at] = component < 4 ? xr[e][component] : xi[e][component - 4];
            }
        }
        barrier();
        for (int e = 0; e < R; ++e) {
            int at = pad((L - output_at(e, r_last)) % L);
            for (int c = 0; c < COMPONENTS; ++c) {
                int component = first + c;
                float v = s_buffer[c * PADDED + at];
                if (component < 4) mr[e][component] = v;
                else mi[e][component - 4] = v;
            }
        }
        barrier();
    }
}
#endif
#endif

#if defined(COLUMNS_FILTER) || defined(COLUMNS_INVERSE)
// Stores the inverse column transform c_p(y) as tangled row pairs H_r(u) = F_r(u) + i F_(r+N/2)(u):
// the real part at (u, r), the imaginary part at (u, r + N/2). c(y) and c(y + N/2) are outputs k
// and k + r/2 of the same butterfly, so each thread has both.
void store_row_pairs(int p, int r_last) {
    to_natural(r_last);
    int half_n = N() / 2;
    for (int e = 0; e < R; ++e) {
        if (e % r_last >= r_last / 2) continue;
        int y = input_at(e, r_last);   // natural order now
        vec4 ar = xr[e], ai = xi[e], br = xr[e + r_last / 2], bi = xi[e + r_last / 2];   // c(y), c(y + N/2)
#if defined(PAIR0)   // F(M/2) = Im c, F(0) = Re c
        imageStore(u_dst, ivec2(M() / 2, y), ai);
        imageStore(u_dst, ivec2(M() / 2, y + half_n), bi);
        imageStore(u_dst, ivec2(0, y), ar);
        imageStore(u_dst, ivec2(0, y + half_n), br);
#else                // F(M - p) = c, F(p) = conj c
        imageStore(u_dst, ivec2(M() - p, y), ar - bi);
        imageStore(u_dst, ivec2(M() - p, y + half_n), ai + br);
        imageStore(u_dst, ivec2(p, y), ar + bi);
        imageStore(u_dst, ivec2(p, y + half_n), br - ai);
#endif
    }
}
#endif

void main() {
    int a = line();
#if defined(ROWS_FORWARD)
    for (int e = 0; e < R; ++e) {
        int u = input_at(e, FORWARD_FIRST);
        xr[e] = fetch(u_src, u, a);
        xi[e] = fetch(u_src, u, a + N() / 2);
    }
    FORWARD_TRANSFORM
    for (int e = 0; e < R; ++e) {
        int u = output_at(e, FORWARD_LAST);
        imageStore(u_dst, ivec2(u, a), xr[e]);
        imageStore(u_dst, ivec2(u, a + N() / 2), xi[e]);
    }

#elif defined(ROWS_INVERSE)
    for (int e = 0; e < R; ++e) {
        int u = input_at(e, INVERSE_FIRST);
        xr[e] = fetch(u_src, u, a);
        xi[e] = fetch(u_src, u, a + N() / 2);
    }
    INVERSE_TRANSFORM
    for (int e = 0; e < R; ++e) {
        int u = output_at(e, INVERSE_LAST);
        imageStore(u_dst, ivec2(u, a), xr[e]);
        imageStore(u_dst, ivec2(u, a + N() / 2), xi[e]);
    }

#elif defined(COLUMNS_FORWARD)
    for (int e = 0; e < R; ++e) load_untangled(input_at(e, FORWARD_FIRST), a, xr[e], xi[e]);
    FORWARD_TRANSFORM
    int r_last = FORWARD_LAST;
#if defined(PAIR0)
    // Columns 0 and M/2: untangle with G(N - v) (Eq. 8 along v), then Eq. 9.
    vec4 mr[R], mi[R];
    mirror_of(mr, mi, r_last);
    for (int e = 0; e < R; ++e) {
        int v = output_at(e, r_last);
        vec4 f0r = 0.5 * (xr[e] + mr[e]), f0i = 0.5 * (xi[e] - mi[e]);   // F(0, v)
        vec4 fmr = 0.5 * (xi[e] + mi[e]), fmi = 0.5 * (mr[e] - xr[e]);   // F(M/2, v)
        float high = v > N() / 2 ? 1.0 : 0.0;
        imageStore(u_dst, ivec2(0, v), u_gain * mix(f0r, f0i, high));
        imageStore(u_dst, ivec2(M() / 2, v), u_gain * mix(fmr, fmi, high));
    }
#else
    // Column p holds Re F(M - p, v), column M - p its Im.
    for (int e = 0; e < R; ++e) {
        int v = output_at(e, r_last);
        imageStore(u_dst, ivec2(a, v), u_gain * xr[e]);
        imageStore(u_dst, ivec2(M() - a, v), u_gain * xi[e]);
    }
#endif

#elif defined(COLUMNS_FILTER)
    for (int e = 0; e < R; ++e) load_untangled(input_at(e, FORWARD_FIRST), a, xr[e], xi[e]);
    FORWARD_TRANSFORM
    // The multiply. The last forward stage left positions b + k N/r (k = output_of(j)) in element
    // i r + j: exactly the inputs of the first inverse stage (radix r, stride N/r), so the products
    // stay in registers, put in order by to_natural().
    int r_mid = FORWARD_LAST;
#if defined(PAIR0)
    // The real columns 0 and M/2 untangled (with G(N - v)), each times its kernel column (Eq. 9),
    // tangled again (Eq. 7).
    vec4 mr[R], mi[R];
    mirror_of(mr, mi, r_mid);
    for (int e = 0; e < R; ++e) {
        int v = output_at(e, r_mid);
        vec4 f0r = 0.5 * (xr[e] + mr[e]), f0i = 0.5 * (xi[e] - mi[e]);
        vec4 fmr = 0.5 * (xi[e] + mi[e]), fmi = 0.5 * (mr[e] - xr[e]);
        vec4 k0r, k0i, kmr, kmi;
        real_column(u_kernel, 0, v, k0r, k0i);
        real_column(u_kernel, M() / 2, v, kmr, kmi);
        vec4 p0r = f0r * k0r - f0i * k0i, p0i = f0r * k0i + f0i * k0r;
        vec4 pmr = fmr * kmr - fmi * kmi, pmi = fmr * kmi + fmi * kmr;
        xr[e] = u_gain * (p0r - pmi);
        xi[e] = u_gain * (p0i + pmr);
    }
#else
    // G K(M - p, v), K from Eq. 10.
    for (int e = 0; e < R; ++e) {
        int v = output_at(e, r_mid);
        vec4 kr = fetch(u_kernel, a, v), ki = fetch(u_kernel, M() - a, v);
        vec4 gr = xr[e], gi = xi[e];
        xr[e] = u_gain * (gr * kr - gi * ki);
        xi[e] = u_gain * (gr * ki + gi * kr);
    }
#endif
    to_natural(r_mid);   // the first inverse stage's inputs, in order
    INVERSE_TRANSFORM
    store_row_pairs(a, INVERSE_LAST);

#elif defined(COLUMNS_INVERSE)
    for (int e = 0; e < R; ++e) {
        int v = input_at(e, INVERSE_FIRST);
#if defined(PAIR0)   // F(0, v) + i F(M/2, v) (Eq. 7)
        vec4 ar, ai, br, bi;
        real_column(u_src, 0, v, ar, ai);
        real_column(u_src, M() / 2, v, br, bi);
        xr[e] = ar - bi;
        xi[e] = ai + br;
#else                // F(M - p, v) = A[p][v] + i A[M-p][v]
        xr[e] = fetch(u_src, a, v);
        xi[e] = fetch(u_src, M() - a, v);
#endif
    }
    INVERSE_TRANSFORM
    store_row_pairs(a, INVERSE_LAST);

#else
#error "fft_line.comp needs ROWS_FORWARD, COLUMNS_FORWARD, COLUMNS_FILTER, COLUMNS_INVERSE or ROWS_INVERSE"
#endif
}
