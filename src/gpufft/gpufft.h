// gpufft/gpufft.h: the public API. Filters RGBA float textures of the caller's own OpenGL context
// by an impulse response in the frequency domain (Moreland & Angel, "The FFT on a GPU"): a bloom,
// defocus or glare on a rendered frame without the frame leaving the GPU.
//
//     #include <gpufft/gpufft.h>
//     gpufft::TextureFilter bloom(1920, 1080, "gaussian:8");   // a current GL context is needed
//     bloom.apply(frame_texture, bloomed_texture);             // every frame
//
// Build with `pkg-config --cflags --libs gpufft`. Contract:
// - Every call needs a current OpenGL context (compatibility profile; GL 4.3 for the compute
//   backend, GL 3.0 with float render targets for the fragment chain) whose entry points the
//   caller has loaded (GLEW's glewInit(), or any loader; the library loads its own through GLEW
//   on first use). The library never creates windows or contexts and never prints.
// - GL state is left as found: the bound program, framebuffers, textures of every unit, image
//   units, buffers, vertex array, viewport and the enables the passes touch are restored before a
//   call returns (also when it throws). One exception: while programs a filter started with
//   Compile::Background are compiling, the context's shader compiler threads
//   (KHR_parallel_shader_compile) are one a core, and its own number comes back when the last of
//   them is done (ready()) or its filter is gone. Objects the filter made stay alive until it is
//   destroyed, which must happen with the same context current.
// - Every failure throws gpufft::Error (gpufft/error.h) with a one-line message.
// - The GLSL programs a filter links are kept as the driver's binaries in $XDG_CACHE_HOME/gpufft
//   (else ~/.cache/gpufft) and later processes link them from there instead of compiling them;
//   GPUFFT_PROGRAM_CACHE=DIR keeps them in DIR, GPUFFT_PROGRAM_CACHE=off keeps none. At most 256
//   MiB are kept (the least recently used go first); a cache that cannot be written changes
//   nothing but the time.
// - Textures are GL images: texel row 0 is the bottom row. Kernels are given top row first (as a
//   PNG shows them) and are mirrored to match.
#pragma once

#include <gpufft/error.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#define GPUFFT_VERSION "1.1.0"

namespace gpufft {

/// The library's version, "1.1.0" (1.1: gpufft::Compile).
const char* version();

// ---- Images and kernels on the CPU.

/// width x height RGBA floats, row 0 first (the top row of a PNG), nominal range [0, 1].
struct Image {
    int width = 0, height = 0;
    std::vector<float> rgba;

