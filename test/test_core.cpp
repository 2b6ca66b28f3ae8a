// The core pipeline against FFTW in double precision (issue: "Core: the fragment-program 2D FFT").
#include "check.h"
#include "common.h"

#include "fft/compute_fft.h"
#include "fft/filter.h"
#include "fft/fragment_fft.h"
#include "fft/layout.h"
#include "fft/plan.h"
#include "fft/sizes.h"
#include "reference/reference.h"
#include "fft/tuning.h"
#include "fft/twiddle.h"
#include "gl/program.h"
#include "image/convolve.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <complex>
#include <map>
#include <random>
#include <set>
#include <thread>

using namespace gpufft;
using test::Size;

namespace {

// Tolerances. Float32 has eps = 2^-24 = 6e-8; a radix-2 FFT's relative RMS error grows like
// eps * sqrt(log2 L) per axis and FFTW's own float transform lands near 1e-7 at 1024^2, so the
// issue's bound of 1e-6 leaves room for ~10 eps of accumulated rounding.
constexpr double kRelRms = 1e-6;
// Max abs error of a spectrum value, read against the largest value: every output is a sum of
// inputs with unit-modulus weights, so rounding stays below a few eps times log2(MN) of the
// largest magnitude; 2e-6 allows 30 eps at 2^20 points.
constexpr double kSpectrumMaxRel = 2e-6;
// Impulse and shift tests: the issue's bound on the largest absolute error.
constexpr double kImpulseMaxAbs = 1e-5;

// Powers of two, then sizes with each of the radices 3, 5 and 7 (issue 15): multiples of 4, and odd
// multiples of 2 (every chain but the paper's radix-2 one: the fast fragment chain's planes of two
// blocks on both axes of 6 x 10, 14 x 18 and 18 x 14, on one of 30 x 12 and 12 x 42; the four-step
// chain splits 18 as 6 x 3, an odd step B, in the rows of 18 x 14 and the columns of 14 x 18, whose
// inverse takes the 3 first); 1000 x 1080 (2^3 5^3 and 2^3 3^3 5) in the heavier tier. The
// four-step chain (lines of 16) takes rows of 12 to 32 as channel pairs: 12 x 20 and 16 x 64
// whole, and rows too long as row pairs; 28 x 24 with columns fused in halves, 20 x 64 and 16 x 64 in quarters, 32 x 12 with whole
// ones, 64 x 16's rows and 128 x 128 and larger with the classic four-step route.
const Size kSizes[] = {{2, 2},   {4, 4},   {8, 2},    {2, 8},   {16, 64}, {64, 16},   {128, 128},  {256, 512},
                       {8, 2048}, {1024, 1024}, {12, 20}, {28, 24}, {6, 10}, {14, 18}, {18, 14}, {30, 12}, {12, 42}, {120, 72}, {32, 12}, {20, 64}};

void expect_close(const std::string& what, Size s, int c, const ErrorStats& e, double rel_rms, double max_abs) {
    EXPECT(e.rel_rms <= rel_rms && e.max_abs <= max_abs,
           what, " ", s.m, "x", s.n, " channel ", c, ": rel RMS ", e.rel_rms, " (bound ", rel_rms, "), max abs ",
           e.max_abs, " (bound ", max_abs, ") at index ", e.worst);
}

// The even part of an RGBA grid, (k(x, y) + k(-x, -y)) / 2, modulo the size: exactly point
// symmetric (a + b == b + a).
std::vector<float> even_part(const std::vector<float>& k, Size s) {
    std::vector<float> e(k.size());
    for (int y = 0; y < s.n; ++y)
        for (int x = 0; x < s.m; ++x)
            for (int c = 0; c < 4; ++c) {
                const size_t at = (static_cast<size_t>(y) * s.m + x) * 4 + c;
                e[at] = (k[at] + k[(static_cast<size_t>((s.n - y) % s.n) * s.m + (s.m - x) % s.m) * 4 + c]) / 2;
            }
    return e;
}

// "4 2048 ", or "nothing": a split as the split tests print it.
std::string joined(const std::vector<int>& list) {
    std::string text;
    for (int n : list) text += std::to_string(n) + " ";
    return text.empty() ? std::string("nothing") : text;
}

}  // namespace

TEST(forward_matches_fftw_r2c) {
    for (const test::Chain& chain : test::chains())
    for (Size s : test::sizes(kSizes)) {
        if (!test::takes(chain, s)) continue;
        auto fft = test::fft(s, chain.options);
        std::vector<float> image = test::random_image(s, 11 + s.m * 3 + s.n);
        std::vector<float> spectrum = fft->forward(image);
        for (int c = 0; c < 4; ++c) {
            auto ref = reference_spectrum(channel_of(image, c), s.m, s.n);
            auto got = unpack_half(spectrum.data(), s.m, s.n, c);
            ErrorStats e = compare(ref, got);
            expect_close(chain.name, s, c, e, kRelRms, kSpectrumMaxRel * e.ref_max);
            if (e.rel_rms > kRelRms) {
                size_t h = static_cast<size_t>(s.m / 2 + 1);
                EXPECT(false, "first mismatch at u=", e.worst % h, " v=", e.worst / h, ": expected ", ref[e.worst],
                       " got ", got[e.worst]);
            }
        }
    }
}

TEST(inverse_of_forward_is_identity) {
    for (const test::Chain& chain : test::chains())
    for (Size s : test::sizes(kSizes)) {
        if (!test::takes(chain, s)) continue;
        auto fft = test::fft(s, chain.options);
        std::vector<float> image = test::random_image(s, 5 + s.m + 7 * s.n);
        std::vector<float> back = fft->inverse(fft->forward(image));
        for (int c = 0; c < 4; ++c) {
            ErrorStats e = compare(channel_of(image, c), channel_of(back, c));
            expect_close(chain.name, s, c, e, kRelRms, 4 * kRelRms * e.ref_max);
        }
    }
}

// `fft`'s inverse alone takes a spectrum made on the CPU (FFTW's r2c of a random image, packed)
// back to the image.
void expect_inverse_matches_fftw(const std::string& what, Fft2D& fft, Size s, unsigned seed) {
    std::vector<float> image = test::random_image(s, seed), packed(image.size());
    for (int c = 0; c < 4; ++c) {
        auto half = reference_spectrum(channel_of(image, c), s.m, s.n);
        pack_half(half.data(), s.m, s.n, c, packed.data());
    }
    std::vector<float> back = fft.inverse(packed);
    for (int c = 0; c < 4; ++c) {
        ErrorStats e = compare(channel_of(image, c), channel_of(back, c));
        expect_close(what, s, c, e, kRelRms, 4 * kRelRms * e.ref_max);
    }
}

TEST(inverse_matches_fftw_c2r) {
    // A spectrum made on the CPU (random, then packed), so the inverse is checked on its own.
    for (const test::Chain& chain : test::chains())
    for (Size s : test::sizes(kSizes)) {
        if (!test::takes(chain, s)) continue;
        expect_inverse_matches_fftw(chain.name, *test::fft(s, chain.options), s, 99 + s.m);
    }
}

// `fft` (of size s, the chain `what`) filters random images as FFTW's circular convolution does.
void expect_filter_matches_fftw(const std::string& what, Fft2D& fft, Size s) {
    std::vector<float> image = test::random_image(s, 1 + s.m), kernel = test::random_image(s, 2 + s.n);
    std::vector<float> out = Filter(fft, kernel).apply(image);
    for (int c = 0; c < 4; ++c) {
        auto ref = reference_circular_convolution(channel_of(image, c), channel_of(kernel, c), s.m, s.n);
        ErrorStats e = compare(ref, channel_of(out, c));
        expect_close(what, s, c, e, kRelRms, 4 * kRelRms * e.ref_max);
    }
}

// A batch of two images (random from `seed` on) filtered by a kernel (random from `kernel_seed`),
// bit for bit the same images filtered alone.
void expect_batch_matches_singles(const std::string& what, Fft2D& fft, Size s, unsigned kernel_seed, unsigned seed) {
    Filter filter(fft, test::random_image(s, kernel_seed));
    std::vector<Texture> in;
    std::vector<RenderTarget> out;
    for (unsigned i = 0; i < 2; ++i) {
        in.emplace_back(s.m, s.n);
        in.back().upload(test::random_image(s, seed + i).data());
        out.emplace_back(s.m, s.n);
    }
    filter.apply({&in[0], &in[1]}, {&out[0], &out[1]});
    const std::vector<float> first = out[0].download(), second = out[1].download();
    filter.apply(in[1], out[0]);
    EXPECT(out[0].download() == second, what, ": a batch's second image differs from the same image filtered alone");
    filter.apply(in[0], out[1]);
    EXPECT(out[1].download() == first, what, ": a batch's first image differs from the same image filtered alone");
}

// `fft`'s forward transform matches FFTW's r2c, and its inverse takes the spectrum back.
void expect_forward_and_back_match_fftw(const std::string& what, Fft2D& fft, Size s) {
    std::vector<float> image = test::random_image(s, 3 + s.m + s.n);
    std::vector<float> spectrum = fft.forward(image), back = fft.inverse(spectrum);
    for (int c = 0; c < 4; ++c) {
        ErrorStats e = compare(reference_spectrum(channel_of(image, c), s.m, s.n), unpack_half(spectrum.data(), s.m, s.n, c));
        expect_close(what + " (forward)", s, c, e, kRelRms, kSpectrumMaxRel * e.ref_max);
        e = compare(channel_of(image, c), channel_of(back, c));
        expect_close(what + " (inverse of forward)", s, c, e, kRelRms, 4 * kRelRms * e.ref_max);
    }
}

TEST(filter_matches_fftw_circular_convolution) {
    for (const test::Chain& chain : test::chains())
    for (Size s : test::sizes(kSizes)) {
        if (!test::takes(chain, s)) continue;
        expect_filter_matches_fftw(chain.name, *test::fft(s, chain.options), s);
    }
}

TEST(unit_impulse_returns_image_and_shifts) {
    const Size sizes[] = {{2, 2}, {8, 4}, {4, 8}, {64, 32}, {256, 256}, {60, 42}};
    const int shifts[][2] = {{0, 0}, {1, 0}, {0, 1}, {3, 5}, {-1, -2}};
    for (const test::Chain& chain : test::chains())
    for (Size s : test::sizes(sizes)) {
        if (!test::takes(chain, s)) continue;
        auto fft = test::fft(s, chain.options);
        std::vector<float> image = test::random_image(s, 7);
        for (auto& d : shifts) {
            int dx = ((d[0] % s.m) + s.m) % s.m, dy = ((d[1] % s.n) + s.n) % s.n;
            std::vector<float> impulse(image.size(), 0.0f);
            for (int c = 0; c < 4; ++c) impulse[4 * (static_cast<size_t>(dy) * s.m + dx) + c] = 1.0f;
            std::vector<float> out = Filter(*fft, impulse).apply(image);
            double worst = 0;
            int wx = 0, wy = 0;
            for (int y = 0; y < s.n; ++y)
                for (int x = 0; x < s.m; ++x)
                    for (int c = 0; c < 4; ++c) {
                        // (f * delta_d)(x) = f(x - d), circularly
                        int sx = (x - dx + s.m) % s.m, sy = (y - dy + s.n) % s.n;
                        double err = std::abs(out[4 * (static_cast<size_t>(y) * s.m + x) + c] -
                                              image[4 * (static_cast<size_t>(sy) * s.m + sx) + c]);
                        if (err > worst) worst = err, wx = x, wy = y;
                    }
            EXPECT(worst <= kImpulseMaxAbs, chain.name, " ", s.m, "x", s.n, " impulse at (", dx, ",", dy, "): max abs error ", worst,
                   " at (", wx, ",", wy, ")");
        }
    }
}

TEST(two_tones_land_on_their_frequencies) {
    // f(x, y) = cos(2 pi (a x / M + b y / N)) has F = 1/2 at (a, b) and (M-a, N-b), 0 elsewhere.
    const Size s{64, 32};
    const int a = 5, b = 3;
    for (const test::Chain& chain : test::chains()) {
    auto fft = test::fft(s, chain.options);
    std::vector<float> image(static_cast<size_t>(s.m) * s.n * 4);
    for (int y = 0; y < s.n; ++y)
        for (int x = 0; x < s.m; ++x)
            for (int c = 0; c < 4; ++c)
                image[4 * (static_cast<size_t>(y) * s.m + x) + c] =
                    static_cast<float>((c + 1) * std::cos(2 * M_PI * (double(a) * x / s.m + double(b) * y / s.n)));
    std::vector<float> spectrum = fft->forward(image);
    for (int c = 0; c < 4; ++c) {
        double worst = 0;
        for (int v = 0; v < s.n; ++v)
            for (int u = 0; u < s.m; ++u) {
                bool peak = (u == a && v == b) || (u == s.m - a && v == s.n - b);
                std::complex<double> expected = peak ? 0.5 * (c + 1) : 0.0;
                worst = std::max(worst, std::abs(packed_value(spectrum.data(), s.m, s.n, u, v, c) - expected));
            }
        EXPECT(worst < 1e-6 * (c + 1), chain.name, " channel ", c, ": largest deviation from the two peaks ", worst);
    }
    }
}

TEST(pack_unpack_round_trip) {
    for (Size s : {Size{2, 2}, Size{2, 8}, Size{8, 2}, Size{16, 8}, Size{32, 64}}) {
        std::vector<float> packed = test::random_image(s, 3);
        // packed -> complex -> packed is exact: every texel is one value of the spectrum.
        std::vector<float> again(packed.size(), NAN);
        for (int c = 0; c < 4; ++c) {
            auto half = unpack_half(packed.data(), s.m, s.n, c);
            pack_half(half.data(), s.m, s.n, c, again.data());
        }
        size_t differ = 0;
        for (size_t i = 0; i < packed.size(); ++i) differ += packed[i] != again[i];
        EXPECT(differ == 0, s.m, "x", s.n, ": ", differ, " texels changed in pack(unpack())");
        // complex (of a real image) -> packed -> complex returns it to float rounding, and every
        // unpacked value, both halves, has the Hermitian symmetry of a real image's spectrum.
        std::vector<double> image = channel_of(test::random_image(s, 4), 0);
        auto half = reference_spectrum(image, s.m, s.n);
        std::vector<float> p(packed.size());
        pack_half(half.data(), s.m, s.n, 0, p.data());
        ErrorStats e = compare(half, unpack_half(p.data(), s.m, s.n, 0));
        EXPECT(e.rel_rms < 1e-7, s.m, "x", s.n, ": unpack(pack()) rel RMS ", e.rel_rms);
        for (int v = 0; v < s.n; ++v)
            for (int u = 0; u < s.m; ++u) {
                auto f = packed_value(p.data(), s.m, s.n, u, v, 0);
                auto g = packed_value(p.data(), s.m, s.n, (s.m - u) % s.m, (s.n - v) % s.n, 0);
                EXPECT(f == std::conj(g), "F(", u, ",", v, ") is not conj F(M-u, N-v)");
            }
    }
}

/// Every pass of `plan` writes every texel of its target exactly once.
void check_coverage(const Plan& plan, const char* what) {
    const int m = plan.width, n = plan.height;
    for (const Pass& pass : plan.passes) {
        int w = pass.target == Surface::RowPlanes ? m / 4 : pass.target == Surface::ColumnPlanes ? n / 4 : m;
        int h = pass.target == Surface::RowPlanes ? n / 2 : pass.target == Surface::ColumnPlanes ? m / 2 : n;
        std::vector<int> hits(static_cast<size_t>(w) * h, 0);
        size_t outside = 0;
        for (const Draw& d : pass.draws)
            for (int y = d.region.y0; y < d.region.y1; ++y)
                for (int x = d.region.x0; x < d.region.x1; ++x) {
                    if (x >= w || y >= h) ++outside;
                    else ++hits[static_cast<size_t>(y) * w + x];
                }
        size_t bad = outside;
        for (int c : hits) bad += c != 1;
        EXPECT(bad == 0, what, " ", m, "x", n, " ", pass.label, ": ", bad, " texels not written exactly once");
    }
}

