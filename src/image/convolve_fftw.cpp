#include "image/convolve_fftw.h"

#include "base/error.h"

#include <fftw3.h>

#include <algorithm>
#include <atomic>
#include <complex>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace gpufft {

namespace {
// Lengths beyond any image this tool reads whole: FFTW needs no tiling.
constexpr int kMaxFftwLength = 1 << 24;
}  // namespace

struct FftwConvolver::Size {
    int width = 0, height = 0;
    size_t half = 0;  // complex values of one channel's spectrum: (width / 2 + 1) x height
    fftwf_plan forward = nullptr, inverse = nullptr;
    /// The kernel's spectrum per channel (one shared if the kernel is the same for all), with the
    /// 1/(width height) of the unnormalised round trip folded in.
    std::vector<std::vector<std::complex<float>>> kernel;
    ~Size() {
        if (forward) fftwf_destroy_plan(forward);
        if (inverse) fftwf_destroy_plan(inverse);
    }
};

FftwConvolver::Workspace::~Workspace() {
    fftwf_free(real_);
    fftwf_free(spectrum_);
}

void FftwConvolver::Workspace::reserve(size_t reals, size_t complexes) {
    if (reals > reals_) {
        fftwf_free(real_);
        real_ = fftwf_alloc_real(reals);
        reals_ = reals;
    }
    if (complexes > complexes_) {
        fftwf_free(spectrum_);
        spectrum_ = fftwf_alloc_complex(complexes);
        complexes_ = complexes;
    }
    if (!real_ || !spectrum_) throw std::bad_alloc();
}

FftwConvolver::FftwConvolver(Kernel kernel, Boundary boundary) : kernel_(std::move(kernel)), boundary_(boundary) {}
FftwConvolver::~FftwConvolver() = default;

std::pair<AxisTiling, AxisTiling> FftwConvolver::tiling(int width, int height, TileCaps caps) const {
    return tile_image(width, height, kernel_, boundary_,
                      {caps.x > 0 ? caps.x : kMaxFftwLength, caps.y > 0 ? caps.y : kMaxFftwLength}, fftw_lengths());
}

const FftwConvolver::Size& FftwConvolver::size(int width, int height) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& slot = sizes_[{width, height}];
    if (slot) return *slot;
    auto s = std::make_unique<Size>();
    s->width = width;
    s->height = height;
    s->half = static_cast<size_t>(width / 2 + 1) * static_cast<size_t>(height);
    const size_t n = static_cast<size_t>(width) * static_cast<size_t>(height);
    Workspace scratch;
    scratch.reserve(n, s->half);
    auto* spectrum = static_cast<fftwf_complex*>(scratch.spectrum_);
    // Planned once per grid for single-threaded execution on the caller's own arrays (FFTW's
    // new-array execute functions). ESTIMATE: MEASURE costs seconds per size, more than a small
    // batch gains from it.
    fftwf_plan_with_nthreads(1);
    s->forward = fftwf_plan_dft_r2c_2d(height, width, scratch.real_, spectrum, FFTW_ESTIMATE);
    s->inverse = fftwf_plan_dft_c2r_2d(height, width, spectrum, scratch.real_, FFTW_ESTIMATE);
    if (!s->forward || !s->inverse)
        throw std::runtime_error("FFTW could not plan " + std::to_string(width) + "x" + std::to_string(height));
    const std::vector<float> impulse = impulse_response(kernel_, width, height);
    const float scale = 1.0f / (static_cast<float>(width) * static_cast<float>(height));
    for (int c = 0; c < (kernel_.per_channel ? 4 : 1); ++c) {
        for (size_t i = 0; i < n; ++i) scratch.real_[i] = impulse[4 * i + static_cast<size_t>(c)];
        fftwf_execute_dft_r2c(s->forward, scratch.real_, spectrum);
        std::vector<std::complex<float>> k(s->half);
        for (size_t i = 0; i < s->half; ++i) k[i] = {spectrum[i][0] * scale, spectrum[i][1] * scale};
        s->kernel.push_back(std::move(k));
    }
    slot = std::move(s);
    return *slot;
}

