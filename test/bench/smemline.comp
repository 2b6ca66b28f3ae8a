// smemline.comp: the rows' forward FFT with each row's data resident in shared memory
// (bin/bench/smemline), to measure a decomposition fft_line.comp does not use. Not part of the
// chain.
//
// fft_line.comp holds a line in registers (a row pair's four channels, eight floats an element,
// four elements a thread) and uses shared memory for the exchanges between stages. Its registers
// cap the rows an SM holds: two row pairs (960 threads at 64 registers) for 1920 and 2048, so the
// 540 row pairs of 1920x1080 take 2.05 rounds of 132 SMs. Here a workgroup takes ROWS rows as
// channel pairs (R + iG and B + iA, one vec4 an element), and the row stays in shared memory from
// the load to the store: each stage reads one butterfly's inputs, transforms them in registers
// and writes them back in place, so a thread holds one butterfly (at most eight vec4) at a time
// and the rows an SM holds are bounded by shared memory (the row's 16 bytes an element) and the
// registers the compiler gives a few butterflies.
//
// In place, decimation in time, mixed radix: L = R_0 R_1 ... R_{S-1}, stage k of span
// s_k = R_0 ... R_(k-1) combines the elements b s_k R_k + j + m s_k (m < R_k) of block b and
// position j < s_k, twiddled by W_(s_k R_k)^(j m) (W_L^k from the table), into the same places.
// The load puts input n at the digit-reversed place p (n = sum_k d_k L / (R_0 ... R_k),
// p = sum_k d_k s_k), after which the last stage leaves output k at place k: the natural order.
//
// PAD 1: place p at p + p / 8 (an unused vec4 every eight), so that eight lanes' vec4 accesses of
// stride 4 or 8 meet no bank twice; PAD 2: p with its low three bits XORed by its higher groups of
// three (a swizzle within each block of eight, no unused vec4), so that strides of 8, 64 and 512
// (the digit-reversed load's, powers of two) do not either.
//
// OPAQUE 1: a thread's butterflies of a stage in a loop whose step the compiler cannot see
// (gl_NumWorkGroups.z, 1), so that it does not unroll it and hoist every butterfly's loads: fewer
// registers, more workgroups an SM.
layout(local_size_x = THREADS, local_size_y = ROWS) in;
#pragma optionNV(unroll all)
#pragma optionNV(inline all)

layout(binding = 0) uniform sampler2DRect u_src;
layout(rgba32f, binding = 0) uniform writeonly image2DRect u_dst;
layout(std430, binding = 0) restrict readonly buffer Twiddles { vec2 w_table[]; };   // W_L^k, k < L

const int L = LENGTH, S = STAGES, T = THREADS;
const int R[S] = int[S](RADICES);
const int PLACES = PAD == 1 ? L + L / 8 : L;

shared vec4 s_row[ROWS * PLACES];

int place(int row, int p) {
    if (PAD == 1) p += p / 8;
    if (PAD == 2) p ^= ((p >> 3) ^ (p >> 6) ^ (p >> 9)) & 7;
    return row * PLACES + p;
}

// Input n's place before the first stage (its digits reversed).
int digit_reversed(int n) {
    int p = 0, span = 1, rest = L;
    for (int k = 0; k < S; ++k) {
        rest /= R[k];
        int d = n / rest;
        n -= d * rest;
        p += d * span;
        span *= R[k];
    }
    return p;
}

// Two complex numbers (xy, zw) times one (w).
vec4 cmul2(vec4 a, vec2 w) { return vec4(a.x * w.x - a.y * w.y, a.x * w.y + a.y * w.x, a.z * w.x - a.w * w.y, a.z * w.y + a.w * w.x); }
// Times -i, and times -i s.
vec4 minus_i(vec4 a) { return vec4(a.y, -a.x, a.w, -a.z); }

vec4 x[8];   // one butterfly's elements