TEST(plans_write_every_texel_once_per_pass) {
    for (Size s : {Size{2, 2}, Size{2, 16}, Size{16, 2}, Size{8, 32}, Size{64, 64}}) {
        Plan plan = filter_plan(s.m, s.n);
        check_coverage(plan, "radix-2 filter");
        size_t expected = 2 * (log2_exact(s.m) + log2_exact(s.n)) + 5;
        EXPECT(plan.passes.size() == expected, s.m, "x", s.n, ": ", plan.passes.size(), " passes, expected ", expected);
    }
    for (Size s : {Size{4, 4}, Size{8, 4}, Size{4, 32}, Size{32, 8}, Size{64, 64}, Size{128, 1024}}) {
        check_coverage(fast_forward_plan(s.m, s.n), "fast forward");
        check_coverage(fast_inverse_plan(s.m, s.n), "fast inverse");
        check_coverage(fast_filter_plan(s.m, s.n), "fast filter");
    }
    // The pass counts the fast chain exists for: radix 16 (4 or 8 last), folding untangle, multiply
    // and tangle into neighbouring passes.
    const struct {
        int size;
        size_t passes;
    } fast[] = {{1024, 11}, {4096, 13}, {2048, 12}, {512, 11}, {256, 9}};
    for (auto f : fast) {
        size_t got = fast_filter_plan(f.size, f.size).passes.size();
        EXPECT(got == f.passes, "fast filter of ", f.size, "^2: ", got, " passes, expected ", f.passes);
    }
    EXPECT((radices(1024) == std::vector<int>{16, 16, 4}) && (radices(32) == std::vector<int>{8, 4}) &&
               (radices(4) == std::vector<int>{4}) && (radices(4096) == std::vector<int>{16, 16, 16}) &&
               (radices(6) == std::vector<int>{6}) && (radices(1050) == std::vector<int>{6, 7, 5, 5}) &&
               (radices(2 * 27) == std::vector<int>{6, 3, 3}) && (radices(2100) == std::vector<int>{28, 5, 5, 3}),
           "radix factorisation");
    // An axis of 2 mod 4 has planes of two blocks: four render targets, each fragment two outputs.
    EXPECT(plane_blocks(1080) == 4 && plane_blocks(1050) == 2 && plane_blocks(6) == 2, "plane blocks");
    const Plan mixed = fast_filter_plan(1050, 1080);
    for (const Pass& pass : mixed.passes)
        for (const Draw& d : pass.draws) {
            if (!d.variant.fast) continue;
            const bool rows = d.variant.fast->rows, planes = d.variant.fast->store != FastVariant::Store::Image;
            const Region want = rows ? Region{0, 0, 525, 540} : Region{0, 0, 270, 525};
            EXPECT(!planes || (d.region.x1 == want.x1 && (d.region.y1 == want.y1 || d.region.y1 == 1)), pass.label, ": region ",
                   d.region.x1, "x", d.region.y1);
            EXPECT(cost_of(d.variant).writes == (!planes ? 1 : rows ? 4 : 8), pass.label, ": ", cost_of(d.variant).writes, " targets");
        }
}

TEST(the_fast_chain_runs_where_it_can) {
    test::context();
    FftOptions fragment;  // auto takes the compute backend on a GPU
    fragment.backend = Backend::Fragment;
    for (Size s : {Size{4, 4}, Size{64, 16}, Size{1024, 1024}, Size{6, 10}, Size{1050, 1080}}) {
        auto* fft = dynamic_cast<FragmentFft*>(test::fft(s, fragment));
        EXPECT(fft && fft->fast(), s.m, "x", s.n, " did not get the fast chain");
    }
    auto* small = dynamic_cast<FragmentFft*>(test::fft({2, 8}, fragment));
    EXPECT(small && !small->fast(), "2x8 should fall back to the radix-2 chain");
    FftOptions paper;
    paper.radix = 2;
    auto* radix2 = dynamic_cast<FragmentFft*>(test::fft({64, 64}, paper));
    EXPECT(radix2 && !radix2->fast() && radix2->filter_plan()->passes.size() == 29, "--radix 2 is not the paper's chain");
}

// The compute backend's transform of size `s` under `o`, or nullptr, a failure naming `what`.
ComputeFft* compute_fft(Size s, const FftOptions& o, const std::string& what) {
    auto* fft = dynamic_cast<ComputeFft*>(test::fft(s, o));
    EXPECT(fft != nullptr, what, ": not the compute backend");
    return fft;
}

// The two slowest tests to compile for (each about 100-200 s with Mesa's shader cache empty, on
// the 2-core machine) come first among the compute backend's, so that with tests side by side
// (check.cpp) they are not the last still running.

// Composite radices whose factors are coprime (6, 10, 12, 14, 15; dft()'s split a x b with its
// twiddles between the small DFTs), each first, in the middle and last, on rows (row pairs) and
// columns (the untangled loads, the filter's inverse from registers), whole lines, the four-step
// route (the filter's step B) and folded lines: forward and back, filter and inverse alone against
// FFTW. (Good and Thomas's prime-factor order for them, without those twiddles, was built, tested
// here and measured slower on the H200: src/README.md, "Row tails".)
TEST(coprime_composite_radices_match_fftw) {
    test::context();
    if (!ComputeFft::supported()) return;
    struct Case {
        Size size;
        const char* plan;
        int max_line, row_split, column_split, fold;
        std::vector<const char*> seen;  // in the filter's dispatches
    };
    for (const Case& c : {Case{{120, 90}, "120:12x10,90:6x15", 0, 0, 0, 0, {"(radices 12 x 10)", "(radices 6 x 15)"}},
                         Case{{84, 70}, "84:14x6,70:10x7", 0, 0, 0, 0, {"(radices 14 x 6)", "(radices 10 x 7)"}},
                         Case{{120, 60}, "120:2x6x10,60:6x2x5", 0, 0, 0, 0, {"(radices 2 x 6 x 10)", "(radices 6 x 2 x 5)"}},
                         Case{{240, 180}, "60:6x10,30:6x5", 64, 4, 6, 0, {"(radices 6 x 10)", "(radices 6 x 5)"}},
                         Case{{240, 120}, "120:12x10,60:6x10", 128, 0, 0, 2, {"(radices 12 x 10), ", "folded"}}}) {
        FftOptions o;
        o.backend = Backend::Compute;
        o.compute_plan = c.plan;
        o.compute_max_line = c.max_line;
        o.compute_row_split = c.row_split;
        o.compute_column_split = c.column_split;
        o.compute_fold = c.fold;
        const std::string at = std::string("coprime composites, plan ") + c.plan;
        auto* fft = compute_fft(c.size, o, at);
        if (!fft) continue;
        const std::vector<std::string> dispatches = fft->describe_dispatches();
        for (const char* want : c.seen)
            EXPECT(std::any_of(dispatches.begin(), dispatches.end(), [&](const std::string& d) { return d.find(want) != std::string::npos; }),
                   at, ": no dispatch with \"", want, "\"");
        const Size s = c.size;
        expect_forward_and_back_match_fftw(at, *fft, s);
        expect_filter_matches_fftw(at, *fft, s);
        expect_inverse_matches_fftw(at + " (inverse alone)", *fft, s, 11 + s.m);
    }
}

// Filters as the transposed problem (FftOptions::compute_transpose, ComputeFft::transposed()): a
// transform of N x M fetches the image's columns as its rows and stores its rows' results (H) and
// the output transposed, so that every dispatch stores down its target's columns. The rule, sizes
// with each route (whole rows, rows as channel pairs, four-step rows and columns, a row tail, mixed
// lengths, tall and wide), a batch bit for bit against single filters, the forward (not
// transposed) unchanged, and the options that keep a filter as it is. A build storing the output without the swap fails every filter
// here (relative error 1.3 at 48x40).
TEST(transposed_filters_match_fftw) {
    // The GPU row's rule (longest whole line 4096, above 4096): columns of 4100-8192, multiples of 4.
    for (auto [height, yes] : {std::pair{8192, true}, {6000, true}, {4100, true}, {4096, false}, {16384, false}, {6002, false}, {1080, false}})
        EXPECT(ComputeFft::transposes_columns(height, 4096, 4096) == yes, "columns of ", height, ": transposed ", !yes);
    EXPECT(!ComputeFft::transposes_columns(8192, 4096, 0), "the software row transposes nothing");
    test::context();
    if (!ComputeFft::supported()) return;
    const struct {
        Size size;
        int max_line, tail;
    } cases[] = {{{64, 32}, 0, 0}, {{48, 40}, 0, 0}, {{40, 48}, 0, 0}, {{30, 28}, 0, 0}, {{20, 24}, 16, 0},
                 {{12, 60}, 16, 0}, {{64, 256}, 16, 0}, {{24, 90}, 0, 5}};
    for (auto [size, max_line, tail] : cases) {
        FftOptions o;
        o.backend = Backend::Compute;
        o.compute_transpose = 1;
        o.compute_max_line = max_line;
        o.compute_row_tail = tail;
        const Size s = size;
        const std::string at = "transposed " + std::to_string(s.m) + "x" + std::to_string(s.n) + " max-line " + std::to_string(max_line);
        auto* fft = compute_fft(s, o, at);
        if (!fft) continue;
        EXPECT(fft->transposed() && fft->kernel_size() == (std::array<int, 2>{s.n, s.m}) && fft->reorders_kernel(), at, ": not transposed");
        int tails = 0;
        for (const std::string& d : fft->describe_dispatches()) {
            EXPECT(d.rfind("transposed ", 0) == 0, at, ": ", d);
            tails += d.find("(tail)") != std::string::npos;
        }
        EXPECT(tails == (tail > 0 ? 2 : 0), at, ": ", tails, " tail dispatches");
        expect_filter_matches_fftw(at, *fft, s);
        expect_forward_and_back_match_fftw(at, *fft, s);
        expect_batch_matches_singles(at, *fft, s, 7 + s.m, 50);
    }
    // Off, by default on this GL (the software row), and where lines fold: not transposed.
    for (int setting : {-1, 0, 2}) {
        FftOptions o;
        o.backend = Backend::Compute;
        o.compute_transpose = setting == 2 ? 1 : setting;
        if (setting == 2) o.compute_max_line = 16, o.compute_fold = 2;
        auto* fft = compute_fft({32, 24}, o, "transpose " + std::to_string(setting));
        EXPECT(fft && !fft->transposed() && fft->kernel_size() == (std::array<int, 2>{32, 24}), "setting ", setting, ": transposed");
    }
}

// The numerical tests above cover the compute backend's two twiddle paths only if its dispatches
// take them: whole rows from the storage buffer at every size, whole columns over 1024 (8 x 2048)
// in their forward stages, the four-step steps (columns of 2048 split by the four-step chain)
// from the texture.
TEST(compute_twiddles_take_both_paths) {
    for (const test::Chain& chain : test::chains()) {
        if (chain.options.backend != Backend::Compute) continue;
        auto* fft = compute_fft({8, 2048}, chain.options, chain.name);
        if (!fft) continue;
        for (const std::string& d : fft->describe_dispatches()) {
            const std::string label = d.substr(0, d.find(':'));
            const bool step = label.find(" A") != std::string::npos || label.find(" B") != std::string::npos;
            const bool buffer = d.find("storage buffer") != std::string::npos;
            EXPECT(buffer == !step, chain.name, ": ", d);
        }
    }
}

// The four-step steps run their sub-lines with two row or column pairs side by side (fft_line.comp's
// NEIGHBOUR_PAIRS > 1: the rows' steps A and B; the columns' A, B and the classic filter's A
// inverse), the columns' pair 0 one line of neighbouring sub-lines (NEIGHBOUR_PAIRS 1): the
// numerical tests above cover both lane layouts only if the four-step chain's dispatches take them
// (64 x 256: columns of 16 x 16, rows of 8 x 8; 120 x 72: step B's 12 sub-lines in blocks of 8,
// the last one partial).
TEST(four_step_steps_take_both_lane_layouts) {
    for (const test::Chain& chain : test::chains()) {
        if (chain.name != "four-step") continue;
        for (Size size : {Size{64, 256}, Size{120, 72}}) {
            auto* fft = compute_fft(size, chain.options, chain.name);
            if (!fft) continue;
            int row_steps = 0, a_steps = 0, b_steps = 0, single = 0;
            for (const std::string& d : fft->describe_dispatches()) {
                const std::string label = d.substr(0, d.find(':'));
                const bool a = label.find(" A") != std::string::npos, b = label.find(" B") != std::string::npos;
                const bool paired = d.find(" pairs side by side") != std::string::npos;   // row or column pairs
                if (!a && !b) continue;
                if (label.find("(pair 0)") != std::string::npos) {
                    EXPECT(!paired, chain.name, ": ", d);
                    ++single;
                    continue;
                }
                const bool rows = label.rfind("rows", 0) == 0;
                row_steps += rows;
                a_steps += !rows && a;
                b_steps += !rows && b;
                EXPECT(paired, chain.name, ": ", d);
            }
            EXPECT(row_steps >= 2 && a_steps >= 1 && b_steps >= 1 && single >= 1, chain.name, ": ", row_steps, " row steps, ", a_steps,
                   " column A steps, ", b_steps, " B steps, ", single, " steps of one line of sub-lines");
        }
    }
}

// Rows run as channel pairs where a row pair would fill a workgroup alone or not fit one
// (ComputeFft::channel_line): whole, one dispatch a pass; longer rows take the four-step route.
// (Rows fused as halves, whose channel pairs would fit, run where the columns fold: the fold 4
// chain at 28 x 24.)
TEST(rows_take_channel_pairs_where_a_row_pair_fills_a_workgroup) {
    // The rule at the GPU's 4096 elements a workgroup: rows over 2048 (a row pair alone in its
    // workgroup) up to 8192 (halves of 4096), multiples of 4.
    const struct {
        int length;
        bool channels;
    } rule[] = {{1024, false}, {2048, false}, {2052, true}, {2430, false}, {3000, true}, {3840, true},
                {4096, true},  {6000, true},  {8192, true}, {8196, false}, {16384, false}};
    for (auto r : rule)
        EXPECT(ComputeFft::channel_line(r.length, 4096) == r.channels, "rows of ", r.length, ": channel pairs ",
               ComputeFft::channel_line(r.length, 4096), ", expected ", r.channels);
    // The four-step chain (lines of 16): rows of 8 as row pairs; 12 and 16 whole as channel pairs,
    // and 28 and 20, too long as row pairs; 64 in two dispatches a pass (steps A and B: rows fuse
    // step A into step B's loads in halves only).
    const struct {
        Size size;
        bool channels;
        int row_dispatches;
    } chained[] = {{{8, 2048}, false, 2}, {{12, 20}, true, 2}, {{16, 64}, true, 2},
                   {{28, 24}, true, 2},   {{20, 64}, true, 2}, {{64, 256}, false, 4}};
    for (const test::Chain& chain : test::chains()) {
        if (chain.name != "four-step") continue;
        for (auto c : chained) {
            auto* fft = compute_fft(c.size, chain.options, chain.name);
            if (!fft) continue;
            int rows = 0, channel_rows = 0;
            for (const std::string& d : fft->describe_dispatches()) {
                if (d.rfind("rows", 0) != 0) continue;
                ++rows;
                channel_rows += d.find("rows as channel pairs") != std::string::npos;
            }
            EXPECT(fft->channel_rows() == c.channels && rows == c.row_dispatches && channel_rows == (c.channels ? rows : 0), chain.name,
                   " at ", c.size.m, "x", c.size.n, ": ", channel_rows, " of ", rows, " row dispatches as channel pairs");
        }
    }
}

