// Images larger than memory: rows streamed from the PNG decoder through overlap-save strips (a row
// of tiles each) to the PNG encoder, so that memory follows the strip, not the image. The strips
// are the vertical tiles of the same tiling the in-memory path uses (Convolver, FftwConvolver), so
// both give the same output, bit for bit.
#pragma once

#include "image/convolve.h"
#include "image/convolve_fftw.h"
#include "image/png_io.h"

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace gpufft {

/// How much memory an image takes and how it is tiled to fit: a function of the image and the
/// options only (never of the path that runs it), so that every path tiles it alike.
struct MemoryPlan {
    bool strips = false;       ///< the whole image does not fit: tiles capped so that a strip does
    int max_fft_x = 0, max_fft_y = 0;  ///< the tiling's largest FFT per axis (the caller's max_fft if !strips)
    long long whole_bytes = 0;  ///< held to filter the image whole: samples in and out, floats, the encoder's two copies
    long long strip_bytes = 0;  ///< held per strip (with strips): rows in and out, one tile's buffers
    AxisTiling y;               ///< the strips (with strips)
};

struct MemoryLimits {
    long long max_memory = 0;  ///< bytes an image may hold (--max-memory)
    long long max_pixels = 0;  ///< pixels an image may hold whole (--max-pixels)
    int max_fft = 0;           ///< the backend's largest FFT side
    int max_tile = 2048;       ///< the longest tile side strips take (the size the backend handles well)
};

/// Plans an image of width x height whose samples take in_bytes and out_bytes a pixel. Throws
/// gpufft::Error when not even strips of the smallest tiles fit `max_memory`.
MemoryPlan plan_memory(int width, int height, int in_bytes, int out_bytes, const Kernel& kernel, Boundary b,
                       const LengthModel& lengths, const MemoryLimits& limits);

/// The default --max-memory: a quarter of the machine's physical memory.
long long default_max_memory();
/// "1.5 GiB", "640 MiB", "12 KiB"
std::string format_bytes(long long bytes);

/// Where a strip's rows come from, in order: a PNG decoded as it is read, or samples in memory.
class RowSource {
public:
    virtual ~RowSource() = default;
    virtual int width() const = 0;
    virtual int height() const = 0;
    virtual size_t row_bytes() const = 0;
    /// The next `count` rows into `dst` (row_bytes() each); throws gpufft::Error naming the file.
    virtual void read(unsigned char* dst, int count) = 0;
    /// Back to the first row, for a second pass.
    virtual void restart() = 0;
};

/// A non-interlaced PNG, decoded by rows as they are needed.
class PngRowSource : public RowSource {
public:
    PngRowSource(const std::string& path, const PngLimits& limits);
    int width() const override { return reader_->width(); }
    int height() const override { return reader_->height(); }
    size_t row_bytes() const override { return reader_->row_bytes(); }
    void read(unsigned char* dst, int count) override { reader_->read_rows(dst, count); }
    void restart() override;

private:
    std::string path_;
    PngLimits limits_;
    std::unique_ptr<PngReader> reader_;
};

/// Samples in memory (an interlaced PNG decoded whole at its stored depth).
class SamplesRowSource : public RowSource {
public:
    explicit SamplesRowSource(const Samples& samples) : s_(samples) {}
    int width() const override { return s_.width; }
    int height() const override { return s_.height; }
    size_t row_bytes() const override { return s_.row_bytes(); }
    void read(unsigned char* dst, int count) override;
    void restart() override { next_ = 0; }

private:
    const Samples& s_;
    int next_ = 0;
};

/// What filters the strips, in order: submit() queues one, collect() gives the oldest one's output.
class StripFilter {
public:
    virtual ~StripFilter() = default;
    /// rows[i]: the sample rows that row `origin` + i of the boundary-extended image reads (null:
    /// zero, for the zero boundary beyond the edges); the strip's output is image rows `first` ..
    /// `first` + `count` - 1. The rows may be reused once submit() returns.
    virtual void submit(const std::vector<const unsigned char*>& rows, int origin, int first, int count) = 0;
    virtual size_t pending() const = 0;
    /// The oldest submitted strip's output samples (count rows of the image's width).
    virtual Samples collect() = 0;
};

/// The GPU filters the strips (submit_strip() of a Convolver, or of the public ImageFilter that
/// fftfilter holds: samples up, converted, filtered and packed there), two in flight.
template <class GpuFilter>
class GpuStrips : public StripFilter {
public:
    GpuStrips(GpuFilter& convolver, int width, int height, const SampleConversion& c, TileCaps caps)
        : convolver_(convolver), width_(width), height_(height), c_(c), caps_(caps) {}
    void submit(const std::vector<const unsigned char*>& rows, int origin, int first, int count) override {
        convolver_.submit_strip(rows, origin, first, count, width_, height_, c_, caps_);
    }
    size_t pending() const override { return convolver_.pending(); }
    Samples collect() override {
        double ms = 0;
        Samples s = convolver_.collect(&ms);
        gpu_ms_ += ms;
        return s;
    }
    double gpu_ms() const { return gpu_ms_; }

private:
    GpuFilter& convolver_;
    int width_, height_;
    SampleConversion c_;
    TileCaps caps_;
    double gpu_ms_ = 0;
};

/// FFTW filters the strips (FftwConvolver::apply_strip): the calling thread and threads - 1 more
/// share each strip's tiles.
class FftwStrips : public StripFilter {
public:
    FftwStrips(FftwConvolver& convolver, int width, int height, const SampleConversion& c, unsigned channels, TileCaps caps,
               int threads)
        : convolver_(convolver), width_(width), height_(height), c_(c), channels_(channels), caps_(caps),
          workspaces_(static_cast<size_t>(std::max(1, threads))) {}
    void submit(const std::vector<const unsigned char*>& rows, int origin, int first, int count) override;
    size_t pending() const override { return done_.size(); }
    Samples collect() override {
        Samples s = std::move(done_.front());
        done_.pop_front();
        return s;
    }

private:
    FftwConvolver& convolver_;
    int width_, height_;
    SampleConversion c_;
    unsigned channels_;
    TileCaps caps_;
    std::vector<FftwConvolver::Workspace> workspaces_;
    std::deque<Samples> done_;
};

struct StripStats {
    int strips = 0;
    int passes = 1;          ///< 2 when wrap needs the last rows before the first strip
    int rows_held = 0;       ///< the most input rows held at once
    double decode = 0, filter = 0, encode = 0;  ///< seconds on each thread
};

/// Filters the image of `source` strip by strip (the blocks of `y`, the vertical tiling) under
/// boundary `b`, writing the output rows to `out` in order as each strip finishes; out.commit() is
/// the caller's. Decoding and encoding run on threads of their own, the filter on the calling
/// thread (the one whose GL context is current). Rows are held only while a strip still to come
/// reads them. Any error (a corrupt row, a full disk, the filter's) stops every thread and is
/// rethrown here. `on_strip(done, strips)`, where given, is called on the calling thread as each
/// strip's output goes to the encoder.
StripStats run_strips(RowSource& source, StripFilter& filter, PngWriter& out, const AxisTiling& y, Boundary b,
                      const std::function<void(int done, int strips)>& on_strip = {});

}  // namespace gpufft
