// fft_line.comp: the compute backend. Workgroups transform whole lines (row pairs, or column pairs
// of the compressed layout) in shared memory and registers: one dispatch per axis, Stockham
// stages of mixed radix (2, 3, 4, 5, 7, 8, 16, and products of two of them: 6, 9, 10, 12, 14,
// 15), with the paper's real-to-complex packing (Eq. 7-8) and compressed
// layout (Eq. 9-10) folded into loads and stores.
// A filter is three dispatches: rows, columns (forward, multiply, inverse), rows.
//
// Each of the T threads of a line holds up to R elements (vec4 real and imaginary parts: the four
// channels) in registers. A stage of radix r with output stride P = L / S (S the size of the
// partitions it produces) has L / r butterflies, thread t running b = t + i T for i < count(r)
// (the last round only where b < L / r when T does not divide L / r); butterfly b with p = b mod P
// and u = b div P reads the elements p + u P r + t P (t < r), multiplies them by W_S^(u t) =
// W_L^(u t P) (from a table made in double on the CPU) and writes its r outputs to b + k L / r:
// Eq. 6 at radix r, natural order in and out, for any sequence of radices whose product is L.
// Between stages the elements pass through shared memory, COMPONENTS floats of each at a time
// (all 8, or rounds of 4, 2 or 1).
//
// The twiddle table is read through two paths: the texture unit (u_twiddle, like every image
// fetch and store here) and, for the stages the C++ side marks, the load/store path (a storage
// buffer holding the same table, TWIDDLE_BUFFER). Either path alone is a bottleneck: measured on
// the H200, the column dispatch at 4096^2 takes 426 us with every twiddle from the texture, 506 us
// with every twiddle from the buffer, 366 us with the forward stages' from the buffer.
//
// A workgroup holds LINES lines (G), lane-interleaved: invocation i is thread i / G of line i % G,
// so a warp reads G neighbouring rows (or columns) together, the 2D footprint the GPU's tiled
// texture layout serves fastest (measured on the H200: a row-by-row pattern ran 3-4x slower). In
// the four-step steps the G lines are neighbouring sub-lines (the columns' pair 0), or, with
// NEIGHBOUR_PAIRS C, C neighbouring row or column pairs of G / C sub-lines each (measured on the
// H100 at 8192^2 with G = 16: column step B 1.7x faster so, step A slower, and a filter's
// two-point FILTER_TAIL with 4 pairs 2.3x faster; on the H200 at 16384^2, column steps A and B
// with G = 32 and 2 pairs 1.07-1.18x faster, row steps with G = 4 and 2 pairs 1.06-1.48x:
// src/README.md).
//
// Lines longer than a workgroup holds fold (FOLD = 2 or 4): the workgroup takes the line's
// channels in FOLD phases of 4 / FOLD channels, one after the other, each as a transform of
// length L = (line length) / FOLD whose vec4 elements hold FOLD interleaved elements of those
// channels: element j carries the line's elements FOLD j + m (m < FOLD, components m 4 / FOLD ..),
// so the L-point stages compute the FOLD decimated transforms E_m at once, and a radix-FOLD
// stage within each thread, fold_stage(), joins them: X(k + q L) = sum_m W_FOLD^(m q)
// W_(FOLD L)^(m k) E_m(k) (the inverse the same way, W conjugated; the filter's inverse starts
// from X in registers and runs it backwards, fold_inverse_at()). A texel holds all four
// channels, so the phases before the last leave theirs in a storage buffer, and the last
// completes each texel (the same invocation stores the same texels in every phase). On the H100
// at 8192^2 this took 0.97x the four-step route's time and 15x its compile time (src/README.md),
// so lines fold only where asked to (FftOptions::compute_fold).
// Lines longer than a workgroup holds otherwise take the four-step route (Bailey): a line of F = L1 L2
// elements as L2 sub-lines of length L1 (elements n2 + L2 n1, step A, then the twiddle
// W_F^(n2 k1)) and L1 sub-lines of length L2 (elements k1 L2 + n2 of what A stored, step B, whose
// output k2 is the element k1 + L1 k2 of the line's transform). STEP_A and STEP_B are those
// dispatches; neither defined: the whole line at once (SUBLINES = 1). A long filter takes three:
// step A forward; step B forward, the multiply, the inverse of the same sub-lines (the route run
// backwards: x(n2 + L2 n1) = sum_k1 W_L1^(-n1 k1) W_F^(-n2 k1) sum_k2 W_L2^(-n2 k2) X(k1 + L1 k2)),
// their twiddle, stored where they were read; step A inverse (FILTER_TAIL).
//
// Defines, from compute_fft.cpp: LENGTH (this dispatch's transform length), FOLD (channel phases: 1,
// 2 or 4), REGISTERS (R), THREADS,
// LINES, GROUP_SIZE (THREADS * LINES), COMPONENTS, PAD_EVERY (one element of padding per that many, 0: none),
// SUBLINES (F / LENGTH), NEIGHBOUR_PAIRS (four-step column
// steps: column pairs side by side in a workgroup, 1: neighbouring sub-lines only), BANDS (1: the
// workgroups of the columns' step B along the pairs first, below), KERNEL_STEP_ORDER (1: the
// kernel's spectrum with its rows in step B's order, multiply()), KERNEL_REAL (1: that spectrum
// is real, its imaginary half K(M - p, v) not read: multiply()), WIDTH (rows: M) or HEIGHT (columns: N),
// both, LINE_COUNT and LINE_OFFSET in lines above 4096 (below: u_grid, u_lines),
// TWIDDLE_BUFFER (1: the storage buffer is bound), H_SOURCE and H_TARGET (1: row pairs in
// neighbouring rows, below), SOURCE_TRANSPOSED and TARGET_TRANSPOSED (1: that texture holds texel
// (x, y) at (y, x), texel_at()), UNIT_ROOTS (the constants W_n^m, n <= 16, made
// in double on the CPU), the stage calls FORWARD_TRANSFORM /
// INVERSE_TRANSFORM with their first and last radices, and one of each group:
//   ROWS (line a < N/2: image rows a and a + N/2 as one complex line, Eq. 7), COLUMNS (line p:
//        columns p and M - p of the compressed layout, 0 < p < M/2), or COLUMNS with PAIR0
//        (columns 0 and M/2, two real columns as one complex line)
//   LOAD_ROW_PAIR      real part from row a, imaginary part from row a + N/2 (2a and 2a + 1: H_SOURCE)
//   LOAD_UNTANGLED     the column transform's input from the row transforms H (Eq. 8, times u_scale)
//   LOAD_SPECTRUM      the compressed layout of Eq. 10 (pair 0: Eq. 9, tangled again by Eq. 7)
//   LOAD_COLUMN_PAIR   real part from column p, imaginary part from column M - p (pair 0: 0, M/2)
//   FORWARD, INVERSE, or FILTER (forward, the multiply by u_kernel (Eq. 10) times u_gain, inverse)
//   FILTER in STEP_B   a long filter's middle step: step B's sub-lines forward, the multiply, the
//                      same sub-lines inverse and the twiddle conjugated, stored where they were read
//   FILTER_TAIL        INVERSE in STEP_A after that: the twiddle already applied, the outputs the
//                      line's natural order
//   STORE_ROW_PAIR     as LOAD_ROW_PAIR
//   STORE_SPECTRUM     Eq. 10 times u_gain (pair 0: untangled again, Eq. 9)
//   STORE_COLUMN_PAIR  as LOAD_COLUMN_PAIR
//   STORE_ROW_PAIRS    a column line's inverse as tangled row pairs H, for the inverse row pass
//   STORE_TANGLED      a filter's step B of columns in halves, each element tangled alone into H's
//                      channel-pair layout; the inverse rows then take its step A inverse (two
//                      points) in their loads (TAIL_IN_LOADS): three dispatches a filter
//   CHANNEL_PAIRS      rows whose row pair would fill a workgroup alone, or not fit one (ROWS,
//                      FOLD 2, one phase): line a is image row a alone, its four real channels
//                      packed as two complex ones (R + iG, B + iA: Eq. 7 across channels), a texel
//                      an element in and out (LOAD_ROW_CHANNELS, STORE_ROW_CHANNELS); the columns
//                      then read and leave H in that layout (H_SOURCE, H_TARGET 2)