// Lines split in halves that fit take step A in step B's loads (fft_line.comp's FUSED_A); a
// filter's columns then end with the two-point step A inverse (FILTER_TAIL, column pairs side by
// side). Columns whose quarters fit take the classic route in quarters (a four-point step A of
// its own, column pairs side by side), or with --compute-fuse 4 step A in step B's loads (a
// radix-4 step A) and the four-point tail. Longer lines take the classic route of two dispatches
// a line, and a filter's columns there three (forward A; B forward, multiply and inverse; A
// inverse). Rows fuse halves only. The numerical tests above cover these routes only if the
// four-step chain (lines of 16) takes them: 28 x 24's columns in halves, 20 x 64's in quarters,
// 64 x 256's rows (64: not in quarters) and columns classic; the fused quarters are covered here.
TEST(four_step_takes_fused_and_classic_routes) {
    struct Case {
        Size size;
        int fuse;                            // FftOptions::compute_fuse
        int halves, quarters, column_steps;  // fused dispatches of each kind; column dispatches (not pair 0)
        int a_pairs;                         // classic: column pairs side by side in the A steps; 0: fused (a tail of 4)
    };
    for (const test::Chain& chain : test::chains()) {
        if (chain.name != "four-step") continue;
        for (const Case& c : {Case{{28, 24}, 0, 2, 0, 2, 0}, Case{{20, 64}, 0, 0, 0, 3, 4}, Case{{20, 64}, 4, 0, 2, 2, 0},
                              Case{{64, 256}, 0, 0, 0, 3, 2}}) {
            FftOptions options = chain.options;
            options.compute_fuse = c.fuse;
            // The filter's last column step a dispatch of its own, on every device (the GPU's row
            // moves it into the inverse rows' loads: column_tail_in_the_inverse_rows_loads).
            options.compute_fuse_tail = -1;
            const std::string at = chain.name + " (fuse " + std::to_string(c.fuse) + ") at " + std::to_string(c.size.m) + "x" + std::to_string(c.size.n);
            auto* fft = compute_fft(c.size, options, at);
            if (!fft) continue;
            int halves = 0, quarters = 0, a_steps = 0, tails = 0, column_steps = 0, paired_a = 0;
            const std::string pairs = std::to_string(c.a_pairs ? c.a_pairs : 4) + " column pairs side by side";
            for (const std::string& d : fft->describe_dispatches()) {
                const std::string label = d.substr(0, d.find(':'));
                const bool column = label.rfind("columns", 0) == 0, pair0 = label.find("(pair 0)") != std::string::npos;
                halves += d.find("step A (2 points) in its loads") != std::string::npos;
                quarters += d.find("step A (4 points) in its loads") != std::string::npos;
                a_steps += column && label.find(" A") != std::string::npos && label.find(" A'") == std::string::npos;
                if (column && !pair0) {
                    ++column_steps;
                    if (label.find(" A'") != std::string::npos && !c.a_pairs) tails += d.find(pairs) != std::string::npos;
                    // The classic route's step A and A inverse: column pairs side by side (tuning).
                    if (label.find(" A") != std::string::npos && c.a_pairs) paired_a += d.find(pairs) != std::string::npos;
                }
            }
            EXPECT(halves == c.halves && quarters == c.quarters && column_steps == c.column_steps &&
                       (c.a_pairs ? a_steps == 2 && paired_a == 2 : a_steps == 0 && tails == 1),
                   at, ": ", halves, " dispatches with halves fused, ", quarters, " with quarters, ", column_steps, " column dispatches, ",
                   a_steps, " column A steps (pair 0 and the rest), ", tails, " tails with column pairs side by side, ", paired_a,
                   " A steps with column pairs side by side");
            if (c.fuse) {  // a route the chains' numerical tests do not take
                expect_filter_matches_fftw(at, *fft, c.size);
                expect_forward_and_back_match_fftw(at, *fft, c.size);
            }
        }
    }
}

// Columns whose quarters fit a workgroup take them only where pair 0's step B can hold its mirror
// sub-lines (k1 and 4 - k1) as two lines of one workgroup: 16384 as 4 x 4096 (512 threads a line),
// not 12000 as 4 x 3000 (600: its mirror read an empty line, rel RMS 0.4, until split() checked).
// 16384's step B, one 4096-point sub-line a workgroup, goes along a band of rows (BANDS) and
// multiplies by the kernel's spectrum in step B's order (Filter::kernel(), KERNEL_STEP_ORDER);
// with --compute-fuse 4 step A rides in step B's loads instead. On a device whose row limits step
// B's sub-lines (the GPU's: 2048) both split by column_split() instead (8 x 2048, 6 x 2000), in
// bands either way. Each filters as FFTW does, at the compute chain's own lines (not the four-step
// chain's 16).
TEST(long_columns_take_quarters_where_pair0_mirror_fits) {
    int step_b_longest = -1;  // the device's row's, once a context is current
    for (const test::Chain& chain : test::chains()) {
        if (chain.name != "compute") continue;
        for (Size s : {Size{4, 16384}, Size{4, 12000}})
            for (int fuse : {0, 4}) {
                if (s.n == 12000 && fuse && !step_b_longest) continue;
                FftOptions options = chain.options;
                options.compute_fuse = fuse;
                const std::string at = chain.name + " (fuse " + std::to_string(fuse) + ")";
                auto* fft = compute_fft(s, options, at);
                if (!fft) continue;
                step_b_longest = compute_tuning(software_renderer()).column_step_b_longest;
                const bool quarters = s.n == 16384 && !step_b_longest;
                const bool fused_quarters = quarters && fuse, in_bands = step_b_longest || (quarters && !fuse);
                // Step B's sub-lines, main dispatch and pair 0's: 4096 points in quarters, else column_split()'s.
                const int sub_line = step_b_longest ? ComputeFft::column_split(s.n, 4096, step_b_longest)[1] : quarters ? 4096 : 0;
                int fused = 0, bands = 0, step_b = 0;
                for (const std::string& d : fft->describe_dispatches()) {
                    fused += d.find("step A (4 points) in its loads") != std::string::npos;
                    bands += d.find("column pairs of a band first") != std::string::npos;
                    step_b += sub_line && d.rfind("columns filter B", 0) == 0 && d.find("lines of " + std::to_string(sub_line) + " ") != std::string::npos;
                }
                EXPECT(fused == (fused_quarters ? 2 : 0) && bands == (in_bands ? 1 : 0) && step_b == (sub_line ? 2 : 0) &&
                           fft->reorders_kernel() == in_bands,
                       at, " at ", s.m, "x", s.n, ": ", fused, " dispatches with quarters fused, ", bands, " in bands, ", step_b,
                       " step B dispatches of ", sub_line, "-point sub-lines; kernel reordered: ", fft->reorders_kernel());
                expect_filter_matches_fftw(at, *fft, s);
            }
    }
}

// A filter's classic column step B of one sub-line a column pair goes along the column pairs of a
// band of rows, and multiplies by the kernel's spectrum with its rows in step B's order: forced
// here with one line a workgroup (the GPU takes it at 16384's 4096-point sub-lines) at 64 x 256 in
// quarters (L1 = 4) and 40 x 512 as 32 x 16 (the classic split), and with two lines a workgroup,
// two column pairs side by side, at 24 x 128 split as 8 x 16 (--compute-split 8); all against
// FFTW, pair 0's multiply (its mirror rows N - v) included.
TEST(step_b_in_bands_multiplies_the_reordered_kernel) {
    struct Case {
        Size size;
        int lines, split;
        const char* sides;  // in the step B dispatch's description
    };
    for (const test::Chain& chain : test::chains()) {
        if (chain.name != "four-step") continue;
        for (const Case& c : {Case{{64, 256}, 1, 0, ""}, Case{{40, 512}, 1, 0, ""}, Case{{24, 128}, 2, 8, "2 column pairs side by side"}}) {
            FftOptions options = chain.options;
            options.compute_lines = c.lines;
            options.compute_max_line = c.split ? 16 : 64;
            options.compute_row_split = options.compute_column_split = c.split;
            const std::string at = chain.name + " (" + std::to_string(c.lines) + " lines a workgroup, split " + std::to_string(c.split) + ")";
            auto* fft = compute_fft(c.size, options, at);
            if (!fft) continue;
            int bands = 0;
            for (const std::string& d : fft->describe_dispatches())
                bands += d.find("column pairs of a band first") != std::string::npos && d.find(c.sides) != std::string::npos &&
                         (!c.split || d.find("lines of 16") != std::string::npos);
            EXPECT(bands == 1 && fft->reorders_kernel(), at, " at ", c.size.m, "x", c.size.n, ": ", bands,
                   " dispatches in bands; kernel reordered: ", fft->reorders_kernel());
            expect_filter_matches_fftw(at, *fft, c.size);
            Filter filter(*fft, test::random_image(c.size, 7));
            EXPECT(filter.kernel().id() != filter.spectrum().texture().id(), "the reordered kernel is a texture of its own");
        }
        // With the chain's 16 sub-lines a workgroup, step B neither goes in bands nor reorders.
        FftOptions options = chain.options;
        options.compute_max_line = 64;
        EXPECT(!compute_fft({64, 256}, options, chain.name)->reorders_kernel(), "64x256 with 16 lines a workgroup: no bands");
    }
}

// --compute-split L1 splits lines longer than --compute-max-line as L1 x L2 where L2 fits (both
// even), on both axes or on one (rows:L1, columns:L1); elsewhere the automatic split: 64 x 64
// with lines of 16 as 8 x 8 both ways; 40 x 96, whose 40 (8 x 5) takes 10 x 4 and 96 takes 8 x 12;
// 64 x 64 with rows:4,columns:8 as 4 x 16 and 8 x 8 (the columns' own split: quarters, 4 x 16).
// Each matches FFTW forward, back and filtering.
TEST(compute_split_takes_the_asked_split) {
    struct Case {
        Size size;
        int rows, columns;  // the option's L1 on each axis
        const char *rows_a, *rows_b, *columns_a, *columns_b;
    };
    for (const test::Chain& chain : test::chains()) {
        if (chain.name != "four-step") continue;
        for (const Case& c : {Case{{64, 64}, 8, 8, "8", "8", "8", "8"}, Case{{40, 96}, 8, 8, "10", "4", "8", "12"},
                              Case{{64, 64}, 4, 8, "4", "16", "8", "8"}}) {
            FftOptions options = chain.options;
            options.compute_row_split = c.rows;
            options.compute_column_split = c.columns;
            const std::string at = chain.name + " (split rows " + std::to_string(c.rows) + ", columns " + std::to_string(c.columns) + ")";
            auto* fft = compute_fft(c.size, options, at);
            if (!fft) continue;
            std::map<std::string, std::string> lengths;  // dispatch label: its lines' length
            for (const std::string& d : fft->describe_dispatches()) {
                const size_t from = d.find("lines of ");
                lengths[d.substr(0, d.find(':'))] = d.substr(from + 9, d.find(' ', from + 9) - from - 9);
            }
            EXPECT(lengths["rows forward A"] == c.rows_a && lengths["rows forward B"] == c.rows_b && lengths["columns filter A"] == c.columns_a &&
                       lengths["columns filter B"] == c.columns_b,
                   at, " at ", c.size.m, "x", c.size.n, ": rows ", lengths["rows forward A"], " x ", lengths["rows forward B"], ", columns ",
                   lengths["columns filter A"], " x ", lengths["columns filter B"]);
            expect_filter_matches_fftw(at, *fft, c.size);
            expect_forward_and_back_match_fftw(at, *fft, c.size);
        }
    }
}

// Lengths of 2 x odd past a workgroup's line split as an even step A (at least 6: never a fused
// length) and an odd step B, from the square root up where that fits, else below it; nothing else
// changes: lengths with an even split keep it. The numerical tests take the route in 14 x 18's
// columns and 18 x 14's rows (18 as 6 x 3).
TEST(lines_of_two_times_odd_take_an_odd_step_b) {
    struct Case {
        int length, most;
        std::vector<int> parts;
    };
    for (const Case& c : {Case{4410, 4096, {70, 63}}, Case{4802, 4096, {98, 49}}, Case{13122, 4096, {162, 81}},
                          Case{6250, 4096, {250, 25}}, Case{18, 16, {6, 3}}, Case{54, 16, {6, 9}}, Case{14, 8, {}},
                          Case{250, 16, {}}, Case{4480, 4096, {2, 2240}}, Case{72, 16, {12, 6}}}) {
        const std::vector<int> parts = ComputeFft::split_line(c.length, c.most, false);
        EXPECT(parts == c.parts, c.length, " (lines up to ", c.most, "): split as ", joined(parts));
    }
    test::context();
    const LengthModel lengths = ComputeFft::lengths(FftOptions{});
    EXPECT(lengths.allowed(4410) && lengths.allowed(13122) && lengths.allowed(4374),
           "the compute backend's lengths take 2 x odd past 4096: 4410 ", lengths.allowed(4410), ", 13122 ", lengths.allowed(13122));
}

// The GPU row's long columns: step B's sub-lines of at most 2048 points, the longest with an even
// step A, but the halves at the lengths it lists (H200, 2026-11-25 and 26: tuning.cpp); the
// software row keeps split_line()'s halves and quarters.
TEST(gpu_row_splits_long_columns_at_2048) {
    const ComputeTuning &gpu = compute_tuning(false), &software = compute_tuning(true);
    EXPECT(gpu.column_step_b_longest == 2048 && software.column_step_b_longest == 0 && std::string(gpu.column_halves) == "4800,6000" &&
               std::string(software.column_halves).empty(),
           "step B's longest: GPU ", gpu.column_step_b_longest, ", software ", software.column_step_b_longest, "; halves: GPU ",
           gpu.column_halves, ", software ", software.column_halves);
    const std::vector<int> gpu_halves = ComputeFft::column_halves(gpu, false);
    struct Case {
        int length;
        std::vector<int> halves;
        std::vector<int> parts;
    };
    for (const Case& c : {Case{4096, {}, {4096}}, Case{6000, {}, {4, 1500}}, Case{8192, {}, {4, 2048}}, Case{12000, {}, {6, 2000}},
                          Case{12288, {}, {6, 2048}}, Case{16384, {}, {8, 2048}}, Case{10000, {}, {8, 1250}}, Case{8194, {}, {}},
                          Case{6000, gpu_halves, {2, 3000}}, Case{4800, gpu_halves, {2, 2400}},
                          Case{4320, gpu_halves, {4, 1080}}, Case{8192, gpu_halves, {4, 2048}},
                          Case{4096, {4096}, {4096}}, Case{12000, {12000}, {6, 2000}}, Case{8194, {8194}, {}},
                          Case{6000, {600, 60000, 6000}, {2, 3000}}}) {
        const std::vector<int> parts = ComputeFft::column_split(c.length, 4096, 2048, c.halves);
        EXPECT(parts == c.parts, c.length, " (halves ", joined(c.halves), "): split as ", joined(parts));
    }
    // Lengths whose halves won only with the filter's tail in the inverse rows' loads take them
    // only so; the lengths that won alone take them either way.
    EXPECT(gpu.fuse_column_tail && !software.fuse_column_tail && std::string(gpu.column_halves_fused_tail) == "4320,5000,5120,5760" &&
               std::string(software.column_halves_fused_tail).empty(),
           "tail in the rows: GPU ", gpu.fuse_column_tail, " (halves then ", gpu.column_halves_fused_tail, "), software ",
           software.fuse_column_tail);
    for (int length : {4320, 5000, 5120, 5760, 4800, 6000, 4608, 8192})
        for (bool tail : {false, true}) {
            const bool listed = length == 4800 || length == 6000 || (tail && length != 4608 && length != 8192);
            const std::vector<int> parts = ComputeFft::column_split(length, 4096, 2048, ComputeFft::column_halves(gpu, tail));
            EXPECT((parts == std::vector<int>{2, length / 2}) == listed, length, tail ? " with" : " without",
                   " the tail in the rows: step A of ", parts.empty() ? 0 : parts[0]);
        }
    EXPECT(ComputeFft::column_halves(software, true).empty() && gpu_halves == (std::vector<int>{4800, 6000}) &&
               ComputeFft::column_halves(gpu, true) == (std::vector<int>{4800, 6000, 4320, 5000, 5120, 5760}),
           "halves: software ", joined(ComputeFft::column_halves(software, true)), ", GPU without the tail ", joined(gpu_halves),
           ", with it ", joined(ComputeFft::column_halves(gpu, true)));
}

// The columns' six- and eight-point steps A (columns of 8194 to 16384 on the GPU's row: 8 x 2048,
// 6 x 2000) run 32 lines a workgroup there, one warp of four neighbouring column pairs of eight
// sub-lines (16384^2 0.954x against 128 on the H200, src/README.md "Per-workgroup time lines");
// the software row keeps 128. That workgroup's program, made here with the lines as an option (its
// lines two threads each on this row), filters as FFTW does, the last block of pairs partial (9
// column pairs in blocks of 4).
TEST(eight_point_steps_a_in_one_warp_match_fftw) {
    const ComputeTuning &gpu = compute_tuning(false), &software = compute_tuning(true);
    EXPECT(gpu.long_tiny_step_lines == 32 && software.long_tiny_step_lines == 128 && gpu.column_tail_pairs == 4,
           "six- and eight-point steps A: GPU ", gpu.long_tiny_step_lines, " lines, software ", software.long_tiny_step_lines,
           "; pairs side by side ", gpu.column_tail_pairs);
    for (const test::Chain& chain : test::chains()) {
        if (chain.name != "four-step") continue;
        for (int split : {8, 6}) {
            const Size size{20, 8 * split};
            FftOptions options = chain.options;
            options.compute_column_split = split;
            options.compute_lines = 32;
            const std::string at = "steps A of " + std::to_string(split) + " points at " + std::to_string(size.m) + "x" + std::to_string(size.n);
            auto* fft = compute_fft(size, options, at);
            if (!fft) continue;
            int warps = 0;
            for (const std::string& d : fft->describe_dispatches()) {
                const bool step_a = d.rfind("columns", 0) == 0 && d.find(" A") != std::string::npos && d.find("(pair 0)") == std::string::npos;
                warps += step_a && d.find("workgroups of 32 x ") != std::string::npos &&
                         d.find(", lines of " + std::to_string(split) + " (") != std::string::npos &&
                         d.find("4 column pairs side by side") != std::string::npos;
            }
            EXPECT(warps == 2, at, ": ", warps, " column steps A (forward and inverse) as 32 lines of 4 column pairs");
            expect_filter_matches_fftw(at, *fft, size);
            expect_forward_and_back_match_fftw(at, *fft, size);
        }
    }
}