    Image() = default;
    Image(int w, int h, float fill = 0.0f)
        : width(w), height(h), rgba(static_cast<size_t>(w) * static_cast<size_t>(h) * 4, fill) {}
    size_t index(int x, int y) const { return (static_cast<size_t>(y) * static_cast<size_t>(width) + static_cast<size_t>(x)) * 4; }
    float* at(int x, int y) { return &rgba[index(x, y)]; }
    const float* at(int x, int y) const { return &rgba[index(x, y)]; }
    size_t pixels() const { return static_cast<size_t>(width) * static_cast<size_t>(height); }
};

/// A spatial impulse response: width x height RGBA weights (one kernel per channel), applied with
/// its centre (cx, cy) on the output pixel: out(x, y) = sum_ij k(i, j) in(x + cx - i, y + cy - j).
/// Made by parse_kernel(), or by hand from any float image. A kernel whose every tap equals its
/// mirror through the centre (gaussian, disk, odd boxes...) has a real spectrum, and the compute
/// backend's filters then read half of it.
struct Kernel {
    Image weights;
    int cx = 0, cy = 0;
    std::string name;  ///< the spec it came from
    /// True when the four channels' weights differ (an RGB(A) kernel PNG).
    bool per_channel = false;
};

struct KernelOptions {
    bool normalize = true;   ///< PNG kernels: scale each channel to sum 1
    int max_side = 8192;     ///< larger kernels are refused
};

/// Parses a kernel spec: FILE.png, gaussian:SIGMA, box:W[xH], disk:R, motion:LEN[,ANGLE],
/// laplacian, sharpen:AMOUNT, lowpass:CUTOFF, highpass:CUTOFF, identity (kernel_help() describes
/// each). Throws Error for an unknown spec, a bad parameter, an unreadable PNG or a kernel above
/// max_side. Needs no GL context.
Kernel parse_kernel(const std::string& spec, const KernelOptions& options = {});

/// The kernel table: one "  spec  description" line per kernel.
std::string kernel_help();

/// A PNG of any kind (grey, RGB, palette, alpha, 1-16 bits, interlaced) as RGBA floats: samples
/// over their maximum, grey to R = G = B, no alpha to 1. Throws Error "<path>: <problem>".
Image load_png(const std::string& path);
/// Writes `image` as an RGBA PNG of `depth` bits (8 or 16), each value rounded to the nearest
/// sample and clamped to [0, 1]. The file appears whole or not at all (a temporary file renamed);
/// an existing file is replaced only with `overwrite`.
void save_png(const std::string& path, const Image& image, int depth = 8, bool overwrite = true);

// ---- Backends and options.

/// Fragment: the paper's chain of fragment programs; Compute: GL 4.3 compute shaders; Fftw: the
/// CPU (fftfilter's batch filtering; a TextureFilter refuses it); Auto: the fastest GL backend on
/// the current context (compute on a GPU with GL 4.3, the fast fragment chain elsewhere).
enum class Backend { Auto, Fragment, Compute, Fftw };

/// What lies beyond an image's edges (fftfilter's -b).
enum class Boundary {
    Reflect,  ///< mirrored with the edge pixel repeated: ... c b a | a b c ... (half-sample symmetric)
    Clamp,    ///< the edge pixel repeated
    Zero,     ///< transparent black
    Wrap,     ///< periodic: the paper's circular convolution
};

/// Storage of the intermediate textures. RGBA32F is the default and the accurate one.
enum class Storage { Float32, Float16 };

/// How transforms run. The defaults are the fastest measured; the rest are for experiments.
struct FftOptions {
    Backend backend = Backend::Auto;
    Storage storage = Storage::Float32;  ///< of the intermediate render targets; Float16 is an option, never the default
    /// Fragment backend: 2 runs the paper's radix-2 chain (Table 1 and 3 as published); 0 (auto)
    /// the fast chain (radix 16 over eight render targets) wherever the GPU and the size allow it.
    int radix = 0;
    bool computed_twiddles = false;  ///< fast chain: W computed in the shader instead of read from the table
    /// Compute backend: the largest stage radix, 4, 8 or 16; 0 (auto): 4 for lines up to 1024, 8
    /// above (the fastest on the H200; llvmpipe's JIT also compiles radix 4 quickest).
    int compute_radix = 0;
    /// Compute backend: lines per workgroup (1 to 32); 0 (auto) as measured fastest.
    int compute_lines = 0;
    /// Compute backend: the longest line transformed in one dispatch; longer ones take the
    /// four-step route (two dispatches). 0 (auto): 4096, the longest a workgroup holds in
    /// registers without spilling; set, up to 16384 where shared memory allows.
    int compute_max_line = 0;
    /// Compute backend: 2 or 4 folds lines longer than that, up to that many times: a workgroup
    /// takes the line's channels in 2 or 4 phases, each a transform of a half or a quarter of
    /// the length (one dispatch a line instead of the four-step route's two). 0 or 1 (default):
    /// never (at 8192^2 on the H100 0.97x the four-step time, at 15x its compile time).
    int compute_fold = 0;
    /// Compute backend: the longest step A of the four-step route done in step B's loads, so that
    /// a line pass takes one dispatch instead of two: 2 (a line's halves), 4 (halves, or in the
    /// columns quarters); 1: never (step A a dispatch of its own). 0 (auto): 2 (on the H200 at
    /// 16384^2 the columns' quarters filter 1.18x faster in three dispatches than fused in two).
    int compute_fuse = 0;
    /// Compute backend: whole row passes leave their last this many row pairs to a dispatch of
    /// one a workgroup beside them; -1: never; 0 (auto): where the GPU tells its
    /// multiprocessors (NVIDIA), twice the row pairs of a sparse last round of workgroups.
    int compute_row_tail = 0;
    /// Compute backend, for tuning: a row tail's row pairs in 2 (halves) or 4 (quarters)
    /// workgroups each, step A in step B's loads, where those parts are even; 0 (default) or 1:
    /// whole (halves gained 1-2% at 1920x1080 and lost up to 9% elsewhere on the H200).
    int compute_tail_split = 0;
    /// Compute backend, for tuning: the four-step route's step A length L1 (even) for rows
    /// (compute_row_split) and columns (compute_column_split) longer than compute_max_line, where
    /// it splits them into two even lengths of which L2 fits (and, in the columns, pair 0's two
    /// mirror sub-lines fit a workgroup); elsewhere, and 0 (default): the planner's split.
    int compute_row_split = 0;
    int compute_column_split = 0;
    /// Compute backend: 1 filters the transposed problem, every dispatch storing its lines down
    /// the columns of the textures it writes (the image's columns first, the output stored
    /// transposed back), -1 never; 0 (auto): as the device's measurements say (ComputeTuning).
    int compute_transpose = 0;
    /// Compute backend: 1 moves a filter's last column step (the two-point step A inverse of
    /// columns split in halves, where the rows are channel pairs) into the inverse rows' loads,
    /// so that the filter takes three dispatches, -1 never; 0 (auto): as the device's row says
    /// (ComputeTuning::fuse_column_tail: on a GPU, where it ran 2-4% faster; never on a software
    /// rasterizer, where it was not timed).
    int compute_fuse_tail = 0;
    /// Compute backend: line plans chosen for tuning, comma-separated: "LENGTH:RxRx...[/THREADS]",
    /// the forward stages' radices (2-10, 12, 14, 15, 16; the first even) of lines of that length
    /// and the threads a line (default: one round a stage), on both axes, or with "rows:" or
    /// "columns:" before it on one; "composite": lines with factors 3, 5 or 7 in the fewest stages
    /// of radices up to 12. Empty (default): the planner's (and the device's measured plans).
    std::string compute_plan;

