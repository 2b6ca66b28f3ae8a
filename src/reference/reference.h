// The yardstick: the same transforms by FFTW in double precision, and the error measures the
// tests and fftcompare report.
#pragma once

#include <complex>
#include <cstddef>
#include <vector>

namespace gpufft {

/// One channel (0..3) of width*height RGBA floats, as doubles.
std::vector<double> channel_of(const std::vector<float>& rgba, int channel);

/// fftw_plan_dft_r2c_2d of one channel of an M x N image, scaled 1/(MN) as the paper's Eq. 1:
/// (M/2 + 1) x N values, index v (M/2 + 1) + u.
std::vector<std::complex<double>> reference_spectrum(const std::vector<double>& image, int width, int height);

/// FFTW's c2r of an r2c half spectrum ((M/2 + 1) x N), unnormalised: the sum over (u, v) of
/// F(u, v) exp(+2 pi i (u x / M + v y / N)).
std::vector<double> real_inverse_dft(const std::vector<std::complex<double>>& half, int width, int height);

/// Circular convolution of one channel of an image with an impulse response (origin at (0, 0)),
/// through FFTW in double precision.
std::vector<double> reference_circular_convolution(const std::vector<double>& image, const std::vector<double>& kernel,
                                                   int width, int height);

struct ErrorStats {
    double rel_rms = 0;   ///< ||got - ref||_2 / ||ref||_2
    double max_abs = 0;   ///< max |got - ref|
    double ref_max = 0;   ///< max |ref|, the scale max_abs is read against
    size_t worst = 0;     ///< index of the largest difference
};

ErrorStats compare(const std::vector<double>& ref, const std::vector<double>& got);
ErrorStats compare(const std::vector<std::complex<double>>& ref, const std::vector<std::complex<double>>& got);

}  // namespace gpufft