TEST(row_pairs_between_dispatches_neighbour_where_rows_split) {
    int neighbouring = 0, apart = 0;
    for (const test::Chain& chain : test::chains()) {
        if (chain.options.backend != Backend::Compute) continue;
        for (Size size : {Size{64, 40}, Size{8, 64}}) {
            auto* fft = compute_fft(size, chain.options, chain.name);
            if (!fft) continue;
            const std::vector<std::string> all = fft->describe_dispatches();
            bool split = false;
            for (const std::string& d : all) split = split || d.rfind("rows forward A:", 0) == 0 || d.rfind("rows forward B:", 0) == 0;
            int columns = 0;  // column dispatches with neighbouring rows
            for (const std::string& d : all) {
                const bool marked = d.find("row pairs in neighbouring rows") != std::string::npos, row = d.rfind("rows", 0) == 0;
                EXPECT(split ? marked || !row : !marked, chain.name, " at ", size.m, "x", size.n, ": ", d);
                columns += marked && !row;
            }
            // The column pass's first step reads H and its last leaves row pairs, each as pair 0
            // and the other pairs.
            EXPECT(!split || columns >= 4, chain.name, " at ", size.m, "x", size.n, ": ", columns, " column dispatches with neighbouring rows");
            (split ? neighbouring : apart) += 1;
        }
    }
    EXPECT(!ComputeFft::supported() || (neighbouring >= 1 && apart >= 2), neighbouring, " filters with neighbouring rows, ", apart,
           " with rows apart");
}

// Folded lines (FftOptions::compute_fold) run one dispatch a line pass: the numerical tests above
// check them only if the fold chains' dispatches at their sizes are folded (28 x 24: both axes in
// two phases; 64 x 16: rows of 64 in four), and lines that do not fold take the four-step route.
TEST(folded_lines_take_one_dispatch_a_line) {
    struct Case {
        int fold;
        Size size;
        int folded;  // dispatches of the filter that fold
    };
    int checked = 0;
    for (const test::Chain& chain : test::chains())
    for (const Case& c : {Case{2, {28, 24}, 4}, Case{4, {64, 16}, 2}, Case{4, {28, 24}, 2}}) {
        if (chain.options.compute_fold != c.fold) continue;
        ++checked;
        auto* fft = compute_fft(c.size, chain.options, chain.name);
        if (!fft) continue;
        int folded = 0;
        for (const std::string& d : fft->describe_dispatches()) {
            const bool f = d.find("folded: " + std::to_string(c.fold) + " channel phases") != std::string::npos;
            const std::string label = d.substr(0, d.find(':'));
            const bool step = label.find(" A") != std::string::npos || label.find(" B") != std::string::npos;
            EXPECT(!(f && step), chain.name, ": ", d);
            folded += f;
        }
        EXPECT(folded == c.folded, chain.name, " at ", c.size.m, "x", c.size.n, ": ", folded, " folded dispatches, expected ", c.folded);
    }
    EXPECT(checked == 3 || !ComputeFft::supported(), checked, " cases met a fold chain, expected 3");
}

TEST(half_storage_within_its_own_tolerance) {
    // RGBA16F intermediates have 11-bit significands: every pass rounds to 2^-11 = 4.9e-4 relative,
    // and the 8 to 45 passes of a filter add up to about 1e-3 to 2e-2 (measured 1.5e-3 and 4.3e-3
    // for the fast chain at 256^2, 5.3e-3 and 1.6e-2 for the radix-2 chain).
    const double spectrum_bound = 1e-2, filter_bound = 3e-2;
    for (const test::Chain& chain : test::chains()) {
        FftOptions o = chain.options;
        o.storage = Storage::Float16;
        Size s{256, 128};
        auto fft = test::fft(s, o);
        std::vector<float> image = test::random_image(s, 21), kernel = test::random_image(s, 22);
        std::vector<float> spectrum = fft->forward(image), out = Filter(*fft, kernel).apply(image);
        for (int c = 0; c < 4; ++c) {
            ErrorStats e = compare(reference_spectrum(channel_of(image, c), s.m, s.n), unpack_half(spectrum.data(), s.m, s.n, c));
            EXPECT(e.rel_rms <= spectrum_bound && e.rel_rms > 1e-5, chain.name, " half spectrum rel RMS ", e.rel_rms);
            auto ref = reference_circular_convolution(channel_of(image, c), channel_of(kernel, c), s.m, s.n);
            ErrorStats f = compare(ref, channel_of(out, c));
            EXPECT(f.rel_rms <= filter_bound, chain.name, " half filter rel RMS ", f.rel_rms);
        }
    }
}

TEST(computed_twiddles_are_measured_not_default) {
    // Twiddles from the GPU's sin and cos: each W carries the rounding of its angle (about 2pi 2^-24)
    // and of sin/cos, several times the table's half ulp, so the error stays near 1e-6 rather than
    // fftwf's 1.5e-7 (README: the table stays the default).
    FftOptions o;
    o.computed_twiddles = true;
    Size s{256, 256};
    auto fft = test::fft(s, o);
    std::vector<float> image = test::random_image(s, 31);
    std::vector<float> spectrum = fft->forward(image);
    for (int c = 0; c < 4; ++c) {
        ErrorStats e = compare(reference_spectrum(channel_of(image, c), s.m, s.n), unpack_half(spectrum.data(), s.m, s.n, c));
        EXPECT(e.rel_rms <= 2e-6, "computed twiddles: rel RMS ", e.rel_rms);
    }
}

TEST(table1_accounting) {
    for (Size s : {Size{1024, 1024}, Size{512, 256}, Size{64, 128}}) {
        auto n = count_invocations(filter_plan(s.m, s.n));
        auto at = [&](Program p) { return n[static_cast<size_t>(p)]; };
        auto t1 = [&](Program p) { return table1_invocations(p, s.m, s.n); };
        long long mn = static_cast<long long>(s.m) * s.n;
        // Exactly as Table 1:
        for (Program p : {Program::Fft, Program::Multiply, Program::Untangle, Program::Tangle})
            EXPECT(at(p) == t1(p), s.m, "x", s.n, " ", program_name(p), ": ", at(p), " vs Table 1 ", t1(p));
        // Scale and pass: each full step writes M N texels once, so scale = 2MN - untangle = MN + 4
        // (Table 1 says MN + 2N; see plan.h and the README).
        EXPECT(at(Program::Scale) == mn + 4, "scale ", at(Program::Scale));
        EXPECT(at(Program::Pass) == mn + 4, "pass ", at(Program::Pass));
    }
    EXPECT(table1_invocations(Program::Fft, 1024, 1024) == 2LL * 1024 * 1024 * 20, "Table 1 FFT formula");
}

TEST(twiddles_are_exact_where_they_can_be) {
    for (long long n : {6LL, 10LL, 14LL, 90LL}) {  // the mixed radices' tables: symmetric, near exact
        for (long long k = 0; k <= n / 2; ++k) {
            std::complex<double> w = unit_root(k, n), ref = std::polar(1.0, -2 * M_PI * double(k) / double(n));
            EXPECT(std::abs(w - ref) < 1e-15 && w == std::conj(unit_root(n - k, n)), "W_", n, "^", k);
        }
    }
    for (long long n : {4LL, 8LL, 64LL, 4096LL}) {
        EXPECT(unit_root(0, n) == std::complex<double>(1, 0), "W^0");
        EXPECT(unit_root(n / 4, n) == std::complex<double>(0, -1), "W^(n/4) = -i");
        EXPECT(unit_root(n / 2, n) == std::complex<double>(-1, 0), "W^(n/2) = -1");
        EXPECT(unit_root(3 * n / 4, n) == std::complex<double>(0, 1), "W^(3n/4) = i");
        for (long long k = 0; k < n; ++k) {
            std::complex<double> w = unit_root(k, n), ref = std::polar(1.0, -2 * M_PI * double(k) / double(n));
            // std::polar rounds 2 pi k / n first: itself ~1 ulp of the angle away from exact.
            EXPECT(std::abs(w - ref) < 1e-15, "W_", n, "^", k, " off by ", std::abs(w - ref));
            EXPECT(w == std::conj(unit_root(n - k, n)), "W^k != conj W^(n-k) at ", k, "/", n);
        }
    }
}

TEST(bad_sizes_are_refused) {
    test::context();
    ProgramCache programs;
    auto refused = [&](Size s, const FftOptions& o, const std::string& why) {
        try {
            make_fft(programs, s.m, s.n, o);
        } catch (const std::invalid_argument& e) {
            return std::string(e.what()).find(why) != std::string::npos;
        }
        return false;
    };
    for (Size s : {Size{3, 4}, Size{4, 22}, Size{26, 4}, Size{1, 4}, Size{4, 1}, Size{0, 8}, Size{-4, 4}, Size{4, 15}})
        EXPECT(refused(s, {}, "prime factors 2, 3, 5 and 7"), s.m, "x", s.n, " was not refused with a message about fast sizes");
    FftOptions radix2;
    radix2.radix = 2;
    EXPECT(refused({12, 12}, radix2, "powers of two"), "the radix-2 chain took 12x12");
    FftOptions fragment;
    fragment.backend = Backend::Fragment;
    EXPECT(refused({2, 6}, fragment, "at least 4"), "the fragment backend took 2x6");
    int too_big = max_texture_side() * 2;
    EXPECT(refused({too_big, 2}, {}, "limit"), too_big, "x2 above the GL limit was not refused");
}

// The compute backend's cost model rates the plan that runs: with --compute-max-line 16384 a whole
// 16384-point line (radix raised to 16 within 1024 threads) as well as the four-step 8192.
TEST(compute_length_model_rates_every_line_it_allows) {
    test::context();
    FftOptions o;
    o.compute_max_line = 16384;
    const LengthModel m = ComputeFft::lengths(o);
    o.compute_plan = "composite";
    const LengthModel composite = ComputeFft::lengths(o);
    for (long long n : {4096LL, 6000LL, 8192LL, 16384LL, 1080LL, 3000LL})
        for (const LengthModel* model : {&m, &composite}) {
            double cost = 0;
            try {
                cost = model->allowed(n) ? model->cost(n) : 0;
            } catch (const std::exception& e) {
                EXPECT(false, n, ": ", e.what());
            }
            EXPECT(cost >= 1, n, ": cost ", cost);
        }
    // One round a stage: the composite 1080 (12 10 9, 120 threads) wastes no round of a thread,
    // the planner's (4 2 5 3 3 3) does; a device row's measured plan of 1080 (the GPU's 6 6 6 5,
    // one round a stage too) rates no worse than the composite.
    const bool measured = ComputeFft::chosen_plans(FftOptions{}, compute_tuning(software_renderer())).lines.count(1080) > 0;
    EXPECT(measured ? composite.cost(1080) >= m.cost(1080) : composite.cost(1080) < m.cost(1080), "1080: composite ", composite.cost(1080),
           ", planner ", m.cost(1080), measured ? " (the device row's plan)" : "");
}

// The GPU row's lengths follow its measured squares (tuning.cpp: L x L filters on the H200): a
// need takes the measured length of least time from it up, so 1000 pads to 1024 (56.6 us against
// 69.2), 1602-1800 to 2048 and 3502-4096 to 4096; 1984 x 1144 (1920x1080 with gaussian:8) keeps
// 2048 x 1152. A fast length between the measured ends that was not measured (1080) is allowed
// (wrap) but never picked; beyond the ends, and with options that change the programs, the plans'
// rating picks as it did. The software row has no squares.
TEST(gpu_lengths_follow_the_measured_squares) {
    const ComputeTuning& gpu = compute_tuning(false);
    ComputeTuning planned_row = gpu;
    planned_row.squares = nullptr;
    planned_row.square_count = 0;
    EXPECT(gpu.square_count > 100 && compute_tuning(true).square_count == 0, "squares: GPU ", gpu.square_count, ", software ",
           compute_tuning(true).square_count);
    // The H200's row holds every even fast length from 128 to 8192.
    int fast = 0;
    for (int n = 128; n <= 8192; n += 2) fast += is_fast_size(n);
    EXPECT(gpu.square_count == fast && gpu.squares[0].length == 128 && gpu.squares[gpu.square_count - 1].length == 8192, "squares: ",
           gpu.square_count, " of the ", fast, " even fast lengths from 128 to 8192");
    for (int i = 0; i < gpu.square_count; ++i)
        EXPECT(is_fast_size(gpu.squares[i].length) && gpu.squares[i].us > 0 && (i == 0 || gpu.squares[i].length > gpu.squares[i - 1].length),
               "square ", i, ": ", gpu.squares[i].length, " in ", gpu.squares[i].us, " us");
    const LengthModel measured = ComputeFft::lengths(FftOptions{}, gpu), planned = ComputeFft::lengths(FftOptions{}, planned_row);
    struct Pick {
        long long need, length;
    };
    for (Pick p : {Pick{1000, 1024}, Pick{902, 1024}, Pick{1984, 2048}, Pick{1144, 1152}, Pick{1602, 2048}, Pick{1800, 2048},
                   Pick{3586, 4096}, Pick{3502, 4096}, Pick{1026, 1050}, Pick{2050, 2100}, Pick{200, 256}, Pick{500, 512},
                   Pick{3002, 3072}, Pick{4202, 4320}, Pick{7200, 8192}})
        EXPECT(measured.best(p.need, 16384) == p.length, "need ", p.need, ": ", measured.best(p.need, 16384), ", not ", p.length);
    EXPECT(planned.best(1000, 16384) == 1000, "the plans' rating of 1000: ", planned.best(1000, 16384));
    // A row with a length left out between its ends allows it (wrap takes it whole) but never picks it.
    std::vector<MeasuredSquare> gap;
    for (int i = 0; i < gpu.square_count; ++i)
        if (gpu.squares[i].length != 1050 && gpu.squares[i].length != 1080) gap.push_back(gpu.squares[i]);
    ComputeTuning gap_row = gpu;
    gap_row.squares = gap.data();
    gap_row.square_count = static_cast<int>(gap.size());
    const LengthModel gaps = ComputeFft::lengths(FftOptions{}, gap_row);
    EXPECT(gaps.allowed(1080) && !std::isfinite(gaps.cost(1080)) && gaps.best(1026, 16384) == 1152, "1080 left out: allowed ",
           gaps.allowed(1080), " at ", gaps.cost(1080), "; need 1026 took ", gaps.best(1026, 16384));
    // Every pick between the ends is a measured length, none slower than a measured one it could take.
    std::map<long long, double> us;
    for (int i = 0; i < gpu.square_count; ++i) us[gpu.squares[i].length] = gpu.squares[i].us;
    for (long long need = gpu.squares[0].length; need <= gpu.squares[gpu.square_count - 1].length; need += 2) {
        const long long n = measured.best(need, 16384);
        bool least = us.count(n) > 0;
        for (auto it = us.lower_bound(need); least && it != us.end() && it->first < 2 * need; ++it) least = it->second >= us[n];
        EXPECT(least, "need ", need, ": ", n, us.count(n) ? "" : " (not measured)", " where a measured length is faster");
    }
    for (long long need : {4, 40, 100, 8200, 9000, 12000, 16000})
        EXPECT(measured.best(need, 16384) == planned.best(need, 16384), "need ", need, " beyond the squares: ", measured.best(need, 16384),
               " against the plans' ", planned.best(need, 16384));
    FftOptions fragment_options;  // the fragment chain's options change no compute program
    fragment_options.radix = 2;
    fragment_options.computed_twiddles = true;
    EXPECT(ComputeFft::lengths(fragment_options, gpu).best(1000, 16384) == 1024, "with the fragment chain's options set, 1000 took ",
           ComputeFft::lengths(fragment_options, gpu).best(1000, 16384));
    FftOptions radix8;
    radix8.compute_radix = 8;
    const LengthModel own = ComputeFft::lengths(radix8, gpu), own_planned = ComputeFft::lengths(radix8, planned_row);
    for (long long need : {1000, 1602, 3586})
        EXPECT(own.best(need, 16384) == own_planned.best(need, 16384) && std::isfinite(own.cost(1080)),
               "--compute-radix 8, need ", need, ": ", own.best(need, 16384), " against the plans' ", own_planned.best(need, 16384));
}