    /// Every field, for ordering (caches keyed by options) and comparison.
    auto fields() const {
        return std::tie(backend, storage, radix, computed_twiddles, compute_radix, compute_lines, compute_max_line, compute_fold, compute_fuse,
                        compute_row_tail, compute_tail_split, compute_row_split, compute_column_split, compute_transpose,
                        compute_fuse_tail, compute_plan);
    }
    bool operator<(const FftOptions& o) const { return fields() < o.fields(); }
    bool operator==(const FftOptions& o) const { return fields() == o.fields(); }
};

/// The smallest-cost length >= `need` that `options`' backend transforms on the current context
/// (even, prime factors 2, 3, 5 and 7 for the compute backend; powers of two for the radix-2
/// chain): the size to render into when a frame may be enlarged. Throws Error if none fits the GL.
int filter_length(int need, const FftOptions& options = {});

// ---- Filtering textures of the caller's context.

/// Texture targets apply() and its kin take (GL_TEXTURE_2D, GL_TEXTURE_RECTANGLE), so that this
/// header needs no GL header.
constexpr unsigned kTexture2D = 0x0DE1;
constexpr unsigned kTextureRectangle = 0x84F5;

/// A texture of the caller's context: its name and target. A bare name means GL_TEXTURE_2D.
struct TextureRef {
    unsigned name = 0;
    unsigned target = kTexture2D;
    TextureRef(unsigned name, unsigned target = kTexture2D) : name(name), target(target) {}
};

/// GPU time of the last call (timer queries), filled when asked for.
struct GpuTimes {
    double total_ms = 0;  ///< the filter's passes
    double call_ms = 0;   ///< the whole apply(), the copies in and out included
    std::vector<std::string> labels;  ///< one per pass (fragment) or dispatch (compute)
    std::vector<double> pass_ms;
    /// Per program of the paper's Table 3: fft, untangle, scale, tangle, pass, multiply (the
    /// compute backend's dispatches all count as fft).
    std::vector<std::pair<std::string, double>> programs;
};

/// When a TextureFilter compiles the programs it runs. The compute backend's are made for each grid
/// and kernel symmetry, and the first process to need them on a machine may wait seconds (24-28 s
/// for a 1920x1080 filter on an H200 with the driver's caches off; later processes link them from
/// the program cache in about 0.1 s: see the contract above).
enum class Compile {
    Now,         ///< the constructor and set_kernel() return with every program apply() runs linked
    /// The constructor and set_kernel() start the compiles and return; ready() says when they are
    /// done. The driver compiles on threads of its own where it has KHR (or ARB)
    /// _parallel_shader_compile, so a renderer keeps drawing meanwhile (on an H200 a 1920x1080
    /// filter was made in 0.08-0.14 s and ready() after 22-29 s of frames, where Compile::Now
    /// took 24-28 s); a driver that compiles inside the GL calls (Mesa's llvmpipe) does so in the
    /// constructor. Destroying a filter whose programs are compiling may wait for them.
    Background,
};

/// Convolution of width x height RGBA textures with one kernel, all four channels at once: the
/// kernel's spectrum is made once (and again by set_kernel()); each apply() is a forward transform,
/// a multiply and an inverse transform. With GL 4.3 the transforms read the caller's rectangle
/// texture itself (a 2D one is copied first, by a compute pass) and a compute pass stores the
/// result in the output's own format, for the RGBA formats with a GLSL image format (RGBA32F,
/// RGBA16F, RGBA8, RGBA16, their SNORM kin, RGB10_A2, R11F_G11F_B10F; a 2D output also needs a
/// minifying filter without mipmaps, or immutable storage). Other colour-renderable formats, and
/// every texture under older GL, go through framebuffer blits, which are fragment work, slow on
/// data-centre GPUs. Move-only.
///
/// With Boundary::Wrap at a size the backend transforms (filter_length()), the filter is the
/// paper's circular convolution at that size, nothing padded. Any other size or boundary pads the
/// frame to the cheapest grid of at least size + kernel - 1 per axis, extended by the boundary rule
/// on the GPU (compute shaders: GL 4.3), and gives fftfilter's result for that rule (`-b`).
class TextureFilter {
public:
    /// A filter for textures of width x height.
    TextureFilter(int width, int height, const Kernel& kernel, const FftOptions& options = {}, Boundary boundary = Boundary::Wrap);
    /// The same with a kernel spec or PNG file (parse_kernel()).
    TextureFilter(int width, int height, const std::string& kernel_spec, const FftOptions& options = {},
                  Boundary boundary = Boundary::Wrap);
    /// Either, compiling its programs as `compile` says (since 1.1.0).
    TextureFilter(int width, int height, const Kernel& kernel, const FftOptions& options, Boundary boundary, Compile compile);
    TextureFilter(int width, int height, const std::string& kernel_spec, const FftOptions& options, Boundary boundary, Compile compile);
    ~TextureFilter();
    TextureFilter(TextureFilter&&) noexcept;
    TextureFilter& operator=(TextureFilter&&) noexcept;

