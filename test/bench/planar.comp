// planar.comp: whole lines of planar complex texels (RG32F: one channel's complex value a texel),
// LINES neighbouring lines a workgroup (bin/bench/planar), to measure a planar design against
// fft_line.comp's RGBA lines before building it. Not part of the chain.
//
// fft_line.comp holds a line's four channels together (eight floats an element), so a workgroup
// holds one to four rows and its warps read a row's texels one after another, which NVIDIA's
// tiling serves at a third of the columns' rate ("Layouts between dispatches" in src/README.md).
// Here an element is two floats, so a workgroup holds up to eight lines, lane-interleaved as
// fft_line.comp's: invocation i is thread i / LINES of line i % LINES of the workgroup's.
//
// AXIS 0: line l is row l, element n at (n, l). AXIS 1: the texture holds planes of LENGTH rows
// stacked, line l is column l mod WIDTH of plane l / WIDTH, element n at (l mod WIDTH,
// (l / WIDTH) LENGTH + n). MODE 0: the forward DFT; 1: forward, multiply by the kernel's spectrum
// (u_kernel: the same layout, or with GREY_KERNEL plane 0 for every plane) scaled by SCALE,
// inverse; 2: the inverse DFT (unscaled). Inverses run the forward stages on conjugates.
//
// Stockham stages, natural order in and out: stage s of radix r, after stages whose radices
// multiply to ns, takes butterfly j's inputs at j + k L / r (k < r), rotates input k by
// W_(ns r)^(k (j mod ns)) and puts output k at (j / ns) ns r + j mod ns + k ns. Thread t runs
// butterflies t + b THREADS, holding butterfly b's elements in registers b r .. b r + r - 1; the
// exchange goes through shared memory, COMPONENTS floats a round. The last stage leaves element
// t + b THREADS + k L / r in register b r + k, which is what a first stage of the same radix
// takes: so a filter's inverse runs the radices in reverse order and starts from the registers.
layout(local_size_x = GROUP_SIZE) in;   // THREADS * LINES, a literal
#pragma optionNV(unroll all)
#pragma optionNV(inline all)

layout(binding = 0) uniform sampler2DRect u_src;
layout(binding = 1) uniform sampler2DRect u_kernel;
layout(rg32f, binding = 0) uniform writeonly image2DRect u_dst;
layout(std430, binding = 0) restrict readonly buffer Twiddles { vec2 w_table[]; };   // W_L^k, k < L

const int L = LENGTH, G = LINES, T = THREADS, E = L / THREADS;
const int STAGES = STAGE_COUNT;
const int RADIX[6] = int[6](RADIX0, RADIX1, RADIX2, RADIX3, RADIX4, RADIX5);

shared float s_x[G * L * COMPONENTS];
vec2 x[E];

