// Shared fixtures of the GL tests: one headless context per test binary, transforms cached by
// size, seeded random images.
#pragma once

#include "check.h"

#include "fft/compute_fft.h"
#include "fft/fft2d.h"
#include "gl/context.h"

#include <map>
#include <memory>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

namespace test {

struct Size {
    int m, n;  // M columns, N rows
};

inline gpufft::HeadlessContext& context() {
    static gpufft::HeadlessContext ctx;
    static bool checked = (gpufft::require_fragment_chain_support(), true);
    (void)checked;
    return ctx;
}

inline gpufft::ProgramCache& programs() {
    context();
    static gpufft::ProgramCache cache;
    return cache;
}

/// The transform of size s with these options (cached for the binary's lifetime).
inline gpufft::Fft2D* fft(Size s, const gpufft::FftOptions& o = {}) {
    static std::map<std::tuple<int, int, gpufft::FftOptions>, std::unique_ptr<gpufft::Fft2D>> cache;
    auto& slot = cache[{s.m, s.n, o}];
    if (!slot) slot = gpufft::make_fft(programs(), s.m, s.n, o);
    return slot.get();
}

/// The implementations every numerical test runs on: those gl_implementations() lists (the paper's
/// radix-2 chain, the fast chain, which falls back to radix 2 below 4x4, and the compute backend
/// with whole lines in shared memory), and the compute backend forced into its four-step split
/// (lines over 16 points in two dispatches), the path that sizes beyond shared memory take, and
/// into folded lines.
using Chain = gpufft::Implementation;
inline std::vector<Chain> chains() {
    context();  // which chains there are depends on the GL: a test run alone has none before this
    std::vector<Chain> all = gpufft::gl_implementations();
    gpufft::FftOptions four_step;
    four_step.backend = gpufft::Backend::Compute;
    four_step.compute_max_line = 16;
    if (gpufft::ComputeFft::supported()) all.push_back({"four-step", four_step});
    // Folded (FftOptions::compute_fold): lines over 16 points, up to 2 or 4 times that, in channel
    // phases; on sizes up to 64 (above, these chains are the four-step one again).
    for (int f : {2, 4}) {
        gpufft::FftOptions fold = four_step;
        fold.compute_fold = f;
        if (gpufft::ComputeFft::supported()) all.push_back({"fold " + std::to_string(f), fold});
    }
    return all;
}

/// Whether `chain` transforms size s (the radix-2 chain takes powers of two, the fast chain and
/// compute every even fast size, the fast chain from 4 up).
inline bool takes(const Chain& chain, Size s) {
    context();
    const gpufft::LengthModel lengths = gpufft::fft_lengths(chain.options);
    if (chain.options.compute_fold > 1 && (s.m > 64 || s.n > 64)) return false;
    return lengths.allowed(s.m) && lengths.allowed(s.n);
}

/// The quick sizes given, plus 2048^2, 4096^2, 4096 x 1024 and four mixed-radix sizes in the heavier tier.
template <size_t K>
std::vector<Size> sizes(const Size (&quick)[K]) {
    std::vector<Size> out(quick, quick + K);
    if (check::big()) out.insert(out.end(), {{2048, 2048}, {4096, 1024}, {4096, 4096}, {1000, 1080}, {1920, 1080}, {6000, 1152}, {1050, 1080}});
    return out;
}

/// Uniform random RGBA in [-1, 1), each channel its own stream, from a fixed seed.
inline std::vector<float> random_image(Size s, unsigned seed) {
    std::vector<float> out(static_cast<size_t>(s.m) * static_cast<size_t>(s.n) * 4);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (float& v : out) v = u(rng);
    return out;
}

}  // namespace test
