#include "reference/reference.h"

#include <fftw3.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace gpufft {

std::vector<double> channel_of(const std::vector<float>& rgba, int channel) {
    std::vector<double> out(rgba.size() / 4);
    for (size_t i = 0; i < out.size(); ++i) out[i] = rgba[4 * i + static_cast<size_t>(channel)];
    return out;
}

namespace {

using Complex = std::complex<double>;

/// Plans the next transform of `n` points on every core from a million points on (one thread took
/// minutes at 16384^2, the yardstick of every fftcompare run there), on one below (the tests' sizes,
/// where threads only add their start).
void plan_threads(size_t n) {
    static std::once_flag ready;
    std::call_once(ready, [] { fftw_init_threads(); });
    fftw_plan_with_nthreads(n >= (size_t{1} << 20) ? static_cast<int>(std::max(1u, std::thread::hardware_concurrency())) : 1);
}

std::vector<Complex> r2c(const std::vector<double>& image, int width, int height) {
    if (image.size() != static_cast<size_t>(width) * static_cast<size_t>(height))
        throw std::invalid_argument("reference: image size mismatch");
    const size_t half = static_cast<size_t>(width / 2 + 1) * static_cast<size_t>(height);
    double* in = fftw_alloc_real(image.size());
    fftw_complex* out = fftw_alloc_complex(half);
    plan_threads(image.size());
    fftw_plan plan = fftw_plan_dft_r2c_2d(height, width, in, out, FFTW_ESTIMATE);
    std::copy(image.begin(), image.end(), in);
    fftw_execute(plan);
    std::vector<Complex> spectrum(half);
    for (size_t i = 0; i < half; ++i) spectrum[i] = {out[i][0], out[i][1]};
    fftw_destroy_plan(plan);
    fftw_free(in);
    fftw_free(out);
    return spectrum;
}

}  // namespace

std::vector<double> real_inverse_dft(const std::vector<Complex>& spectrum, int width, int height) {
    const size_t n = static_cast<size_t>(width) * static_cast<size_t>(height);
    fftw_complex* in = fftw_alloc_complex(spectrum.size());
    double* out = fftw_alloc_real(n);
    plan_threads(n);
    fftw_plan plan = fftw_plan_dft_c2r_2d(height, width, in, out, FFTW_ESTIMATE);
    for (size_t i = 0; i < spectrum.size(); ++i) {
        in[i][0] = spectrum[i].real();
        in[i][1] = spectrum[i].imag();
    }
    fftw_execute(plan);  // c2r destroys its input: in is a copy
    std::vector<double> image(out, out + n);
    fftw_destroy_plan(plan);
    fftw_free(in);
    fftw_free(out);
    return image;
}

namespace {

template <typename T>
ErrorStats compare_values(const std::vector<T>& ref, const std::vector<T>& got) {
    if (ref.size() != got.size()) throw std::invalid_argument("compare: sizes differ");
    ErrorStats s;
    double diff2 = 0, ref2 = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
        double d = std::abs(got[i] - ref[i]);
        diff2 += d * d;
        ref2 += std::norm(ref[i]);
        s.ref_max = std::max(s.ref_max, static_cast<double>(std::abs(ref[i])));
        if (d > s.max_abs || std::isnan(d)) {
            s.max_abs = std::isnan(d) ? INFINITY : d;
            s.worst = i;
        }
    }
    s.rel_rms = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
    if (std::isnan(s.rel_rms)) s.rel_rms = INFINITY;
    return s;
}

}  // namespace

std::vector<Complex> reference_spectrum(const std::vector<double>& image, int width, int height) {
    std::vector<Complex> spectrum = r2c(image, width, height);
    const double scale = 1.0 / (static_cast<double>(width) * height);
    for (Complex& c : spectrum) c *= scale;
    return spectrum;
}

std::vector<double> reference_circular_convolution(const std::vector<double>& image, const std::vector<double>& kernel,
                                                   int width, int height) {
    std::vector<Complex> a = r2c(image, width, height), b = r2c(kernel, width, height);
    const double scale = 1.0 / (static_cast<double>(width) * height);  // c2r is unnormalised
    for (size_t i = 0; i < a.size(); ++i) a[i] *= b[i] * scale;
    return real_inverse_dft(a, width, height);
}

ErrorStats compare(const std::vector<double>& ref, const std::vector<double>& got) { return compare_values(ref, got); }
ErrorStats compare(const std::vector<Complex>& ref, const std::vector<Complex>& got) { return compare_values(ref, got); }

}  // namespace gpufft