// Large images on the GPU row: overlap-save tiles of a measured length where the squares say they
// cost an axis kTilesPay of one grid or less (6000 as 3072 x 2, 12000 as 4096 x 3), one grid
// elsewhere (1920, 3000) and wherever the model is not measured or tiles are turned off.
TEST(gpu_tiles_large_axes_where_the_measured_squares_pay) {
    const LengthModel measured = ComputeFft::lengths(FftOptions{}, compute_tuning(false));
    const LengthModel software = ComputeFft::lengths(FftOptions{}, compute_tuning(true));
    LengthModel off = measured;
    off.tile_to = 0;
    const int size = 65, centre = 32;
    auto axis = [&](int length, const LengthModel& m, Boundary b = Boundary::Reflect, int max_fft = 32768) {
        return tile_axis(length, size, centre, b, max_fft, m);
    };
    auto cost = [&](const AxisTiling& t, int length, const LengthModel& m) { return t.tiles(length) * t.fft * m.cost(t.fft); };
    struct Pick {
        int length, fft, tiles;
    };
    for (Pick p : {Pick{1920, 2048, 1}, Pick{1080, 1152, 1}, Pick{3000, 3072, 1}, Pick{4000, 4096, 1}, Pick{6000, 3072, 2},
                   Pick{8000, 4096, 2}, Pick{12000, 4096, 3}, Pick{16000, 4096, 4}}) {
        const AxisTiling t = axis(p.length, measured);
        EXPECT(t.fft == p.fft && t.tiles(p.length) == p.tiles && t.lead == size - 1 - centre && t.block == std::min(p.length, t.fft - size + 1),
               p.length, ": ", t.tiles(p.length), " tiles of ", t.fft, ", not ", p.tiles, " of ", p.fft);
    }
    // Against every tiling of a measured length, brute force: tiles only where they pay, and then
    // the cheapest.
    for (int length = 100; length <= 16000; length += 97) {
        const AxisTiling t = axis(length, measured), whole = axis(length, off);
        EXPECT(whole.tiles(length) == 1, length, " without measured tiles: ", whole.tiles(length), " tiles");
        double least = 0;
        for (long long n = measured.tile_from; n <= measured.tile_to; n += 2) {
            if (!measured.allowed(n) || n <= size) continue;
            const long long block = std::min<long long>(length, n - size + 1), tiles = (length + block - 1) / block;
            const double c = static_cast<double>(tiles * n) * measured.cost(n);
            if (tiles > 1 && (least == 0 || c < least)) least = c;
        }
        const double one = cost(whole, length, measured);
        if (least > 0 && least <= kTilesPay * one)
            EXPECT(t.tiles(length) > 1 && std::abs(cost(t, length, measured) - least) <= 1e-9 * least, length, ": ", t.tiles(length), " tiles of ",
                   t.fft, " at ", cost(t, length, measured), " where tiles cost ", least, " against one grid's ", one);
        else
            EXPECT(t.fft == whole.fft && t.tiles(length) == 1, length, ": ", t.tiles(length), " tiles of ", t.fft, " where one grid of ", whole.fft,
                   " costs ", one, " and tiles at least ", least);
    }
    // Models without measured squares, wrap on a length the transform takes, and a max_fft the
    // need exceeds keep their rules.
    EXPECT(software.tile_to == 0 && axis(6000, software).tiles(6000) == 1 && axis(6000, off).fft == 6144, "6000: software ",
           axis(6000, software).fft, " x", axis(6000, software).tiles(6000), ", measured tiles off ", axis(6000, off).fft);
    EXPECT(axis(6000, fftw_lengths()).tiles(6000) == 1, "6000 on FFTW: ", axis(6000, fftw_lengths()).tiles(6000), " tiles");
    const AxisTiling wrap = axis(6144, measured, Boundary::Wrap);
    EXPECT(wrap.circular && wrap.fft == 6144 && wrap.tiles(6144) == 1, "6144 wrap: ", wrap.fft, " x", wrap.tiles(6144));
    const AxisTiling capped = axis(6000, measured, Boundary::Reflect, 2048);
    EXPECT(capped.fft <= 2048 && capped.tiles(6000) > 1 && capped.block * capped.tiles(6000) >= 6000, "6000 within 2048: ", capped.tiles(6000),
           " tiles of ", capped.fft);
}

// The tiler asks a model of thousands of lengths for each image (0.5 ms of the GL thread's time an
// image on the H200 machine's host): a tabulated model answers from its table, as the model itself
// would, within the table and beyond it.
TEST(tabulated_lengths_tile_as_their_model) {
    test::context();
    FftOptions radix2, long_lines;
    radix2.radix = 2;
    long_lines.compute_max_line = 16384;  // lines the plans cannot rate (more than 1024 threads)
    // A model that cannot judge some lengths at all: the table ends below the first of them.
    LengthModel partial{[](long long n) {
                            if (n > 5000 && n % 1001 == 0) throw std::runtime_error("no word on " + std::to_string(n));
                            return n % 2 == 0 && n >= 4;
                        },
                        [](long long n) { return 1.0 + static_cast<double>(n % 12) / 12; }, false, "partial"};
    partial.tile_from = 128;
    partial.tile_to = 8192;
    // What a model answers of a length (taken, its cost, or what it throws: the fast chain cannot
    // rate 2 points), and a tiling or what it throws.
    auto answer = [](const LengthModel& m, long long n) {
        try {
            return m.allowed(n) ? check::str(m.cost(n)) : std::string("not taken");
        } catch (const std::exception& e) {
            return std::string(e.what());
        }
    };
    auto tiled = [](int length, int size, Boundary b, int max_fft, const LengthModel& m) {
        try {
            const AxisTiling t = tile_axis(length, size, size / 2, b, max_fft, m);
            return check::str(t.tiles(length), " of ", t.fft, " (block ", t.block, ", lead ", t.lead, t.circular ? ", circular)" : ")");
        } catch (const std::exception& e) {
            return std::string(e.what());
        }
    };
    for (const LengthModel& model : {ComputeFft::lengths(FftOptions{}, compute_tuning(false)),
                                     ComputeFft::lengths(FftOptions{}, compute_tuning(true)),
                                     ComputeFft::lengths(long_lines, compute_tuning(false)), fftw_lengths(),
                                     FragmentFft::lengths(FftOptions{}), FragmentFft::lengths(radix2), partial}) {
        struct Case {
            int length, size, max_fft;
            Boundary b;
            std::string tiling;  // the model's own
        };
        std::vector<Case> cases;
        for (int size : {1, 65, 301})
            for (Boundary b : {Boundary::Reflect, Boundary::Wrap})
                for (int length = 1; length <= 17000; length += length < 300 ? 7 : 149)
                    for (int max_fft : {16384, 1024}) cases.push_back({length, size, max_fft, b, tiled(length, size, b, max_fft, model)});
        for (long long up_to : {3000LL, kTabulatedLengths}) {
            LengthModel table = model;
            long long asked = 0;  // calls of the model's own functions once tabulated
            table.allowed = [&asked, f = model.allowed](long long n) { return ++asked, f(n); };
            table.cost = [&asked, f = model.cost](long long n) { return ++asked, f(n); };
            table.tabulate(up_to);
            for (long long n = 1; n <= 20000; n += n < 300 ? 1 : 41) {
                EXPECT(answer(table, n) == answer(model, n), model.name, " to ", up_to, ": ", n, ": ", answer(table, n), " against ",
                       answer(model, n));
                long long mine = -1, theirs = -1;
                try {
                    mine = table.best(n, 16384);
                } catch (const std::exception&) {
                }
                try {
                    theirs = model.best(n, 16384);
                } catch (const std::exception&) {
                }
                EXPECT(mine == theirs, model.name, " to ", up_to, ": best for ", n, ": ", mine, " against ", theirs);
            }
            for (const Case& c : cases) {
                const std::string t = tiled(c.length, c.size, c.b, c.max_fft, table);
                EXPECT(t == c.tiling, model.name, " to ", up_to, ": ", c.length, " with ", c.size, " taps: ", t, " against ", c.tiling);
            }
            if (model.name == partial.name) continue;  // (its tiles reach the lengths it cannot judge)
            asked = 0;
            tile_axis(256, 65, 32, Boundary::Reflect, 16384, table);
            EXPECT(up_to < 16384 || asked == 0, model.name, ": the tabulated model asked its own functions ", asked, " times for 256");
        }
    }
}

// A batch of many sizes shares few lengths (LengthModel::share): on the compute backend's models
// (the GPU's measured row and the software row), 48 needs spread over 264..864 get at most 7
// lengths, where their own best lengths are many more; every need's shared length is allowed, at
// least the need, within the limit and at most kSharedLengthsWithin times the need's own best
// cost; a need alone, or needs whose best lengths are one, keep their best; needs outside every
// group (or above the limit) are answered as before; share() replaces an earlier grouping; and
// share_lengths() leaves models that compile nothing per length (FFTW, the fast chain) as they are.
TEST(batches_of_many_sizes_share_few_lengths) {
    test::context();
    std::mt19937 random(17);
    std::vector<long long> spread;
    for (int i = 0; i < 48; ++i) spread.push_back(264 + static_cast<long long>(random() % 601));
    for (bool software : {false, true}) {
        LengthModel own = ComputeFft::lengths(FftOptions{}, compute_tuning(software));
        own.tabulate(kTabulatedLengths);
        EXPECT(own.programs_per_length, "the compute backend's model compiles nothing per length");
        const std::string name = software ? "software row" : "GPU row";
        LengthModel shared = own;
        shared.share(0, spread, 16384, kSharedLengthsWithin);
        std::set<long long> theirs, used;
        for (long long need : spread) {
            const long long n = shared.best(need, 16384, 0), b = own.best(need, 16384);
            theirs.insert(b);
            used.insert(n);
            EXPECT(n >= need && own.allowed(n) && static_cast<double>(n) * own.cost(n) <= kSharedLengthsWithin * static_cast<double>(b) * own.cost(b) * (1 + 1e-12),
                   name, ": need ", need, " shares ", n, " (its best ", b, ")");
            EXPECT(shared.best(need, n - 2, 0) == own.best(need, n - 2) && shared.best(need, 16384, 1) == b, name, ": need ", need, " below its shared length's limit, or along the other axis");
        }
        EXPECT(used.size() <= 7 && theirs.size() >= 2 * used.size(), name, ": 48 needs in ", used.size(), " lengths (", theirs.size(),
               " best lengths)");
        EXPECT(shared.best(2000, 16384, 0) == own.best(2000, 16384) && shared.best(100, 16384, 0) == own.best(100, 16384), name,
               ": needs outside the groups changed");
        for (long long need : {300LL, 1984LL, 1144LL}) {
            LengthModel alone = own;
            alone.share(1, {need, need}, 16384, kSharedLengthsWithin);
            EXPECT(alone.best(need, 16384, 1) == own.best(need, 16384), name, ": ", need, " alone shares ", alone.best(need, 16384, 1));
        }
        shared.share(0, {1000}, 16384, kSharedLengthsWithin);
        EXPECT(shared.best(300, 16384, 0) == own.best(300, 16384), name, ": an earlier grouping outlived share()");
        // Through the images: widths and heights of 24 sizes with a 65-tap kernel (needs image + 64).
        LengthModel images = own;
        std::vector<std::array<int, 2>> sizes;
        for (int i = 0; i < 24; ++i) sizes.push_back({200 + static_cast<int>(random() % 601), 200 + static_cast<int>(random() % 601)});
        const Kernel gauss = parse_kernel("gaussian:8");
        share_lengths(images, sizes, gauss, Boundary::Reflect, 16384);
        std::set<int> widths, heights, own_widths;
        for (const auto& [w, h] : sizes) {
            const auto [x, y] = tile_image(w, h, gauss, Boundary::Reflect, {16384, 16384}, images);
            widths.insert(x.fft);
            heights.insert(y.fft);
            own_widths.insert(tile_image(w, h, gauss, Boundary::Reflect, {16384, 16384}, own).first.fft);
            // One grid, of the shared lengths (not tiles of another length, which a shared length's
            // higher cost must not make pay).
            EXPECT(x.tiles(w) == 1 && y.tiles(h) == 1 && x.fft == images.best(w + 64, 16384, 0) && y.fft == images.best(h + 64, 16384, 1), name,
                   ": ", w, "x", h, " on ", x.fft, "x", y.fft);
        }
        EXPECT(widths.size() <= 7 && heights.size() <= 7 && own_widths.size() > widths.size(), name, ": 24 sizes on grids of ", widths.size(),
               " widths (", own_widths.size(), " their own) and ", heights.size(), " heights");
    }
    FftOptions radix2;
    radix2.radix = 2;
    for (const LengthModel& other : {fftw_lengths(), FragmentFft::lengths(FftOptions{}), FragmentFft::lengths(radix2)}) {
        LengthModel m = other;
        share_lengths(m, {{300, 400}, {500, 600}, {310, 410}}, parse_kernel("gaussian:8"), Boundary::Reflect, 16384);
        EXPECT(!m.programs_per_length && !m.shared[0] && !m.shared[1], other.name, ": shared its lengths");
    }
}

// Issue 15: every even size with factors 2, 3, 5, 7 has a line plan whose radices multiply to it,
// start (forward) and end (inverses) with an even radix, and fit the threads and registers given;
// the fast chain's radices multiply to every such size from 4 up, none above 28.
TEST(mixed_radix_plans_cover_every_fast_size) {
    size_t lines = 0, fast = 0;
    for (int n = 2; n <= 4096; n += 2) {
        if (!is_fast_size(n)) continue;
        for (int radix : {4, 8, 16}) {
            ComputeFft::LinePlan p = ComputeFft::plan_line(n, radix, 1024);
            for (const std::vector<int>* order : {&p.forward, &p.inverse, &p.filter_inverse}) {
                long long product = 1;
                for (int r : *order) product *= r;
                EXPECT(product == n, "line ", n, ": radices multiply to ", product);
            }
            EXPECT(p.forward.front() % 2 == 0 && p.inverse.back() % 2 == 0 && p.filter_inverse.back() % 2 == 0 &&
                       p.filter_inverse.front() == p.forward.back(),
                   "line ", n, " radix ", radix, ": the untangle and tangle need even radices at the ends");
            // 12 elements a thread at most below radix 16: 15 and 16 spill on the H100 (src/README.md).
            EXPECT(p.threads >= 1 && p.threads <= 1024 && p.registers <= (radix < 16 ? 12 : 2 * radix), "line ", n, " radix ", radix,
                   ": ", p.threads, " threads of ", p.registers, " registers");
            ++lines;
        }
        // The composite planner (--compute-plan composite): radices up to 12, one round a stage.
        if (n & (n - 1)) {
            const std::vector<int> c = ComputeFft::composite_radices(n);
            const ComputeFft::LinePlan p = ComputeFft::plan_with(c, 0);
            long long product = 1;
            for (int r : c) {
                product *= r;
                EXPECT(r >= 2 && r <= 12 && r != 11, "composite ", n, ": radix ", r);
            }
            EXPECT(product == n && c.front() % 2 == 0 && p.threads <= 1024 && p.registers <= 12, "composite ", n, ": ", product, ", first ",
                   c.front(), ", ", p.threads, " threads of ", p.registers);
        }
        if (n >= 4) {
            long long product = 1;
            for (int r : radices(n)) {
                product *= r;
                EXPECT(r >= 2 && r <= 28, "fast chain ", n, ": radix ", r);
            }
            EXPECT(product == n, "fast chain ", n, ": radices multiply to ", product);
            ++fast;
        }
    }
    EXPECT(lines > 300 && fast > 50, lines, " line plans, ", fast, " fast-chain plans");
    // At radix 4 a mixed line whose power of two is odd and at least 8, and which has no 7, keeps
    // no radix-2 stage of its own: the stray 2 takes a 3 into a 6, else a 4 into an 8, first. Lines
    // with a single 2 or with 7s, and powers of two, keep theirs.
    for (int n = 6; n <= 4096; n += 2) {
        if (!is_fast_size(n) || !(n & (n - 1))) continue;
        const std::vector<int> f = ComputeFft::line_radices(n, 4);
        const std::vector<int> factors = prime_factors(n);
        const auto twos = std::count(factors.begin(), factors.end(), 2);
        const bool lone_two = twos % 2 == 1 && (twos == 1 || n % 7 == 0);
        std::string text;
        for (int r : f) text += " " + std::to_string(r);
        EXPECT(std::count(f.begin(), f.end(), 2) == (lone_two ? 1 : 0), "line ", n, " at radix 4: radices", text);
    }
    EXPECT(ComputeFft::line_radices(3000, 4) == (std::vector<int>{6, 4, 5, 5, 5}) &&
               ComputeFft::line_radices(1536, 4) == (std::vector<int>{6, 4, 4, 4, 4}) &&
               ComputeFft::line_radices(1000, 4) == (std::vector<int>{8, 5, 5, 5}) &&
               ComputeFft::line_radices(1920, 4) == (std::vector<int>{6, 4, 4, 4, 5}) &&
               ComputeFft::line_radices(250, 4) == (std::vector<int>{2, 5, 5, 5}) &&
               ComputeFft::line_radices(2250, 4) == (std::vector<int>{2, 5, 5, 5, 3, 3}) &&
               ComputeFft::line_radices(1176, 4) == (std::vector<int>{4, 2, 7, 7, 3}) &&
               ComputeFft::line_radices(512, 4) == (std::vector<int>{4, 4, 4, 4, 2}),
           "radix-4 line plans of 3000, 1536, 1000, 1920, 250, 2250, 1176, 512");
    EXPECT((radices(1920) == std::vector<int>{20, 12, 8}) && (radices(1080) == std::vector<int>{20, 6, 3, 3}) &&
               (radices(2048) == std::vector<int>{16, 16, 8}),
           "fast chain radices of 1920, 1080, 2048");
    for (Size s : {Size{12, 20}, Size{1920, 1080}, Size{28, 4}, Size{60, 48}}) {
        check_coverage(fast_forward_plan(s.m, s.n), "fast forward");
        check_coverage(fast_inverse_plan(s.m, s.n), "fast inverse");
        check_coverage(fast_filter_plan(s.m, s.n), "fast filter");
    }
    EXPECT(ComputeFft::composite_radices(1920) == (std::vector<int>{8, 8, 6, 5}) &&
               ComputeFft::composite_radices(1080) == (std::vector<int>{12, 10, 9}) &&
               ComputeFft::composite_radices(1000) == (std::vector<int>{10, 10, 10}) &&
               ComputeFft::composite_radices(1152) == (std::vector<int>{12, 12, 8}) &&
               ComputeFft::composite_radices(14) == (std::vector<int>{2, 7}),
           "composite plans of 1920, 1080, 1000, 1152, 14");
    EXPECT(next_fast_size(1984) == 2000 && next_fast_size(1144) == 1152 && next_fast_size(2101) == 2160 && is_fast_size(6000) &&
               !is_fast_size(22) && !is_fast_size(15),
           "fast sizes");
    // fftcompare --race's yardstick ("vs 2^k"): the power of two nearest on a log scale, each
    // side of 1024 sqrt(2) = 1448.15.
    for (auto [n, p] : std::vector<std::pair<long long, long long>>{
             {1, 1}, {2, 2}, {3, 4}, {1000, 1024}, {1080, 1024}, {1152, 1024}, {1448, 1024}, {1449, 2048}, {1536, 2048}, {1920, 2048},
             {3000, 4096}, {6000, 8192}, {16384, 16384}})
        EXPECT(nearest_power_of_two(n) == p, "nearest power of two of ", n, ": ", nearest_power_of_two(n), ", not ", p);
}

