// The same convolution as Convolver (boundary rules, kernel placement, cropping), on the CPU through
// FFTW: the batch backend where the GL renderer is a software rasterizer. FFTW transforms any length,
// so each axis is padded to the next fast length (sizes.h), not the next power of two, and a wrapped
// axis is transformed whole at its own length.
#pragma once

#include "image/colour.h"
#include "image/convolve.h"
#include "image/gpu_samples.h"

#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace gpufft {

class FftwConvolver {
public:
    explicit FftwConvolver(Kernel kernel, Boundary boundary);
    ~FftwConvolver();
    FftwConvolver(const FftwConvolver&) = delete;
    FftwConvolver& operator=(const FftwConvolver&) = delete;

    /// One thread's buffers, reused from image to image (grown to the largest grid, never shrunk).
    class Workspace {
    public:
        Workspace() = default;
        ~Workspace();
        Workspace(const Workspace&) = delete;
        Workspace& operator=(const Workspace&) = delete;

    private:
        friend class FftwConvolver;
        void reserve(size_t reals, size_t complexes);
        float* real_ = nullptr;
        void* spectrum_ = nullptr;
        size_t reals_ = 0, complexes_ = 0;
    };

    struct Stats {
        int fft_width = 0, fft_height = 0, channels = 0;
    };

    /// Filters the channels of `image` whose bits are set in `channels` (bit c: channel c), in
    /// place; the others are left as they are where the image is one tile (and undefined where
    /// it is several). Safe to call from several threads at once, each with its own workspace.
    /// `threads` above 1: each tile's channels are filtered on up to that many threads (the
    /// caller's and others, each with a workspace of its own), for an image filtered alone; the
    /// same bits as on one.
    Stats apply(Image& image, unsigned channels, Workspace& workspace, TileCaps caps = {}, int threads = 1);
    /// One strip of an image streamed by rows (strips.h: rows, origin, first, count as
    /// StripFilter::submit), from stored samples to the output's samples with the conversions of
    /// `c` on the CPU (premultiplied alpha divided back too): the same samples, bit for bit, as
    /// apply() on the whole image converted as fftfilter converts it, with the same caps. Into
    /// `strip` (count rows of the output's samples): the tiles part, part + parts, ... of the
    /// strip's row of tiles, so that several threads, each with its workspace, can share a strip.
    void apply_strip(const std::vector<const unsigned char*>& rows, int origin, int first, int count, int width, int height,
                     const SampleConversion& c, unsigned channels, Workspace& workspace, TileCaps caps, Samples& strip,
                     int part = 0, int parts = 1);
    /// The grid an image of this size is filtered on (caps: the largest FFT per axis).
    std::pair<AxisTiling, AxisTiling> tiling(int width, int height, TileCaps caps = {}) const;
    const Kernel& kernel() const { return kernel_; }

private:
    struct Size;  // plans and kernel spectra of one grid
    const Size& size(int width, int height);
    /// Filters `channels` of the fft-sized tile of `src` read from (ox, oy) on (extended by the
    /// boundary rule) and writes its block, cols x rows from (lead_x, lead_y), to `out` at (x0, y0).
    void filter_tile(const Size& s, const Image& src, int ox, int oy, unsigned channels, Workspace& ws, Image& out, int x0,
                     int y0, int cols, int rows, int lead_x, int lead_y);

    Kernel kernel_;
    Boundary boundary_;
    std::mutex mutex_;  // FFTW's planner is not thread-safe; plans are executed concurrently
    std::map<std::pair<int, int>, std::unique_ptr<Size>> sizes_;
};

}  // namespace gpufft