void FftwConvolver::filter_tile(const Size& s, const Image& src, int ox, int oy, unsigned channels, Workspace& ws, Image& out,
                                int x0, int y0, int cols, int rows, int lead_x, int lead_y) {
    const size_t w = static_cast<size_t>(s.width);
    auto* spectrum = static_cast<fftwf_complex*>(ws.spectrum_);
    std::vector<long long> column(w);
    for (size_t i = 0; i < w; ++i) column[i] = boundary_index(ox + static_cast<long long>(i), src.width, boundary_);
    for (int c = 0; c < 4; ++c) {
        if (!(channels & (1u << c))) continue;
        for (int r = 0; r < s.height; ++r) {
            long long iy = boundary_index(oy + r, src.height, boundary_);
            float* dst = ws.real_ + static_cast<size_t>(r) * w;
            if (iy < 0) {
                std::fill(dst, dst + w, 0.0f);
                continue;
            }
            const float* row = src.at(0, static_cast<int>(iy)) + c;
            for (size_t i = 0; i < w; ++i) dst[i] = column[i] < 0 ? 0.0f : row[4 * column[i]];
        }
        fftwf_execute_dft_r2c(s.forward, ws.real_, spectrum);
        const std::vector<std::complex<float>>& k = s.kernel[kernel_.per_channel ? static_cast<size_t>(c) : 0];
        for (size_t i = 0; i < s.half; ++i) {  // written out: std::complex's * checks for inf and NaN
            const float re = spectrum[i][0], im = spectrum[i][1], kre = k[i].real(), kim = k[i].imag();
            spectrum[i][0] = re * kre - im * kim;
            spectrum[i][1] = re * kim + im * kre;
        }
        fftwf_execute_dft_c2r(s.inverse, spectrum, ws.real_);
        for (int q = 0; q < rows; ++q) {
            const float* from = ws.real_ + static_cast<size_t>(q + lead_y) * w + static_cast<size_t>(lead_x);
            float* dst = out.at(x0, y0 + q) + c;
            for (int x = 0; x < cols; ++x) dst[4 * x] = from[x];
        }
    }
}

FftwConvolver::Stats FftwConvolver::apply(Image& image, unsigned channels, Workspace& ws, TileCaps caps, int threads) {
    auto [tx, ty] = tiling(image.width, image.height, caps);
    const Size& s = size(tx.fft, ty.fft);
    ws.reserve(static_cast<size_t>(tx.fft) * static_cast<size_t>(ty.fft), s.half);
    Stats stats{tx.fft, ty.fft, 0};
    for (int c = 0; c < 4; ++c) stats.channels += (channels >> c) & 1;
    // One tile is filtered in place (each channel is read whole before it is written); several
    // overlap, so they write a new image.
    const bool one = tx.block >= image.width && ty.block >= image.height;
    Image result;
    if (!one) result = Image(image.width, image.height);
    Image& out = one ? image : result;
    // The jobs: a tile's channel each (each reads and writes its own channel's floats alone).
    struct Job {
        int bx, by;
        unsigned channel;
    };
    std::vector<Job> jobs;
    for (int by = 0; by < image.height; by += ty.block)
        for (int bx = 0; bx < image.width; bx += tx.block)
            for (int c = 0; c < 4; ++c)
                if (channels & (1u << c)) jobs.push_back({bx, by, 1u << c});
    std::atomic<size_t> next{0};
    auto work = [&](Workspace& w) {
        for (size_t j; (j = next++) < jobs.size();) {
            const Job& t = jobs[j];
            filter_tile(s, image, t.bx - tx.lead, t.by - ty.lead, t.channel, w, out, t.bx, t.by,
                        std::min(tx.block, image.width - t.bx), std::min(ty.block, image.height - t.by), tx.lead, ty.lead);
        }
    };
    const size_t helpers = std::min(jobs.size(), static_cast<size_t>(std::max(threads, 1))) - (jobs.empty() ? 0 : 1);
    std::vector<std::thread> others;
    std::exception_ptr failure;
    std::mutex failure_mutex;
    for (size_t i = 0; i < helpers; ++i)
        others.emplace_back([&] {
            try {
                Workspace own;
                own.reserve(static_cast<size_t>(tx.fft) * static_cast<size_t>(ty.fft), s.half);
                work(own);
            } catch (...) {
                std::lock_guard<std::mutex> lock(failure_mutex);
                if (!failure) failure = std::current_exception();
                next = jobs.size();
            }
        });
    try {
        work(ws);
    } catch (...) {
        next = jobs.size();
        for (std::thread& t : others) t.join();
        throw;
    }
    for (std::thread& t : others) t.join();
    if (failure) std::rethrow_exception(failure);
    if (!one) image = std::move(result);
    return stats;
}