// Line plans chosen by hand (--compute-plan, for tuning), and the composite planner's (18 as 6 x 3):
// composite radices 6, 10, 12, 14 and 15, one round a stage with the threads past a stage's
// butterflies idle (the default threads), and partial rounds (threads that divide no stage's
// butterflies) give FFTW's results on rows and columns, forward and filter; bad plans are refused
// with the item named.
TEST(hand_chosen_line_plans_match_fftw) {
    const ComputeFft::LinePlan p = ComputeFft::plan_with({8, 8, 6, 5}, 0);
    EXPECT(p.threads == 384 && p.registers == 8 && p.inverse == (std::vector<int>{5, 6, 8, 8}) &&
               p.filter_inverse == (std::vector<int>{5, 8, 8, 6}),
           "8x8x6x5: ", p.threads, " threads of ", p.registers, " registers");
    const ComputeFft::LinePlan q = ComputeFft::plan_with({10, 4}, 3);
    EXPECT(q.threads == 3 && q.registers == 20 && q.slots == 3 * (2 * 10 + 4 * 4), "10x4/3: ", q.threads, " threads of ", q.registers);
    for (const char* bad : {"1920:8x8x6x4", "15:15", "12:3x4", "x", "8:8/2000", "8:", "88:11x8", "16:4x4,16:2x8", "4096:8x8x8x8/1",
                            "rows:16:4x4,rows:16:2x8", "diagonal:16:4x4", "columns:16", "rows:columns:16:4x4"}) {
        bool refused = false;
        try {
            ComputeFft::parse_plans(bad);
        } catch (const UsageError& e) {
            refused = std::string(e.what()).find(std::string(bad).substr(0, 2)) != std::string::npos;
        }
        EXPECT(refused, "plan \"", bad, "\" not refused with its name");
    }
    test::context();
    if (!ComputeFft::supported()) return;
    struct Case {
        Size size;
        const char* plan;
        int lines;  // --compute-lines (0: by size)
    };
    // Small lines: llvmpipe compiles these unrolled programs in 15-20 s a size. The last case
    // takes three lines a workgroup (any count works; the last workgroup of the 11 column pairs
    // holds two).
    // The fourth takes a plan per axis for one length (rows 2 x 15, columns 6 x 5).
    for (const Case& c : {Case{{20, 12}, "20:10x2,12:4x3/2", 0}, Case{{24, 18}, "24:12x2/4,composite", 0},
                         Case{{28, 28}, "28:14x2", 0}, Case{{30, 30}, "rows:30:2x15,columns:30:6x5", 0}, Case{{24, 18}, "", 3}}) {
        FftOptions o;
        o.backend = Backend::Compute;
        o.compute_plan = c.plan;
        o.compute_lines = c.lines;
        auto* fft = compute_fft(c.size, o, c.plan);
        if (!fft) continue;
        int seen = 0, shared_twiddles = 0;
        for (const std::string& d : fft->describe_dispatches()) {
            shared_twiddles += d.find("twiddles from shared memory") != std::string::npos;
            if (c.lines) seen += d.find(" of 3 x ") != std::string::npos;
            for (const char* radices : {"radices 12 x 2)", "radices 10 x 2)", "radices 6 x 3)", "radices 4 x 3)", "radices 14 x 2)"}) seen += !c.lines && d.find(radices) != std::string::npos;
            const bool rows = d.rfind("rows", 0) == 0;
            seen += d.find(rows ? "radices 2 x 15)" : "radices 6 x 5)") != std::string::npos;
        }
        // The lines case: rows forward, columns, rows inverse (pair 0 is one line).
        EXPECT(seen >= (c.lines ? 3 : 4), c.plan, " lines ", c.lines, ": the dispatches do not take the plan");
        // The software row copies the table for every whole mixed column dispatch (pair 0 and the
        // rest); rows read theirs from the table. The GPU row copies it only for workgroups of more
        // than 512 threads, which these small lines never fill.
        const int copies = compute_tuning(software_renderer()).shared_twiddles_above == 0 ? 2 : 0;
        EXPECT(shared_twiddles == copies, c.plan, ": ", shared_twiddles, " of the 2 column dispatches read their twiddles from shared memory, not ",
               copies);
        const Size s = c.size;
        std::vector<float> image = test::random_image(s, 3 + s.m), kernel = test::random_image(s, 4 + s.n);
        std::vector<float> spectrum = fft->forward(image);
        Filter filter(*fft, kernel);
        std::vector<float> out = filter.apply(image);
        for (int ch = 0; ch < 4; ++ch) {
            auto ref = reference_spectrum(channel_of(image, ch), s.m, s.n);
            ErrorStats e = compare(ref, unpack_half(spectrum.data(), s.m, s.n, ch));
            expect_close(std::string("forward, plan ") + c.plan, s, ch, e, kRelRms, kSpectrumMaxRel * e.ref_max);
            auto conv = reference_circular_convolution(channel_of(image, ch), channel_of(kernel, ch), s.m, s.n);
            ErrorStats f = compare(conv, channel_of(out, ch));
            expect_close(std::string("filter, plan ") + c.plan, s, ch, f, kRelRms, 4 * kRelRms * f.ref_max);
        }
    }
}

// Whole row passes whose last round of workgroups would be sparse leave their last row pairs to a
// tail dispatch of one a workgroup beside them (ComputeFft::row_tail, FftOptions::compute_row_tail,
// fft_line.comp's LINE_OFFSET). The auto rule at the GPU's shapes (132 SMs, one workgroup of the
// row programs an SM at their register caps); on the GL here (no multiprocessor count) the option
// sets the tail, and forward, inverse alone, the round trip and the filter match FFTW with it at
// 40 x 24 (12 row pairs: 7 and a tail of 5) and 120 x 90 (45: 40 and 5), the tail whole or in
// halves or quarters (FftOptions::compute_tail_split; 36's quarters are odd, so whole). A tail
// that ignores its offset (LINE_OFFSET dropped) fails the forward at 40 x 24 (relative error 0.61).
// Filter batches (Fft2D::filter_batch: the compute backend runs each dispatch for every image
// before its barrier, with intermediates of its own for each) and work queued without a wait in
// between (the compute backend's last barrier has no image bit, so a run's first dispatches may
// start beside the last ones of the run before: ComputeFft::barrier_bits). Each result against
// FFTW, and a batch's bit for bit against the same images filtered one at a time. On llvmpipe the
// dispatches run one after the other; on a GPU a missing barrier shows here as wrong texels.
TEST(filter_batches_and_queued_work_match_fftw) {
    // Whole lines, a row tail beside the rows (40 x 24), the four-step route (8 x 2048).
    const Size sizes[] = {{64, 32}, {60, 30}, {40, 24}, {8, 2048}};
    for (const test::Chain& chain : test::chains())
        for (Size s : sizes) {
            if (!test::takes(chain, s)) continue;
            FftOptions o = chain.options;
            if (s.m == 40) o.compute_row_tail = 5;
            Fft2D& fft = *test::fft(s, o);
            const std::string what = chain.name + " " + std::to_string(s.m) + "x" + std::to_string(s.n);
            const std::vector<float> kernel = test::random_image(s, 21 + s.m);
            Filter filter(fft, kernel);
            std::vector<std::vector<float>> images;
            std::vector<Texture> inputs;
            std::vector<RenderTarget> outputs;
            for (unsigned i = 0; i < 3; ++i) {
                images.push_back(test::random_image(s, 40 + i + s.n));
                inputs.emplace_back(s.m, s.n);
                inputs.back().upload(images.back().data());
                outputs.emplace_back(s.m, s.n);
            }
            std::vector<const Texture*> in = {&inputs[0], &inputs[1], &inputs[2]};
            std::vector<RenderTarget*> out = {&outputs[0], &outputs[1], &outputs[2]};
            filter.apply(in, out);
            std::vector<std::vector<float>> batch;
            for (const RenderTarget& t : outputs) batch.push_back(t.download());
            for (size_t i = 0; i < images.size(); ++i) {
                for (int c = 0; c < 4; ++c) {
                    ErrorStats e = compare(reference_circular_convolution(channel_of(images[i], c), channel_of(kernel, c), s.m, s.n),
                                           channel_of(batch[i], c));
                    expect_close(what + " batch image " + std::to_string(i), s, c, e, kRelRms, 4 * kRelRms * e.ref_max);
                }
                filter.apply(inputs[i], outputs[i]);
                EXPECT(outputs[i].download() == batch[i], what, ": batch image ", i, " differs from the same image filtered alone");
            }
            // Queued, no read-back in between: a forward, a filter, an inverse of the forward's
            // spectrum, and a filter of the first filter's output (each run's first dispatches
            // store into what the run before last read, or read what it stored).
            RenderTarget spectrum(s.m, s.n), back(s.m, s.n), twice(s.m, s.n);
            fft.forward(inputs[0], spectrum);
            filter.apply(inputs[1], outputs[1]);
            fft.inverse(spectrum.texture(), back);
            filter.apply(outputs[1].texture(), twice);
            fft.forward(inputs[2], outputs[2]);
            const std::vector<float> got_spectrum = spectrum.download(), got_back = back.download(), got_twice = twice.download(),
                                     got_last = outputs[2].download();
            for (int c = 0; c < 4; ++c) {
                ErrorStats e = compare(reference_spectrum(channel_of(images[0], c), s.m, s.n), unpack_half(got_spectrum.data(), s.m, s.n, c));
                expect_close(what + " queued forward", s, c, e, kRelRms, kSpectrumMaxRel * e.ref_max);
                e = compare(channel_of(images[0], c), channel_of(got_back, c));
                expect_close(what + " queued inverse", s, c, e, kRelRms, 4 * kRelRms * e.ref_max);
                const auto once = reference_circular_convolution(channel_of(images[1], c), channel_of(kernel, c), s.m, s.n);
                e = compare(reference_circular_convolution(once, channel_of(kernel, c), s.m, s.n), channel_of(got_twice, c));
                expect_close(what + " queued filter of a filter", s, c, e, 2 * kRelRms, 8 * kRelRms * e.ref_max);
                e = compare(reference_spectrum(channel_of(images[2], c), s.m, s.n), unpack_half(got_last.data(), s.m, s.n, c));
                expect_close(what + " queued second forward", s, c, e, kRelRms, kSpectrumMaxRel * e.ref_max);
            }
            // A batch's images and outputs must pair up, and no two images share an output.
            auto refused = [&](std::vector<const Texture*> i, std::vector<RenderTarget*> o) {
                try {
                    filter.apply(i, o);
                } catch (const std::invalid_argument&) {
                    return true;
                }
                return false;
            };
            EXPECT(refused({&inputs[0], &inputs[1]}, {&outputs[0]}), what, ": a batch of 2 images and 1 output");
            EXPECT(refused({&inputs[0], &inputs[1]}, {&outputs[0], &outputs[0]}), what, ": two images into one output");
            EXPECT(refused({}, {}), what, ": an empty batch");
            RenderTarget small(2, 2);
            EXPECT(refused({&inputs[0]}, {&small}), what, ": an output of another size");
        }
}

TEST(row_tails_match_fftw) {
    const struct {
        int line_count, lines, threads, sm_count, tail;
    } rule[] = {{540, 2, 480, 132, 24},  // 1920x1080: rounds of 264 row pairs, the last 12
                {576, 2, 500, 132, 96},  // 2000x1152: the last 48
                {500, 4, 200, 132, 0},   // 1000^2: one round, not full
                {768, 2, 384, 132, 0},   // 1536^2: the last round 240 of 264
                {960, 4, 216, 132, 0},   // 1080x1920: 432 of 528
                {540, 2, 480, 0, 0}};    // no multiprocessor count
    for (auto r : rule)
        EXPECT(ComputeFft::auto_row_tail(r.line_count, r.lines, r.threads, r.sm_count) == r.tail, r.line_count, " row pairs of ", r.lines,
               " x ", r.threads, " on ", r.sm_count, " SMs: tail ", ComputeFft::auto_row_tail(r.line_count, r.lines, r.threads, r.sm_count),
               ", expected ", r.tail);
    test::context();
    if (!ComputeFft::supported()) return;
    const struct {
        Size size;
        int tail, parts;
    } cases[] = {{{40, 24}, 5, 1}, {{120, 90}, 5, 1}, {{40, 24}, -1, 1}, {{40, 24}, 5, 2}, {{120, 90}, 5, 4}, {{36, 24}, 5, 4}};
    for (auto [size, tail, parts] : cases) {
        FftOptions o;
        o.backend = Backend::Compute;
        o.compute_row_tail = tail;
        o.compute_tail_split = parts;
        // Quarters of 36 are odd: its tail stays whole.
        const int taken = size.m % (2 * parts) == 0 ? parts : 1;
        const std::string at = "row tail " + std::to_string(tail) + " in " + std::to_string(parts) + " parts";
        auto* fft = compute_fft(size, o, at);
        if (!fft) continue;
        int tails = 0;
        for (const std::string& d : fft->describe_dispatches()) {
            if (d.find("(tail)") == std::string::npos) continue;
            ++tails;
            EXPECT(d.rfind("rows", 0) == 0 && d.find(": " + std::to_string(tail * taken) + " workgroups of 1 x ") != std::string::npos, at, ": ", d);
            const std::string fused = "step A (" + std::to_string(taken) + " points) in its loads";
            EXPECT((d.find(fused) != std::string::npos) == (taken > 1), at, ": ", d);
        }
        EXPECT(tails == (tail > 0 ? 2 : 0), at, " at ", size.m, "x", size.n, ": ", tails, " tail dispatches");
        const Size s = size;
        expect_forward_and_back_match_fftw(at, *fft, s);
        expect_filter_matches_fftw(at, *fft, s);
        expect_inverse_matches_fftw(at + " (inverse alone)", *fft, s, 9 + s.m);
    }
}