#if defined(TIMELINE)
// Profiling only (test/bench/timeline.cpp; GPUFFT_TIMELINE set when the programs are built): each
// workgroup appends its multiprocessor, its dispatch's kind and the clock at its start and end to
// the storage buffer at binding TIMELINE, 8 uints a record (the last unused). The clock is the
// multiprocessor's own (comparable within one multiprocessor only): NVIDIA's GL offers no other.
#extension GL_NV_shader_thread_group : require
#extension GL_ARB_shader_clock : require
layout(std430, binding = TIMELINE) coherent buffer Timeline { uint tl_count; uint tl_record[]; };
shared uvec2 tl_start;   // in shared memory: a register held through the line would cost spills at the cap
#endif

// NVIDIA's compiler keeps the stage loops (and so the register arrays, indexed by the loop
// variables, in local memory) unless told to unroll and inline everything: the butterflies are
// only fast with every radix, index and W_n^m a literal. Other compilers ignore these.
#pragma optionNV(unroll all)
#pragma optionNV(inline all)

const int L = LENGTH;
const int R = REGISTERS;  // elements a thread holds: the most any stage's butterflies need
const int T = THREADS;     // a literal: layout qualifiers need one before GLSL 4.40
const int G = LINES;
// The grid M x N and the dispatch's lines: lines up to 4096 have their own axis a literal (WIDTH
// in rows, HEIGHT in columns) and the rest as uniforms, so that one program serves every grid
// whose lines are these (src/README.md, "Programs keyed by the line, lengths shared"): the other
// axis and the line counts enter only where a line starts and where its texels lie, not the
// butterflies. Longer lines (the four-step steps, 8192's rows as channel pairs) have all four
// literal: as uniforms they ran 1-4% slower.
uniform ivec2 u_grid;    // (M, N)
uniform ivec2 u_lines;   // (LINE_COUNT, LINE_OFFSET) below
#if defined(WIDTH)
const int M = WIDTH;
#else
#define M (u_grid.x)
#endif
#if defined(HEIGHT)
const int N = HEIGHT;
#else
#define N (u_grid.y)
#endif
#if !defined(LINE_COUNT)
#define LINE_COUNT (u_lines.x)    // lines of the dispatch
#define LINE_OFFSET (u_lines.y)   // a whole-row pass's tail (ComputeFft::row_tail): its first row pair; else 0
#endif
const int F = FOLD;               // channel phases
const int CH = 4 / FOLD;          // channels a phase takes
const int STRIDE = SUBLINES * FOLD;   // the twiddle table is the full line's: W_L^k = W_full^(k STRIDE)
layout(local_size_x = GROUP_SIZE) in;   // THREADS * LINES

layout(binding = 0) uniform sampler2DRect u_src;      // what this dispatch reads
layout(binding = 1) uniform sampler2DRect u_kernel;   // FILTER: the kernel's spectrum (Eq. 10)
layout(binding = 2) uniform sampler2DRect u_twiddle;  // texel k of row 0: W_F^k, k < F
#if FOLD > 1 && !defined(CHANNEL_PAIRS)
// Folded: the phases before the last leave their channels of each texel in the parts buffer
// (phase h's in plane h, along the line: rows at y M + x, columns at x N + y); the last reads
// them back and stores whole texels. Both restrict: the last phase's reads from the buffer may
// then be issued ahead of its stores.
layout(IMAGE_FORMAT, binding = 0) uniform restrict writeonly image2DRect u_dst;
#if FOLD == 2
layout(std430, binding = 1) restrict buffer Parts { vec2 parts[]; };
#else
layout(std430, binding = 1) restrict buffer Parts { float parts[]; };
#endif
#else
layout(IMAGE_FORMAT, binding = 0) uniform writeonly image2DRect u_dst;   // rgba32f, or rgba16f intermediates
#endif
#if TWIDDLE_BUFFER
layout(std430, binding = 0) readonly buffer TwiddleTable { vec2 w_table[]; };   // W_F^k as u_twiddle
#endif
uniform float u_scale;  // LOAD_UNTANGLED: the rows' factor of 1/(MN), 1/2^k (sizes.h, normalisation)
uniform float u_gain;   // STORE_SPECTRUM: the columns' factor of 1/(MN); FILTER: 2^k, the rows' factor given back

// ---- Threads, lines and positions.

// Every index here is at least 0, so an index divided by a constant (once the calls inline) goes
// through uint: NVIDIA compiles that to a multiply-high and a shift, where int division adds a sign
// fix-up of about ten instructions. Measured in the H100's machine code (src/README.md): the
// 1080-point column filter 3016 -> 2360 instructions, 1920x1080 filtered 11% faster.
int quotient(int a, int b) { return int(uint(a) / uint(b)); }
int remainder(int a, int b) { return int(uint(a) % uint(b)); }

int thread() { return int(gl_LocalInvocationIndex / uint(G)); }
int group_line() { return int(gl_LocalInvocationIndex % uint(G)); }
int workgroup() { return int(gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x); }

#if defined(PAIR0) && defined(STEP_B) && (defined(STORE_SPECTRUM) || defined(FILTER)) && SUBLINES > 2
// Pair 0's untangle needs G(N - v) with G(v): sub-lines k1 and L1 - k1 share a workgroup (G = 2).
// (Two sub-lines are each their own mirror.)
int line_id() { return 0; }
int sub() { int w = workgroup(); return group_line() == 0 ? w : remainder(SUBLINES - w, SUBLINES); }
bool line_active() { return 2 * workgroup() <= SUBLINES; }
int line_index() { return 0; }
#elif NEIGHBOUR_PAIRS > 1 || BANDS
// Four-step steps (rows' A and B; columns' A, B, FILTER_TAIL): a workgroup holds C neighbouring
// row or column pairs times G / C neighbouring sub-lines, lane g on pair g % C and sub-line g / C
// of its block; the workgroups go along the pairs first, one block of sub-lines (a band of rows,
// in the columns' step B) at a time. BANDS: the columns' step B of one line a workgroup (C = 1),
// so ordered for that alone: the workgroups in flight then read a few bands of many column pairs,
// where a pair's sub-lines one after another read every band of a few (measured on the H200 at
// 16384^2, 4096-point sub-lines: 2.1x faster copied so).
const int C = NEIGHBOUR_PAIRS;
#define AXIS_LINES quotient(LINE_COUNT, SUBLINES)
#define AXIS_BLOCKS quotient(AXIS_LINES + C - 1, C)
// The last block of sub-lines is partial where G / C does not divide SUBLINES (6000: 100 of 8):
// its lanes past SUBLINES, like those past the last row or column pair, load sub-line 0 and store
// nothing.
int line_index() { return remainder(workgroup(), AXIS_BLOCKS) * C + remainder(group_line(), C); }
int block_sub() { return quotient(workgroup(), AXIS_BLOCKS) * (G / C) + quotient(group_line(), C); }
bool line_active() { return line_index() < AXIS_LINES && block_sub() < SUBLINES; }
int sub() { return block_sub() < SUBLINES ? block_sub() : 0; }
#else
int line_id() { return workgroup() * G + group_line(); }
int sub() { return remainder(line_id(), SUBLINES); }
bool line_active() { return line_id() < LINE_COUNT; }
int line_index() { return quotient(line_id(), SUBLINES) + LINE_OFFSET; }   // a row pass's tail: from LINE_OFFSET on
#endif

// The line along the axis: row pair a, or column pair p (0 for PAIR0); inactive lanes (past
// LINE_COUNT in the last workgroup) load line 0's data and store nothing.
int axis_line() {
    int a = line_active() ? line_index() : 0;
#if defined(COLUMNS) && !defined(PAIR0)
    a += 1;
#endif
    return a;
}

// Full-line positions. Unfolded (slot 0 only): input element n and output element k of this
// dispatch's transform, whole or a four-step step's. Folded: slot m of the element at position j
// of the L-point transform, interleaved (F j + m: every load, and the filter's stores) or in
// blocks (j + m L: the outputs of fold_stage(), the forward's and the inverse's stores, and the
// filter's multiply).
#if FOLD > 1
int interleaved_position(int j, int m) { return F * j + m; }
int spectrum_position(int k, int q) { return k + q * L; }
#else
int spectrum_position(int k, int q) { return SUBLINES * k + sub(); }   // the forward's outputs
#endif
int in_position(int n, int m) {
#if FOLD > 1
    return interleaved_position(n, m);
#elif defined(STEP_B)
    return sub() * L + n;
#else
    return SUBLINES * n + sub();
#endif
}
int out_position(int k, int q) {
#if FOLD > 1 && defined(FILTER)
    return interleaved_position(k, q);
#elif defined(STEP_B) && defined(FILTER)
    return in_position(k, q);   // the inverse's sub-line back where the forward's came from
#else
    return spectrum_position(k, q);
#endif
}