    int width() const;
    int height() const;
    /// The transform's size: width x height, or the padded grid.
    int grid_width() const;
    int grid_height() const;
    /// What runs the transforms: "compute", "fragment radix-16" (the fast chain) or "fragment radix-2".
    std::string backend() const;

    /// A new impulse response. Taps beyond an unpadded size fold over it (circularly); a padded
    /// filter makes its grid again where the new kernel's extent needs another. With
    /// Compile::Background, programs the new kernel needs (another symmetry, another grid) start
    /// compiling and ready() is false until they are done.
    void set_kernel(const Kernel& kernel);

    /// Whether apply() would run without waiting for programs to compile (since 1.1.0): always with
    /// Compile::Now; with Compile::Background once the driver has finished the programs the
    /// constructor or set_kernel() started (asked without waiting; each call links at most one
    /// finished program, which on NVIDIA's driver costs the calling thread 0.1-0.6 s, and the
    /// first true also makes the kernel's spectrum, one forward transform). A renderer asks once
    /// a frame and keeps drawing without this filter (or with the one it replaces) until true.
    /// apply() and kernel_spectrum() before then wait for the compiles; forward() waits for its
    /// own programs alone. The copies between the caller's textures and the grid (a program for
    /// each texture format) and inverse() still compile on first use: small programs, except
    /// inverse()'s.
    bool ready();