// Forward DFTs of x[0 .. r - 1] in place, W_r = exp(-2 pi i / r).
void dft2() {
    vec4 a = x[0], b = x[1];
    x[0] = a + b;
    x[1] = a - b;
}
void dft3() {
    const float s = 0.86602540378443865;
    vec4 b = x[1] + x[2], t = x[0] - 0.5 * b, u = minus_i(x[1] - x[2]) * s;
    x[0] = x[0] + b;
    x[1] = t + u;
    x[2] = t - u;
}
void dft4_at(int o, int step) {   // x[o], x[o + step], x[o + 2 step], x[o + 3 step]
    vec4 a0 = x[o], a1 = x[o + step], a2 = x[o + 2 * step], a3 = x[o + 3 * step];
    vec4 t0 = a0 + a2, t1 = a0 - a2, t2 = a1 + a3, t3 = minus_i(a1 - a3);
    x[o] = t0 + t2;
    x[o + step] = t1 + t3;
    x[o + 2 * step] = t0 - t2;
    x[o + 3 * step] = t1 - t3;
}
void dft5() {
    const float c1 = 0.30901699437494742, c2 = -0.80901699437494742;
    const float s1 = 0.95105651629515357, s2 = 0.58778525229247313;
    vec4 b1 = x[1] + x[4], b2 = x[2] + x[3], d1 = x[1] - x[4], d2 = x[2] - x[3];
    vec4 t1 = x[0] + c1 * b1 + c2 * b2, t2 = x[0] + c2 * b1 + c1 * b2;
    vec4 u1 = minus_i(s1 * d1 + s2 * d2), u2 = minus_i(s2 * d1 - s1 * d2);
    x[0] = x[0] + b1 + b2;
    x[1] = t1 + u1;
    x[4] = t1 - u1;
    x[2] = t2 + u2;
    x[3] = t2 - u2;
}
void dft8() {   // two four-point DFTs (even and odd inputs), W_8^k, one radix-2 step
    const float h = 0.70710678118654752;
    dft4_at(0, 2);
    dft4_at(1, 2);
    vec4 e[4], o[4];
    for (int k = 0; k < 4; ++k) {
        e[k] = x[2 * k];
        o[k] = x[2 * k + 1];
    }
    o[1] = cmul2(o[1], vec2(h, -h));
    o[2] = minus_i(o[2]);
    o[3] = cmul2(o[3], vec2(-h, -h));
    for (int k = 0; k < 4; ++k) {
        x[k] = e[k] + o[k];
        x[k + 4] = e[k] - o[k];
    }
}
void dft(int r) {
    if (r == 2) dft2();
    else if (r == 3) dft3();
    else if (r == 4) dft4_at(0, 1);
    else if (r == 5) dft5();
    else dft8();
}

void main() {
    int t = int(gl_LocalInvocationID.x), row = int(gl_LocalInvocationID.y);
    int y = int(gl_WorkGroupID.x) * ROWS + row;
    for (int i = 0; i < (L + T - 1) / T; ++i) {
        int n = t + T * i;
        if (n < L) s_row[place(row, digit_reversed(n))] = texelFetch(u_src, ivec2(n, y));
    }
    int span = 1;
    for (int k = 0; k < S; ++k) {
        memoryBarrierShared();
        barrier();
        int r = R[k], butterflies = L / R[k], stride = L / (span * R[k]);
#if OPAQUE
        for (int i = 0; i < (butterflies + T - 1) / T; i += int(gl_NumWorkGroups.z)) {
#else
        for (int i = 0; i < (butterflies + T - 1) / T; ++i) {
#endif
            int q = t + T * i;
            if (q < butterflies) {
                int j = q % span, base = (q / span) * span * r + j;
                for (int m = 0; m < r; ++m) {
                    x[m] = s_row[place(row, base + m * span)];
                    if (k > 0 && m > 0) x[m] = cmul2(x[m], w_table[j * m * stride]);
                }
                dft(r);
                for (int m = 0; m < r; ++m) s_row[place(row, base + m * span)] = x[m];
            }
        }
        span *= r;
    }
    memoryBarrierShared();
    barrier();
    for (int i = 0; i < (L + T - 1) / T; ++i) {
        int p = t + T * i;
        if (p < L) imageStore(u_dst, ivec2(p, y), s_row[place(row, p)]);
    }
}
