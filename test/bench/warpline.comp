// warpline.comp: a column filter of 1024-point column pairs with each channel's line in one warp
// (bin/bench/warpline), to measure a decomposition fft_line.comp does not use. Not part of the
// chain.
//
// fft_line.comp holds a line's four channels together (eight floats an element) across the
// threads of a workgroup, so every stage boundary is a workgroup barrier. Here a workgroup of four
// warps takes column pair p (1 <= p < M/2: re from column p, im from column M - p, as the column
// filter's LOAD_COLUMN_PAIR), warp c its channel c: a one-channel complex line of N = 32 x 32
// points, lane t holding elements t + 32 k. A transform is two 32-point DFTs in registers with one
// transpose through shared memory between them, within the warp:
//     Y_t(j) = W_N^(t j) sum_k x(t + 32 k) W_32^(k j);   X(j + 32 s) = sum_t Y_t(j) W_32^(t s),
// after which lane j holds X(j + 32 s): the input's order, so the inverse runs the same code.
// The forward, the multiply by the kernel's spectrum (complex: its channel c of columns p and
// M - p, at the output's row) and the inverse (scaled 1/N) are one chain. Only the store (RGBA
// texels, through shared memory) and, with LOAD_SHARED, the load cross warps; without it each warp
// fetches the pair's texels and keeps its channel.
//
// WARP_SYNC 1: the transposes synchronise the warp alone (GL_KHR_shader_subgroup_basic's
// subgroupBarrier); 0: the workgroup (barrier()), the same code otherwise.
#if WARP_SYNC
#extension GL_KHR_shader_subgroup_basic : require
#endif
layout(local_size_x = 128) in;
#pragma optionNV(unroll all)
#pragma optionNV(inline all)

layout(binding = 0) uniform sampler2DRect u_src;
layout(binding = 1) uniform sampler2DRect u_kernel;
layout(rgba32f, binding = 0) uniform writeonly image2DRect u_dst;
layout(std430, binding = 0) restrict readonly buffer Twiddles { vec2 w_table[]; };   // W_N^k, k < N

const int N = 1024, E = 32, M = WIDTH;

// The transposes' and the load's and store's staging: per warp 32 x 32 floats for the real and for
// the imaginary parts, row t's column j at t 32 + (j ^ t) (so that neither a row nor a column of
// the transpose hits a bank twice). The load and store use the same floats, channel c's 1024
// elements in warp c's part.
const int PART = 32 * 32;
shared float s_re[4 * PART], s_im[4 * PART];

vec2 xr_xi[E];   // this lane's elements: (re, im)

void sync_warp() {
#if WARP_SYNC
    subgroupMemoryBarrierShared();
    subgroupBarrier();
#else
    memoryBarrierShared();
    barrier();
#endif
}

vec2 cmul(vec2 a, vec2 b) { return vec2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }

int bit_reverse5(int j) { return ((j & 1) << 4) | ((j & 2) << 2) | (j & 4) | ((j & 8) >> 2) | ((j & 16) >> 4); }

// exp(dir 2 pi i m / 32) for a constant m (folded once the loops unroll).
vec2 root32(int m, float dir) {
    float a = 6.28318530717958647692 * float(m) / 32.0;
    return vec2(cos(a), dir * sin(a));
}

// In place, decimation in frequency: natural order in, bit-reversed out (element bit_reverse5(j)
// holds output j). Every index a constant once the loops unroll.
void dft32(float dir) {
    for (int stage = 0; stage < 5; ++stage)   // (a counted loop: one halving h is not unrolled)
        for (int b = 0; b < 16; ++b) {
            int h = 16 >> stage;
            int lo = (b / h) * 2 * h + b % h, hi = lo + h;
            vec2 a = xr_xi[lo], c = xr_xi[hi];
            xr_xi[lo] = a + c;
            xr_xi[hi] = (b % h) == 0 ? a - c : cmul(a - c, root32((b % h) * (16 / h), dir));
        }
}

// The N-point transform of this warp's line, lane t holding elements t + 32 k, in and out.
void transform(float dir, int lane, int base) {
    dft32(dir);   // over k: Y_t(j) at element bit_reverse5(j)
    for (int j = 0; j < E; ++j) {
        vec2 w = w_table[(lane * j) % N];
        vec2 y = cmul(xr_xi[bit_reverse5(j)], vec2(w.x, dir < 0.0 ? w.y : -w.y));
        s_re[base + lane * 32 + (j ^ lane)] = y.x;   // row t, column j
        s_im[base + lane * 32 + (j ^ lane)] = y.y;
    }
    sync_warp();
    for (int t = 0; t < 32; ++t) xr_xi[t] = vec2(s_re[base + t * 32 + (lane ^ t)], s_im[base + t * 32 + (lane ^ t)]);   // lane j: Y_t(j), t < 32
    sync_warp();   // the next transpose's writes after these reads
    dft32(dir);    // over t: X(j + 32 s) at element bit_reverse5(s)
    for (int s = 0; s < E; ++s) {   // to natural order: swap each bit-reversed pair once
        int r = bit_reverse5(s);
        if (r > s) {
            vec2 v = xr_xi[s];
            xr_xi[s] = xr_xi[r];
            xr_xi[r] = v;
        }
    }
}

void main() {
    int i = int(gl_LocalInvocationIndex), lane = i % 32, c = i / 32;
    int p = 1 + int(gl_WorkGroupID.x);
    int base = c * PART;
    // Load: the workgroup fetches the pair's RGBA texels, each warp keeps its channel.
#if LOAD_SHARED
    for (int y = i; y < N; y += 128) {
        vec4 a = texelFetch(u_src, ivec2(p, y)), b = texelFetch(u_src, ivec2(M - p, y));
        for (int ch = 0; ch < 4; ++ch) {
            s_re[ch * PART + y] = a[ch];
            s_im[ch * PART + y] = b[ch];
        }
    }
    memoryBarrierShared();
    barrier();
    for (int k = 0; k < E; ++k) xr_xi[k] = vec2(s_re[base + lane + 32 * k], s_im[base + lane + 32 * k]);
    barrier();
#else
    for (int k = 0; k < E; ++k) {
        int y = lane + 32 * k;
        xr_xi[k] = vec2(texelFetch(u_src, ivec2(p, y))[c], texelFetch(u_src, ivec2(M - p, y))[c]);
    }
#endif
    transform(-1.0, lane, base);
    for (int s = 0; s < E; ++s) {
        int v = lane + 32 * s;
        vec2 k = vec2(texelFetch(u_kernel, ivec2(p, v))[c], texelFetch(u_kernel, ivec2(M - p, v))[c]);
        xr_xi[s] = cmul(xr_xi[s], k) * (1.0 / float(N));
    }
    transform(1.0, lane, base);
    // Store: each warp its channel to shared memory, the workgroup the RGBA texels.
    barrier();
    for (int k = 0; k < E; ++k) {
        s_re[base + lane + 32 * k] = xr_xi[k].x;
        s_im[base + lane + 32 * k] = xr_xi[k].y;
    }
    memoryBarrierShared();
    barrier();
    for (int y = i; y < N; y += 128) {
        vec4 a, b;
        for (int ch = 0; ch < 4; ++ch) {
            a[ch] = s_re[ch * PART + y];
            b[ch] = s_im[ch * PART + y];
        }
        imageStore(u_dst, ivec2(p, y), a);
        imageStore(u_dst, ivec2(M - p, y), b);
    }
}