    /// Filters `input` (a width x height texture of the caller, any float or normalised RGBA
    /// format) into `output` (the same size, any colour-renderable format). They may be the same
    /// texture. `times`: the GPU time of the filter's passes and of the whole call (timer queries).
    void apply(TextureRef input, TextureRef output, GpuTimes* times = nullptr);
    /// Filters `input` into the filter's own RGBA32F rectangle texture, which is returned: valid
    /// until the next call or the filter's end. Sample it with texelFetch (or draw from it, or
    /// read it back); a shader that loads it as an image needs
    /// glMemoryBarrier(GL_SHADER_IMAGE_ACCESS_BARRIER_BIT) first. Outputs in the caller's own
    /// textures (the other calls) are ready for any use.
    TextureRef apply(TextureRef input, GpuTimes* times = nullptr);

    /// The spectrum of `input` (the paper's compressed layout, Eq. 10: width x height RGBA32F,
    /// scaled by 1/(width height)) in the filter's own rectangle texture, which is returned.
    /// forward() and inverse() need an unpadded filter (Wrap at a size the backend transforms).
    /// The spectrum is ready as apply(input)'s texture is.
    TextureRef forward(TextureRef input);
    /// The image of a spectrum in that layout (forward()'s, or a texture of the caller) into `output`.
    void inverse(TextureRef spectrum, TextureRef output);
    /// The kernel's spectrum in the same layout and scale: what the filter multiplies by. Where the
    /// compute backend filters the transposed problem (tall images: --compute-transpose), it
    /// multiplies by that problem's spectrum instead, and this one is made on the first call.
    TextureRef kernel_spectrum() const;

    /// CPU convenience: a width x height image (row 0 the top, as Image) filtered as apply()
    /// filters a texture holding it.
    Image apply_image(const Image& image);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// ---- Filtering images in memory.

/// How one axis of an image is split: FFT length, output block per tile, and where kernel and tile start.
struct AxisTiling {
    int fft = 0;            ///< a length the transform takes
    int block = 0;          ///< output pixels per tile
    bool circular = false;  ///< wrap on an axis the FFT takes whole: the whole axis, circularly, no padding
    int kernel_shift = 0;   ///< kernel tap i sits at index (i - kernel_shift) mod fft
    int lead = 0;           ///< a tile starting at output b reads input from b - lead; output q is at q + lead
    int tiles(int length) const { return (length + block - 1) / block; }
};

/// The largest FFT a tiling may take per axis (0: the filter's own limit): how images too large to
/// hold whole are cut into strips.
struct TileCaps {
    int x = 0, y = 0;
};

/// Samples as stored, row 0 first, channels interleaved: 1 grey, 2 grey+alpha, 3 RGB, 4 RGBA.
/// `depth` 8 or 16 as read (palette expanded to RGB(A), grey below 8 bits to 8, tRNS to alpha;
/// 16-bit samples in native byte order); for writing also 1, 2 or 4 (one byte per sample).
struct Samples {
    int width = 0, height = 0, channels = 0, depth = 8;
    std::vector<unsigned char> data;

