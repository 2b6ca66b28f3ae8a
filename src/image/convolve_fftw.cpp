#include "image/convolve_fftw.h"

#include "base/error.h"

#include <fftw3.h>

#include <algorithm>
#include <complex>
#include <stdexcept>

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

std::pair<AxisTiling, AxisTiling> FftwConvolver::tiling(int width, int height) const {
    return {tile_axis(width, kernel_.weights.width, kernel_.cx, boundary_, kMaxFftwLength, fftw_lengths()),
            tile_axis(height, kernel_.weights.height, kernel_.cy, boundary_, kMaxFftwLength, fftw_lengths())};
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

FftwConvolver::Stats FftwConvolver::apply(Image& image, unsigned channels, Workspace& ws) {
    auto [tx, ty] = tiling(image.width, image.height);
    const Size& s = size(tx.fft, ty.fft);
    const size_t w = static_cast<size_t>(tx.fft);
    ws.reserve(w * static_cast<size_t>(ty.fft), s.half);
    auto* spectrum = static_cast<fftwf_complex*>(ws.spectrum_);
    Stats stats{tx.fft, ty.fft, 0};
    if (tx.block < image.width || ty.block < image.height)
        throw Error(std::to_string(image.width) + "x" + std::to_string(image.height) + " is too large for one FFT");

    // One tile: the FFT takes every image whole (kMaxFftwLength).
    std::vector<long long> column(w);
    for (size_t i = 0; i < w; ++i) column[i] = boundary_index(static_cast<long long>(i) - tx.lead, image.width, boundary_);
    for (int c = 0; c < 4; ++c) {
        if (!(channels & (1u << c))) continue;
        ++stats.channels;
        for (int r = 0; r < ty.fft; ++r) {
            long long iy = boundary_index(r - ty.lead, image.height, boundary_);
            float* dst = ws.real_ + static_cast<size_t>(r) * w;
            if (iy < 0) {
                std::fill(dst, dst + w, 0.0f);
                continue;
            }
            const float* row = image.at(0, static_cast<int>(iy)) + c;
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
        for (int q = 0; q < image.height; ++q) {
            const float* src = ws.real_ + static_cast<size_t>(q + ty.lead) * w + static_cast<size_t>(tx.lead);
            float* dst = image.at(0, q) + c;
            for (int x = 0; x < image.width; ++x) dst[4 * x] = src[x];
        }
    }
    return stats;
}

}  // namespace gpufft
