// Convolving images of any size with a kernel on the GPU, through the core filter: boundary rules,
// padding to the FFT size the backend's cost model picks, and overlap-save tiles for images the
// GPU cannot take whole.
#pragma once

#include "fft/fft2d.h"
#include "fft/filter.h"
#include "image/gpu_samples.h"
#include "image/image.h"
#include "image/kernels.h"

#include <array>
#include <list>
#include <memory>
#include <string>
#include <utility>

namespace gpufft {

// Boundary (what lies beyond the image edge) is public: gpufft/gpufft.h.
Boundary parse_boundary(const std::string& name);  ///< throws gpufft::Error on an unknown name
const char* boundary_name(Boundary b);

/// Index into [0, n) that coordinate i (any integer) reads under rule b; -1 means "zero".
long long boundary_index(long long i, long long n, Boundary b);

// AxisTiling (how one axis is split into tiles) is public: gpufft/gpufft.h.

/// The tiling of an axis of `length` for a kernel of `size` centred at `centre`: one FFT of the
/// length `lengths` rates cheapest from image + kernel - 1 up (or the whole axis, for wrap on a
/// length it takes), else tiles of the length that makes the axis cheapest; also those tiles where
/// the model measures them (`lengths.tile_to`) and they cost the axis kTilesPay of the one FFT or
/// less. `max_fft` bounds the length. Along `axis` (0: x, 1: y), a need that `lengths` shares
/// takes its shared length (share_lengths). Throws gpufft::Error if the kernel leaves no room for
/// output.
AxisTiling tile_axis(int length, int size, int centre, Boundary b, int max_fft, const LengthModel& lengths, int axis = -1);

// TileCaps (the largest FFT a tiling may take per axis) is public: gpufft/gpufft.h.

/// Where `lengths` compiles programs per length (the compute backend: a width's row programs, a
/// height's column programs), groups what a batch of images of these sizes (width, height) will
/// ask it for along each axis, under this kernel and boundary, so that few lengths serve them all
/// (LengthModel::share, kSharedLengthsWithin); a size alone keeps its best lengths. Other models
/// are left as they are.
void share_lengths(LengthModel& lengths, const std::vector<std::array<int, 2>>& sizes, const Kernel& kernel, Boundary b, int max_fft);

/// The tiling of a width x height image along each axis (tile_axis), each axis's FFT at most
/// `largest` of that axis.
std::pair<AxisTiling, AxisTiling> tile_image(int width, int height, const Kernel& kernel, Boundary b, TileCaps largest,
                                             const LengthModel& lengths);

/// The largest FFT side the GPU filter takes by default: the largest power of two within the
/// texture limit of the current context.
int gpu_max_fft();

/// The kernel as the core filter's impulse response on an fft_width x fft_height grid: its centre at
/// (0, 0), taps beyond the grid folded over it (circularly). With `flip_y` the kernel is mirrored
/// vertically, for frames stored bottom row first (GL) while kernels are given top row first.
std::vector<float> impulse_response(const Kernel& kernel, int fft_width, int fft_height, bool flip_y = false);
/// The same into `target` (the grid's size), the same floats: where the kernel fits the grid only
/// its taps are uploaded (the wrapped kernel's up to four corner blocks, the rest cleared), so no
/// grid-sized buffer is made on the CPU.
void upload_impulse_response(const Kernel& kernel, Texture& target, bool flip_y = false);
/// Whether every tap equals its mirror through the centre (tap (2 cx - i, 2 cy - j); taps beyond the
/// array count as zero), exactly: the kernel's impulse response on any grid, folded or flipped, is
/// then point symmetric, and its spectrum real (Filter).
bool point_symmetric(const Kernel& kernel);

/// The largest grid Convolver::prepare_programs() compiles ahead (4096^2).
constexpr long long kPreparedGridPixels = 1LL << 24;

struct ConvolveOptions {
    Boundary boundary = Boundary::Reflect;
    int max_fft = 0;          ///< largest FFT side; 0: the GPU's limit (its largest power of two)
    FftOptions fft;
    int cached_sizes = 3;     ///< transforms and kernel spectra kept for reuse across images
    bool measured_tiles = true;  ///< tiles where the measured model rates them cheaper than one grid
                                 ///< (LengthModel::tile_to); false: one grid wherever it fits
};

/// Filters images of any size with one kernel. Transforms and the kernel spectrum are made once per
/// FFT size and reused.
class Convolver {
public:
    Convolver(ProgramCache& programs, Kernel kernel, ConvolveOptions options);