// With --compute-fuse-tail on, a filter whose rows are channel pairs and whose columns split in
// fused halves leaves its last column step (the two-point step A inverse) to the inverse rows'
// loads: step B stores each element tangled alone (STORE_TANGLED), and the filter takes three
// dispatches (four with pair 0's). Each such filter matches FFTW: square, mixed (28 = 2 x 14, a
// 7), transposed, and a batch of two bit for bit the single filters (each image its own scratch).
// Where the columns do not split in halves (quarters), or the rows are row pairs, the tail stays.
TEST(column_tail_in_the_inverse_rows_loads) {
    test::context();
    if (!ComputeFft::supported()) return;
    const struct {
        Size size;
        int transpose;
        bool fused;
    } cases[] = {{{32, 32}, -1, true}, {{24, 28}, -1, true}, {{28, 24}, 1, true}, {{32, 64}, -1, false}, {{8, 32}, -1, false}};
    for (const auto& c : cases) {
        FftOptions o;
        o.backend = Backend::Compute;
        o.compute_max_line = 16;
        o.compute_fuse_tail = 1;
        o.compute_transpose = c.transpose;
        const Size s = c.size;
        const std::string at = "fused tail " + std::to_string(s.m) + "x" + std::to_string(s.n) + (c.transpose > 0 ? " transposed" : "");
        auto* fft = compute_fft(s, o, at);
        if (!fft) continue;
        int in_loads = 0, tails = 0;
        const std::vector<std::string> all = fft->describe_dispatches();
        for (const std::string& d : all) {
            in_loads += d.find("step A inverse (2 points) in its loads") != std::string::npos;
            tails += d.find(" A' ") != std::string::npos || d.find(" A':") != std::string::npos;
        }
        EXPECT(in_loads == (c.fused ? 1 : 0) && (!c.fused || (tails == 0 && all.size() == 4)), at, ": ", in_loads,
               " rows taking the tail, ", tails, " tail dispatches of ", all.size());
        expect_filter_matches_fftw(at, *fft, s);
        if (!c.fused) continue;
        expect_forward_and_back_match_fftw(at, *fft, s);
        expect_batch_matches_singles(at, *fft, s, 5 + s.m, 60);
    }
}

// A point-symmetric impulse response (k(-x, -y) = k(x, y)) has a real spectrum, and its filters
// multiply by the real part alone where the backend can (the compute backend's KERNEL_REAL: half
// the kernel's texels). The rule on grids and on kernels' taps (point symmetric but not mirror
// symmetric along either axis counts; an even box does not). Each chain filters by a symmetric
// kernel as FFTW does; given the caller's word for an asymmetric one, the compute backend filters
// by its even part (k(x, y) + k(-x, -y)) / 2, which shows the real path taken (the whole spectrum
// would give k's own convolution, far off), and the fragment chains, which read it all, by k.
// Routes: whole lines, channel-pair rows, a mixed size, the four-step chain, step B in bands with
// the reordered kernel, transposed filters, the columns' tail in the inverse rows' loads.
TEST(point_symmetric_kernels_multiply_by_a_real_spectrum) {
    {
        const Size s{6, 4};
        const std::vector<float> k = test::random_image(s, 3);
        std::vector<float> e = even_part(k, s);
        EXPECT(!point_symmetric(k, s.m, s.n) && point_symmetric(e, s.m, s.n), "point_symmetric() of a random grid and its even part");
        e[(1 * 6 + 2) * 4 + 3] += 1e-6f;  // one channel of one texel
        EXPECT(!point_symmetric(e, s.m, s.n), "point_symmetric() of a grid one value off");
    }
    for (auto [spec, yes] : {std::pair{"gaussian:2", true}, {"box:3", true}, {"disk:4", true}, {"identity", true}, {"box:4", false}})
        EXPECT(point_symmetric(parse_kernel(spec)) == yes, spec, ": point symmetric ", !yes);
    Kernel cross;  // a at (0, 0) and (2, 2), b at (2, 0) and (0, 2): point symmetric, not mirror symmetric
    cross.weights = Image(3, 3);
    cross.cx = cross.cy = 1;
    for (auto [x, y, v] : {std::tuple{0, 0, 1.0f}, {2, 2, 1.0f}, {2, 0, 3.0f}, {0, 2, 3.0f}, {1, 1, 5.0f}})
        for (int c = 0; c < 4; ++c) cross.weights.rgba[cross.weights.index(x, y) + static_cast<size_t>(c)] = v;
    EXPECT(point_symmetric(cross), "a point-symmetric cross");
    cross.cx = 0;
    EXPECT(!point_symmetric(cross), "the cross off its centre");
    cross.cx = 1;
    cross.weights.rgba[cross.weights.index(2, 2) + 1] = 2.0f;
    EXPECT(!point_symmetric(cross), "the cross with one channel of one tap changed");

    struct Case {
        std::string name;
        FftOptions options;
        Size size;
    };
    std::vector<Case> cases;
    for (const test::Chain& chain : test::chains())
        for (Size s : {Size{16, 64}, Size{120, 72}})
            if (test::takes(chain, s)) cases.push_back({chain.name, chain.options, s});
    if (ComputeFft::supported()) {
        FftOptions o;
        o.backend = Backend::Compute;
        FftOptions bands = o, transposed = o, tail = o;
        bands.compute_lines = 1;
        bands.compute_max_line = 64;
        transposed.compute_transpose = 1;
        tail.compute_max_line = 16;
        tail.compute_fuse_tail = 1;
        cases.push_back({"compute, step B in bands", bands, {64, 256}});
        cases.push_back({"compute, transposed", transposed, {48, 40}});
        cases.push_back({"compute, the columns' tail in the rows' loads", tail, {32, 32}});
    }
    for (const Case& c : cases) {
        const Size s = c.size;
        const std::string at = c.name + " at " + std::to_string(s.m) + "x" + std::to_string(s.n);
        Fft2D* fft = test::fft(s, c.options);
        const bool compute = dynamic_cast<ComputeFft*>(fft) != nullptr;
        const std::vector<float> image = test::random_image(s, 11 + s.m), k = test::random_image(s, 12 + s.n), even = even_part(k, s);
        Filter symmetric(*fft, even);
        EXPECT(symmetric.real_spectrum() && !Filter(*fft, k).real_spectrum(), at, ": real spectrum of the symmetric kernel ",
               symmetric.real_spectrum());
        Texture promised(s.m, s.n);
        promised.upload(k.data());
        Filter taken_at_its_word(*fft, promised, true);
        const std::vector<float> out = symmetric.apply(image), word = taken_at_its_word.apply(image);
        for (int ch = 0; ch < 4; ++ch) {
            const auto ref = reference_circular_convolution(channel_of(image, ch), channel_of(even, ch), s.m, s.n);
            ErrorStats e = compare(ref, channel_of(out, ch));
            expect_close(at + " (symmetric kernel)", s, ch, e, kRelRms, 4 * kRelRms * e.ref_max);
            const auto ref_word = compute ? ref : reference_circular_convolution(channel_of(image, ch), channel_of(k, ch), s.m, s.n);
            e = compare(ref_word, channel_of(word, ch));
            expect_close(at + (compute ? " (an asymmetric kernel as real: its even part)" : " (an asymmetric kernel as real: read whole)"), s, ch, e,
                         kRelRms, 4 * kRelRms * e.ref_max);
        }
    }
}

// The compute backend compiles a use's programs on its first use, all of them side by side, and
// nothing it does not run: a Filter compiles the forward (its kernel's spectrum) and the multiply
// its kernel takes when the kernel is set, so that applying it or running forward() compiles
// nothing more; the complex multiply and the inverse's columns wait until something runs them.
// Programs linked once are kept as the driver's binaries (program_binaries.h) and linked from them
// by later caches: the same results, nothing compiled; a binary whose check or length is wrong is
// compiled again and replaced; "off" and a directory that cannot be made keep nothing.
TEST(programs_link_from_their_binaries_kept_on_disk) {
    test::context();
    if (!ComputeFft::supported()) return;
    const char* before = std::getenv("GPUFFT_PROGRAM_CACHE");
    const std::string saved = before ? before : "";
    char tmpl[] = "/tmp/gpufft-binaries-XXXXXX";
    const std::string dir = mkdtemp(tmpl);
    setenv("GPUFFT_PROGRAM_CACHE", dir.c_str(), 1);
    FftOptions o;
    o.backend = Backend::Compute;
    const Size s{40, 24};
    const std::vector<float> image = test::random_image(s, 7), k = test::random_image(s, 8);
    auto filtered = [&](size_t& programs) {
        ProgramCache cache;
        ComputeFft fft(cache, s.m, s.n, o);
        Filter f(fft, k);
        std::vector<float> out = f.apply(image);
        programs = cache.size();
        return out;
    };
    auto files = [&] {
        std::vector<std::string> names;
        for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().string());
        return names;
    };
    size_t programs = 0;
    long loaded = ProgramBinaries::loaded(), stored = ProgramBinaries::stored();
    const std::vector<float> first = filtered(programs);
    const long made = ProgramBinaries::stored() - stored;
    if (!ProgramBinaries::current().on()) {
        std::printf("     (this GL offers no program binary formats: nothing kept)\n");
    } else {
        EXPECT(made == static_cast<long>(programs) && files().size() == programs && ProgramBinaries::loaded() == loaded, made,
               " binaries kept of ", programs, " programs, ", files().size(), " files");
        // Each binary linked is marked used (its time is what pruning goes by).
        const auto now = std::filesystem::file_time_type::clock::now();
        for (const std::string& f : files()) std::filesystem::last_write_time(f, now - std::chrono::hours(10));
        loaded = ProgramBinaries::loaded(), stored = ProgramBinaries::stored();
        EXPECT(filtered(programs) == first && ProgramBinaries::loaded() - loaded == static_cast<long>(programs) &&
                   ProgramBinaries::stored() == stored,
               ProgramBinaries::loaded() - loaded, " of ", programs, " programs linked from their binaries, or other results");
        size_t marked = 0;
        for (const std::string& f : files()) marked += std::filesystem::last_write_time(f) > now - std::chrono::hours(1);
        EXPECT(marked == programs, marked, " of ", programs, " binaries marked used when linked");
        // Every file's check hash changed, the file cut short, or a byte of its binary changed:
        // refused before the driver sees it.
        int kind = 0;
        for (const std::string& f : files()) {
            std::ifstream in(f, std::ios::binary);
            std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            in.close();
            if (kind == 0) bytes[9] = static_cast<char>(bytes[9] ^ 1);
            else if (kind == 1) bytes.resize(bytes.size() - 1);
            else bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x10);
            kind = (kind + 1) % 3;
            std::ofstream(f, std::ios::binary | std::ios::trunc) << bytes;
        }
        const long offered = ProgramBinaries::offered();
        loaded = ProgramBinaries::loaded(), stored = ProgramBinaries::stored();
        EXPECT(filtered(programs) == first && ProgramBinaries::offered() == offered && ProgramBinaries::loaded() == loaded &&
                   ProgramBinaries::stored() - stored == static_cast<long>(programs),
               "broken binaries: ", ProgramBinaries::offered() - offered, " given to the driver, ", ProgramBinaries::loaded() - loaded,
               " linked, ", ProgramBinaries::stored() - stored, " kept again");
        loaded = ProgramBinaries::loaded();
        EXPECT(filtered(programs) == first && ProgramBinaries::loaded() - loaded == static_cast<long>(programs),
               "the binaries kept again: ", ProgramBinaries::loaded() - loaded, " linked");
    }
    // Off, and a directory under a file: nothing kept, the same results.
    for (const std::string& where : {std::string("off"), dir + "/" + "x/y"}) {
        if (where != "off") std::ofstream(dir + "/x") << "a file";
        setenv("GPUFFT_PROGRAM_CACHE", where.c_str(), 1);
        stored = ProgramBinaries::stored(), loaded = ProgramBinaries::loaded();
        EXPECT(!ProgramBinaries::current().on() && filtered(programs) == first && ProgramBinaries::stored() == stored &&
                   ProgramBinaries::loaded() == loaded,
               where, ": binaries kept or linked");
    }
    if (before) setenv("GPUFFT_PROGRAM_CACHE", saved.c_str(), 1);
    else unsetenv("GPUFFT_PROGRAM_CACHE");
    std::filesystem::remove_all(dir);
}

// Past ProgramBinaries::max_bytes, a store removes the least recently used binaries until three
// quarters remain: the oldest go, the newest and the one just kept stay.
TEST(program_binaries_keep_the_last_used_under_their_bound) {
    test::context();
    namespace fs = std::filesystem;
    const char* before = std::getenv("GPUFFT_PROGRAM_CACHE");
    const std::string saved = before ? before : "";
    char tmpl[] = "/tmp/gpufft-binaries-XXXXXX";
    const std::string dir = mkdtemp(tmpl);
    setenv("GPUFFT_PROGRAM_CACHE", dir.c_str(), 1);
    if (ProgramBinaries::current().on()) {
        // Ten binaries of 100 KB, the first used ten hours ago, the last one hour ago.
        const std::uintmax_t fake = 100000, limit = ProgramBinaries::max_bytes;
        const auto now = fs::file_time_type::clock::now();
        for (int i = 0; i < 10; ++i) {
            const std::string f = dir + "/old" + std::to_string(i) + ".bin";
            std::ofstream(f, std::ios::binary) << std::string(fake, 'x');
            fs::last_write_time(f, now - std::chrono::hours(10 - i));
        }
        std::ofstream(dir + "/other.txt") << std::string(fake, 'y');  // not a binary: never counted or removed
        ProgramBinaries::max_bytes = 10 * fake + 1000;
        ProgramCache cache;
        const long stored = ProgramBinaries::stored();
        cache.get({"", "serialize.comp", {"GPUFFT_TEST_PRUNE " + std::to_string(getpid())}, false});
        ProgramBinaries::max_bytes = limit;
        std::uintmax_t total = 0;
        int first_left = 10, olds = 0;
        bool kept = false;
        for (const auto& e : fs::directory_iterator(dir)) {
            const std::string name = e.path().filename().string();
            if (e.path().extension() != ".bin") continue;
            total += e.file_size();
            if (name.rfind("old", 0) == 0) {
                first_left = std::min(first_left, std::stoi(name.substr(3)));
                ++olds;
            } else {
                kept = true;
            }
        }
        EXPECT(ProgramBinaries::stored() == stored + 1 && kept && total <= (10 * fake + 1000) / 4 * 3 && olds == 10 - first_left &&
                   olds > 0 && fs::exists(dir + "/other.txt"),
               "after pruning: ", total, " bytes, ", olds, " old binaries from old", first_left, kept ? "" : ", the new one gone");
    }
    if (before) setenv("GPUFFT_PROGRAM_CACHE", saved.c_str(), 1);
    else unsetenv("GPUFFT_PROGRAM_CACHE");
    fs::remove_all(dir);
}

TEST(compute_programs_compile_per_use) {
    test::context();
    if (!ComputeFft::supported()) return;
    FftOptions o;
    o.backend = Backend::Compute;
    for (Size s : {Size{24, 20}, Size{120, 72}}) {
        const std::string at = std::to_string(s.m) + "x" + std::to_string(s.n);
        ProgramCache cache;
        ComputeFft fft(cache, s.m, s.n, o);
        const size_t made = cache.size();
        const std::vector<float> image = test::random_image(s, 5), k = test::random_image(s, 6);
        Filter symmetric(fft, even_part(k, s));
        const size_t set = cache.size();
        EXPECT(symmetric.real_spectrum() && set > made, at, ": the symmetric kernel's filter compiled nothing (", made, " programs)");
        symmetric.apply(image);
        fft.forward(image);
        EXPECT(cache.size() == set, at, ": applying the filter or running forward() compiled ", cache.size() - set,
               " programs its kernel's setting had not");
        Filter complex(fft, k);
        const size_t complex_set = cache.size();
        EXPECT(complex_set > set, at, ": the complex multiply was compiled before a filter asked for it");
        complex.apply(image);
        EXPECT(cache.size() == complex_set, at, ": the complex filter compiled ", cache.size() - complex_set, " programs on first use");
        const std::vector<float> back = fft.inverse(fft.forward(image));
        EXPECT(cache.size() > complex_set, at, ": the inverse's columns were compiled before inverse() ran");
        const ErrorStats e = compare(std::vector<double>(image.begin(), image.end()), std::vector<double>(back.begin(), back.end()));
        EXPECT(e.rel_rms <= kRelRms, at, ": inverse of forward, rel RMS ", e.rel_rms);
    }
}