void FftwConvolver::apply_strip(const std::vector<const unsigned char*>& rows, int origin, int first, int count, int width,
                                int height, const SampleConversion& c, unsigned channels, Workspace& ws, TileCaps caps,
                                Samples& strip, int part, int parts) {
    auto [tx, ty] = tiling(width, height, caps);
    if (static_cast<int>(rows.size()) != ty.fft || origin != first - ty.lead)
        throw std::logic_error("FftwConvolver::apply_strip: rows are not a strip of this tiling");
    const Size& s = size(tx.fft, ty.fft);
    ws.reserve(static_cast<size_t>(tx.fft) * static_cast<size_t>(ty.fft), s.half);
    const std::vector<float> values = sample_values(c.in_depth);
    const bool alpha = c.in_channels == 2 || c.in_channels == 4;
    const bool zero = boundary_ == Boundary::Zero;
    static const int kColorType[] = {0, 4, 2, 6};
    PngFormat format;
    format.color_type = kColorType[c.out_channels - 1];
    format.bit_depth = c.out_depth;

    if (strip.width != width || strip.height != count || strip.channels != c.out_channels || strip.depth != c.out_depth)
        throw std::logic_error("FftwConvolver::apply_strip: the strip's samples do not match");
    Image tile(tx.fft, ty.fft), block;
    std::vector<long long> column(static_cast<size_t>(tx.fft));
    for (int bx = part * tx.block; bx < width; bx += parts * tx.block) {
        // The tile as the whole image, converted, would give it: samples to floats, linear light,
        // premultiplied; zero beyond the edges under the zero rule after the conversions.
        for (int i = 0; i < tx.fft; ++i) column[static_cast<size_t>(i)] = boundary_index(bx - tx.lead + i, width, boundary_);
        for (int r = 0; r < ty.fft; ++r) {
            float* dst = tile.at(0, r);
            for (int i = 0; i < tx.fft; ++i, dst += 4) {
                const long long ix = column[static_cast<size_t>(i)];
                if (rows[static_cast<size_t>(r)] && ix >= 0) sample_pixel(rows[static_cast<size_t>(r)], c.in_channels, c.in_depth, values.data(), ix, dst);
                else std::fill(dst, dst + 4, 0.0f);
            }
        }
        if (c.linear) to_linear(tile, c.transfer);
        if (c.premultiply && alpha) premultiply(tile);
        if (zero)
            for (int r = 0; r < ty.fft; ++r)
                for (int i = 0; i < tx.fft; ++i)
                    if (!rows[static_cast<size_t>(r)] || column[static_cast<size_t>(i)] < 0) std::fill(tile.at(i, r), tile.at(i, r) + 4, 0.0f);
        const int cols = std::min(tx.block, width - bx);
        block = Image(cols, count);
        filter_tile(s, tile, 0, 0, channels, ws, block, 0, 0, cols, count, tx.lead, ty.lead);
        if (c.premultiply && alpha) unpremultiply(block);
        if (c.linear) from_linear(block, c.transfer);
        const Samples out = image_to_samples(block, format);
        for (int q = 0; q < count; ++q)
            std::copy(out.row(q), out.row(q) + out.row_bytes(), strip.row(q) + static_cast<size_t>(bx) * c.out_channels * strip.bytes_per_sample());
    }
}

}  // namespace gpufft
