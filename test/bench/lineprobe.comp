// lineprobe.comp: the memory pattern of one line dispatch of fft_line.comp alone (bin/bench/lineprobe),
// no arithmetic: each invocation loads its elements (texels, and the mirror line's where MIRROR), then
// stores each where it was read. Not part of the chain.
//
// A dispatch covers AXIS_LINES lines across the axis (columns 1 .. AXIS_LINES, mirrored at M - x; or
// rows 0 .. AXIS_LINES - 1, mirrored at y + N/2), each in SUBLINES sub-lines: element n of sub-line s
// lies at s SUB_STEP + n STRIDE along the axis (a four-step step A: SUB_STEP 1, STRIDE L2; step B:
// SUB_STEP L1, STRIDE 1; whole lines: SUBLINES 1). A workgroup holds LINES lines as PAIRS
// neighbouring lines times LINES / PAIRS neighbouring sub-lines, lane-interleaved as fft_line.comp:
// invocation i is thread i / LINES of lane-line i % LINES; thread t holds elements t + THREADS e,
// e < ELEMENTS. ORDER 0: neighbouring workgroups take neighbouring lines; 1: neighbouring sub-lines.
layout(local_size_x = GROUP_SIZE) in;   // THREADS * LINES, a literal
// FORMAT: the texels' floats, 4 (RGBA32F), 2 (RG32F) or 1 (R32F; textures only).
#if FORMAT == 4
#define VALUE vec4
#define NARROW(t) t
#define WIDEN(v) v
#elif FORMAT == 2
#define VALUE vec2
#define NARROW(t) t.xy
#define WIDEN(v) vec4(v, 0.0, 0.0)
#else
#define VALUE float
#define NARROW(t) t.x
#define WIDEN(v) vec4(v, 0.0, 0.0, 0.0)
#endif
// BUFFER_SRC, BUFFER_DST: that side a linear storage buffer instead of a texture (row-major: texel
// (x, y) at y WIDTH + x), or with both, in tiles of TILE_W x TILE_H texels, tile after tile along
// x, each tile row-major.
#if BUFFER_SRC || BUFFER_DST
#if TILE_W > 0
uint index(ivec2 p) {
    uvec2 q = uvec2(p), tile = q / uvec2(TILE_W, TILE_H), in_tile = q % uvec2(TILE_W, TILE_H);
    return (tile.y * uint(WIDTH / TILE_W) + tile.x) * uint(TILE_W * TILE_H) + in_tile.y * uint(TILE_W) + in_tile.x;
}
#else
uint index(ivec2 p) { return uint(p.y) * uint(WIDTH) + uint(p.x); }
#endif
#endif
// INTERLEAVE K > 1: textures of WIDTH / K x HEIGHT K, texel (x, y) at (x / K, y K + x % K), so that
// K neighbouring texels of a row lie in one column of K texture rows (NVIDIA's 32-byte sector
// holds one texel of two neighbouring rows).
// The source and the target each their own K (INTERLEAVE_SRC, INTERLEAVE_DST).
// TRANSPOSE_SRC, TRANSPOSE_DST: that texture holds texel (x, y) at (y, x) (square textures).
ivec2 texel(ivec2 p, int k, bool t) { p = t ? p.yx : p; return k > 1 ? ivec2(p.x / k, p.y * k + p.x % k) : p; }
#if BUFFER_SRC
layout(std430, binding = 0) restrict readonly buffer Source { vec4 src[]; };
vec4 load(ivec2 p) { return src[index(p)]; }
#else
layout(binding = 0) uniform sampler2DRect u_src;
VALUE load(ivec2 p) { return NARROW(texelFetch(u_src, texel(p, INTERLEAVE_SRC, TRANSPOSE_SRC != 0))); }
#endif
#if BUFFER_DST
layout(std430, binding = 1) restrict writeonly buffer Target { vec4 dst[]; };
void save(ivec2 p, vec4 v) { dst[index(p)] = v; }
#else
#if FORMAT == 4
layout(rgba32f, binding = 0) uniform writeonly image2DRect u_dst;
#elif FORMAT == 2
layout(rg32f, binding = 0) uniform writeonly image2DRect u_dst;
#else
layout(r32f, binding = 0) uniform writeonly image2DRect u_dst;
#endif
void save(ivec2 p, VALUE v) { imageStore(u_dst, texel(p, INTERLEAVE_DST, TRANSPOSE_DST != 0), WIDEN(v)); }
#endif
#if SHARED_VEC4S > 0
// Occupancy as a line dispatch's: shared memory that only limits the workgroups an SM holds.
shared vec4 s_occupy[SHARED_VEC4S];
#endif

const int G = LINES, C = PAIRS, T = THREADS, E = ELEMENTS;
const int LINE_BLOCKS = (AXIS_LINES + C - 1) / C;
const int SUB_BLOCKS = (SUBLINES + G / C - 1) / (G / C);

ivec2 at(int line, int along, bool mirror) {
#if COLUMNS && ALIGNED
    // Columns from 0, mirrored at M - 1 - x: neighbouring pairs then fill whole interleaved columns.
    return ivec2(mirror ? WIDTH - 1 - line : line, along);
#elif COLUMNS
    return ivec2(mirror ? WIDTH - 1 - line : 1 + line, along);
#else
    return ivec2(along, mirror ? line + HEIGHT / 2 : line);
#endif
}

void main() {
    int i = int(gl_LocalInvocationIndex), g = i % G, t = i / G;
    int w = int(gl_WorkGroupID.x);
#if ORDER == 0
    int lb = w % LINE_BLOCKS, sb = w / LINE_BLOCKS;
#else
    int sb = w % SUB_BLOCKS, lb = w / SUB_BLOCKS;
#endif
    int line = lb * C + g % C, s = sb * (G / C) + g / C;
#if SHARED_VEC4S > 0
    s_occupy[i % SHARED_VEC4S] = vec4(float(w));
    barrier();
    if (s_occupy[(i + 1) % SHARED_VEC4S].x < 0.0) return;   // never: keeps the array
#endif
    if (line >= AXIS_LINES || s >= SUBLINES) return;
    VALUE v[E];
#if MIRROR
    VALUE u[E];
#endif
    for (int e = 0; e < E; ++e) {
        int along = s * SUB_STEP + (t + T * e) * STRIDE;
        v[e] = load(at(line, along, false));
#if MIRROR
        u[e] = load(at(line, along, true));
#endif
    }
    for (int e = 0; e < E; ++e) {
        int along = s * SUB_STEP + (t + T * e) * STRIDE;
        save(at(line, along, false), v[e]);
#if MIRROR
        save(at(line, along, true), u[e]);
#endif
    }
}