    size_t bytes_per_sample() const { return depth == 16 ? 2 : 1; }
    size_t row_bytes() const { return static_cast<size_t>(width) * static_cast<size_t>(channels) * bytes_per_sample(); }
    void resize(int w, int h, int c, int d) {
        width = w, height = h, channels = c, depth = d;
        data.resize(row_bytes() * static_cast<size_t>(h));
    }
    unsigned char* row(int y) { return data.data() + row_bytes() * static_cast<size_t>(y); }
    const unsigned char* row(int y) const { return data.data() + row_bytes() * static_cast<size_t>(y); }
};

/// A transfer curve: sRGB, or a power law (encoded = linear^gamma).
struct Transfer {
    bool srgb = true;
    double gamma = 1 / 2.2;  ///< when !srgb
};

/// How one image's stored samples become floats and the filtered floats the output's samples.
struct SampleConversion {
    int in_channels = 4, in_depth = 8;    ///< as stored (8 or 16)
    int out_channels = 4, out_depth = 8;  ///< of the output (depth 1, 2, 4, 8 or 16)
    bool linear = false;                  ///< colour decoded to linear light and encoded back
    Transfer transfer;
    bool premultiply = false;             ///< colour times alpha before filtering (never divided back here)
    /// Also deflate the output as PNG image data on the GPU (8- or 16-bit output; collect()'s
    /// DeflatedRows): the bits the fast PNG writer's run coder makes of the same samples.
    bool deflate = false;
    /// With `deflate` and an output host area: the output's samples are not copied into the area
    /// where the GPU coded the stream (a PNG writer needs only the stream then, and the filtered
    /// rows' sample bands to choose it: DeflatedRows::bands); where it did not, collect() copies
    /// them then, and waits for that copy.
    bool samples_if_needed = false;

    /// The bytes of a width x height output's samples.
    size_t output_bytes(int width, int height) const {
        return static_cast<size_t>(width) * static_cast<size_t>(height) * static_cast<size_t>(out_channels) *
               (out_depth == 16 ? 2 : 1);
    }
};

/// An output's PNG image data, deflated on the GPU (SampleConversion::deflate): its rows, each
/// the filter byte 4 (Paeth) then its bytes (16-bit samples big-endian), as raw deflate (RFC 1951)
/// in blocks of 128 KiB, each a dynamic code of its literals and of its runs as matches at
/// distance 1, the last final; with zlib's 2-byte header before and `adler` after it, a PNG's
/// IDAT data. Empty (`coded` false) where the GPU did not code it: a block that would be stored.
struct DeflatedRows {
    bool coded = false;
    std::vector<unsigned char> data;
    uint32_t adler = 1;  ///< Adler-32 of the filtered rows
    /// The output's samples were not copied back (SampleConversion::samples_if_needed): `bands`
    /// holds bands of the filtered rows, one after another (the rows whole up to 128 KiB, else
    /// 32 KiB at the middle of each of 4-8 equal shares: what fftfilter's PNG writer reads to
    /// choose between the run coder and libdeflate); the rows themselves are the stream inflated.
    bool without_samples = false;
    std::vector<unsigned char> bands;
};

/// What the current context's sample path takes: the samples travel in storage buffers and the
/// packed output in an integer texture.
struct SampleLimits {
    bool supported = false;        ///< GL 4.3 compute shaders and storage buffers
    long long max_bytes = 0;       ///< GL_MAX_SHADER_STORAGE_BLOCK_SIZE
    int max_side = 0;              ///< of a rectangle texture
    /// True if an image of these samples fits, in and out (channels and depth of each).
    bool fits(int width, int height, int in_channels, int in_depth, int out_channels, int out_depth) const;
};

struct HostPool;

/// Memory in the host that the GPU copies an image's samples from and its output's samples to
/// itself (a buffer of client storage, mapped persistently: GL 4.4), so that ImageFilter::submit()
/// and collect() queue copies on the GPU instead of copying the samples on the calling thread.
/// Taken from HostAreas on any thread, filled or read there (a decoder's or encoder's worker),
/// handed to submit() on the GL thread and kept untouched until collect() has returned that
/// image; destroying it (any thread) gives it back. Move-only.
class HostArea {
public:
    HostArea() = default;
    HostArea(HostArea&& other) noexcept;
    HostArea& operator=(HostArea&& other) noexcept;
    HostArea(const HostArea&) = delete;
    HostArea& operator=(const HostArea&) = delete;
    ~HostArea();

