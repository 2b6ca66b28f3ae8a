// Roots of unity for the FFT programs, computed in double on the CPU and stored as float.
#pragma once

#include <complex>
#include <vector>

namespace gpufft {

/// W_n^k = exp(-2 pi i k / n), accurate to double rounding, exact at multiples of n/4, and with
/// the 8-fold symmetry of the circle: only angles in [0, pi/4] reach cos/sin.
std::complex<double> unit_root(long long k, long long n);

/// The table the FFT programs read: texel k = (Re, Im, 0, 0) of W_n^k for k < n, as floats.
std::vector<float> twiddle_table(int n);

}  // namespace gpufft
