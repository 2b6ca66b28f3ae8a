// The 2D compressed spectrum layout of Eq. 10 / Figure 2 on the CPU: unpacking a spectrum the GPU
// wrote into complex values, and packing complex spectra for the GPU.
//
// An M x N real image has F(u, v) = F(M-u, N-v)* (u along rows, v along columns), so M N reals
// hold its spectrum. A[x][y] is texel (x, y) (column x, row y) of one channel:
//   columns 0 and M/2 (the transforms of the two real columns, Eq. 9 along v):
//       y <= N/2: A = Re F(x, y)          y > N/2: A = Im F(x, y)
//   columns M/2 < x < M:   A[x][y] = Im F(x, y),   A[M-x][y] = Re F(x, y)
// The other half follows from the symmetry.
#pragma once

#include <complex>
#include <vector>

namespace gpufft {

/// F(u, v) of channel `channel` (0..3) of an RGBA packed spectrum, for any u < M, v < N.
std::complex<double> packed_value(const float* packed, int width, int height, int u, int v, int channel);

/// FFTW's r2c half spectrum of one channel: (M/2 + 1) x N values, index v (M/2 + 1) + u.
std::vector<std::complex<double>> unpack_half(const float* packed, int width, int height, int channel);

/// Writes one channel of an RGBA packed spectrum from an r2c half spectrum (the inverse of
/// unpack_half for spectra of real images: the redundant values F(u, v), u in {0, M/2}, v > N/2,
/// and the imaginary parts at the four real points are not read).
void pack_half(const std::complex<double>* half, int width, int height, int channel, float* packed);

}  // namespace gpufft
