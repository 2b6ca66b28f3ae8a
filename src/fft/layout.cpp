#include "fft/layout.h"

#include <cstddef>

namespace gpufft {

namespace {

size_t at(int width, int x, int y, int channel) {
    return (static_cast<size_t>(y) * static_cast<size_t>(width) + static_cast<size_t>(x)) * 4 + static_cast<size_t>(channel);
}

}  // namespace

std::complex<double> packed_value(const float* packed, int width, int height, int u, int v, int channel) {
    const int m = width, n = height;
    auto a = [&](int x, int y) { return static_cast<double>(packed[at(m, x, y, channel)]); };
    if (u == 0 || 2 * u == m) {  // Eq. 9 along v
        if (v == 0 || 2 * v == n) return {a(u, v), 0.0};
        if (2 * v < n) return {a(u, v), -a(u, n - v)};
        return {a(u, n - v), a(u, v)};
    }
    if (2 * u > m) return {a(m - u, v), a(u, v)};
    // 0 < u < M/2: F(u, v) = F(M-u, N-v)*
    int mv = (n - v) % n;
    return {a(u, mv), -a(m - u, mv)};
}

std::vector<std::complex<double>> unpack_half(const float* packed, int width, int height, int channel) {
    const int half = width / 2 + 1;
    std::vector<std::complex<double>> out(static_cast<size_t>(half) * static_cast<size_t>(height));
    for (int v = 0; v < height; ++v)
        for (int u = 0; u < half; ++u)
            out[static_cast<size_t>(v) * half + u] = packed_value(packed, width, height, u, v, channel);
    return out;
}

void pack_half(const std::complex<double>* half, int width, int height, int channel, float* packed) {
    const int m = width, n = height, h = width / 2 + 1;
    auto f = [&](int u, int v) { return half[static_cast<size_t>(v) * h + u]; };
    auto a = [&](int x, int y) -> float& { return packed[at(m, x, y, channel)]; };
    for (int u : {0, m / 2})
        for (int v = 0; v <= n / 2; ++v) {
            a(u, v) = static_cast<float>(f(u, v).real());
            if (v != 0 && 2 * v != n) a(u, n - v) = static_cast<float>(-f(u, v).imag());  // Im F(u, N-v) = -Im F(u, v)
        }
    // Columns M/2 < x < M hold F(x, v) = F(M-x, N-v)*, which r2c stores at (M-x, N-v).
    for (int x = m / 2 + 1; x < m; ++x)
        for (int v = 0; v < n; ++v) {
            std::complex<double> value = std::conj(f(m - x, (n - v) % n));
            a(m - x, v) = static_cast<float>(value.real());
            a(x, v) = static_cast<float>(value.imag());
        }
}

}  // namespace gpufft