// This phase's channels: phase CH .. phase CH + CH - 1. The phase loop (main()) stays a loop, its
// count a uniform: unrolled, NVIDIA's compiler gave up unrolling the stages of a 4096-point line
// FOLD times over (its register arrays went to local memory, or past its instruction limit).
// Code that depends on the phase selects, never indexes, by it.
uniform int u_phases;   // FOLD (set by compute_fft.cpp)
int phase = 0;
#if FOLD == 4
bvec4 phase_lane() { return equal(ivec4(phase), ivec4(0, 1, 2, 3)); }
#endif
// Folded element x with slot m (components m CH ..) set to this phase's channels of `full`.
// (Callers build elements in locals and assign them whole: Mesa's llvmpipe lost a slot written
// through an inout parameter into the register arrays.)
vec4 place(vec4 x, int m, vec4 full) {
#if FOLD == 1
    return full;
#elif FOLD == 2
    vec2 v = phase == 0 ? full.xy : full.zw;
    return m == 0 ? vec4(v, x.zw) : vec4(x.xy, v);
#else
    vec4 r = x;
    r[m] = dot(full, vec4(phase_lane()));   // exact: one term is 1 x, the others 0
    return r;
#endif
}

// ---- Registers and shared memory.

vec4 xr[R], xi[R];   // this thread's elements

// Shared memory holds W floats per element (W = 4: vec4, 2: vec2, 1: float); COMPONENTS = 8
// keeps real and imaginary parts in two vec4 arrays, one round per exchange, fewer take
// 8 / COMPONENTS rounds. Element (line g, position q) sits at pad(q) G + g: the lanes of a warp,
// G lines at the same position, hit neighbouring banks.
#if COMPONENTS == 8
const int W = 4;
#else
const int W = COMPONENTS;
#endif
const int ROUNDS = 8 / COMPONENTS;
#if PAD_EVERY > 0
int pad(int q) { return q + quotient(q, PAD_EVERY); }
#else
int pad(int q) { return q; }
#endif
#if PAD_EVERY > 0
const int SLOTS = G * (L + (L - 1) / PAD_EVERY);
#else
const int SLOTS = G * L;
#endif
#if COMPONENTS == 8
shared vec4 s_re[SLOTS], s_im[SLOTS];
#elif COMPONENTS == 4
shared vec4 s_part[SLOTS];
#elif COMPONENTS == 2
shared vec2 s_part[SLOTS];
#else
shared float s_part[SLOTS];
#endif

int slot(int g, int q) { return pad(q) * G + g; }

// Part `round` of an element to / from shared memory.
void put(int round, int at, vec4 re, vec4 im) {
#if COMPONENTS == 8
    s_re[at] = re;
    s_im[at] = im;
#elif COMPONENTS == 4
    s_part[at] = round == 0 ? re : im;
#elif COMPONENTS == 2
    vec4 v = round < 2 ? re : im;
    s_part[at] = (round & 1) == 0 ? v.xy : v.zw;
#else
    vec4 v = round < 4 ? re : im;
    s_part[at] = v[round & 3];
#endif
}

void get(int round, int at, inout vec4 re, inout vec4 im) {
#if COMPONENTS == 8
    re = s_re[at];
    im = s_im[at];
#elif COMPONENTS == 4
    if (round == 0) re = s_part[at]; else im = s_part[at];
#elif COMPONENTS == 2
    if (round == 0) re.xy = s_part[at];
    else if (round == 1) re.zw = s_part[at];
    else if (round == 2) im.xy = s_part[at];
    else im.zw = s_part[at];
#else
    if (round < 4) re[round] = s_part[at]; else im[round - 4] = s_part[at];
#endif
}

// Texel (x, y) of a texture stored transposed (SOURCE_TRANSPOSED, TARGET_TRANSPOSED: a transposed
// filter's image side and H, ComputeFft::transposed()) lies at (y, x), so that a line along x is
// stored down a column of the texture: NVIDIA's 32-byte sector holds one texel of two neighbouring
// rows, so a row stored alone fills half of each, and a column whole ones.
ivec2 texel_at(int x, int y, bool transposed) { return transposed ? ivec2(y, x) : ivec2(x, y); }
vec4 fetch(sampler2DRect tex, int x, int y) { return texelFetch(tex, ivec2(x, y)); }
vec4 source(int x, int y) { return texelFetch(u_src, texel_at(x, y, SOURCE_TRANSPOSED != 0)); }
// Slot q of folded element v (all of v unfolded) to this phase's channels of texel (x, y).
void store(int x, int y, vec4 v, int q) {
    if (!line_active()) return;
#if FOLD == 1 || defined(CHANNEL_PAIRS)
    imageStore(u_dst, texel_at(x, y, TARGET_TRANSPOSED != 0), v);
#else
#if defined(ROWS)
    uint at = uint(y) * uint(M) + uint(x), plane = uint(M) * uint(N);   // the lanes of a warp: neighbouring x
#else
    uint at = uint(x) * uint(N) + uint(y), plane = uint(M) * uint(N);   // neighbouring y
#endif
#if FOLD == 2
    vec2 part = q == 0 ? v.xy : v.zw;
    if (phase == 0) parts[at] = part;
    else imageStore(u_dst, ivec2(x, y), vec4(parts[at], part));
#else
    float part = v[q];
    if (phase < 3) parts[uint(phase) * plane + at] = part;
    else imageStore(u_dst, ivec2(x, y), vec4(parts[at], parts[plane + at], parts[2u * plane + at], part));
#endif
#endif
}

// W_F^k (k < F) from the table, through the texture unit or (from_buffer) the storage buffer; the
// stages of a length-L transform use W_L^k = W_F^(k F / L).
vec2 table_twiddle(int k, bool from_buffer) {
#if TWIDDLE_BUFFER
    if (from_buffer) return w_table[k];
#endif
    return texelFetch(u_twiddle, ivec2(k, 0)).xy;
}

#if SHARED_TWIDDLES
// Whole lines the C++ side picks (mixed columns in large workgroups, where the table fits beside
// the exchange: compute_fft.cpp): the table copied to shared memory at the start, so that a stage's
// twiddles come from there. The copy is ordered before the first read by the first exchange's
// barrier: the first stage of every transform has no twiddles.
shared vec2 s_twiddle[L * FOLD];
void copy_twiddles() {
    for (int k = int(gl_LocalInvocationIndex); k < L * FOLD; k += GROUP_SIZE) s_twiddle[k] = table_twiddle(k, TWIDDLE_BUFFER != 0);
}
vec2 twiddle(int k, bool from_buffer) { return s_twiddle[k]; }
#else
vec2 twiddle(int k, bool from_buffer) { return table_twiddle(k, from_buffer); }
#endif

// x * w for a complex x of four channels.
void rotate(inout vec4 re, inout vec4 im, vec2 w) {
    vec4 r = re * w.x - im * w.y;
    im = re * w.y + im * w.x;
    re = r;
}

// ---- Small DFTs on registers, in place: dir = -1 forward, +1 inverse (W = exp(dir 2 pi i / n)).

// W_n^m = exp(-2 pi i m / n) for n <= 16: table entry n (n - 1) / 2 + m. Every index below is a
// constant once the stage loops unroll, so the compiler folds these into literals.
const vec2 ROOTS[136] = UNIT_ROOTS;
vec2 root(int m, int n) { return ROOTS[n * (n - 1) / 2 + m % n]; }

