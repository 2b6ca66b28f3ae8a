// FFT lengths: which sizes the transforms take and which of them are fast.
#pragma once

namespace gpufft {

/// The smallest even length >= `need` (and >= 2) whose prime factors are 2, 3, 5 and 7 only:
/// FFTW transforms these at nearly the speed of powers of two (scipy.fft.next_fast_len, restricted
/// to even lengths so that row pairs pack real-to-complex). 0 if none fits in an int.
long long next_fast_size(long long need);

/// The smallest power of two >= `need` and >= 2.
long long next_power_of_two(long long need);

}  // namespace gpufft
