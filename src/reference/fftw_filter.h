// The CPU side of the paper's comparison (Section 6), done as the GPU does it: four interleaved
// 32-bit channels, r2c forward, multiply by a kernel spectrum made once, c2r inverse. FFTW in
// single precision (fftwf) with FFTW_MEASURE plans (FFTW_ESTIMATE where only its accuracy is
// wanted); planning happens in the constructor.
#pragma once

#include <complex>
#include <vector>

namespace gpufft {

class FftwfFilter {
public:
    /// `impulse`: width*height RGBA floats, origin at (0, 0). `threads` >= 1. `measure`: plans
    /// with FFTW_MEASURE (the fastest, for timing; minutes at 16384^2), else FFTW_ESTIMATE.
    FftwfFilter(int width, int height, int threads, const std::vector<float>& impulse, bool measure = true);
    ~FftwfFilter();
    FftwfFilter(const FftwfFilter&) = delete;
    FftwfFilter& operator=(const FftwfFilter&) = delete;

    /// Forward transform of the four channels of `rgba`, scaled 1/(MN): (M/2 + 1) x N values each.
    std::vector<std::vector<std::complex<double>>> spectra(const std::vector<float>& rgba);
    /// The frame the filter works on in place: width*height*4 floats (SIMD-aligned by FFTW).
    float* frame() { return real_; }
    /// The whole filter, in place on frame(): forward, multiply, inverse.
    void filter();

    static const char* version();

private:
    int width_, height_;
    size_t half_;  // complex values per channel
    float* real_ = nullptr;      // interleaved RGBA
    void* spectrum_ = nullptr;   // fftwf_complex[4 * half_], channel after channel
    void* kernel_ = nullptr;     // the kernel's spectrum, with the 1/(MN) of the round trip folded in
    void* forward_ = nullptr;    // fftwf_plan
    void* inverse_ = nullptr;
};

}  // namespace gpufft
