#include "fft/sizes.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <exception>
#include <limits>
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

long long LengthModel::shared_length(long long need, long long limit, int axis) const {
    if (axis < 0 || !shared[axis]) return 0;
    const std::vector<SharedLength>& groups = *shared[axis];
    const auto it = std::lower_bound(groups.begin(), groups.end(), need, [](const SharedLength& g, long long v) { return g.to < v; });
    return it != groups.end() && it->from <= need && it->length <= limit ? it->length : 0;
}

long long LengthModel::best(long long need, long long limit, int axis) const {
    if (const long long n = shared_length(need, limit, axis)) return n;
    long long chosen = 0;
    double least = 0;
    // Even lengths only: 2 pairs badly with the fast chain's sizes, odd ones with row pairs.
    for (long long n = next_allowed(std::max(4LL, need + (need & 1)), limit); n != 0; n = next_allowed(n + 1, limit)) {
        if (n & 1) continue;
        const double c = static_cast<double>(n) * cost(n);
        if (chosen == 0 || c < least) chosen = n, least = c;
        if (n >= 2 * need) break;  // a power of two lies in [need, 2 need): nothing later is cheaper
    }
    return chosen;
}

double LengthModel::best_cost(long long need, long long limit) const {
    const long long n = best(need, limit);
    return n ? static_cast<double>(n) * cost(n) : 0;
}

void LengthModel::share(int axis, std::vector<long long> needs, long long limit, double within) {
    std::sort(needs.begin(), needs.end());
    needs.erase(std::unique(needs.begin(), needs.end()), needs.end());
    auto groups = std::make_shared<std::vector<SharedLength>>();
    for (size_t i = 0; i < needs.size();) {
        const double first = best_cost(needs[i], limit);
        if (first == 0) {  // no length: left to best() (which answers 0)
            ++i;
            continue;
        }
        // best_cost() never falls as the need grows (its lengths are those of a smaller need's,
        // fewer): the group is a run of needs.
        size_t j = i;
        for (double next; j + 1 < needs.size() && (next = best_cost(needs[j + 1], limit)) != 0 && next <= within * first;) ++j;
        groups->push_back({needs[i], needs[j], best(needs[j], limit)});
        i = j + 1;
    }
    shared[axis] = std::move(groups);
}

namespace {

using RatedLengths = std::vector<std::pair<long long, double>>;

/// The first of `rated` (ascending) at `n` or above.
RatedLengths::const_iterator first_from(const RatedLengths& rated, long long n) {
    return std::lower_bound(rated.begin(), rated.end(), n, [](const std::pair<long long, double>& e, long long v) { return e.first < v; });
}

}  // namespace

long long LengthModel::next_allowed(long long n, long long limit) const {
    if (table && n <= tabled_to) {
        const auto it = first_from(*table, n);
        if (it != table->end()) return it->first <= limit ? it->first : 0;
        n = tabled_to + 1;
    }
    for (; n <= limit; ++n)
        if (allowed(n)) return n;
    return 0;
}

void LengthModel::tabulate(long long up_to) {
    auto rated = std::make_shared<RatedLengths>();
    for (long long n = 1; n <= up_to; ++n) {
        bool takes = false;
        try {
            takes = allowed(n);
        } catch (const std::exception&) {  // the table ends below a length the model cannot judge
            up_to = n - 1;
            break;
        }
        if (!takes) continue;
        double c = std::numeric_limits<double>::quiet_NaN();  // a length the model cannot rate (the
        try {                                                  // fast chain's 2): asked of it again
            c = cost(n);
        } catch (const std::exception&) {
        }
        rated->emplace_back(n, c);
    }
    auto find = [rated](long long n) {
        const auto it = first_from(*rated, n);
        return it != rated->end() && it->first == n ? &*it : nullptr;
    };
    allowed = [find, up_to, allowed = allowed](long long n) { return n <= up_to ? find(n) != nullptr : allowed(n); };
    cost = [find, up_to, cost = cost](long long n) {
        const std::pair<long long, double>* e = n <= up_to ? find(n) : nullptr;
        return e && !std::isnan(e->second) ? e->second : cost(n);
    };
    table = std::move(rated);
    tabled_to = up_to;
}

LengthModel fftw_lengths() {
    return {is_fast_size, [](long long) { return 1.0; }, true, "FFTW"};
}

}  // namespace gpufft