vec2 cmul(vec2 a, vec2 b) { return vec2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
vec2 minus_i(vec2 a) { return vec2(a.y, -a.x); }
vec2 conj(vec2 a) { return vec2(a.x, -a.y); }

void dft2(int e) {
    vec2 a = x[e], b = x[e + 1];
    x[e] = a + b;
    x[e + 1] = a - b;
}

// Four values at e, e + d, e + 2d, e + 3d, forward.
void dft4(int e, int d) {
    vec2 a = x[e] + x[e + 2 * d], b = x[e] - x[e + 2 * d], c = x[e + d] + x[e + 3 * d], f = minus_i(x[e + d] - x[e + 3 * d]);
    x[e] = a + c;
    x[e + d] = b + f;
    x[e + 2 * d] = a - c;
    x[e + 3 * d] = b - f;
}

// Eight values at e .. e + 7, forward: the even and odd halves' 4-point DFTs, then X_k, X_(k+4) =
// E_k +- W_8^k O_k.
void dft8(int e) {
    dft4(e, 2);
    dft4(e + 1, 2);
    const float h = 0.70710678118654752;
    vec2 o0 = x[e + 1], o1 = cmul(x[e + 3], vec2(h, -h)), o2 = minus_i(x[e + 5]), o3 = cmul(x[e + 7], vec2(-h, -h));
    vec2 e0 = x[e], e1 = x[e + 2], e2 = x[e + 4], e3 = x[e + 6];
    x[e] = e0 + o0;
    x[e + 1] = e1 + o1;
    x[e + 2] = e2 + o2;
    x[e + 3] = e3 + o3;
    x[e + 4] = e0 - o0;
    x[e + 5] = e1 - o1;
    x[e + 6] = e2 - o2;
    x[e + 7] = e3 - o3;
}

void dft(int e, int r) {
    if (r == 2) dft2(e);
    else if (r == 4) dft4(e, 1);
    else dft8(e);
}

// Line g's element at `position` in the exchange (COMPONENTS floats each).
int slot(int g, int position) { return (g * L + position) * COMPONENTS; }

// Stage outputs (radix r, after stages multiplying to ns) to the next stage's inputs (radix r2),
// through shared memory, COMPONENTS floats a round. Every round starts with a barrier, so that no
// thread stores into slots another has still to load.
void exchange(int g, int t, int r, int ns, int r2) {
    vec2 y[E];
    for (int c = 0; c < 2; c += COMPONENTS) {
        barrier();
        for (int b = 0; b < E / r; ++b) {
            const int j = t + b * T, base = (j / ns) * ns * r + j % ns;
            for (int k = 0; k < r; ++k) {
                s_x[slot(g, base + k * ns)] = x[b * r + k][c];
                if (COMPONENTS == 2) s_x[slot(g, base + k * ns) + 1] = x[b * r + k][1];
            }
        }
        barrier();
        for (int b = 0; b < E / r2; ++b)
            for (int k = 0; k < r2; ++k) {
                const int at = slot(g, t + b * T + k * (L / r2));
                y[b * r2 + k][c] = s_x[at];
                if (COMPONENTS == 2) y[b * r2 + k][1] = s_x[at + 1];
            }
    }
    for (int e = 0; e < E; ++e) x[e] = y[e];
}

int radix(int s, bool reversed) { return RADIX[reversed ? STAGES - 1 - s : s]; }

// The forward DFT of the registers (first stage's layout in, last stage's out), the radices in
// order or reversed.
void stages(int g, int t, bool reversed) {
    int ns = 1;
    for (int s = 0; s < STAGES; ++s) {
        const int r = radix(s, reversed);
        for (int b = 0; b < E / r; ++b) {
            const int m = (t + b * T) % ns;
            if (s > 0)
                for (int k = 1; k < r; ++k) x[b * r + k] = cmul(x[b * r + k], w_table[m * k * (L / (ns * r))]);
            dft(b * r, r);
        }
        if (s < STAGES - 1) exchange(g, t, r, ns, radix(min(s + 1, STAGES - 1), reversed));
        ns *= r;
    }
}

ivec2 position(int line, int n) {
#if AXIS == 0
    return ivec2(n, line);
#else
    return ivec2(line % WIDTH, (line / WIDTH) * L + n);
#endif
}

void main() {
    const int i = int(gl_LocalInvocationIndex), g = i % G, t = i / G;
    const int line = int(gl_WorkGroupID.x) * G + g;
    const bool inverse = MODE == 2;
    const int first = RADIX[0], last = MODE == 1 ? RADIX[0] : RADIX[STAGES - 1];
    for (int b = 0; b < E / first; ++b)
        for (int k = 0; k < first; ++k) {
            vec2 v = texelFetch(u_src, position(line, t + b * T + k * (L / first))).xy;
            x[b * first + k] = inverse ? conj(v) : v;
        }
    stages(g, t, false);
#if MODE == 1
    const int r = RADIX[STAGES - 1];
    for (int b = 0; b < E / r; ++b)
        for (int k = 0; k < r; ++k) {
            const int n = t + b * T + k * (L / r);
#if GREY_KERNEL
            vec2 w = texelFetch(u_kernel, ivec2(line % WIDTH, n)).xy;
#else
            vec2 w = texelFetch(u_kernel, position(line, n)).xy;
#endif
            x[b * r + k] = conj(cmul(x[b * r + k], w) * SCALE);
        }
    stages(g, t, true);
    for (int e = 0; e < E; ++e) x[e] = conj(x[e]);
#endif
    for (int b = 0; b < E / last; ++b)
        for (int k = 0; k < last; ++k) {
            vec2 v = inverse ? conj(x[b * last + k]) : x[b * last + k];
            imageStore(u_dst, position(line, t + b * T + k * (L / last)), vec4(v, 0.0, 0.0));
        }
}