    explicit operator bool() const { return data_ != nullptr; }
    unsigned char* data() const { return data_; }
    size_t capacity() const { return capacity_; }
    /// The GL buffer the mapping belongs to.
    unsigned gl_buffer() const { return buffer_; }

private:
    friend class HostAreas;
    void give_back();
    std::shared_ptr<HostPool> pool_;
    size_t index_ = 0;
    unsigned char* data_ = nullptr;
    size_t capacity_ = 0;
    unsigned buffer_ = 0;
};

/// The host areas of one context: made on the GL thread (add(), grow()), taken on any (take()).
/// Destroy it with its context current once every area taken is back (a mapping outlives
/// neither).
class HostAreas {
public:
    HostAreas();
    ~HostAreas();
    HostAreas(const HostAreas&) = delete;
    HostAreas& operator=(const HostAreas&) = delete;

    /// GL thread: makes one more area of `bytes` (rounded up to whole words) unless `count`
    /// exist or `limit` bytes would be passed; false where none was made (those limits, no
    /// buffer storage, no memory).
    bool add(size_t bytes, size_t count, size_t limit);
    /// GL thread: replaces the smallest free area smaller than `bytes` with one of `bytes`, unless
    /// `limit` bytes would be passed; false where none was replaced. The count stays as it is.
    bool grow(size_t bytes, size_t limit);
    /// Any thread: the smallest free area of at least `bytes`, or an empty one where none is free.
    HostArea take(size_t bytes);
    /// Areas made, and their bytes.
    size_t count() const;
    size_t bytes() const;

private:
    std::shared_ptr<HostPool> pool_;
};

/// What the last image (or strip) filtered took.
struct FilterStats {
    int tiles = 0, fft_width = 0, fft_height = 0;
    double gpu_ms = 0;    ///< summed GPU time of the filter runs (timer queries)
    double setup_ms = 0;  ///< wall time spent making a transform and kernel spectrum for a new size
};

/// Filters images in memory of any size with one kernel on the current context, under a boundary
/// rule, in overlap-save tiles where a grid would exceed `max_fft` (0: the GPU's largest power of
/// two) or the caps given, or where the backend's measured lengths rate tiles at most 0.95x one
/// grid's time (the compute backend's defaults on the GPU: e.g. 6000 pixels with a 65-tap kernel as
/// two tiles of 3072 along that axis): what fftfilter runs. Transforms and kernel spectra are made once per
/// grid size and kept for the last three sizes. Move-only; destroy it with its context current.
class ImageFilter {
public:
    ImageFilter(const Kernel& kernel, const FftOptions& options = {}, Boundary boundary = Boundary::Reflect, int max_fft = 0);
    ~ImageFilter();
    ImageFilter(ImageFilter&&) noexcept;
    ImageFilter& operator=(ImageFilter&&) noexcept;

