// planerows.comp: the forward DFT of whole rows of planar complex texels (RG32F: one channel's
// complex value a texel), LINES neighbouring rows a workgroup (bin/bench/planerows), to measure
// the planar design against fft_line.comp's RGBA rows before building it. Not part of the chain.
//
// fft_line.comp holds a line's four channels together (eight floats an element), so a workgroup
// holds one to four rows and its warps read a row's texels one after another, which NVIDIA's
// tiling serves at a third of the columns' rate ("Layouts between dispatches" in src/README.md).
// Here an element is two floats, so a workgroup holds up to eight rows, lane-interleaved as
// fft_line.comp's lines: invocation i is thread i / LINES of row i % LINES of the workgroup's.
//
// Stockham stages, natural order in and out: stage s of radix r, after stages whose radices
// multiply to Ns, takes butterfly j's inputs at j + k L / r (k < r), rotates input k by
// W_(Ns r)^(k (j mod Ns)) and stores output k at (j / Ns) Ns r + j mod Ns + k Ns. Thread t runs
// butterflies t + b THREADS, holding butterfly b's elements in registers b r .. b r + r - 1; the
// exchange goes through shared memory, COMPONENTS floats a round.
layout(local_size_x = GROUP_SIZE) in;   // THREADS * LINES, a literal
#pragma optionNV(unroll all)
#pragma optionNV(inline all)

layout(binding = 0) uniform sampler2DRect u_src;
layout(rg32f, binding = 0) uniform writeonly image2DRect u_dst;
layout(std430, binding = 0) restrict readonly buffer Twiddles { vec2 w_table[]; };   // W_L^k, k < L

const int L = LENGTH, G = LINES, T = THREADS, E = L / THREADS;
const int STAGES = STAGE_COUNT;
const int RADIX[6] = int[6](RADIX0, RADIX1, RADIX2, RADIX3, RADIX4, RADIX5);

shared float s_x[G * L * COMPONENTS];
vec2 x[E];

vec2 cmul(vec2 a, vec2 b) { return vec2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
vec2 minus_i(vec2 a) { return vec2(a.y, -a.x); }

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

// Row g's element at `position` in the exchange (COMPONENTS floats each).
int slot(int g, int position) { return (g * L + position) * COMPONENTS; }

// Stage outputs (radix r, after stages multiplying to ns; output k of butterfly j at
// (j / ns) ns r + j mod ns + k ns) to the next stage's inputs (radix r2: butterfly j's input k at
// j + k L / r2), through shared memory, COMPONENTS floats a round. Every round starts with a
// barrier, so that no thread stores into slots another has still to load.
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

void main() {
    const int i = int(gl_LocalInvocationIndex), g = i % G, t = i / G;
    const int row = int(gl_WorkGroupID.x) * G + g;
    int ns = 1;
    for (int s = 0; s < STAGES; ++s) {
        const int r = RADIX[s];
        if (s == 0)
            for (int b = 0; b < E / r; ++b)
                for (int k = 0; k < r; ++k) x[b * r + k] = texelFetch(u_src, ivec2(t + b * T + k * (L / r), row)).xy;
        for (int b = 0; b < E / r; ++b) {
            const int m = (t + b * T) % ns;
            if (s > 0)
                for (int k = 1; k < r; ++k) x[b * r + k] = cmul(x[b * r + k], w_table[m * k * (L / (ns * r))]);
            dft(b * r, r);
        }
        if (s == STAGES - 1) {   // the last stage's outputs (ns r = L): t + b T + k L / r
            for (int b = 0; b < E / r; ++b)
                for (int k = 0; k < r; ++k) imageStore(u_dst, ivec2(t + b * T + k * (L / r), row), vec4(x[b * r + k], 0.0, 0.0));
        } else {
            exchange(g, t, r, ns, RADIX[min(s + 1, 5)]);
        }
        ns *= r;
    }
}