// A whole-line compute program holds its line's own length as a literal and the grid's other
// side and line counts as uniforms (fft_line.comp's u_grid, u_lines), so grids that share a width
// share their row programs and grids that share a height their column programs: after 32x24 and
// 48x40 have filtered, transformed and transformed back, 32x40 and 48x24 compile nothing, and
// every grid, each run after another grid has used its programs, matches FFTW (a program left
// with another grid's uniforms fails that; so does a build that keys programs by the grid). On
// whole lines and row tails of 5 row pairs; the four-step route (lines over 16 points), whose
// steps keep the grid literal, matches FFTW the same way.
TEST(compute_programs_serve_every_grid_of_their_lines) {
    test::context();
    if (!ComputeFft::supported()) return;
    FftOptions whole, four_step, tails;
    whole.backend = four_step.backend = tails.backend = Backend::Compute;
    four_step.compute_max_line = 16;
    tails.compute_row_tail = 5;
    const std::pair<const char*, FftOptions> chains[] = {{"whole lines", whole}, {"four-step", four_step}, {"row tails", tails}};
    for (const auto& [name, o] : chains) {
        ProgramCache cache;
        std::map<std::pair<int, int>, std::unique_ptr<ComputeFft>> ffts;
        auto run = [&](Size s) {
            auto& fft = ffts[{s.m, s.n}];
            if (!fft) fft = std::make_unique<ComputeFft>(cache, s.m, s.n, o);
            const std::string what = std::string(name) + " " + std::to_string(s.m) + "x" + std::to_string(s.n);
            expect_filter_matches_fftw(what, *fft, s);
            expect_forward_and_back_match_fftw(what, *fft, s);
        };
        run({32, 24});
        run({48, 40});
        const size_t made = cache.size();
        for (Size s : {Size{32, 40}, Size{48, 24}, Size{32, 24}, Size{48, 40}}) run(s);
        EXPECT(o.compute_max_line || cache.size() == made, name, ": grids sharing a width or height compiled ", cache.size() - made,
               " programs more than the ", made, " of 32x24 and 48x40");
    }
}

// Convolver::prepare_programs() compiles every grid's filter programs at once: after it, images of
// those sizes (three grids) compile nothing more than the first image's own sample programs; a
// build whose prepare_programs() compiles nothing, or another grid's, fails that. The batch shares
// its lengths first, as fftfilter does.
TEST(convolver_prepares_every_grid_of_a_batch) {
    test::context();
    if (!ComputeFft::supported()) return;
    ProgramCache cache;
    ConvolveOptions o;
    o.fft.backend = Backend::Compute;
    Convolver convolver(cache, parse_kernel("gaussian:1"), o);
    const std::vector<std::array<int, 2>> sizes = {{18, 13}, {29, 17}, {38, 26}};
    convolver.share_lengths(sizes);
    std::set<std::pair<int, int>> grids;
    for (const auto& [w, h] : sizes) grids.insert({convolver.tiling(w, h).first.fft, convolver.tiling(w, h).second.fft});
    EXPECT(grids.size() == 3, "the sizes take ", grids.size(), " grids, not 3");
    convolver.prepare_programs(sizes);
    const size_t prepared = cache.size();
    EXPECT(prepared > 0, "prepare_programs() compiled nothing");
    size_t after_first = 0;
    for (const auto& [w, h] : sizes) {
        Image image(w, h);
        for (size_t i = 0; i < image.rgba.size(); ++i) image.rgba[i] = static_cast<float>(i % 7) / 7;
        convolver.apply(image);
        if (!after_first) after_first = cache.size();
        EXPECT(cache.size() == after_first, w, "x", h, ": compiled ", cache.size() - after_first, " programs after prepare_programs() (",
               prepared, " prepared, the first image's ", after_first - prepared, " more)");
    }
}

// Where filters run transposed, the kernel is the transposed problem's forward of the impulse
// response, so a Filter makes the M x N spectrum only when spectrum() is first asked for: until
// then it compiles none of this transform's forward programs. Asked for, the spectrum is the
// forward of the impulse response as it was given, though the caller's texture changed since,
// and the filter's results stay bit for bit those of a filter made from that impulse response.
TEST(transposed_filter_makes_its_spectrum_when_asked) {
    test::context();
    if (!ComputeFft::supported()) return;
    ProgramCache cache;
    FftOptions o;
    o.backend = Backend::Compute;
    o.compute_transpose = 1;
    const Size s{40, 48};
    ComputeFft fft(cache, s.m, s.n, o);
    EXPECT(fft.transposed() && !fft.kernel_reads_spectrum(), "40x48 with --compute-transpose on: not transposed");
    const std::vector<float> kernel = test::random_image(s, 11);
    Texture impulse(s.m, s.n), frame(s.m, s.n);
    impulse.upload(kernel.data());
    frame.upload(test::random_image(s, 13).data());
    Filter filter(fft, impulse);
    impulse.upload(test::random_image(s, 12).data());  // the caller's texture changes
    RenderTarget out(s.m, s.n);
    filter.apply(frame, out);
    const std::vector<float> filtered = out.download();
    const size_t programs = cache.size();
    const std::vector<float> spectrum = filter.spectrum().download();
    EXPECT(cache.size() > programs, "the spectrum's forward was compiled before spectrum() asked for it (", programs, " programs)");
    Texture original(s.m, s.n);
    original.upload(kernel.data());
    RenderTarget expected(s.m, s.n);
    fft.forward(original, expected);
    EXPECT(spectrum == expected.download(), "spectrum() is not the forward of the impulse response as given");
    filter.apply(frame, out);
    EXPECT(out.download() == filtered, "the filter changed once its spectrum was made");
    Filter fresh(fft, kernel);
    fresh.apply(frame, out);
    EXPECT(out.download() == filtered, "a filter made from the impulse response's floats filters otherwise");
    // Not transposed: the spectrum is made with the kernel, as before.
    o.compute_transpose = -1;
    ComputeFft plain(cache, s.m, s.n, o);
    EXPECT(plain.kernel_reads_spectrum(), "not transposed, yet the kernel skips the spectrum");
}

// The device rows' measured line plans (ComputeTuning::line_plans): the GPU row's 1000 as 8 5 5 5
// with 200 threads, 1920 as 6 4 4 4 5 with 480, 1152 as 4 4 4 6 3 with 384 and 1080 as 6 6 6 5 on
// the rows and 4 2 5 3 3 3 with 360 on the columns, 3000 as 6 5 5 5 4 with 750 on the columns, each
// row's text a valid plan; --compute-plan overrides them per length (on both axes, where it names the
// length on either), and a --compute-radix (a tuning run of the planner's radix) sets them aside;
// the cost model follows.
TEST(device_rows_measured_plans_yield_to_the_options) {
    for (bool software : {false, true}) {
        bool parses = true;
        try {
            ComputeFft::parse_plans(compute_tuning(software).line_plans);
        } catch (const std::exception&) {
            parses = false;
        }
        EXPECT(parses, compute_tuning(software).device, ": line_plans \"", compute_tuning(software).line_plans, "\" does not parse");
    }
    const ComputeTuning& gpu = compute_tuning(false);
    FftOptions o;
    ComputeFft::PlanChoice c = ComputeFft::chosen_plans(o, gpu);
    EXPECT(c.lines.count(1000) && c.lines.at(1000).forward == (std::vector<int>{8, 5, 5, 5}) && c.lines.at(1000).threads == 200,
           "the GPU row's plan of 1000 is not 8x5x5x5 with 200 threads");
    EXPECT(c.lines.count(1920) && c.lines.at(1920).forward == (std::vector<int>{6, 4, 4, 4, 5}) && c.lines.at(1920).threads == 480,
           "the GPU row's plan of 1920 is not 6x4x4x4x5 with 480 threads");
    EXPECT(c.lines.count(1152) && c.lines.at(1152).forward == (std::vector<int>{4, 4, 4, 6, 3}) && c.lines.at(1152).threads == 384 &&
               c.lines.at(1152).registers == 6,
           "the GPU row's plan of 1152 is not 4x4x4x6x3 with 384 threads of 6 registers");
    // 1080: 6 6 6 5 on the rows, 4 2 5 3 3 3 with 360 threads on the columns.
    using Axis = ComputeFft::Axis;
    EXPECT(ComputeFft::line_plan(1080, 4, c, Axis::Rows).forward == (std::vector<int>{6, 6, 6, 5}) &&
               ComputeFft::line_plan(1080, 4, c, Axis::Columns).forward == (std::vector<int>{4, 2, 5, 3, 3, 3}) &&
               ComputeFft::line_plan(1080, 4, c, Axis::Columns).threads == 360 &&
               ComputeFft::line_plan(1920, 4, c, Axis::Columns).forward == ComputeFft::line_plan(1920, 4, c, Axis::Rows).forward,
           "the GPU row's plans of 1080 are not 6x6x6x5 on the rows and 4x2x5x3x3x3/360 on the columns");
    // 3000: 6 5 5 5 4 (750 threads) on the columns; the rows (6000's channel pairs) the planner's.
    EXPECT(ComputeFft::line_plan(3000, 4, c, Axis::Columns).forward == (std::vector<int>{6, 5, 5, 5, 4}) &&
               ComputeFft::line_plan(3000, 4, c, Axis::Columns).threads == 750 &&
               ComputeFft::line_plan(3000, 4, c, Axis::Rows).forward == ComputeFft::plan_line(3000, 4, 1024).forward,
           "the GPU row's plans of 3000 are not 6x5x5x5x4/750 on the columns and the planner's on the rows");
    EXPECT(ComputeFft::chosen_plans(o, compute_tuning(true)).lines.empty(), "the software row has measured plans");
    o.compute_plan = "1000:10x10x10,1920:8x8x6x5";
    c = ComputeFft::chosen_plans(o, gpu);
    EXPECT(c.lines.at(1000).forward == (std::vector<int>{10, 10, 10}) && c.lines.count(1920) && c.lines.count(1080) && c.columns.count(1080),
           "--compute-plan does not win over the row, or the row's other plans are lost");
    // A length the option names, on either axis, takes the option's plans alone there.
    o.compute_plan = "1080:8x5x3x3x3";
    c = ComputeFft::chosen_plans(o, gpu);
    EXPECT(ComputeFft::line_plan(1080, 4, c, Axis::Columns).forward == (std::vector<int>{8, 5, 3, 3, 3}) && !c.columns.count(1080),
           "--compute-plan 1080:... does not set the row's column plan of 1080 aside");
    o.compute_plan = "rows:1080:8x5x3x3x3";
    c = ComputeFft::chosen_plans(o, gpu);
    EXPECT(ComputeFft::line_plan(1080, 4, c, Axis::Rows).forward == (std::vector<int>{8, 5, 3, 3, 3}) &&
               ComputeFft::line_plan(1080, 4, c, Axis::Columns).forward == ComputeFft::plan_line(1080, 4, 1024).forward,
           "--compute-plan rows:1080:... leaves the columns of 1080 to the row's plan, not the planner's");
    o.compute_plan.clear();
    o.compute_radix = 8;
    EXPECT(ComputeFft::chosen_plans(o, gpu).lines.empty(), "--compute-radix does not set the row's plans aside");
}

// The register caps NVIDIA's compiler gave workgroups of these sizes, read from the H100's machine
// code (test/nv_isa.py, driver 580, 2026-11-24): ComputeFft::register_cap must reproduce them,
// since the mixed columns' lines per workgroup are chosen by it.
TEST(register_caps_match_the_machine_code) {
    struct Case {
        int threads, cap;
    };
    for (Case c : {Case{32, 255}, {256, 255}, {270, 168}, {360, 168}, {400, 128}, {512, 128}, {576, 96}, {600, 96},
                   {720, 80}, {768, 80}, {800, 72}, {864, 72}, {960, 64}, {1000, 64}, {1024, 64}})
        EXPECT(ComputeFft::register_cap(c.threads) == c.cap, c.threads, " threads: cap ", ComputeFft::register_cap(c.threads),
               ", the compiler's ", c.cap);
}

// A program that does not compile or link throws GlError with the stage, the file and the
// driver's log (programs added at run time, as test/bench/passprobe does).
TEST(broken_programs_report_their_log) {
    test::context();
    add_program_source("test_broken.frag", "void main() {\n    gl_FragColor = vec4(1.0)\n}\n");   // no ';'
    add_program_source("test_no_main.frag", "void not_main() { gl_FragColor = vec4(1.0); }\n");
    struct Case {
        const char* fragment;
        const char* what;
    };
    for (const Case& c : {Case{"test_broken.frag", "cannot compile"}, Case{"test_no_main.frag", "cannot link"}}) {
        std::string message;
        try {
            GlProgram program(ProgramSpec{"quad.vert", c.fragment, {}, false});
        } catch (const GlError& e) {
            message = e.what();
        }
        const size_t log = message.find("): ") != std::string::npos ? message.find("): ") + 3 : message.find(": ", message.find(c.fragment)) + 2;
        EXPECT(message.find(c.what) != std::string::npos && message.find(c.fragment) != std::string::npos &&
                   log < message.size() && message.find_first_not_of(" \n", log) != std::string::npos && message.find('\0') == std::string::npos,
               c.fragment, ": \"", message, "\"");
    }
}

// ProgramCache::start issues compiles without waiting for them (a renderer keeps drawing while the
// driver compiles on its own threads); ready() takes one the driver has finished a call, get() and
// prepare() the others when asked for, and a broken one throws its log where it is taken.
TEST(started_programs_link_when_ready_or_asked) {
    test::context();
    add_program_source("test_broken_started.frag", "void main() {\n    gl_FragColor = vec4(1.0)\n}\n");   // no ';'
    ProgramCache cache;
    const ProgramSpec a{"quad.vert", "pass.frag", {"TEST_STARTED_A"}, true}, b{"quad.vert", "scale.frag", {"TEST_STARTED_B"}, true},
        c{"quad.vert", "pass.frag", {"TEST_STARTED_C"}, true}, d{"quad.vert", "scale.frag", {"TEST_STARTED_D"}, true};
    cache.start({a, b, a});
    EXPECT(cache.size() == 0 && cache.started() == 2, cache.size(), " linked, ", cache.started(), " started after starting two (one twice)");
    EXPECT(!cache.ready({a, b}) && cache.size() <= 1, "one ready() took ", cache.size(), " programs: at most one a call");
    EXPECT(!cache.ready({c}), "a program never started counts as ready");
    const auto until = std::chrono::steady_clock::now() + std::chrono::minutes(5);
    while (!cache.ready({a, b}) && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT(cache.size() == 2 && cache.started() == 0, cache.size(), " linked, ", cache.started(), " started once ready");
    EXPECT(cache.get(a).id() != 0 && cache.size() == 2, "a ready program compiled again");
    cache.start({c, d});
    EXPECT(cache.get(c).id() != 0 && cache.size() == 3 && cache.started() == 1, "get() of a started program: ", cache.size(), " linked, ",
           cache.started(), " started");
    cache.prepare({d, a});
    EXPECT(cache.size() == 4 && cache.started() == 0, "prepare() of a started program: ", cache.size(), " linked, ", cache.started(), " started");
    const ProgramSpec broken{"quad.vert", "test_broken_started.frag", {}, false};
    cache.start({broken});   // issued: its failure shows where it is taken
    std::string message;
    try {
        while (!cache.ready({broken}) && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    } catch (const GlError& e) {
        message = e.what();
    }
    EXPECT(message.find("cannot compile") != std::string::npos && message.find("test_broken_started.frag") != std::string::npos, "\"",
           message, "\"");
    EXPECT(cache.started() == 0 && cache.size() == 4, "a failed program stays: ", cache.size(), " linked, ", cache.started(), " started");
}

// ProgramCache::prepare issues every compile and link before waiting for any (drivers with
// parallel shader compiling run them side by side): each distinct program is compiled once, and
// in a batch with a broken program that program's log is thrown, every broken one alike.
TEST(prepared_programs_compile_once_and_report_failures) {
    test::context();
    add_program_source("test_broken_too.frag", "void main() {\n    gl_FragColor = vec4(1.0)\n}\n");   // no ';'
    ProgramCache cache;
    const ProgramSpec a{"quad.vert", "pass.frag", {}, true}, b{"quad.vert", "scale.frag", {}, true};
    cache.prepare({a, b, a});
    EXPECT(cache.size() == 2, cache.size(), " programs after preparing two (one twice)");
    const GlProgram* first = &cache.get(a);
    cache.prepare({a});
    EXPECT(cache.size() == 2 && &cache.get(a) == first && first->id() != 0, "a prepared program compiled again");
    std::string message;
    try {
        cache.prepare({ProgramSpec{"quad.vert", "pass.frag", {"TEST_VARIANT"}, true}, ProgramSpec{"quad.vert", "test_broken_too.frag", {}, false}});
    } catch (const GlError& e) {
        message = e.what();
    }
    EXPECT(message.find("cannot compile") != std::string::npos && message.find("test_broken_too.frag") != std::string::npos, "\"", message,
           "\"");
}
