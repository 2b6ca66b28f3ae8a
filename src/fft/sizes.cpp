#include "fft/sizes.h"

#include <climits>
#include <initializer_list>

namespace gpufft {

long long next_fast_size(long long need) {
    if (need < 2) need = 2;
    for (long long n = need + (need & 1); n <= INT_MAX; n += 2) {
        long long r = n;
        for (long long p : {2, 3, 5, 7})
            while (r % p == 0) r /= p;
        if (r == 1) return n;
    }
    return 0;
}

long long next_power_of_two(long long need) {
    long long n = 2;
    while (n < need) n *= 2;
    return n;
}

}  // namespace gpufft
