#include "fft/sizes.h"

#include <algorithm>
#include <climits>
#include <initializer_list>

namespace gpufft {

bool is_fast_size(long long n) {
    if (n < 2 || n % 2) return false;
    for (long long p : {2, 3, 5, 7})
        while (n % p == 0) n /= p;
    return n == 1;
}

std::vector<int> prime_factors(long long n) {
    std::vector<int> f;
    for (long long p = 2; p * p <= n; ++p)
        while (n % p == 0) f.push_back(static_cast<int>(p)), n /= p;
    if (n > 1) f.push_back(static_cast<int>(n));
    return f;
}

long long next_fast_size(long long need) {
    if (need < 2) need = 2;
    for (long long n = need + (need & 1); n <= INT_MAX; n += 2)
        if (is_fast_size(n)) return n;
    return 0;
}

long long next_power_of_two(long long need) {
    long long n = 2;
    while (n < need) n *= 2;
    return n;
}

long long nearest_power_of_two(long long n) {
    const long long below = next_power_of_two(n + 1) / 2;  // the largest power of two <= n
    return n * n < 2 * below * below ? below : 2 * below;  // n below or above below * sqrt(2)
}

Normalisation normalisation(int width, int height) {
    const double two = static_cast<double>(next_power_of_two(width + 1) / 2);  // largest power of two <= width
    return {static_cast<float>(1 / two), static_cast<float>(two / (static_cast<double>(width) * height)), static_cast<float>(two)};
}

long long LengthModel::best(long long need, long long limit) const {
    long long chosen = 0;
    double least = 0;
    for (long long n = std::max(4LL, need + (need & 1)); n <= limit; n += 2) {  // 2 pairs badly with the fast chain's sizes
        if (!allowed(n)) continue;
        const double c = static_cast<double>(n) * cost(n);
        if (chosen == 0 || c < least) chosen = n, least = c;
        if (n >= 2 * need) break;  // a power of two lies in [need, 2 need): nothing later is cheaper
    }
    return chosen;
}

LengthModel fftw_lengths() {
    return {is_fast_size, [](long long) { return 1.0; }, true, "FFTW"};
}

}  // namespace gpufft
