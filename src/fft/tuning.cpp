#include "fft/tuning.h"

namespace gpufft {

namespace {

/// True if `renderer` contains one of the '|'-separated `names` (an empty list matches any).
bool matches(const std::string& names, const std::string& renderer) {
    if (names.empty()) return true;
    size_t start = 0;
    for (;;) {
        const size_t bar = names.find('|', start);
        if (renderer.find(names.substr(start, bar == std::string::npos ? std::string::npos : bar - start)) != std::string::npos)
            return true;
        if (bar == std::string::npos) return false;
        start = bar + 1;
    }
}

}  // namespace

const ComputeTuning& compute_tuning(const std::string& renderer) {
    static const ComputeTuning table[] = {
        // Software rasterizers (Mesa's llvmpipe): a JIT for which big unrolled programs are slow
        // to compile (radix 16: 10-20 s; radix 4 with 2 components: about 1 s), while the CPU
        // gains nothing from fewer exchange rounds: at most 2 components.
        {"llvmpipe|softpipe|swrast|Software Rasterizer", 4, 8, 1024, 4, 2, 1024, 2, 2, 4096, true, 1024},
        // Measured on NVIDIA's H200 and H100 (src/README.md); the default for other GPUs too.
        {"", 4, 8, 1024, 4, 2, 1024, 4, 8, 4096, true, 1024},
    };
    for (const ComputeTuning& t : table)
        if (matches(t.device, renderer)) return t;
    return table[sizeof table / sizeof table[0] - 1];
}

}  // namespace gpufft