// Two values at e, e + d.
void dft2(int e, int d) {
    vec4 ar = xr[e], ai = xi[e];
    xr[e] = ar + xr[e + d];
    xi[e] = ai + xi[e + d];
    xr[e + d] = ar - xr[e + d];
    xi[e + d] = ai - xi[e + d];
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

// p values (p = 3, 5, 7) at e, e + d, ..., e + (p-1) d. With a_k = x_k + x_(p-k), b_k = x_k - x_(p-k)
// and theta = 2 pi m k / p, for m = 1 .. (p-1)/2:
//     X_m, X_(p-m) = C_m +- dir i Q_m,  C_m = x_0 + sum_k cos(theta) a_k,  Q_m = sum_k sin(theta) b_k
// and X_0 = x_0 + sum_k a_k ((p-1)^2 / 2 real multiplies per channel instead of the (p-1)^2 complex
// ones of the plain sum). Written out per p, without arrays: NVIDIA's compiler refuses register
// arrays indexed inside these loops ("lvalue in array access too complex").
void odd_pair(int lo, int hi, vec4 cr, vec4 ci, vec4 qr, vec4 qi, float dir) {
    xr[lo] = cr - dir * qi;   // C + dir i Q
    xi[lo] = ci + dir * qr;
    xr[hi] = cr + dir * qi;
    xi[hi] = ci - dir * qr;
}

void dft3(int e, int d, float dir) {
    vec4 ar = xr[e + d] + xr[e + 2 * d], ai = xi[e + d] + xi[e + 2 * d];
    vec4 br = xr[e + d] - xr[e + 2 * d], bi = xi[e + d] - xi[e + 2 * d];
    vec2 w = root(1, 3);   // (cos theta, -sin theta)
    vec4 cr = xr[e] + w.x * ar, ci = xi[e] + w.x * ai;
    xr[e] += ar;
    xi[e] += ai;
    odd_pair(e + d, e + 2 * d, cr, ci, -w.y * br, -w.y * bi, dir);
}

void dft5(int e, int d, float dir) {
    vec4 a1r = xr[e + d] + xr[e + 4 * d], a1i = xi[e + d] + xi[e + 4 * d];
    vec4 b1r = xr[e + d] - xr[e + 4 * d], b1i = xi[e + d] - xi[e + 4 * d];
    vec4 a2r = xr[e + 2 * d] + xr[e + 3 * d], a2i = xi[e + 2 * d] + xi[e + 3 * d];
    vec4 b2r = xr[e + 2 * d] - xr[e + 3 * d], b2i = xi[e + 2 * d] - xi[e + 3 * d];
    vec2 w1 = root(1, 5), w2 = root(2, 5), w4 = root(4, 5);
    vec4 x0r = xr[e], x0i = xi[e];
    xr[e] = x0r + a1r + a2r;
    xi[e] = x0i + a1i + a2i;
    odd_pair(e + d, e + 4 * d, x0r + w1.x * a1r + w2.x * a2r, x0i + w1.x * a1i + w2.x * a2i, -(w1.y * b1r + w2.y * b2r),
             -(w1.y * b1i + w2.y * b2i), dir);
    odd_pair(e + 2 * d, e + 3 * d, x0r + w2.x * a1r + w4.x * a2r, x0i + w2.x * a1i + w4.x * a2i, -(w2.y * b1r + w4.y * b2r),
             -(w2.y * b1i + w4.y * b2i), dir);
}

void dft7(int e, int d, float dir) {
    vec4 a1r = xr[e + d] + xr[e + 6 * d], a1i = xi[e + d] + xi[e + 6 * d];
    vec4 b1r = xr[e + d] - xr[e + 6 * d], b1i = xi[e + d] - xi[e + 6 * d];
    vec4 a2r = xr[e + 2 * d] + xr[e + 5 * d], a2i = xi[e + 2 * d] + xi[e + 5 * d];
    vec4 b2r = xr[e + 2 * d] - xr[e + 5 * d], b2i = xi[e + 2 * d] - xi[e + 5 * d];
    vec4 a3r = xr[e + 3 * d] + xr[e + 4 * d], a3i = xi[e + 3 * d] + xi[e + 4 * d];
    vec4 b3r = xr[e + 3 * d] - xr[e + 4 * d], b3i = xi[e + 3 * d] - xi[e + 4 * d];
    vec2 w1 = root(1, 7), w2 = root(2, 7), w3 = root(3, 7), w4 = root(4, 7), w6 = root(6, 7), w9 = root(9, 7);
    vec4 x0r = xr[e], x0i = xi[e];
    xr[e] = x0r + a1r + a2r + a3r;
    xi[e] = x0i + a1i + a2i + a3i;
    odd_pair(e + d, e + 6 * d, x0r + w1.x * a1r + w2.x * a2r + w3.x * a3r, x0i + w1.x * a1i + w2.x * a2i + w3.x * a3i,
             -(w1.y * b1r + w2.y * b2r + w3.y * b3r), -(w1.y * b1i + w2.y * b2i + w3.y * b3i), dir);
    odd_pair(e + 2 * d, e + 5 * d, x0r + w2.x * a1r + w4.x * a2r + w6.x * a3r, x0i + w2.x * a1i + w4.x * a2i + w6.x * a3i,
             -(w2.y * b1r + w4.y * b2r + w6.y * b3r), -(w2.y * b1i + w4.y * b2i + w6.y * b3i), dir);
    odd_pair(e + 3 * d, e + 4 * d, x0r + w3.x * a1r + w6.x * a2r + w9.x * a3r, x0i + w3.x * a1i + w6.x * a2i + w9.x * a3i,
             -(w3.y * b1r + w6.y * b2r + w9.y * b3r), -(w3.y * b1i + w6.y * b2i + w9.y * b3i), dir);
}

// The n-point DFT of n values at stride d, n a base radix: 2, 3, 4, 5 or 7.
void dft_base(int e, int d, int n, float dir) {
    if (n == 2) dft2(e, d);
    else if (n == 3) dft3(e, d, dir);
    else if (n == 4) dft4(e, d, dir);
    else if (n == 5) dft5(e, d, dir);
    else dft7(e, d, dir);
}

// A radix n = a b that is not a base radix splits into a inner DFTs of b (b = 4 where 4 divides n,
// else n's smallest prime): 6 = 3 x 2, 8 = 2 x 4, 9 = 3 x 3, 10 = 5 x 2, 12 = 3 x 4, 14 = 7 x 2,
// 15 = 5 x 3, 16 = 4 x 4.
int inner_radix(int n) {
    if (n == 2 || n == 3 || n == 4 || n == 5 || n == 7) return n;
    return n % 4 == 0 ? 4 : n % 2 == 0 ? 2 : n % 3 == 0 ? 3 : 5;
}

// The n-point DFT of registers e .. e + n - 1, in place. For a composite n = a b it runs b DFTs of
// a on the stride-b subsequences s (registers e + s + b k), twiddles W_n^(s k), then a DFTs of b
// across them without moving anything: register e + b k + q then holds output k + a q, a digit
// permutation that output_of() undoes when positions are computed.
void dft(int e, int n, float dir) {
    const int b = inner_radix(n), a = n / b;
    if (b == n) {
        dft_base(e, 1, n, dir);
        return;
    }
    for (int s = 0; s < b; ++s) dft_base(e + s, b, a, dir);
    for (int s = 1; s < b; ++s)
        for (int k = 1; k < a; ++k) {
            vec2 w = root(s * k, n);
            rotate(xr[e + s + b * k], xi[e + s + b * k], vec2(w.x, -dir * w.y));
        }
    for (int k = 0; k < a; ++k) dft_base(e + b * k, 1, b, dir);
}

// Which output of an n-point dft() register slot j holds.
int output_of(int j, int n) {
    const int b = inner_radix(n);
    return b == n ? j : j / b + (n / b) * (j % b);
}

// ---- Stages and exchanges.

// Butterfly rounds of a stage of radix r: thread t runs butterflies t + i T, i < count(r), holding
// butterfly i's elements in registers i r .. i r + r - 1.
int count(int r) { return (L / r + T - 1) / T; }
// Whether round i's butterfly exists (always, where T divides L / r: a constant then).
bool runs(int i, int r) { return (L / r) % T == 0 || thread() + i * T < L / r; }
// Whether register e holds an element at a stage of radix r.
bool holds(int e, int r) { return e < count(r) * r && runs(e / r, r); }

// Input element t of butterfly b of a stage of radix r with output stride P.
int input_position(int b, int r, int P, int t) { return remainder(b, P) + quotient(b, P) * P * r + t * P; }
int output_position(int b, int r, int j) { return b + output_of(j, r) * (L / r); }   // slot j of the butterfly

void butterflies(int r, int P, float dir, bool from_buffer) {
    for (int i = 0; i < count(r); ++i) {
        if (!runs(i, r)) continue;
        int b = thread() + i * T, u = quotient(b, P);
        // The first stage (P = L / r: every b < P, so u = 0) has no twiddles.
        for (int t = 1; t < r && P * r < L; ++t) {
            vec2 w = twiddle(u * t * P * STRIDE, from_buffer);
            rotate(xr[i * r + t], xi[i * r + t], vec2(w.x, -dir * w.y));   // conjugated when inverse
        }
        dft(i * r, r, dir);
    }
}

// The outputs of a stage (radix r_out) to the inputs of the next (radix r_in, stride P_in).
void exchange(int r_out, int r_in, int P_in) {
    int g = group_line();
    for (int round = 0; round < ROUNDS; ++round) {
        for (int i = 0; i < count(r_out); ++i)
            if (runs(i, r_out))
                for (int k = 0; k < r_out; ++k)
                    put(round, slot(g, output_position(thread() + i * T, r_out, k)), xr[i * r_out + k], xi[i * r_out + k]);
        barrier();
        for (int i = 0; i < count(r_in); ++i)
            if (runs(i, r_in))
                for (int t = 0; t < r_in; ++t)
                    get(round, slot(g, input_position(thread() + i * T, r_in, P_in, t)), xr[i * r_in + t], xi[i * r_in + t]);
        barrier();
    }
}

// FORWARD_TRANSFORM and INVERSE_TRANSFORM are the stages spelled out by the C++ side with literal
// radices, strides and twiddle paths, e.g. "butterflies(8, 64, -1.0, false); exchange(8, 8, 8);
// butterflies(8, 8, -1.0, true); ...": constants the compiler folds into dft() and every register index (through an array
// the radices would stay variables, every register access an indirect one).

// Index of element e of this thread before the first stage of radix r (inputs b + t L / r), or
// after the last once to_natural() has put its outputs in that order (store_result())...
int input_at(int e, int r) { return thread() + (e / r) * T + (e % r) * (L / r); }
// ... and after the last (outputs, in dft()'s register order).
int output_at(int e, int r) { return output_position(thread() + (e / r) * T, r, e % r); }

// The last stage's outputs to natural order in registers (element i r + k holds output k).
void to_natural(int r) {
    if (inner_radix(r) == r) return;
    for (int i = 0; i < count(r); ++i) {
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

// Step A's twiddle between the two steps: output k1 of sub-line n2 times W_F^(n2 k1); conjugated,
// a long filter's step B's (output n2 of sub-line k1).
void twiddle_between_steps(int r_last, float dir) {
    for (int e = 0; e < R; ++e) {
        if (!holds(e, r_last)) continue;
        vec2 w = twiddle(sub() * output_at(e, r_last), false);
        rotate(xr[e], xi[e], vec2(w.x, -dir * w.y));
    }
}

// ---- Folded lines: the radix-FOLD stage within each thread.

#if FOLD > 1
// Element e at position k of the L-point transform: slot m holds E_m(k), the transform of the
// full line's elements F n + m; afterwards slot q holds X(k + q L) = sum_m W_F^(m q) W_full^(m k)
// E_m(k) (dir = -1: forward; +1: inverse, W conjugated). The filter's inverse starts from X in
// blocks, so it runs the two steps the other way round (fold_inverse_at) before its L-point
// transform and ends interleaved.
void fold_twiddle(int e, int k, float dir) {
    vec4 re = xr[e], im = xi[e];
    for (int m = 1; m < F; ++m) {
        vec2 w = twiddle(m * k, false);
        w.y *= -dir;
#if FOLD == 2
        vec2 r = re.zw * w.x - im.zw * w.y;
        im.zw = re.zw * w.y + im.zw * w.x;
        re.zw = r;
#else
        float r = re[m] * w.x - im[m] * w.y;
        im[m] = re[m] * w.y + im[m] * w.x;
        re[m] = r;
#endif
    }
    xr[e] = re;
    xi[e] = im;
}

void fold_dft(int e, float dir) {
    vec4 re = xr[e], im = xi[e];
#if FOLD == 2
    xr[e] = vec4(re.xy + re.zw, re.xy - re.zw);
    xi[e] = vec4(im.xy + im.zw, im.xy - im.zw);
#else
    // dft4 across the components: a = E0 + E2, b = E0 - E2, c = E1 + E3, d = E1 - E3.
    vec2 a = vec2(re.x + re.z, im.x + im.z), b = vec2(re.x - re.z, im.x - im.z);
    vec2 c = vec2(re.y + re.w, im.y + im.w), d = vec2(re.y - re.w, im.y - im.w);
    xr[e] = vec4(a.x + c.x, b.x - dir * d.y, a.x - c.x, b.x + dir * d.y);
    xi[e] = vec4(a.y + c.y, b.y + dir * d.x, a.y - c.y, b.y - dir * d.x);
#endif
}

// The outputs of the L-point transform (radix r_last) to the full line's.
void fold_stage(int r_last, float dir) {
    for (int e = 0; e < R; ++e) {
        if (!holds(e, r_last)) continue;
        fold_twiddle(e, output_at(e, r_last), dir);
        fold_dft(e, dir);
    }
}

// The filter's products (slot q: X(k + q L)) to the inputs of its L-point inverse, element e at
// position k.
void fold_inverse_at(int e, int k) {
    fold_dft(e, 1.0);
    fold_twiddle(e, k, 1.0);
}
#endif

// ---- Pair 0: two real columns as one complex line G(v) = F(0, v) + i F(M/2, v).

#if defined(PAIR0) && (defined(STORE_SPECTRUM) || defined(FILTER))
// G(N - v) for each of this thread's outputs G(v): the whole line passes through shared memory
// once. In step B, v = k1 + L1 k2 and N - v lies in sub-line L1 - k1 (the other line of the
// workgroup) at k2' = L2 - 1 - k2, or in sub-line 0 at (L2 - k2) mod L2. Folded, v = k + q L and
// N - v = (L - k) + (F - 1 - q) L, or for k = 0 slot (F - q) mod F of position 0.
void mirror_of(out vec4 mr[R], out vec4 mi[R], int r_last) {
    int g = group_line();
#if defined(STEP_B) && SUBLINES > 2
    int partner = 1 - g;
    bool zero = sub() == 0;
#elif defined(STEP_B)
    int partner = g;   // L1 = 2: k1 = 0 mirrors itself at (L2 - k2) mod L2, k1 = 1 at L2 - 1 - k2
    bool zero = sub() == 0;
#else
    int partner = g;
    bool zero = true;
#endif
    for (int round = 0; round < ROUNDS; ++round) {
        for (int e = 0; e < R; ++e)
            if (holds(e, r_last)) put(round, slot(g, output_at(e, r_last)), xr[e], xi[e]);
        barrier();
        for (int e = 0; e < R; ++e) {
            if (!holds(e, r_last)) continue;
            int k = output_at(e, r_last);
            get(round, slot(partner, zero ? remainder(L - k, L) : L - 1 - k), mr[e], mi[e]);
        }
        barrier();
    }
#if FOLD > 1
    for (int e = 0; e < R; ++e) {
        if (!holds(e, r_last)) continue;
        bool k0 = output_at(e, r_last) == 0;
#if FOLD == 2
        if (!k0) {
            mr[e] = mr[e].zwxy;
            mi[e] = mi[e].zwxy;
        }
#else
        mr[e] = k0 ? mr[e].xwzy : mr[e].wzyx;
        mi[e] = k0 ? mi[e].xwzy : mi[e].wzyx;
#endif
    }
#endif
}

// F(0, v) and F(M/2, v) from G(v) and G(N - v) (Eq. 8 along v).
void untangle_pair0(vec4 gr, vec4 gi, vec4 mr, vec4 mi, out vec4 f0r, out vec4 f0i, out vec4 fmr, out vec4 fmi) {
    f0r = 0.5 * (gr + mr);
    f0i = 0.5 * (gi - mi);
    fmr = 0.5 * (gi + mi);
    fmi = 0.5 * (mr - gr);
}
#endif

// F(x, v) for x = 0 or M/2 from Eq. 9 along v.
void real_column(vec4 a, vec4 b, int v, out vec4 re, out vec4 im) {   // a, b: rows v and N - v
    bool low = v > 0 && v < N / 2, high = v > N / 2;
    re = high ? b : a;
    im = high ? a : low ? -b : vec4(0.0);
}

// ---- Rows of the textures between dispatches.

// The tangled row pair a (real part, imaginary part) of the image or the output: rows a and
// a + N/2. In the textures between dispatches (the row transforms H, what a column pass leaves
// for the inverse rows, the four-step scratch: H_SOURCE, H_TARGET), where the rows take the
// four-step route, the pair lies in rows 2a and 2a + 1 instead: NVIDIA's tiling puts texel x of
// two neighbouring rows in one 32-byte sector, and a row step's warp covers one row, so its
// stores then fill whole sectors, not halves (src/README.md, "What bounds a line dispatch").
// Where the rows are channel pairs (CHANNEL_PAIRS, H_SOURCE / H_TARGET 2), texel (u, r) of those
// textures holds row r's transforms of its channel pairs, (Z1(u), Z2(u)) with Z1 the transform of
// R + iG and Z2 of B + iA: the columns untangle and tangle them across channels (Eq. 8 and 7).
int re_row(int a, bool neighbouring) { return neighbouring ? 2 * a : a; }
int im_row(int a, bool neighbouring) { return neighbouring ? 2 * a + 1 : a + N / 2; }
const bool SOURCE_NEIGHBOURING = H_SOURCE == 1, TARGET_NEIGHBOURING = H_TARGET == 1;

// F_y(M - p) of the four channels from the channel pairs' transforms of row y at p and M - p:
// R(M - p) = (Z1(M - p) + conj Z1(p)) / 2, G(M - p) = (Z1(M - p) - conj Z1(p)) / 2i (B, A from Z2).
void untangle_channels(vec4 g, vec4 h, out vec4 re, out vec4 im) {   // g: (Z1, Z2)(p), h: at M - p
    re = 0.5 * (h + g);
    im = 0.5 * vec4(h.y - g.y, g.x - h.x, h.w - g.w, g.z - h.z);
}
// Its inverse: the channel pairs' transforms at M - p (hi) and p (lo) from F(M - p) = re + i im.
void tangle_channels(vec4 re, vec4 im, out vec4 lo, out vec4 hi) {
    vec4 turn = vec4(-im.y, im.x, -im.w, im.z);   // i G and i A, as (re, im) parts of Z1 = R + i G, Z2 = B + i A
    hi = re + turn;
    lo = re - turn;
}

// ---- Loads.

const int FULL = L * SUBLINES * FOLD;   // the whole line's length

#if !defined(LOAD_UNTANGLED)
// Element v of line a, as LOAD_ says.
void line_element(int a, int v, out vec4 re, out vec4 im) {
#if defined(LOAD_ROW_PAIR)
    // Real part from row a, imaginary part from row a + N/2 (2a and 2a + 1: H_SOURCE).
    re = source(v, re_row(a, SOURCE_NEIGHBOURING));
    im = source(v, im_row(a, SOURCE_NEIGHBOURING));
#elif defined(LOAD_ROW_CHANNELS)
    // Row a's channel pairs R + iG and B + iA (the image's, or the columns' H in that layout):
    // components .xy of the folded slot (place()).
#if defined(TAIL_IN_LOADS)
    // A filter's last column step, step A inverse of two points (FILTER_TAIL), here: row
    // a = n2 + (N/2) n1 of the columns' inverse is y_0(n2) + (-1)^n1 y_1(n2), step B's sub-line
    // k1 at rows k1 N/2 + n2, each element tangled already (STORE_TANGLED).
    int n2 = remainder(a, N / 2);
    vec4 y0 = source(v, n2), y1 = source(v, n2 + N / 2);
    vec4 t = a < N / 2 ? y0 + y1 : y0 - y1;
#else
    vec4 t = source(v, a);
#endif
    re = vec4(t.x, t.z, 0.0, 0.0);
    im = vec4(t.y, t.w, 0.0, 0.0);
#elif defined(LOAD_SPECTRUM) && defined(PAIR0)
    // F(0, v) + i F(M/2, v) (Eq. 7).
    vec4 ar, ai, br, bi;
    int w = remainder(N - v, N);
    real_column(source(0, v), source(0, w), v, ar, ai);
    real_column(source(M / 2, v), source(M / 2, w), v, br, bi);
    re = ar - bi;
    im = ai + br;
#elif defined(LOAD_SPECTRUM) || defined(LOAD_COLUMN_PAIR)
    // F(M - p, v) = A[p][v] + i A[M-p][v]; pair 0: columns 0 and M/2.
#if defined(PAIR0)
    re = source(0, v);
    im = source(M / 2, v);
#else
    re = source(a, v);
    im = source(M - a, v);
#endif
#else
#error "fft_line.comp: no LOAD_ variant"
#endif
}
#endif

// The line's elements y and y + FULL/2 (y < FULL/2: the inputs of one radix-2 butterfly of the
// whole line).
void line_pair(int a, int y, out vec4 lo_r, out vec4 lo_i, out vec4 hi_r, out vec4 hi_i) {
#if defined(LOAD_UNTANGLED)
    // Element y of column pair p: F_y(M - p) for p > 0, F_y(0) + i F_y(M/2) for pair 0, from the
    // row transforms H_r (tangled: real part in row r, imaginary part in row r + N/2) by Eq. 8,
    // times 1/M: elements y and y + N/2 read the same four texels.
    int yr = re_row(y, SOURCE_NEIGHBOURING), yi = im_row(y, SOURCE_NEIGHBOURING);
#if defined(PAIR0)
    lo_r = u_scale * source(0, yr);        // H(0)
    hi_r = u_scale * source(0, yi);
    lo_i = u_scale * source(M / 2, yr);    // H(M/2)
    hi_i = u_scale * source(M / 2, yi);
#elif H_SOURCE == 2
    untangle_channels(source(a, y), source(M - a, y), lo_r, lo_i);
    untangle_channels(source(a, y + N / 2), source(M - a, y + N / 2), hi_r, hi_i);
    lo_r *= u_scale;
    lo_i *= u_scale;
    hi_r *= u_scale;
    hi_i *= u_scale;
#else
    vec4 hr = source(M - a, yr), hi = source(M - a, yi);   // H(M - p)
    vec4 gr = source(a, yr), gi = source(a, yi);           // H(p)
    lo_r = 0.5 * u_scale * (hr + gr);
    lo_i = 0.5 * u_scale * (hi - gi);
    hi_r = 0.5 * u_scale * (hi + gi);
    hi_i = 0.5 * u_scale * (gr - hr);
#endif
#else
    line_element(a, y, lo_r, lo_i);
    line_element(a, y + FULL / 2, hi_r, hi_i);
#endif
}

#if defined(FORWARD) || defined(FILTER)
const float LOAD_DIR = -1.0;
#else
const float LOAD_DIR = 1.0;
#endif

#if defined(FUSED_A)
// Step B with step A done in its loads (SUBLINES = L1 = 2 or 4, so that step A is one radix-2 or
// radix-4 butterfly of the whole line): sub-line k1's element n2 is output k1 of the L1-point DFT
// of x(n2 + L2 n1), n1 < L1, times W_F^(n2 k1). The L1 workgroups of a line (neighbouring
// workgroup numbers) read the same texels, all but the first mostly from the L2 cache; one
// dispatch and no intermediate texture instead of two.
// W_4^k1 of the load's direction, from k1's bits (no table indexed by a variable: NVIDIA's
// compiler puts such a table in local memory).
vec2 quarter_turn(int k1) {
    float c = (k1 & 1) == 0 ? 1.0 - float(k1) : 0.0;   // 1, 0, -1, 0
    float s = (k1 & 1) == 1 ? 2.0 - float(k1) : 0.0;   // 0, 1, 0, -1
    return vec2(c, LOAD_DIR * s);
}
void load(int first) {
    int a = axis_line(), k1 = sub();
    float sign = (k1 & 1) == 0 ? 1.0 : -1.0;
#if SUBLINES == 4
    vec2 turn = quarter_turn(k1);
#endif
    for (int e = 0; e < R; ++e) {
        if (!holds(e, first)) continue;
        int n2 = input_at(e, first);
        // x(n2) + (-1)^k1 x(n2 + F/2): the whole radix-2 butterfly where L1 = 2, the even half
        // of the radix-4 one where L1 = 4 ...
        vec4 lo_r, lo_i, hi_r, hi_i;
        line_pair(a, n2, lo_r, lo_i, hi_r, hi_i);
        vec4 re = lo_r + sign * hi_r, im = lo_i + sign * hi_i;
#if SUBLINES == 4
        // ... whose odd half, x(n2 + F/4) + (-1)^k1 x(n2 + 3F/4), turns by W_4^k1.
        line_pair(a, n2 + FULL / 4, lo_r, lo_i, hi_r, hi_i);
        vec4 odd_r = lo_r + sign * hi_r, odd_i = lo_i + sign * hi_i;
        rotate(odd_r, odd_i, turn);
        re += odd_r;
        im += odd_i;
#endif
        vec2 w = twiddle(n2 * k1, false);   // W_F^(n2 k1)
        rotate(re, im, vec2(w.x, -LOAD_DIR * w.y));
        xr[e] = re;
        xi[e] = im;
    }
}
#elif defined(LOAD_UNTANGLED)
void load(int first) {
    int a = axis_line();
    // Elements e and e + first/2 (inputs of one butterfly of the first stage, positions y and
    // y + N/2 of the column: whole, or step A's sub-line; folded, slot m of element j is the
    // line's element F j + m) from the same texels.
    for (int e = 0; e < R; ++e) {
        if (!holds(e, first)) continue;
        if (e % first >= first / 2) continue;
        vec4 lo_r = vec4(0.0), lo_i = vec4(0.0), hi_r = vec4(0.0), hi_i = vec4(0.0);
        for (int m = 0; m < F; ++m) {
            vec4 ar, ai, br, bi;
            line_pair(a, in_position(input_at(e, first), m), ar, ai, br, bi);
            lo_r = place(lo_r, m, ar);
            lo_i = place(lo_i, m, ai);
            hi_r = place(hi_r, m, br);
            hi_i = place(hi_i, m, bi);
        }
        xr[e] = lo_r;
        xi[e] = lo_i;
        xr[e + first / 2] = hi_r;
        xi[e + first / 2] = hi_i;
    }
}
#else
void load(int first) {
    int a = axis_line();
    for (int e = 0; e < R; ++e) {
        if (!holds(e, first)) continue;
        vec4 re = vec4(0.0), im = vec4(0.0);
        for (int m = 0; m < F; ++m) {
            vec4 r, i;
            line_element(a, in_position(input_at(e, first), m), r, i);
            re = place(re, m, r);
            im = place(im, m, i);
        }
        xr[e] = re;
        xi[e] = im;
    }
}
#endif

// ---- The multiply by the kernel's spectrum (Eq. 10) times u_gain, on the forward outputs.

#if defined(FILTER)
// The kernel's spectrum at (x, v) of Eq. 10's layout. KERNEL_STEP_ORDER (a filter's step B whose
// workgroups go along a band of rows, BANDS): the transform keeps the kernel with its rows in
// step B's order instead (ComputeFft::reorder_kernel: row k1 + L1 k2 at k1 L2 + k2, L1 = SUBLINES
// and L2 = L), so that a sub-line's multiply reads its own band of rows, not every L1-th row of
// the column (measured on the H200 at 16384^2: step B 8.2 ms so, 21.1 ms from the natural order).
vec4 kernel_texel(int x, int v) {
#if KERNEL_STEP_ORDER
    v = remainder(v, SUBLINES) * L + quotient(v, SUBLINES);
#endif
    return fetch(u_kernel, x, v);
}

void multiply(int r_mid) {
#if defined(PAIR0)
    // The real columns 0 and M/2 untangled (with G(N - v)), each times its kernel column (Eq. 9),
    // tangled again (Eq. 7).
    vec4 mr[R], mi[R];
    mirror_of(mr, mi, r_mid);
    for (int e = 0; e < R; ++e) {
        if (!holds(e, r_mid)) continue;
        vec4 f0r, f0i, fmr, fmi;
        untangle_pair0(xr[e], xi[e], mr[e], mi[e], f0r, f0i, fmr, fmi);
        vec4 k0r = vec4(0.0), k0i = vec4(0.0), kmr = vec4(0.0), kmi = vec4(0.0);
        for (int q = 0; q < F; ++q) {
            int v = spectrum_position(output_at(e, r_mid), q);
            vec4 ar, ai, br, bi;
            int w = remainder(N - v, N);
            real_column(kernel_texel(0, v), kernel_texel(0, w), v, ar, ai);
            real_column(kernel_texel(M / 2, v), kernel_texel(M / 2, w), v, br, bi);
#if KERNEL_REAL   // a real spectrum (below): its columns 0 and M/2 too
            ai = bi = vec4(0.0);
#endif
            k0r = place(k0r, q, ar);
            k0i = place(k0i, q, ai);
            kmr = place(kmr, q, br);
            kmi = place(kmi, q, bi);
        }
        vec4 p0r = f0r * k0r - f0i * k0i, p0i = f0r * k0i + f0i * k0r;
        vec4 pmr = fmr * kmr - fmi * kmi, pmi = fmr * kmi + fmi * kmr;
        xr[e] = u_gain * (p0r - pmi);
        xi[e] = u_gain * (p0i + pmr);
    }
#else
    // G K(M - p, v), K from Eq. 10. A point-symmetric impulse response (k(-x, -y) = k(x, y), the
    // built-in kernels) has a real spectrum: K(M - p, v), its imaginary part, is zero but for
    // rounding, and KERNEL_REAL leaves it unread (the multiply as if it were zero).
    int p = axis_line();
    for (int e = 0; e < R; ++e) {
        if (!holds(e, r_mid)) continue;
        vec4 kr = vec4(0.0), ki = vec4(0.0);
        for (int q = 0; q < F; ++q) {
            int v = spectrum_position(output_at(e, r_mid), q);
            kr = place(kr, q, kernel_texel(p, v));
#if !KERNEL_REAL
            ki = place(ki, q, kernel_texel(M - p, v));
#endif
        }
        vec4 gr = xr[e], gi = xi[e];
#if KERNEL_REAL
        xr[e] = u_gain * (gr * kr);
        xi[e] = u_gain * (gi * kr);
#else
        xr[e] = u_gain * (gr * kr - gi * ki);
        xi[e] = u_gain * (gr * ki + gi * kr);
#endif
    }
#endif
}
#endif

// ---- Stores.

#if defined(STORE_ROW_PAIRS)
// c(y) = a and c(y + N/2) = b of column pair `p` (slot q of each) as tangled row pairs.
void store_row_pairs(int p, int y, vec4 ar, vec4 ai, vec4 br, vec4 bi, int q) {
    int yr = re_row(y, TARGET_NEIGHBOURING), yi = im_row(y, TARGET_NEIGHBOURING);
#if defined(PAIR0)   // F(M/2) = Im c, F(0) = Re c (channel pairs: the same texels)
    store(M / 2, yr, ai, q);
    store(M / 2, yi, bi, q);
    store(0, yr, ar, q);
    store(0, yi, br, q);
#elif H_TARGET == 2  // rows y and y + N/2, each its channel pairs at M - p and p
    vec4 lo, hi;
    tangle_channels(ar, ai, lo, hi);
    store(M - p, y, hi, q);
    store(p, y, lo, q);
    tangle_channels(br, bi, lo, hi);
    store(M - p, y + N / 2, hi, q);
    store(p, y + N / 2, lo, q);
#else                // F(M - p) = c, F(p) = conj c
    store(M - p, yr, ar - bi, q);
    store(M - p, yi, ai + br, q);
    store(p, yr, ar + bi, q);
    store(p, yi, br - ai, q);
#endif
}
#endif

void store_result(int last) {
    int a = axis_line();
#if defined(STORE_ROW_PAIR)
    for (int e = 0; e < R; ++e) {
        if (!holds(e, last)) continue;
        for (int q = 0; q < F; ++q) {
            int u = out_position(output_at(e, last), q);
            store(u, re_row(a, TARGET_NEIGHBOURING), xr[e], q);
            store(u, im_row(a, TARGET_NEIGHBOURING), xi[e], q);
        }
    }
#elif defined(STORE_ROW_CHANNELS)
    // Row a's channel pairs, slot q of each element: (Re Z1, Im Z1, Re Z2, Im Z2) a texel.
    for (int e = 0; e < R; ++e) {
        if (!holds(e, last)) continue;
        vec4 r = xr[e], i = xi[e];
        store(out_position(output_at(e, last), 0), a, vec4(r.x, i.x, r.y, i.y), 0);
        store(out_position(output_at(e, last), 1), a, vec4(r.z, i.z, r.w, i.w), 1);
    }
#elif defined(STORE_SPECTRUM) && defined(PAIR0)
    // Columns 0 and M/2: untangled with G(N - v) (Eq. 8 along v), then Eq. 9.
    vec4 mr[R], mi[R];
    mirror_of(mr, mi, last);
    for (int e = 0; e < R; ++e) {
        if (!holds(e, last)) continue;
        vec4 f0r, f0i, fmr, fmi;
        untangle_pair0(xr[e], xi[e], mr[e], mi[e], f0r, f0i, fmr, fmi);
        for (int q = 0; q < F; ++q) {
            int v = out_position(output_at(e, last), q);
            bool high = v > N / 2;
            store(0, v, u_gain * (high ? f0i : f0r), q);
            store(M / 2, v, u_gain * (high ? fmi : fmr), q);
        }
    }
#elif defined(STORE_SPECTRUM) || defined(STORE_COLUMN_PAIR)
    // Column p holds Re F(M - p, v), column M - p its Im (Eq. 10); pair 0 (an intermediate): G.
#if defined(STORE_SPECTRUM)
    float gain = u_gain;
#else
    float gain = 1.0;
#endif
#if defined(PAIR0)
    int re_column = 0, im_column = M / 2;
#else
    int re_column = a, im_column = M - a;
#endif
    for (int e = 0; e < R; ++e) {
        if (!holds(e, last)) continue;
        for (int q = 0; q < F; ++q) {
            int v = out_position(output_at(e, last), q);
            store(re_column, v, gain * xr[e], q);
            store(im_column, v, gain * xi[e], q);
        }
    }
#elif defined(STORE_TANGLED)
    // A filter's step B whose step A inverse the inverse rows do in their loads (TAIL_IN_LOADS):
    // each element of its sub-line, where the forward's came from, tangled alone into H's
    // channel-pair layout (H_TARGET 2) as STORE_ROW_PAIRS would tangle it after step A: the
    // butterfly's coefficients (+1, -1) are real, so it passes through the tangle. Pair 0: the
    // real part at column 0, the imaginary part at M/2.
    for (int e = 0; e < R; ++e) {
        if (!holds(e, last)) continue;
        int v = out_position(output_at(e, last), 0);
#if defined(PAIR0)
        store(0, v, xr[e], 0);
        store(M / 2, v, xi[e], 0);
#else
        vec4 lo, hi;
        tangle_channels(xr[e], xi[e], lo, hi);
        store(M - a, v, hi, 0);
        store(a, v, lo, 0);
#endif
    }
#elif defined(STORE_ROW_PAIRS)
    // The inverse column transform c_p(y) as tangled row pairs H_r(u) = F_r(u) + i F_(r+N/2)(u):
    // the real part at (u, r), the imaginary part at (u, r + N/2). c(y) and c(y + N/2) are outputs
    // k and k + L/2 of the same butterfly, so each thread has both; folded, in blocks (the
    // inverse), slots q and q + F/2 of one element.
#if FOLD > 1 && !defined(FILTER)
    for (int e = 0; e < R; ++e) {
        if (!holds(e, last)) continue;
        int k = output_at(e, last);
        for (int q = 0; q < F / 2; ++q) store_row_pairs(a, out_position(k, q), xr[e], xi[e], xr[e].zwxy, xi[e].zwxy, q);
    }
#else
    to_natural(last);
    for (int e = 0; e < R; ++e) {
        if (!holds(e, last)) continue;
        if (e % last >= last / 2) continue;
        for (int q = 0; q < F; ++q)   // natural order now
            store_row_pairs(a, out_position(input_at(e, last), q), xr[e], xi[e], xr[e + last / 2], xi[e + last / 2], q);
    }
#endif
#else
#error "fft_line.comp: no STORE_ variant"
#endif
}

// One phase: the line's transform for this phase's channels (all four unfolded).
void transform_line() {
#if defined(FORWARD)
    load(FORWARD_FIRST);
    FORWARD_TRANSFORM
#if defined(STEP_A)
    twiddle_between_steps(FORWARD_LAST, -1.0);
#endif
#if FOLD > 1
    fold_stage(FORWARD_LAST, -1.0);
#endif
    store_result(FORWARD_LAST);

#elif defined(INVERSE)
    load(INVERSE_FIRST);
    INVERSE_TRANSFORM
#if defined(STEP_A) && !defined(FILTER_TAIL)
    twiddle_between_steps(INVERSE_LAST, 1.0);
#endif
#if FOLD > 1
    fold_stage(INVERSE_LAST, 1.0);
#endif
    store_result(INVERSE_LAST);

#elif defined(FILTER)
    // The last forward stage left positions b + k N/r (k = output_of(j)) in element i r + j:
    // exactly the inputs of the first inverse stage (radix r, stride N/r), so the products stay in
    // registers, put in order by to_natural().
    load(FORWARD_FIRST);
    FORWARD_TRANSFORM
#if FOLD > 1
    fold_stage(FORWARD_LAST, -1.0);
#endif
    multiply(FORWARD_LAST);
#if FOLD > 1
    for (int e = 0; e < R; ++e)
        if (holds(e, FORWARD_LAST)) fold_inverse_at(e, output_at(e, FORWARD_LAST));
#endif
    to_natural(FORWARD_LAST);
    INVERSE_TRANSFORM
#if defined(STEP_B)
    // A long filter's middle step: the inverse runs the four-step route backwards (its step B
    // first, on the sub-lines the forward's step B left, k1 fixed), so that the inverse's twiddle
    // W_F^(-n2 k1) and step A (FILTER_TAIL) follow: one dispatch fewer than a forward and an
    // inverse of two steps each.
    twiddle_between_steps(INVERSE_LAST, 1.0);
#endif
    store_result(INVERSE_LAST);

#else
#error "fft_line.comp needs FORWARD, INVERSE or FILTER"
#endif
}

void main() {
#if defined(TIMELINE)
    if (gl_LocalInvocationIndex == 0u) tl_start = clock2x32ARB();
#endif
#if SHARED_TWIDDLES
    copy_twiddles();
#endif
    // Folded: the phases one after the other, each storing (and, after the first, completing)
    // the same texels; the last exchange of a phase ends with a barrier, so the next phase's
    // writes to shared memory wait for its reads.
#if FOLD > 1 && !defined(CHANNEL_PAIRS)
    for (phase = 0; phase < u_phases; ++phase) transform_line();
#else
    transform_line();
#endif
#if defined(TIMELINE)
    barrier();
    if (gl_LocalInvocationIndex == 0u) {
        uvec2 tl_end = clock2x32ARB();
        uint kind = 0u;
#if defined(ROWS)
        kind |= 1u;
#else
        kind |= 2u;
#endif
#if defined(FORWARD)
        kind |= 1u << 2;
#elif defined(INVERSE)
        kind |= 2u << 2;
#else
        kind |= 3u << 2;
#endif
#if defined(PAIR0)
        kind |= 1u << 4;
#endif
        if (LINE_OFFSET > 0) kind |= 1u << 5;
#if defined(STEP_A)
        kind |= 1u << 6;
#elif defined(STEP_B)
        kind |= 2u << 6;
#endif
        uint slot = atomicAdd(tl_count, 1u);
        if (8u * slot + 8u <= uint(tl_record.length())) {
            uint i = 8u * slot;
            tl_record[i] = kind;
            tl_record[i + 1u] = gl_SMIDNV;
            tl_record[i + 2u] = gl_WorkGroupID.x + gl_NumWorkGroups.x * gl_WorkGroupID.y;
            tl_record[i + 3u] = tl_start.x;
            tl_record[i + 4u] = tl_start.y;
            tl_record[i + 5u] = tl_end.x;
            tl_record[i + 6u] = tl_end.y;
        }
    }
#endif
}
