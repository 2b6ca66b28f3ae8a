#include "fft/twiddle.h"

#include <cmath>

namespace gpufft {

std::complex<double> unit_root(long long k, long long n) {
    k %= n;
    if (k < 0) k += n;
    const double two_pi = 6.283185307179586476925286766559;
    if (n % 4 != 0) {  // W^(n-k) = conj W^k exactly; the angle in long double, rounded once
        if (2 * k > n) return std::conj(unit_root(n - k, n));
        if (2 * k == n) return {-1.0, 0.0};
        const long double a = 6.283185307179586476925286766559L * static_cast<long double>(k) / static_cast<long double>(n);
        return {static_cast<double>(std::cos(a)), static_cast<double>(-std::sin(a))};
    }
    // exp(+2 pi i k / n) as (c, s): split k = q n/4 + r, fold r into [0, n/8] and rotate by q.
    long long quarter = n / 4, q = k / quarter, r = k % quarter;
    double c, s;
    if (2 * r == quarter) {
        c = s = std::sqrt(0.5);  // correctly rounded, and the same for both, unlike cos and sin of pi/4
    } else if (2 * r < quarter) {
        double a = two_pi * static_cast<double>(r) / static_cast<double>(n);
        c = std::cos(a);
        s = std::sin(a);
    } else {
        double a = two_pi * static_cast<double>(quarter - r) / static_cast<double>(n);
        c = std::sin(a);
        s = std::cos(a);
    }
    for (; q > 0; --q) {  // multiply by i
        double t = c;
        c = -s;
        s = t;
    }
    return {c, -s};  // the conjugate: W = exp(-2 pi i k / n)
}

std::vector<float> twiddle_table(int n) {
    std::vector<float> table(static_cast<size_t>(n) * 4, 0.0f);
    for (int k = 0; k < n; ++k) {
        std::complex<double> w = unit_root(k, n);
        table[4 * static_cast<size_t>(k)] = static_cast<float>(w.real());
        table[4 * static_cast<size_t>(k) + 1] = static_cast<float>(w.imag());
    }
    return table;
}

}  // namespace gpufft
