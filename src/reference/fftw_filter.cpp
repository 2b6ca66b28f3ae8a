#include "reference/fftw_filter.h"

#include <fftw3.h>

#include <algorithm>
#include <mutex>
#include <stdexcept>

namespace gpufft {

namespace {

std::once_flag threads_ready;

fftwf_plan make_plan(bool forward, int width, int height, float* real, fftwf_complex* complex, size_t half, unsigned flags) {
    const int dims[2] = {height, width};
    // Four channels interleaved in the real array (stride 4, next channel 1 float on); channel
    // spectra one after another in the complex array.
    return forward ? fftwf_plan_many_dft_r2c(2, dims, 4, real, nullptr, 4, 1, complex, nullptr, 1, static_cast<int>(half), flags)
                   : fftwf_plan_many_dft_c2r(2, dims, 4, complex, nullptr, 1, static_cast<int>(half), real, nullptr, 4, 1, flags);
}

}  // namespace

FftwfFilter::FftwfFilter(int width, int height, int threads, const std::vector<float>& impulse, bool measure)
    : width_(width), height_(height), half_(static_cast<size_t>(width / 2 + 1) * static_cast<size_t>(height)) {
    const size_t n = static_cast<size_t>(width) * static_cast<size_t>(height);
    if (impulse.size() != n * 4) throw std::invalid_argument("FftwfFilter: impulse size mismatch");
    std::call_once(threads_ready, [] { fftwf_init_threads(); });
    fftwf_plan_with_nthreads(std::max(1, threads));
    real_ = fftwf_alloc_real(n * 4);
    auto* spectrum = fftwf_alloc_complex(4 * half_);
    auto* kernel = fftwf_alloc_complex(4 * half_);
    spectrum_ = spectrum;
    kernel_ = kernel;
    const unsigned flags = measure ? FFTW_MEASURE : FFTW_ESTIMATE;
    fftwf_plan fwd = make_plan(true, width, height, real_, spectrum, half_, flags);
    fftwf_plan inv = make_plan(false, width, height, real_, spectrum, half_, flags);
    forward_ = fwd;
    inverse_ = inv;
    if (!fwd || !inv) throw std::runtime_error("FFTW could not plan " + std::to_string(width) + "x" + std::to_string(height));
    // The kernel's spectrum (planning with MEASURE overwrote the arrays, so fill them now).
    std::copy(impulse.begin(), impulse.end(), real_);
    fftwf_execute(fwd);
    const float scale = 1.0f / (static_cast<float>(width) * static_cast<float>(height));  // a power of two: exact
    for (size_t i = 0; i < 4 * half_; ++i) {
        kernel[i][0] = spectrum[i][0] * scale;
        kernel[i][1] = spectrum[i][1] * scale;
    }
}

FftwfFilter::~FftwfFilter() {
    if (forward_) fftwf_destroy_plan(static_cast<fftwf_plan>(forward_));
    if (inverse_) fftwf_destroy_plan(static_cast<fftwf_plan>(inverse_));
    fftwf_free(real_);
    fftwf_free(spectrum_);
    fftwf_free(kernel_);
}

std::vector<std::vector<std::complex<double>>> FftwfFilter::spectra(const std::vector<float>& rgba) {
    std::copy(rgba.begin(), rgba.end(), real_);
    fftwf_execute(static_cast<fftwf_plan>(forward_));
    const double scale = 1.0 / (static_cast<double>(width_) * height_);
    std::vector<std::vector<std::complex<double>>> out(4, std::vector<std::complex<double>>(half_));
    for (size_t c = 0; c < 4; ++c) {
        const auto* s = static_cast<fftwf_complex*>(spectrum_) + c * half_;
        for (size_t i = 0; i < half_; ++i) out[c][i] = {s[i][0] * scale, s[i][1] * scale};  // exact: a power of two
    }
    return out;
}

void FftwfFilter::filter() {
    fftwf_execute(static_cast<fftwf_plan>(forward_));
    auto* s = static_cast<fftwf_complex*>(spectrum_);
    const auto* k = static_cast<const fftwf_complex*>(kernel_);
    for (size_t i = 0; i < 4 * half_; ++i) {
        float re = s[i][0] * k[i][0] - s[i][1] * k[i][1];
        float im = s[i][0] * k[i][1] + s[i][1] * k[i][0];
        s[i][0] = re;
        s[i][1] = im;
    }
    fftwf_execute(static_cast<fftwf_plan>(inverse_));
}

const char* FftwfFilter::version() { return fftwf_version; }

}  // namespace gpufft