    Image apply(const Image& image, TileCaps caps = {});
    const Kernel& kernel() const { return kernel_; }

    /// The same filter on stored samples, every conversion on the GPU (gpu_samples.h): only the
    /// samples cross the bus, and the output samples equal those of apply() on samples_to_image()
    /// with the same conversions on the CPU, bit for bit. Queued without waiting: collect() returns
    /// the oldest submitted image's output; at most three wait (collect() before a fourth submit()).
    /// Premultiplied inputs are not divided back here: the caller takes apply() for those.
    /// With `from`, the samples are there, not in in.data; with `to`, the output goes there
    /// (ImageFilter::submit's host areas).
    void submit(const Samples& in, const SampleConversion& conversion, TileCaps caps = {}, const HostArea* from = nullptr,
                const HostArea* to = nullptr);
    /// One strip of an image streamed by rows (strips.h: rows, origin, first, count as
    /// StripFilter::submit), queued as submit() queues an image; collect() gives its output rows.
    void submit_strip(const std::vector<const unsigned char*>& rows, int origin, int first, int count, int width, int height,
                      const SampleConversion& conversion, TileCaps caps);
    /// Makes now what submit() of a width x height image will need (transform, kernel spectrum,
    /// grid, sample buffers' programs), so that the first image does not wait for it.
    void prepare(int width, int height, TileCaps caps = {});
    Samples collect(double* gpu_ms = nullptr, std::vector<unsigned char>&& storage = {}, DeflatedRows* deflated = nullptr);
    size_t pending() const { return io_ ? io_->pending() : 0; }

    /// The tiling of a width x height image along each axis.
    std::pair<AxisTiling, AxisTiling> tiling(int width, int height, TileCaps caps = {}) const;
    /// Grids of few lengths for a batch of these sizes (gpufft::share_lengths).
    void share_lengths(const std::vector<std::array<int, 2>>& sizes);
    /// Compiles now, side by side in one batch, the filter programs of every grid these sizes
    /// are tiled on (whole, without caps) up to kPreparedGridPixels: a folder of many sizes then
    /// waits once for the slowest, not once a grid. (Larger grids, whose transforms this would
    /// make for the moment, compile on first use: their filtering outweighs it.)
    void prepare_programs(const std::vector<std::array<int, 2>>& sizes);
    /// What the tiling chooses lengths by, and up to.
    const LengthModel& lengths() const { return lengths_; }
    int max_fft() const { return options_.max_fft; }

    using Stats = FilterStats;  // public: gpufft/gpufft.h
    const Stats& last() const { return last_; }

private:
    struct Setup {
        int width, height;
        std::unique_ptr<Fft2D> fft;
        std::unique_ptr<Filter> filter;
        Texture grid;  // submit()'s unpacked tile, made on first use
    };
    /// The transform and kernel spectrum for these tilings, made on first use (the time it took,
    /// if made now, in setup_ms_).
    Setup& setup(const AxisTiling& x, const AxisTiling& y);
    /// setup() with the grid texture and SampleIo that submit() needs.
    Setup& sample_setup(const AxisTiling& x, const AxisTiling& y);
    /// Filters one row of tiles of the uploaded samples, read from row `origin_y` on (the
    /// extended image's), and packs its blocks into output rows y0 .. y1 - 1.
    void filter_row_of_tiles(Setup& s, const AxisTiling& x, const AxisTiling& y, const SampleConversion& c, int width,
                             int origin_y, int y0, int y1);

    ProgramCache& programs_;
    Kernel kernel_;
    ConvolveOptions options_;
    LengthModel lengths_;  // the FFT lengths of options_.fft's backend on this context
    std::list<Setup> setups_;  // most recently used first
    Stats last_;
    double setup_ms_ = 0;  // of the last setup() call
    std::unique_ptr<SampleIo> io_;
};

}  // namespace gpufft