    /// Float RGBA in [0, 1], row 0 the top.
    Image apply(const Image& image, TileCaps caps = {});
    /// The same filter on stored samples, every conversion on the GPU (GL 4.3): only the samples
    /// cross the bus, and the output samples equal apply()'s on the same floats bit for bit. Queued
    /// without waiting: collect() returns the oldest submitted image's output; at most three wait
    /// (collect() before a fourth submit()).
    void submit(const Samples& in, const SampleConversion& conversion, TileCaps caps = {});
    /// The same through host areas, each where given: the samples in `from` (in.row_bytes() *
    /// in.height bytes there; in.data is not read), the output's samples copied into `to` (which
    /// holds them rounded up to whole words; collect() then returns them there, its Samples' data
    /// empty). The GPU copies them itself. Both stay untouched until collect() has returned this
    /// image's output, or the filter is destroyed (which waits for the GPU's work it queued).
    void submit(const Samples& in, const HostArea* from, const HostArea* to, const SampleConversion& conversion,
                TileCaps caps = {});
    /// One strip of an image streamed by rows: rows[i] holds the samples of the image row that row
    /// `origin` + i of the boundary-extended image reads (null: a zero row); the strip's outputs
    /// are image rows `first` .. `first` + `count` - 1, collect()ed as submit()'s.
    void submit_strip(const std::vector<const unsigned char*>& rows, int origin, int first, int count, int width, int height,
                      const SampleConversion& conversion, TileCaps caps);
    /// Makes now what submitting a width x height image will need, so the first does not wait.
    void prepare(int width, int height, TileCaps caps = {});
    Samples collect(double* gpu_ms = nullptr);
    /// The same, the output's samples in `storage` (the data of an earlier Samples, given back so
    /// that its memory serves again: no fresh allocation, no zero filling, when it is large enough).
    Samples collect(double* gpu_ms, std::vector<unsigned char>&& storage);
    /// The same, and where the image was submitted with SampleConversion::deflate, its PNG image
    /// data in `deflated` (else `deflated` not coded), in the memory `deflated.data` holds where
    /// it is large enough.
    Samples collect(double* gpu_ms, std::vector<unsigned char>&& storage, DeflatedRows& deflated);
    size_t pending() const;
    /// The tiling of a width x height image along each axis.
    std::pair<AxisTiling, AxisTiling> tiling(int width, int height, TileCaps caps = {}) const;
    /// Tells the filter the sizes (width, height) of a batch about to come: where its backend
    /// compiles programs for each FFT length (the compute backend: seconds a length, the first
    /// time), grids then take few lengths, each an image's time at most 1.25x its own best grid's
    /// by the backend's model, so that a folder of many sizes compiles a few program sets, not
    /// one a size. A batch of one size keeps that size's best grid. Grids may then differ from an
    /// image's filtered alone (and the outputs in their last bits).
    void share_lengths(const std::vector<std::array<int, 2>>& sizes);
    /// Compiles now the programs that filtering images of these sizes (whole, without caps) will
    /// need, all side by side (the compute backend compiles programs per FFT length; the first
    /// use of each waits seconds otherwise, one grid after another).
    void prepare_programs(const std::vector<std::array<int, 2>>& sizes);
    const FilterStats& last() const;
    /// What the sample path takes on the current context.
    static SampleLimits sample_limits();

    /// The centred log-magnitude spectrum of `image` (Figure 4b, fftfilter --spectrum): the image
    /// extended by this filter's boundary rule to the next power of two per axis, transformed, and
    /// shown as an image of that size.
    Image spectrum(const Image& image);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// A random-phase texture (Figure 5): |F(f)| ~ |f|^-power, phases uniform from `seed`.
struct SynthSpec {
    int width = 512, height = 512;
    double power = 2;     ///< |F(f)| = |f|^-power (f in cycles per pixel); 0 is white noise
    unsigned seed = 1;
    bool colour = false;  ///< independent phases per channel (else grey)
};
/// Made by an inverse transform on the current context.
Image synthesize(const SynthSpec& spec, const FftOptions& options = {});

// ---- The compressed spectrum layout on the CPU.

/// F(u, v) of an M x N real image from a spectrum in the compressed layout (`packed`: M x N RGBA
/// floats, row 0 first, as read back from forward()'s texture) for channel 0..3: real and
/// imaginary parts.
void spectrum_value(const float* packed, int width, int height, int u, int v, int channel, double* re, double* im);

/// FFTW's r2c half spectrum of one channel ((M/2 + 1) x N complex values, interleaved re, im,
/// index v (M/2 + 1) + u) from the compressed layout, and back.
std::vector<double> unpack_spectrum(const float* packed, int width, int height, int channel);
void pack_spectrum(const double* half, int width, int height, int channel, float* packed);

}  // namespace gpufft
