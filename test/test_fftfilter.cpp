// fftfilter and the image layer under it: every PNG format, boundary rules against independent
// references, tiles, bad input (issue: "fftfilter: batch filtering of PNG files").
#include "app/cli.h"
#include "check.h"
#include "common.h"
#include "png_fixture.h"
#include "tool.h"

#include "app/batch.h"
#include "fft/filter.h"
#include "reference/reference.h"
#include "image/colour.h"
#include "image/files.h"
#include "image/deflate.h"
#include "image/gpu_deflate.h"
#include "image/gpu_samples.h"
#include "image/inflate.h"
#include "image/convolve.h"
#include "image/kernels.h"
#include "image/png_io.h"

#include <libdeflate.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <future>
#include <map>
#include <random>
#include <set>
#include <thread>

using namespace gpufft;
using fixture::RawPng;
using test::TempDir;

namespace {

// A float result and a double reference, each quantised to the output depth, may straddle one
// rounding boundary: "within one output step".
constexpr int kSteps = 1;
// Float convolution against a double reference on [0, 1] data: a few float roundings of the
// FFT chain (rel. RMS ~1e-7) on values of order 1.
constexpr double kFloatMaxAbs = 2e-6;

struct Format {
    int color_type, depth;
    bool trns;
};
const Format kFormats[] = {{0, 1, false}, {0, 2, false}, {0, 4, false}, {0, 8, false}, {0, 16, false},
                           {0, 8, true},  {0, 16, true}, {4, 8, false}, {4, 16, false}, {2, 8, false},
                           {2, 16, false}, {2, 8, true}, {6, 8, false}, {6, 16, false}, {3, 1, false},
                           {3, 2, false}, {3, 4, false}, {3, 8, false}, {3, 4, true},  {3, 8, true}};

std::string name_of(const Format& f, bool interlace) {
    return "t" + std::to_string(f.color_type) + "d" + std::to_string(f.depth) + (f.trns ? "trns" : "") +
           (interlace ? "i" : "") + ".png";
}

/// The fixtures of every format, interlaced and not, written into dir; returns them by file name.
std::map<std::string, RawPng> write_fixtures(const TempDir& dir, int w, int h, unsigned seed) {
    std::map<std::string, RawPng> out;
    for (const Format& f : kFormats)
        for (bool interlace : {false, true}) {
            RawPng p = fixture::random_png(w, h, f.color_type, f.depth, interlace, f.trns, seed++);
            std::string name = name_of(f, interlace);
            EXPECT(fixture::write_file(dir / name, fixture::encode(p)), "cannot write ", name);
            out[name] = p;
        }
    return out;
}

Image expected_image(const RawPng& p) {
    Image img(p.width, p.height);
    for (int y = 0; y < p.height; ++y)
        for (int x = 0; x < p.width; ++x) {
            auto e = p.expected(x, y);
            std::copy(e.begin(), e.end(), img.at(x, y));
        }
    return img;
}

long quantise(double v, int depth) {
    double max = (1 << depth) - 1;
    return std::lround(std::min(std::max(v, 0.0), 1.0) * max);
}

/// The output colour type fftfilter must keep for an input format.
int output_type(const RawPng& p) {
    bool alpha = p.color_type == 4 || p.color_type == 6 || p.trns_grey >= 0 || p.trns_rgb[0] >= 0 || !p.trns_alpha.empty();
    if (p.color_type == 3) return alpha ? 6 : 2;
    if (p.color_type == 0 || p.color_type == 4) return alpha ? 4 : 0;
    return alpha ? 6 : 2;
}

// --- Independent references -------------------------------------------------------------

/// The boundary rules written out again, for references that must not share the library's code.
long long edge(long long i, long long n, Boundary b) {
    if (i >= 0 && i < n) return i;
    if (b == Boundary::Zero) return -1;
    if (b == Boundary::Clamp) return i < 0 ? 0 : n - 1;
    if (b == Boundary::Wrap) return ((i % n) + n) % n;
    // reflect, half-sample symmetric: -1 -> 0, -2 -> 1, n -> n-1
    while (i < 0 || i >= n) i = i < 0 ? -1 - i : 2 * n - 1 - i;
    return i;
}

/// Direct spatial convolution in double: out(x,y) = sum k(i,j) in(x + cx - i, y + cy - j).
Image direct_convolution(const Image& in, const Kernel& k, Boundary b) {
    Image out(in.width, in.height);
    for (int y = 0; y < in.height; ++y)
        for (int x = 0; x < in.width; ++x)
            for (int c = 0; c < 4; ++c) {
                double sum = 0;
                for (int j = 0; j < k.weights.height; ++j)
                    for (int i = 0; i < k.weights.width; ++i) {
                        long long sx = edge(x + k.cx - i, in.width, b), sy = edge(y + k.cy - j, in.height, b);
                        if (sx >= 0 && sy >= 0) sum += double(k.weights.at(i, j)[c]) * in.at(int(sx), int(sy))[c];
                    }
                out.at(x, y)[c] = static_cast<float>(sum);
            }
    return out;
}

/// The same through FFTW in double: pad by the rule to (w + kw - 1) x (h + kh - 1), convolve
/// circularly, crop.
std::vector<std::vector<double>> fftw_convolution(const Image& in, const Kernel& k, Boundary b) {
    const int pw = in.width + k.weights.width - 1, ph = in.height + k.weights.height - 1;
    const int lx = k.weights.width - 1 - k.cx, ly = k.weights.height - 1 - k.cy;
    std::vector<std::vector<double>> out(4);
    for (int c = 0; c < 4; ++c) {
        std::vector<double> padded(static_cast<size_t>(pw) * ph, 0.0), kernel(padded.size(), 0.0);
        for (int t = 0; t < ph; ++t)
            for (int s = 0; s < pw; ++s) {
                long long sx = edge(s - lx, in.width, b), sy = edge(t - ly, in.height, b);
                if (sx >= 0 && sy >= 0) padded[static_cast<size_t>(t) * pw + s] = in.at(int(sx), int(sy))[c];
            }
        for (int j = 0; j < k.weights.height; ++j)
            for (int i = 0; i < k.weights.width; ++i) kernel[static_cast<size_t>(j) * pw + i] = k.weights.at(i, j)[c];
        std::vector<double> full = reference_circular_convolution(padded, kernel, pw, ph);
        out[c].resize(in.pixels());
        for (int y = 0; y < in.height; ++y)
            for (int x = 0; x < in.width; ++x)
                out[c][static_cast<size_t>(y) * in.width + x] =
                    full[static_cast<size_t>(y + k.weights.height - 1) * pw + x + k.weights.width - 1];
    }
    return out;
}

double max_abs_difference(const Image& a, const Image& b) {
    double worst = 0;
    for (size_t i = 0; i < a.rgba.size(); ++i) worst = std::max(worst, std::abs(double(a.rgba[i]) - b.rgba[i]));
    return worst;
}

std::string tool() { return test::bin_dir() + "/fftfilter"; }

Image random_unit_image(int w, int h, unsigned seed) {
    Image img(w, h);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    for (float& v : img.rgba) v = u(rng);
    return img;
}

ConvolveOptions with(Boundary b, int max_fft = 0) {
    ConvolveOptions o;
    o.boundary = b;
    o.max_fft = max_fft;
    return o;
}

}  // namespace

TEST(reader_decodes_every_colour_type_and_depth) {
    TempDir dir;
    auto fixtures = write_fixtures(dir, 13, 7, 100);
    for (auto& [name, raw] : fixtures) {
        PngImage png = read_png(dir / name);
        EXPECT(png.image.width == raw.width && png.image.height == raw.height, name, ": size");
        int w = 0, h = 0;  // the header alone, for planning ahead
        EXPECT(png_dimensions(dir / name, w, h) && w == raw.width && h == raw.height, name, ": header gives ", w, "x", h);
        EXPECT(png.format.color_type == raw.color_type && png.format.bit_depth == raw.depth &&
                   png.format.interlaced == raw.interlace,
               name, ": format read as ", png.format.describe());
        Image expected = expected_image(raw);
        size_t differ = 0, first = 0;
        for (size_t i = 0; i < expected.rgba.size(); ++i)
            if (expected.rgba[i] != png.image.rgba[i] && differ++ == 0) first = i;
        EXPECT(differ == 0, name, ": ", differ, " samples differ, first at pixel ", first / 4, " channel ", first % 4,
               ": expected ", expected.rgba[first], " got ", png.image.rgba[first]);
    }
    int w = 0, h = 0;
    const std::string gif = "GIF89a, not a PNG at all";
    fixture::write_file(dir / "not.png", fixture::Bytes(gif.begin(), gif.end()));
    EXPECT(!png_dimensions(dir / "not.png", w, h) && !png_dimensions(dir / "missing.png", w, h), "a non-PNG has no header");
}

TEST(identity_returns_every_format_pixel_for_pixel) {
    TempDir dir;
    auto fixtures = write_fixtures(dir, 21, 11, 200);
    test::Result r = test::run(tool() + " -q -k identity -o " + dir / "out" + " " + dir.path() + "/t*.png");
    EXPECT(r.status == 0, "exit ", r.status, ": ", r.err);
    for (auto& [name, raw] : fixtures) {
        PngImage out = read_png(dir / "out/" + name);
        int depth = raw.color_type == 3 ? 8 : std::max(raw.depth, output_type(raw) == 0 ? 1 : 8);
        EXPECT(out.format.color_type == output_type(raw) && out.format.bit_depth == depth &&
                   out.format.interlaced == raw.interlace,
               name, ": written as ", out.format.describe());
        Image expected = expected_image(raw);
        size_t differ = 0;
        int channels = out.format.has_alpha() ? 4 : 3;
        for (size_t p = 0; p < expected.pixels(); ++p)
            for (int c = 0; c < channels; ++c)
                differ += quantise(expected.rgba[4 * p + c], depth) != quantise(out.image.rgba[4 * p + c], depth);
        EXPECT(differ == 0, name, ": ", differ, " samples changed by the identity filter");
    }
}

TEST(filter_matches_fftw_convolution_in_every_format) {
    TempDir dir;
    auto fixtures = write_fixtures(dir, 40, 23, 300);
    const std::string spec = "gaussian:1.5";
    for (const char* backend : {"fftw", "fragment", "compute"})
    for (const char* mode : {"reflect", "zero"}) {
        std::string out = dir / (std::string("out-") + backend + mode);
        test::Result r = test::run(tool() + " -q --backend " + backend + " -k " + spec + " -b " + mode + " -o " + out + " " +
                                   dir.path() + "/t*.png");
        EXPECT(r.status == 0, backend, " ", mode, ": exit ", r.status, ": ", r.err);
        Kernel k = parse_kernel(spec);
        for (auto& [name, raw] : fixtures) {
            PngImage got = read_png(out + "/" + name);
            auto ref = fftw_convolution(expected_image(raw), k, parse_boundary(mode));
            int depth = got.format.bit_depth, channels = got.format.has_alpha() ? 4 : 3;
            long worst = 0;
            for (size_t p = 0; p < got.image.pixels(); ++p)
                for (int c = 0; c < channels; ++c)
                    worst = std::max(worst, std::labs(quantise(ref[c][p], depth) - quantise(got.image.rgba[4 * p + c], depth)));
            EXPECT(worst <= kSteps, backend, " ", mode, " ", name, ": off by ", worst, " steps from FFTW's convolution");
        }
    }
}

// A batch of several sizes on the compute backend shares few grid lengths (share_lengths: the
// tool reads every file's header first), -v -v lists them, and each file's grid is the one the
// shared model tiles it with; --exact-grids gives each file its own best grid instead. Both
// filter as FFTW convolves (within one step), a grid shared or not; files of one size keep their
// own best grid.
TEST(batches_of_many_sizes_share_grid_lengths) {
    test::context();
    if (!ComputeFft::supported()) return;
    TempDir dir;
    const std::array<int, 2> sizes[] = {{18, 13}, {23, 17}, {27, 22}, {18, 13}};
    std::vector<RawPng> raws;
    for (size_t i = 0; i < std::size(sizes); ++i) {
        raws.push_back(fixture::random_png(sizes[i][0], sizes[i][1], 2, 8, false, false, 40u + static_cast<unsigned>(i)));
        EXPECT(fixture::write_file(dir / ("m" + std::to_string(i) + ".png"), fixture::encode(raws.back())), "cannot write m", i);
    }
    const std::string spec = "gaussian:1.5";
    const Kernel k = parse_kernel(spec);
    FftOptions compute;
    compute.backend = Backend::Compute;
    const LengthModel own = fft_lengths(compute);
    LengthModel shared = own;
    share_lengths(shared, {sizes[0], sizes[1], sizes[2]}, k, Boundary::Reflect, gpu_max_fft());
    std::set<int> lengths[2];  // the grids' lengths, shared and exact
    for (int exact = 0; exact < 2; ++exact) {
        const std::string out = dir / (exact ? "exact" : "shared");
        test::Result r = test::run(tool() + " -v -v -j 2 --backend compute -k " + spec + (exact ? " --exact-grids" : "") + " -o " + out + " " +
                                   dir.path() + "/m*.png");
        EXPECT(r.status == 0, exact ? "exact" : "shared", ": exit ", r.status, ": ", r.err.substr(0, 400));
        EXPECT((r.err.find("widths shared") == std::string::npos) == (exact == 1), exact ? "exact" : "shared", ": -v -v said ", r.err.substr(0, 400));
        for (size_t i = 0; i < std::size(sizes); ++i) {
            const std::string name = "m" + std::to_string(i) + ".png";
            const auto [x, y] = tile_image(sizes[i][0], sizes[i][1], k, Boundary::Reflect, {gpu_max_fft(), gpu_max_fft()}, exact ? own : shared);
            const std::string grid = "1 tile of " + std::to_string(x.fft) + "x" + std::to_string(y.fft);
            const size_t at = r.err.find("/" + name + " (");
            const std::string line = at == std::string::npos ? "" : r.err.substr(at, r.err.find('\n', at) - at);
            EXPECT(line.find(": " + grid + ",") != std::string::npos, exact ? "exact " : "shared ", name, ": not on ", grid, ": ", line);
            lengths[exact].insert({x.fft, y.fft});
            PngImage got = read_png(out + "/" + name);
            const auto ref = fftw_convolution(expected_image(raws[i]), k, Boundary::Reflect);
            long worst = 0;
            for (size_t p = 0; p < got.image.pixels(); ++p)
                for (int c = 0; c < 3; ++c) worst = std::max(worst, std::labs(quantise(ref[c][p], 8) - quantise(got.image.rgba[4 * p + c], 8)));
            EXPECT(worst <= kSteps, exact ? "exact " : "shared ", name, ": off by ", worst, " steps from FFTW's convolution");
        }
    }
    EXPECT(lengths[0].size() < lengths[1].size(), "shared grids take ", lengths[0].size(), " lengths, exact ones ", lengths[1].size());
    // One size, twice: its own best grid.
    LengthModel one = own;
    share_lengths(one, {sizes[0], sizes[0]}, k, Boundary::Reflect, gpu_max_fft());
    const auto [ox, oy] = tile_image(18, 13, k, Boundary::Reflect, {gpu_max_fft(), gpu_max_fft()}, one);
    const auto [bx, by] = tile_image(18, 13, k, Boundary::Reflect, {gpu_max_fft(), gpu_max_fft()}, own);
    EXPECT(ox.fft == bx.fft && oy.fft == by.fft, "a batch of one size left its best grid: ", ox.fft, "x", oy.fft, " for ", bx.fft, "x", by.fft);
}

TEST(wrap_on_power_of_two_equals_the_core_filter) {
    test::context();
    Kernel k = parse_kernel("motion:9,20");
    Image img = random_unit_image(64, 32, 5);
    // The core filter with the kernel placed circularly, centre at (0, 0).
    std::vector<float> impulse(img.rgba.size(), 0.0f);
    for (int j = 0; j < k.weights.height; ++j)
        for (int i = 0; i < k.weights.width; ++i)
            for (int c = 0; c < 4; ++c)
                impulse[img.index(((i - k.cx) % 64 + 64) % 64, ((j - k.cy) % 32 + 32) % 32) + c] += k.weights.at(i, j)[c];
    std::vector<float> core = Filter(*test::fft({64, 32}), impulse).apply(img.rgba);
    Image wrapped = Convolver(test::programs(), k, with(Boundary::Wrap)).apply(img);
    EXPECT(wrapped.rgba == core, "wrap differs from the core filter");

    // And through the tool, with a 16-bit PNG.
    TempDir dir;
    RawPng raw = fixture::random_png(64, 32, 6, 16, false, false, 9);
    fixture::write_file(dir / "in.png", fixture::encode(raw));
    // The same backend on both sides (on a GPU, auto would take compute for the core filter).
    FftOptions fragment;
    fragment.backend = Backend::Fragment;
    core = Filter(*test::fft({64, 32}, fragment), impulse).apply(expected_image(raw).rgba);
    test::Result r = test::run(tool() + " -q --backend fragment -k motion:9,20 -b wrap " + dir / "in.png" + " -o " + dir / "out.png");
    EXPECT(r.status == 0, r.err);
    PngImage out = read_png(dir / "out.png");
    size_t differ = 0;
    for (size_t i = 0; i < core.size(); ++i) differ += quantise(core[i], 16) != quantise(out.image.rgba[i], 16);
    EXPECT(differ == 0, differ, " samples of the tool's wrap output differ from the core filter");
}

// Issue 15: grids are the fast size the backend's cost model picks from image + kernel - 1, not the
// next power of two, and wrap on a size the backend takes transforms exactly that size.
TEST(grids_follow_the_image_not_powers_of_two) {
    test::context();
    Kernel k = parse_kernel("gaussian:8");  // 65 x 65 taps: 36 + 64 = 100 (a power of two: 128)
    Image img = random_unit_image(36, 36, 21);
    Convolver padded(test::programs(), k, with(Boundary::Reflect));
    Image gpu = padded.apply(img);
    const Convolver::Stats& st = padded.last();
    EXPECT(st.tiles == 1 && st.fft_width >= 100 && st.fft_width < 128 && st.fft_height >= 100 && st.fft_height < 128, st.tiles,
           " tiles of ", st.fft_width, "x", st.fft_height, " for 36x36 and 65 taps");
    double worst = max_abs_difference(gpu, direct_convolution(img, k, Boundary::Reflect));
    EXPECT(worst <= kFloatMaxAbs, "max abs ", worst, " from direct convolution on ", st.fft_width, "x", st.fft_height);

    TempDir dir;
    RawPng raw = fixture::random_png(60, 36, 2, 8, false, false, 22);
    fixture::write_file(dir / "in.png", fixture::encode(raw));
    Image ref = direct_convolution(expected_image(raw), parse_kernel("gaussian:2"), Boundary::Wrap);
    for (const char* backend : {"fragment", "compute"}) {  // auto takes FFTW on a software rasterizer
        const std::string out_png = dir / (std::string(backend) + ".png");
        test::Result r = test::run(tool() + " -v --backend " + backend + " -k gaussian:2 -b wrap " + dir / "in.png" + " -o " + out_png);
        EXPECT(r.status == 0 && r.err.find("1 tile of 60x36") != std::string::npos, backend, ": wrap on 60x36: ", r.err);
        if (r.status != 0) continue;
        PngImage out = read_png(out_png);
        long steps = 0;
        for (size_t p = 0; p < ref.pixels(); ++p)
            for (int c = 0; c < 3; ++c) steps = std::max(steps, std::labs(quantise(ref.rgba[4 * p + c], 8) - quantise(out.image.rgba[4 * p + c], 8)));
        EXPECT(steps <= 1, backend, ": wrap on 60x36: off by ", steps, " steps from direct convolution");
    }
}

TEST(depth_16_keeps_the_filters_fractions) {
    // --depth 16 writes an 8-bit input's result in 16 bits: within one 16-bit step of direct
    // convolution in double, where the 8-bit output is within one 8-bit step; the same colour
    // type, every backend. --depth 8 brings a 16-bit input's result down to 8 bits.
    TempDir dir;
    RawPng raw = fixture::random_png(60, 36, 2, 8, false, false, 41);  // grids_follow_...'s size and filter: its programs
    fixture::write_file(dir / "in.png", fixture::encode(raw));
    const Image ref = direct_convolution(expected_image(raw), parse_kernel("gaussian:2"), Boundary::Wrap);
    for (const char* backend : {"fftw", "fragment", "compute"}) {
        for (int depth : {16, 8}) {
            const std::string out_png = dir / (std::string(backend) + std::to_string(depth) + ".png");
            test::Result r = test::run(tool() + " -q --backend " + backend + " --depth " + std::to_string(depth) + " -b wrap -k gaussian:2 " +
                                       dir / "in.png" + " -o " + out_png);
            EXPECT(r.status == 0, backend, " --depth ", depth, ": exit ", r.status, ": ", r.err);
            if (r.status != 0) continue;
            PngImage out = read_png(out_png);
            EXPECT(out.format.bit_depth == depth && out.format.color_type == 2, backend, " --depth ", depth, ": colour type ",
                   out.format.color_type, ", depth ", out.format.bit_depth);
            long steps = 0, between = 0;  // off from the reference; 16-bit samples between 8-bit ones
            for (size_t p = 0; p < ref.pixels(); ++p)
                for (int c = 0; c < 3; ++c) {
                    const long v = quantise(out.image.rgba[4 * p + c], depth);
                    steps = std::max(steps, std::labs(quantise(ref.rgba[4 * p + c], depth) - v));
                    between += depth == 16 && v % 257 != 0;
                }
            EXPECT(steps <= kSteps, backend, " --depth ", depth, ": off by ", steps, " steps from direct convolution");
            if (depth == 16)
                EXPECT(between > static_cast<long>(ref.pixels()) * 3 * 9 / 10, backend, ": only ", between, " of ", ref.pixels() * 3,
                       " samples between the 8-bit steps");
        }
    }
    // Streamed by rows, the same file as whole.
    test::Result streamed = test::run(tool() + " -q --backend fftw --stream always --depth 16 -b wrap -k gaussian:2 " + dir / "in.png" +
                                      " -o " + dir / "streamed.png");
    EXPECT(streamed.status == 0 && test::read_bytes(dir / "streamed.png") == test::read_bytes(dir / "fftw16.png"),
           "--depth 16 streamed: exit ", streamed.status, ", ", streamed.err);
    RawPng deep = fixture::random_png(20, 12, 6, 16, false, false, 42);
    fixture::write_file(dir / "deep.png", fixture::encode(deep));
    test::Result r = test::run(tool() + " -q --depth 8 -k box:3 " + dir / "deep.png -o " + dir / "deep8.png");
    EXPECT(r.status == 0 && read_png(dir / "deep8.png").format.bit_depth == 8 && read_png(dir / "deep8.png").format.color_type == 6,
           "--depth 8 of a 16-bit RGBA input: ", r.err);
}

TEST(odd_sizes_match_direct_convolution) {
    test::context();
    Image img = random_unit_image(37, 91, 11);
    for (const char* spec : {"gaussian:2", "box:5x3", "motion:7,30", "disk:3.5", "sharpen:1"}) {
        Kernel k = parse_kernel(spec);
        for (Boundary b : {Boundary::Reflect, Boundary::Clamp, Boundary::Zero, Boundary::Wrap}) {
            Image gpu = Convolver(test::programs(), k, with(b)).apply(img);
            double worst = max_abs_difference(gpu, direct_convolution(img, k, b));
            EXPECT(worst <= kFloatMaxAbs, spec, " ", boundary_name(b), ": max abs ", worst, " from direct convolution");
        }
    }
    // Through the tool: 16-bit, within one step.
    TempDir dir;
    RawPng raw = fixture::random_png(37, 91, 2, 16, false, false, 12);
    fixture::write_file(dir / "in.png", fixture::encode(raw));
    for (const char* mode : {"reflect", "clamp", "zero"}) {
        test::Result r = test::run(tool() + " -q -k box:5x3 -b " + mode + " " + dir / "in.png" + " -o " + dir / (std::string(mode) + ".png"));
        EXPECT(r.status == 0, r.err);
        Image ref = direct_convolution(expected_image(raw), parse_kernel("box:5x3"), parse_boundary(mode));
        PngImage out = read_png(dir / (std::string(mode) + ".png"));
        long worst = 0;
        for (size_t p = 0; p < ref.pixels(); ++p)
            for (int c = 0; c < 3; ++c)
                worst = std::max(worst, std::labs(quantise(ref.rgba[4 * p + c], 16) - quantise(out.image.rgba[4 * p + c], 16)));
        EXPECT(worst <= kSteps, mode, ": 16-bit output off by ", worst, " steps from direct convolution");
    }
}

TEST(tiles_give_the_same_image_as_one_transform) {
    test::context();
    Image img = random_unit_image(100, 61, 13);
    Kernel k = parse_kernel("gaussian:2.5");  // 21 x 21 taps: blocks of 12 in a 32-point FFT
    for (Boundary b : {Boundary::Reflect, Boundary::Zero, Boundary::Wrap}) {
        Convolver tiled(test::programs(), k, with(b, 32));
        Image gpu = tiled.apply(img);
        // Blocks of fft - 20 (12 in a 32-point FFT; the cost model may take 28 or 24 instead).
        const Convolver::Stats& st = tiled.last();
        const int expected = ((100 + st.fft_width - 21) / (st.fft_width - 20)) * ((61 + st.fft_height - 21) / (st.fft_height - 20));
        EXPECT(st.fft_width <= 32 && st.fft_height <= 32 && st.tiles == expected && st.tiles > 1, boundary_name(b), ": ", st.tiles,
               " tiles of ", st.fft_width, "x", st.fft_height, ", expected ", expected);
        double worst = max_abs_difference(gpu, direct_convolution(img, k, b));
        EXPECT(worst <= kFloatMaxAbs, boundary_name(b), ": tiled result max abs ", worst, " from direct convolution");
    }
    // A kernel of one tap on an axis above the largest FFT, on each GL backend: the fast chain
    // threw ("...not 2": the tiler rated tiles of two points, which it cannot).
    for (Backend backend : {Backend::Fragment, Backend::Compute}) {
        ConvolveOptions o = with(Boundary::Reflect, 32);
        o.fft.backend = backend;
        Convolver tiled(test::programs(), parse_kernel("identity"), o);
        const Image got = tiled.apply(img);
        const double worst = max_abs_difference(got, img);
        EXPECT(tiled.last().tiles > 1 && worst <= kFloatMaxAbs, backend_name(backend), ": identity in ", tiled.last().tiles, " tiles of ",
               tiled.last().fft_width, "x", tiled.last().fft_height, ", max abs ", worst, " from the image");
    }
    bool threw = false;
    try {
        Convolver(test::programs(), parse_kernel("box:40"), with(Boundary::Reflect, 32)).apply(img);
    } catch (const Error& e) {
        threw = std::string(e.what()).find("no room") != std::string::npos;
    }
    EXPECT(threw, "a kernel wider than the largest FFT was not refused");
}

TEST(boundary_rules) {
    // reflect: ... 2 1 0 | 0 1 2 3 4 | 4 3 2 ...
    const long long reflect[] = {1, 0, 0, 1, 2, 3, 4, 4, 3};
    for (int i = -2; i < 7; ++i) EXPECT(boundary_index(i, 5, Boundary::Reflect) == reflect[i + 2], "reflect ", i);
    EXPECT(boundary_index(-12, 5, Boundary::Reflect) == edge(-12, 5, Boundary::Reflect), "reflect far out");
    EXPECT(boundary_index(-1, 5, Boundary::Clamp) == 0 && boundary_index(9, 5, Boundary::Clamp) == 4, "clamp");
    EXPECT(boundary_index(-1, 5, Boundary::Zero) == -1 && boundary_index(5, 5, Boundary::Zero) == -1, "zero");
    EXPECT(boundary_index(-1, 5, Boundary::Wrap) == 4 && boundary_index(11, 5, Boundary::Wrap) == 1, "wrap");
    EXPECT(boundary_index(-3, 1, Boundary::Reflect) == 0, "reflect on a 1-pixel axis");
}

TEST(impulse_uploaded_by_its_taps_equals_the_whole_grid) {
    // upload_impulse_response() clears the grid and uploads only the wrapped kernel's corner
    // blocks; the grid must hold exactly impulse_response()'s floats, mirrored or not, whatever
    // the kernel's centre, and where taps fold over a small grid too.
    test::context();
    Kernel skew;  // asymmetric, centre off the middle, a negative zero among the taps
    skew.weights = Image(5, 3);
    for (int j = 0; j < 3; ++j)
        for (int i = 0; i < 5; ++i)
            for (int c = 0; c < 4; ++c) skew.weights.at(i, j)[c] = static_cast<float>(1 + i + 10 * j + 100 * c);
    skew.weights.at(2, 1)[0] = -0.0f;
    skew.cx = 3;
    skew.cy = 0;
    std::vector<Kernel> kernels = {parse_kernel("gaussian:2"), parse_kernel("motion:7,30"), parse_kernel("identity"), skew};
    for (const Kernel& k : kernels)
        for (auto [m, n] : {std::pair<int, int>{16, 8}, {32, 32}, {4, 4}})
            for (bool flip : {false, true}) {
                Texture grid(m, n);
                upload_impulse_response(k, grid, flip);
                std::vector<float> got(static_cast<size_t>(m) * static_cast<size_t>(n) * 4);
                glBindTexture(GL_TEXTURE_RECTANGLE, grid.id());
                glGetTexImage(GL_TEXTURE_RECTANGLE, 0, GL_RGBA, GL_FLOAT, got.data());
                const std::vector<float> want = impulse_response(k, m, n, flip);
                size_t differ = 0;
                for (size_t t = 0; t < got.size(); ++t) differ += std::memcmp(&got[t], &want[t], sizeof(float)) != 0;
                EXPECT(differ == 0, k.name.empty() ? "skew" : k.name, " on ", m, "x", n, flip ? " mirrored" : "", ": ", differ,
                       " floats differ");
            }
}

TEST(kernels_parse_and_normalise) {
    auto sums = [](const Kernel& k) {
        std::array<double, 4> s{};
        for (size_t i = 0; i < k.weights.pixels(); ++i)
            for (int c = 0; c < 4; ++c) s[c] += k.weights.rgba[4 * i + c];
        return s;
    };
    for (const char* spec : {"gaussian:2", "box:4x3", "disk:2.5", "motion:15,45", "sharpen:2", "lowpass:0.25",
                             "identity", "highpass:0.25"}) {
        Kernel k = parse_kernel(spec);
        double expected = std::string(spec).rfind("highpass", 0) == 0 ? 0.0 : 1.0;
        for (double s : sums(k)) EXPECT(std::abs(s - expected) < 1e-5, spec, " sums to ", s);
    }
    Kernel box = parse_kernel("box:4x3");
    EXPECT(box.weights.width == 4 && box.weights.height == 3 && box.cx == 2 && box.cy == 1, "box:4x3 geometry");
    Kernel lap = parse_kernel("laplacian");
    EXPECT(sums(lap)[0] == 0 && lap.weights.at(1, 1)[0] == -4, "laplacian");
    EXPECT(parse_kernel("gaussian:2").weights.width == 17, "gaussian:2 has radius 8");
    for (const char* bad : {"gausian:2", "gaussian", "gaussian:x", "gaussian:-1", "box:0", "box:3x", "identity:2",
                            "motion:", "lowpass:2", ""}) {
        bool threw = false;
        try {
            parse_kernel(bad);
        } catch (const Error& e) {
            threw = std::string(e.what()).find('\n') == std::string::npos;
        }
        EXPECT(threw, "'", bad, "' was accepted");
    }
    KernelOptions small;
    small.max_side = 64;
    bool threw = false;
    try {
        parse_kernel("gaussian:20", small);
    } catch (const Error& e) {
        threw = std::string(e.what()).find("bigger than") != std::string::npos;
    }
    EXPECT(threw, "gaussian:20 (161 taps) accepted with a 64 limit");
}

TEST(png_kernels_grey_and_per_channel) {
    TempDir dir;
    RawPng grey;
    grey.width = 3;
    grey.height = 1;
    grey.samples = {0, 255, 255};  // 0, 1, 1 -> 0, 0.5, 0.5
    fixture::write_file(dir / "grey.png", fixture::encode(grey));
    Kernel g = parse_kernel(dir / "grey.png");
    EXPECT(!g.per_channel && g.cx == 1 && g.cy == 0, "grey kernel geometry");
    for (int c = 0; c < 4; ++c) EXPECT(g.weights.at(1, 0)[c] == 0.5f && g.weights.at(0, 0)[c] == 0.0f, "grey normalised, channel ", c);

    RawPng rgb;
    rgb.width = 2;
    rgb.height = 1;
    rgb.color_type = 2;
    rgb.samples = {255, 0, 51, 255, 255, 204};
    fixture::write_file(dir / "rgb.png", fixture::encode(rgb));
    Kernel k = parse_kernel(dir / "rgb.png");
    EXPECT(k.per_channel, "an RGB kernel is per channel");
    EXPECT(k.weights.at(0, 0)[0] == 0.5f && k.weights.at(0, 0)[1] == 0.0f && std::abs(k.weights.at(0, 0)[2] - 0.2f) < 1e-7f,
           "RGB kernel normalised per channel");
    KernelOptions raw_values;
    raw_values.normalize = false;
    Kernel r = parse_kernel(dir / "rgb.png", raw_values);
    EXPECT(r.weights.at(1, 0)[1] == 1.0f && std::abs(r.weights.at(0, 0)[2] - 0.2f) < 1e-7f, "--no-normalize keeps values");
    // A kernel file is a .png in any case, as a directory's inputs are.
    fixture::write_file(dir / "Grey.Png", fixture::encode(grey));
    Kernel named = parse_kernel(dir / "Grey.Png");
    EXPECT(named.weights.rgba == g.weights.rgba, "Grey.Png is not read as the same kernel");
}

TEST(linear_light_round_trips_exactly) {
    for (int depth : {8, 16}) {
        int max = (1 << depth) - 1;
        Image img(max + 1, 1);
        for (int v = 0; v <= max; ++v)
            for (int c = 0; c < 4; ++c) img.at(v, 0)[c] = static_cast<float>(v) / static_cast<float>(max);
        for (Transfer t : {Transfer{true, 0}, Transfer{false, 0.45455}}) {
            Image lin = img;
            to_linear(lin, t);
            from_linear(lin, t);
            long differ = 0;
            for (size_t i = 0; i < img.rgba.size(); ++i) differ += quantise(img.rgba[i], depth) != quantise(lin.rgba[i], depth);
            EXPECT(differ == 0, depth, "-bit ", t.srgb ? "sRGB" : "gamma", ": ", differ, " samples changed");
        }
    }
}

TEST(chunks_longer_than_the_file_are_refused_before_libpng_allocates_them) {
    // libpng allocates the length a text, eXIf, sPLT, pCAL or sCAL chunk declares before reading
    // it: a 346-byte file declaring a 1.6 GB iTXt (found by fuzzing) took 1.6 GB. A chunk before
    // the image data that declares more than the file holds is now refused as a truncated file,
    // from a path or from memory, and reading one takes no such memory.
    TempDir dir;
    const fixture::Bytes png = fixture::encode(fixture::random_png(7, 5, 2, 8, false, false, 3));
    for (const char* type : {"tEXt", "zTXt", "iTXt", "eXIf", "sPLT", "pCAL", "sCAL"}) {
        fixture::Bytes bad(png.begin(), png.begin() + 33);  // signature and IHDR
        fixture::put32(bad, 1610612749u);
        bad.insert(bad.end(), type, type + 4);
        for (char c : std::string("Title\0the rest is missing", 25)) bad.push_back(static_cast<uint8_t>(c));
        const std::string path = dir / (std::string(type) + ".png");
        fixture::write_file(path, bad);
        const long before = test::peak_rss_kib();
        for (bool from_memory : {false, true}) {
            std::string error;
            try {
                if (from_memory) read_png_memory(bad.data(), bad.size(), path);
                else read_png(path);
            } catch (const Error& e) {
                error = e.what();
            }
            EXPECT(error == path + ": the file ends early (truncated): its " + type + " chunk declares 1610612749 bytes, 25 are left",
                   type, from_memory ? " from memory" : " from its file", ": '", error, "'");
        }
        EXPECT(test::peak_rss_kib() - before < 100 * 1024, type, ": the peak resident memory grew by ", test::peak_rss_kib() - before, " KiB");
    }
    // After the image data libpng may still ask for the declared length, but it reads such a chunk
    // where nothing is kept and takes a failed allocation as a warning: the pages it touches are the
    // file's. Checked here as behaviour: with 1 GB of address space the file is still one line,
    // "truncated" (the file is whole but for its last chunk).
#ifndef GPUFFT_SANITIZE  // (AddressSanitizer reserves terabytes of address space for its shadow)
    for (const char* type : {"tEXt", "iTXt", "eXIf", "sPLT"}) {
        for (bool interlaced : {false, true}) {
            const fixture::Bytes whole = fixture::encode(fixture::random_png(7, 5, 2, 8, interlaced, false, 4));
            fixture::Bytes bad(whole.begin(), whole.end() - 12);  // without IEND
            fixture::put32(bad, 1610612749u);
            bad.insert(bad.end(), type, type + 4);
            for (char c : std::string("Title\0the rest is missing", 25)) bad.push_back(static_cast<uint8_t>(c));
            const std::string path = dir / (std::string("after-") + type + (interlaced ? "-adam7" : "") + ".png");
            fixture::write_file(path, bad);
            test::Result r = test::run("prlimit --as=1000000000 " + tool() + " -q --backend fftw -k box:3 " + path + " -o " + dir / "out.png");
            EXPECT(r.status == 1 && test::count_lines(r.err) == 1 && r.err.find(path + ": ") != std::string::npos &&
                       r.err.find("truncated") != std::string::npos,
                   type, interlaced ? " (interlaced)" : "", " after the image data: exit ", r.status, ": ", r.err);
        }
    }
#endif
}

TEST(bad_inputs_fail_cleanly) {
    TempDir dir;
    RawPng good = fixture::random_png(16, 16, 2, 8, false, false, 1);
    fixture::Bytes png = fixture::encode(good);
    fixture::write_file(dir / "good.png", png);
    fixture::write_file(dir / "text.png", fixture::Bytes{'h', 'e', 'l', 'l', 'o', '\n'});
    fixture::write_file(dir / "empty.png", {});
    fixture::write_file(dir / "truncated.png", fixture::Bytes(png.begin(), png.begin() + static_cast<long>(png.size() / 2)));
    // IDAT starts after signature (8) + IHDR chunk (25): its data begins at 8 + 25 + 8. libpng
    // inflates before it checks the CRC, so a damaged byte in the data reads as a zlib error, and
    // a damaged CRC over intact data as a CRC error.
    fixture::Bytes data = png;
    data[8 + 25 + 8 + 5] ^= 0x55;
    fixture::write_file(dir / "data.png", data);
    fixture::Bytes crc = png;
    crc[png.size() - 12 - 1] ^= 0x55;  // the last byte of IDAT's CRC, just before IEND's 12 bytes
    fixture::write_file(dir / "crc.png", crc);
    {  // bad zlib data with a correct CRC
        fixture::Bytes z = fixture::signature();
        fixture::chunk(z, "IHDR", fixture::ihdr(16, 16, 8, 2, false));
        fixture::Bytes junk = fixture::zlib_compress(fixture::scanlines(good));
        for (size_t i = 2; i < junk.size(); i += 3) junk[i] ^= 0xA5;
        fixture::chunk(z, "IDAT", junk);
        fixture::chunk(z, "IEND", {});
        fixture::write_file(dir / "zlib.png", z);
    }
    auto header_only = [&](const char* name, uint32_t w, uint32_t h) {
        fixture::Bytes b = fixture::signature();
        fixture::chunk(b, "IHDR", fixture::ihdr(w, h, 8, 6, false));
        fixture::chunk(b, "IDAT", fixture::zlib_compress({0, 0, 0, 0, 0}));
        fixture::chunk(b, "IEND", {});
        fixture::write_file(dir / name, b);
    };
    header_only("huge.png", 1000000, 1000000);
    header_only("zero.png", 0, 16);
    fixture::write_file(dir / "file.txt", {'x'});
    test::run("mkdir " + dir / "adir.png");
    test::run("ln -s good.png " + dir / "link.png");

    struct Case {
        std::string args;
        int status;
        std::string needle;  // what the one line must say
    };
    const std::string in = dir / "good.png", out = dir / "out.png";
    const std::vector<Case> cases = {
        {dir / "missing.png -o " + out, 1, "missing.png: cannot open: No such file"},
        {dir / "text.png -o " + out, 1, "text.png: not a PNG file"},
        {dir / "empty.png -o " + out, 1, "empty.png: empty file"},
        {dir / "truncated.png -o " + out, 1, "truncated.png: truncated PNG"},
        {dir / "crc.png -o " + out, 1, "crc.png: corrupt PNG: IDAT: CRC error"},
        {dir / "data.png -o " + out, 1, "data.png: corrupt PNG: IDAT:"},
        {dir / "zlib.png -o " + out, 1, "zlib.png: corrupt PNG"},
        {"--stream never " + dir / "huge.png -o " + out, 1, "huge.png: 1000000x1000000 is 1000000000000 pixels, above the limit"},
        // Streamed (it does not fit whole), it fails where its data ends, leaving nothing.
        {dir / "huge.png -o " + out, 1, "huge.png: corrupt PNG: Not enough image data"},
        {dir / "zero.png -o " + out, 1, "zero.png: corrupt PNG: Invalid IHDR data (Image width is zero in IHDR)"},
        {dir / "adir.png -o " + out, 2, "adir.png: a directory with no PNG files"},
        {in + " -k box:9000 -o " + out, 2, "kernel 'box:9000'"},
        {in + " -k gausian:2 -o " + out, 2, "unknown kernel 'gausian:2'"},
        {in + " -k " + dir / "text.png" + " -o " + out, 2, "text.png: not a PNG file"},
        {in + " -b mirror -o " + out, 2, "unknown boundary 'mirror'"},
        {in + " --bogus", 2, "unknown option --bogus"},
        {"", 2, "no input files"},
        {in + " -o " + dir / "file.txt/out.png", 1, "file.txt/out.png: cannot create: Not a directory"},
        {in + " -o " + in, 1, "good.png: is an input file; refusing to overwrite it"},
        {in + " -f -o " + in, 1, "good.png: is an input file; refusing to overwrite it"},
        // The input by another name: a link to it, another spelling of its path.
        {in + " -f -o " + dir / "link.png", 1, "link.png: is an input file; refusing to overwrite it"},
        {in + " -f -o " + dir / "./good.png", 1, "./good.png: is an input file; refusing to overwrite it"},
        {dir / "link.png -f -o " + in, 1, "good.png: is an input file; refusing to overwrite it"},
        {in + " -o " + dir / "file.txt", 1, "file.txt: already exists (use --force"},
    };
    std::string before = test::read_bytes(in);
    std::vector<std::string> listing = dir.list();
    for (const Case& c : cases) {
        test::Result r = test::run(tool() + " " + c.args);
        EXPECT(r.status == c.status, "'", c.args, "': exit ", r.status, " expected ", c.status, ": ", r.err);
        EXPECT(test::count_lines(r.err) == 1 && r.err.find(c.needle) != std::string::npos && r.err.rfind("fftfilter: ", 0) == 0,
               "'", c.args, "': expected one line with '", c.needle, "', got: ", r.err);
        EXPECT(dir.list() == listing, "'", c.args, "' left files behind");
    }
    EXPECT(test::read_bytes(in) == before, "the input changed");
}

TEST(pipes_and_devices_are_refused_unopened) {
    // An input that is not a regular file (a FIFO, a pipe as /dev/stdin, a device) is refused in
    // one line before it is opened: a batch reads an input more than once (its header first), and a
    // FIFO would block the second open or lose the bytes the first one read. The rest of the batch
    // is filtered. (A timeout: a build that opens the FIFO waits for a writer that never comes.)
    TempDir dir;
    fixture::write_file(dir / "good.png", fixture::encode(fixture::random_png(16, 12, 2, 8, false, false, 9)));
    test::run("mkfifo " + dir / "fifo.png");
    test::Result r = test::run("timeout 60 " + tool() + " -k box:3 " + dir / "fifo.png " + dir / "good.png -o " + dir / "out");
    EXPECT(r.status == 1 && test::count_lines(r.err) == 2 &&
               r.err.find("fifo.png: a pipe or a device, not a file") != std::string::npos &&
               TempDir::list_of(dir / "out") == std::vector<std::string>{"good.png"},
           "a FIFO in a batch: exit ", r.status, ": ", r.err);
    test::Result piped = test::run("cat " + dir / "good.png | timeout 60 " + tool() + " -k box:3 /dev/stdin -o " + dir / "piped.png");
    EXPECT(piped.status == 1 && piped.err.find("/dev/stdin: a pipe or a device, not a file") != std::string::npos &&
               !gpufft::file_exists(dir / "piped.png"),
           "a pipe as /dev/stdin: exit ", piped.status, ": ", piped.err);
    test::Result redirected = test::run("timeout 60 " + tool() + " -k box:3 /dev/stdin -o " + dir / "redirected.png < " + dir / "good.png");
    EXPECT(redirected.status == 0 && test::read_bytes(dir / "redirected.png") == test::read_bytes(dir / "out/good.png"),
           "a file as /dev/stdin: exit ", redirected.status, ": ", redirected.err);
}

TEST(batch_with_a_corrupt_file_does_the_rest) {
    TempDir dir;
    std::string inputs;
    for (int i = 0; i < 4; ++i) {
        fixture::Bytes png = fixture::encode(fixture::random_png(24, 16, 6, 8, false, false, 40 + i));
        if (i == 2) png.resize(png.size() - 30);  // cut into the image data
        std::string name = "f" + std::to_string(i) + ".png";
        fixture::write_file(dir / name, png);
        inputs += " " + dir / name;
    }
    test::Result r = test::run(tool() + " -k box:3 -o " + dir / "out" + inputs);
    EXPECT(r.status == 1, "exit ", r.status);
    EXPECT(r.err.find("f2.png: truncated PNG") != std::string::npos, "no error line for f2.png: ", r.err);
    EXPECT(r.err.find("4 files, 1 failed") != std::string::npos, "no summary line: ", r.err);
    for (int i : {0, 1, 3}) {
        PngImage out = read_png(dir / ("out/f" + std::to_string(i) + ".png"));
        EXPECT(out.image.width == 24 && out.image.height == 16, "output ", i);
    }
    EXPECT(dir.list() == std::vector<std::string>({"f0.png", "f1.png", "f2.png", "f3.png", "out"}), "unexpected files");
    EXPECT(test::run("ls -A " + dir / "out").out == "f0.png\nf1.png\nf3.png\n", "outputs: ", test::run("ls -A " + dir / "out").out);

    // The same list read from standard input.
    test::Result s = test::run("printf '%s\\n'" + inputs + " | " + tool() + " -q -f -k box:3 -o " + dir / "out -");
    EXPECT(s.status == 1 && test::count_lines(s.err) == 1, "list on stdin: exit ", s.status, ": ", s.err);
    // NUL-separated (-0, find -print0): a name with a newline in it.
    fixture::write_file(dir / "new\nline.png", fixture::encode(fixture::random_png(24, 16, 6, 8, false, false, 40)));
    test::Result z = test::run("printf '%s\\0' " + dir / "f0.png '" + dir / "new\nline.png' | " + tool() + " -q -0 -k box:3 -o " + dir / "nul -");
    EXPECT(z.status == 0 && test::read_bytes(dir / "nul/new\nline.png") == test::read_bytes(dir / "out/f0.png") &&
               test::read_bytes(dir / "nul/f0.png") == test::read_bytes(dir / "out/f0.png"),
           "a NUL-separated list on stdin: exit ", z.status, ": ", z.err);
}

TEST(spectrum_and_synth) {
    TempDir dir;
    // Two tones: cos(2 pi 4x/32) horizontally: peaks at frequency (+-4, 0), centred at (16 +- 4, 16).
    RawPng tone;
    tone.width = tone.height = 32;
    for (int y = 0; y < 32; ++y)
        for (int x = 0; x < 32; ++x) tone.samples.push_back(static_cast<uint16_t>(std::lround(127.5 + 127.5 * std::cos(2 * M_PI * 4 * x / 32))));
    fixture::write_file(dir / "tone.png", fixture::encode(tone));
    test::Result r = test::run(tool() + " -q --spectrum -b wrap " + dir / "tone.png");
    EXPECT(r.status == 0, r.err);
    PngImage s = read_png(dir / "tone.spectrum.png");
    EXPECT(s.format.color_type == 0 && s.image.width == 32, "spectrum format ", s.format.describe());
    float dc = s.image.at(16, 16)[0], peak = s.image.at(20, 16)[0], mirror = s.image.at(12, 16)[0], off = s.image.at(20, 20)[0];
    EXPECT(dc > 0.9f && peak > 0.7f && std::abs(peak - mirror) < 1e-6f && off < 0.2f, "spectrum values dc ", dc, " peak ",
           peak, " mirror ", mirror, " off-peak ", off);

    test::Result a = test::run(tool() + " --synth 40x24:power=1.5:seed=3 -q -o " + dir / "a.png");
    test::Result b = test::run(tool() + " --synth 40x24:power=1.5:seed=3 -q -o " + dir / "b.png");
    test::Result c = test::run(tool() + " --synth 40x24:power=1.5:seed=4 -q -o " + dir / "c.png");
    EXPECT(a.status == 0 && b.status == 0 && c.status == 0, a.err, b.err, c.err);
    EXPECT(test::read_bytes(dir / "a.png") == test::read_bytes(dir / "b.png"), "the same seed gave different textures");
    EXPECT(test::read_bytes(dir / "a.png") != test::read_bytes(dir / "c.png"), "different seeds gave the same texture");
    PngImage t = read_png(dir / "a.png");
    float lo = 1, hi = 0;
    for (size_t i = 0; i < t.image.pixels(); ++i) lo = std::min(lo, t.image.rgba[4 * i]), hi = std::max(hi, t.image.rgba[4 * i]);
    EXPECT(t.image.width == 40 && t.image.height == 24 && lo == 0.0f && hi == 1.0f, "synth ", t.image.width, "x",
           t.image.height, " spans [", lo, ", ", hi, "]");
    test::Result bad = test::run(tool() + " --synth 40x24:blue=2 -o " + dir / "d.png");
    EXPECT(bad.status == 2 && bad.err.find("unknown item 'blue=2'") != std::string::npos, bad.err);
}

TEST(colour_metadata_is_kept) {
    TempDir dir;
    RawPng p = fixture::random_png(8, 8, 2, 8, false, false, 3);
    fixture::Bytes bytes = fixture::encode(p);
    // Insert gAMA (1/2.2 as 45455) after IHDR.
    fixture::Bytes gama;
    fixture::put32(gama, 45455);
    fixture::Bytes with_gamma(bytes.begin(), bytes.begin() + 33);
    fixture::chunk(with_gamma, "gAMA", gama);
    with_gamma.insert(with_gamma.end(), bytes.begin() + 33, bytes.end());
    fixture::write_file(dir / "g.png", with_gamma);
    test::Result r = test::run(tool() + " -q -k identity --linear " + dir / "g.png" + " -o " + dir / "o.png");
    EXPECT(r.status == 0, r.err);
    PngImage in = read_png(dir / "g.png"), out = read_png(dir / "o.png");
    EXPECT(std::abs(out.format.gamma - 0.45455) < 1e-5, "gAMA not kept: ", out.format.gamma);
    size_t differ = 0;
    for (size_t i = 0; i < in.image.rgba.size(); ++i) differ += quantise(in.image.rgba[i], 8) != quantise(out.image.rgba[i], 8);
    EXPECT(differ == 0, "--linear identity changed ", differ, " samples");
}

// The batch pipeline (issue "Batch throughput").

TEST(gpu_conversion_gives_the_cpu_paths_files_byte_for_byte) {
    // Samples converted, padded, tiled and packed on the GPU against the float images of the CPU
    // path, through the same GL filter: every PNG kind, every boundary, both GL backends, with and
    // without --linear and --premultiply, one transform and overlap-save tiles (--max-fft 32).
    TempDir dir;
    write_fixtures(dir, 45, 29, 900);
    struct Variant {
        const char* args;
    };
    const Variant variants[] = {{"-b reflect"}, {"-b clamp"}, {"-b zero"}, {"-b wrap"}, {"-b reflect --max-fft 32"},
                                {"-b wrap --max-fft 32"}, {"--linear -b clamp"}, {"--premultiply -b zero"}, {"--depth 16 -b reflect"}};
    // Under ThreadSanitizer (make tsan: the threads' races, not the numbers, which the other builds
    // check on both backends) each variant runs on one backend, the two taking turns: a process
    // there takes about 1.5 s, 16 fewer of them 23 s of CI.
#if defined(__SANITIZE_THREAD__)
    constexpr bool kEveryPair = false;
#else
    constexpr bool kEveryPair = true;
#endif
    for (const char* backend : {"fragment", "compute"})
        for (const Variant& v : variants) {
            const bool compute = backend[0] == 'c';
            if (!kEveryPair && (&v - variants) % 2 != compute) continue;  // fragment the even ones, compute the odd
            std::string common = tool() + " -q --backend " + backend + " -k disk:2.5 " + v.args + " ";
            std::string gpu = dir / "gpu", cpu = dir / "cpu";
            test::run("rm -rf " + gpu + " " + cpu);
            test::Result a = test::run(common + "--convert gpu -o " + gpu + " " + dir.path() + "/t*.png");
            test::Result b = test::run(common + "--convert cpu -o " + cpu + " " + dir.path() + "/t*.png");
            EXPECT(a.status == 0 && b.status == 0, backend, " ", v.args, ": exit ", a.status, "/", b.status, ": ", a.err, b.err);
            int same = 0, files = 0;
            for (const Format& f : kFormats)
                for (bool interlace : {false, true}) {
                    std::string name = name_of(f, interlace);
                    ++files;
                    std::string x = test::read_bytes(gpu + "/" + name), y = test::read_bytes(cpu + "/" + name);
                    bool equal = !x.empty() && x == y;
                    same += equal;
                    EXPECT(equal, backend, " ", v.args, " ", name, ": the GPU conversion's file differs from the CPU's");
                }
            EXPECT(same == files, backend, " ", v.args, ": ", same, " of ", files, " files identical");
        }
}

/// -v's "host areas:" line: files through areas in, outputs back, outputs written from the GPU's
/// stream alone, areas made (-1 each where the line is missing).
struct AreaCounts {
    long in = -1, out = -1, unread = -1, areas = -1;
};
AreaCounts host_area_counts(const std::string& err) {
    AreaCounts c;
    const size_t at = err.find("host areas: ");
    if (at != std::string::npos)
        std::sscanf(err.c_str() + at,
                    "host areas: %ld files' samples copied to the GPU from them, %ld outputs' back (%ld more written from the "
                    "GPU's stream alone); %ld areas",
                    &c.in, &c.out, &c.unread, &c.areas);
    return c;
}

TEST(host_areas_change_no_byte_of_a_batch) {
    // A GPU batch's samples cross through host areas (the workers fill and read them) by default,
    // through the GL thread with GPUFFT_HOST_AREAS=off: every PNG kind (their sizes differ, so
    // areas are taken, missed and grown), both GL backends, the same files; -v counts the files
    // that went through areas. Then a batch of one size whose outputs' samples never leave the
    // GPU: smooth images (the run coder's stream written) and diagonal sawtooths (libdeflate's,
    // from the GPU's stream inflated).
    TempDir dir;
    write_fixtures(dir, 45, 29, 910);
    for (int i = 0; i < 3; ++i)
        EXPECT(test::run(tool() + " -q --synth 120x72:power=2:seed=" + std::to_string(i + 1) + ":colour -o " +
                         dir / ("usmooth" + std::to_string(i) + ".png"))
                       .status == 0,
               "synth ", i);
    for (int i = 0; i < 2; ++i) {
        RawPng p;
        p.width = 120, p.height = 72, p.color_type = 2;
        for (int y = 0; y < p.height; ++y)
            for (int x = 0; x < p.width; ++x)
                for (int c = 0; c < 3; ++c) p.samples.push_back(static_cast<uint16_t>((x + (2 + i) * y) % 16 * 16 + c));
        EXPECT(fixture::write_file(dir / ("usaw" + std::to_string(i) + ".png"), fixture::encode(p)), "cannot write sawtooth ", i);
    }
    for (const char* backend : {"compute", "fragment"})
        for (const char* batch : {"t", "u"}) {
            const std::string common = tool() + " -j 2 --backend " + backend + " -k gaussian:2 ";
            const std::string inputs = dir.path() + "/" + batch + "*.png";
            test::run("rm -rf " + dir / "on" + " " + dir / "off");
            // Deflated on the GPU whatever their size (by size these small outputs would not be).
            test::Result on = test::run("GPUFFT_GPU_DEFLATE=on " + common + "-v -o " + dir / "on " + inputs);
            test::Result off = test::run("GPUFFT_GPU_DEFLATE=on GPUFFT_HOST_AREAS=off " + common + "-q -o " + dir / "off " + inputs);
            EXPECT(on.status == 0 && off.status == 0, backend, " ", batch, ": exit ", on.status, "/", off.status, ": ", on.err.substr(0, 300),
                   off.err);
            const auto [in, out, unread, areas] = host_area_counts(on.err);
            if (batch[0] == 't') EXPECT(in > 0 && out > 0, backend, ": files through host areas, in ", in, ", out ", out);
            else EXPECT(in == 5 && out == 0 && unread == 5, backend, ": files through host areas, in ", in, ", out ", out, ", written from the GPU's stream alone ", unread);
            int same = 0, files = 0;
            for (const std::string& name : dir.list()) {
                if (name.size() < 4 || name[0] != batch[0] || name.substr(name.size() - 4) != ".png") continue;
                ++files;
                const std::string x = test::read_bytes(dir / ("on/" + name)), y = test::read_bytes(dir / ("off/" + name));
                same += !x.empty() && x == y;
                EXPECT(!x.empty() && x == y, backend, " ", name, ": through host areas, another file");
            }
            EXPECT(same == files && files == (batch[0] == 't' ? 2 * static_cast<int>(std::size(kFormats)) : 5), backend, " ", batch, ": ", same,
                   " of ", files, " files identical");
        }
}

TEST(host_areas_take_every_file_of_one_size) {
    // The areas are made before any worker reads a file, of the first file's size: every file of
    // a batch of one size is decoded into one, the first ones too, and its output comes back into
    // one or stays on the GPU, its stream written (made as the workers started, the first files
    // went the GL thread's way), on both GL backends.
    TempDir dir;
    for (int i = 0; i < 12; ++i) {
        RawPng p = fixture::random_png(45, 29, 2, 8, false, false, 300u + static_cast<unsigned>(i));
        EXPECT(fixture::write_file(dir / ("s" + std::to_string(100 + i) + ".png"), fixture::encode(p)), "cannot write s", i);
    }
    for (const char* backend : {"compute", "fragment"}) {
        test::run("rm -rf " + dir / "out");
        test::Result r = test::run(tool() + " -j 2 -v --backend " + backend + " -k gaussian:2 -o " + dir / "out " + dir.path() + "/s*.png");
        const auto [in, out, unread, areas] = host_area_counts(r.err);
        EXPECT(r.status == 0 && in == 12 && out + unread == 12 && areas > 0, backend, ": exit ", r.status, ", files through areas in ",
               in, ", out ", out, " and ", unread, " more from the GPU's stream alone, areas ", areas, ": ", r.err.substr(0, 400));
    }
}

TEST(outputs_deflate_on_the_gpu_from_64_kib_a_worker) {
    // By default a batch's outputs are deflated on the GPU where their samples' bytes reach 64 KiB
    // for each worker (the GPU's cost a file is nearly fixed, the workers' grows with the bytes);
    // GPUFFT_GPU_DEFLATE=on and =off decide for every size. The files are the same every way.
    TempDir dir;
    for (int i = 0; i < 2; ++i)  // smooth: the run coder's stream, which the GPU codes (noise it declines)
        EXPECT(test::run(tool() + " -q --synth 240x240:power=2:seed=" + std::to_string(i + 5) + ":colour -o " +
                         dir / ("d" + std::to_string(i) + ".png"))
                       .status == 0,
               "synth ", i);
    struct Case {
        const char* setting;
        int jobs;
        long from_gpu;  // outputs written from the GPU's stream
    };
    // 240 x 240 RGB 8-bit: 172800 bytes, at least 64 KiB for each of two workers, under it for three
    const Case cases[] = {{"", 2, 2}, {"", 3, 0}, {"GPUFFT_GPU_DEFLATE=on ", 3, 2}, {"GPUFFT_GPU_DEFLATE=off ", 2, 0}};
    std::string first;
    for (const Case& c : cases) {
        const std::string out = dir / ("o" + std::to_string(&c - cases));
        test::Result r = test::run(std::string(c.setting) + tool() + " -v --backend compute -j " + std::to_string(c.jobs) +
                                   " -k gaussian:2 -o " + out + " " + dir / "d0.png " + dir / "d1.png");
        const AreaCounts n = host_area_counts(r.err);
        EXPECT(r.status == 0 && n.in == 2 && n.unread == c.from_gpu, c.setting, "-j ", c.jobs, ": exit ", r.status, ", ", n.unread,
               " outputs from the GPU's stream, expected ", c.from_gpu, ": ", r.err.substr(0, 300));
        const std::string files = test::read_bytes(out + "/d0.png") + test::read_bytes(out + "/d1.png");
        if (first.empty()) first = files;
        EXPECT(files.size() > 1000 && files == first, c.setting, "-j ", c.jobs, ": other files");
    }
}

TEST(samples_come_back_alike_mapped_or_copied) {
    // The filtered samples come back through a mapped buffer in the host's memory (HostBuffer) up
    // to SampleIo::mapped_limit bytes, above it by glGetBufferSubData: the same samples either way,
    // for RGB 8-bit and RGBA 16-bit images, two queued at once, and alternating between the ways;
    // and so into memory given back (storage of other bytes, shorter, as long or longer).
    test::context();
    std::mt19937 random(3);
    const Kernel k = parse_kernel("disk:2.5");
    const size_t limit = SampleIo::mapped_limit;
    for (int depth : {8, 16}) {
        std::vector<Samples> in(3);
        SampleConversion c;
        c.in_channels = c.out_channels = depth == 8 ? 3 : 4;
        c.in_depth = c.out_depth = depth;
        for (Samples& s : in) {
            s.resize(40 + static_cast<int>(random() % 30), 20 + static_cast<int>(random() % 30), c.in_channels, depth);
            for (auto& b : s.data) b = static_cast<unsigned char>(random());
        }
        std::vector<std::vector<Samples>> out(5);
        // mapped, copied, each image its own way, then the last two ways into memory given back
        for (size_t way = 0; way < out.size(); ++way) {
            Convolver convolver(test::programs(), k, with(Boundary::Reflect));
            size_t collected = 0;
            auto collect = [&] {
                const size_t bytes = in[collected].data.size(), sizes[] = {bytes / 2, bytes, bytes * 2};
                std::vector<unsigned char> storage(way >= 3 ? sizes[collected++ % 3] : 0, 0xab);
                out[way].push_back(convolver.collect(nullptr, std::move(storage)));
            };
            for (size_t i = 0; i < in.size(); ++i) {
                SampleIo::mapped_limit = way == 0 || way == 3 || (way == 2 && i % 2 == 0) ? limit : 0;
                convolver.submit(in[i], c);
                if (convolver.pending() == 2) collect();
            }
            while (convolver.pending() > 0) collect();
        }
        SampleIo::mapped_limit = limit;
        for (size_t i = 0; i < in.size(); ++i) {
            bool alike = true;
            for (size_t way = 1; way < out.size(); ++way) alike = alike && out[way][i].data == out[0][i].data;
            EXPECT(alike && out[0][i].width == in[i].width && !out[0][i].data.empty() && out[0][i].data != in[i].data,
                   depth, "-bit image ", i, ": the ways give other samples");
        }
    }
}

TEST(spare_buffers_keep_what_their_bounds_allow) {
    // The last given comes back first, its bytes and capacity as they were; past the count or the
    // bytes, a buffer given is freed; empty buffers are not kept.
    SpareBuffers spare(2, 1000);
    EXPECT(spare.take().capacity() == 0, "a buffer from nothing");
    std::vector<unsigned char> a(300, 1), b(400, 2), c(100, 3), big(900, 4), none;
    spare.give(std::move(a));
    spare.give(std::move(none));
    spare.give(std::move(b));
    spare.give(std::move(c));  // a third: past the count
    EXPECT(a.empty() && b.empty() && c.empty(), "given buffers left with the caller");
    std::vector<unsigned char> first = spare.take(), second = spare.take(), third = spare.take();
    EXPECT(first == std::vector<unsigned char>(400, 2) && second == std::vector<unsigned char>(300, 1) && third.capacity() == 0,
           "taken: ", first.size(), ", ", second.size(), ", ", third.size(), " bytes");
    spare.give(std::move(first));
    spare.give(std::move(big));  // 400 + 900 > 1000
    EXPECT(spare.take().size() == 400 && spare.take().capacity() == 0, "a buffer past the bytes kept");
}

TEST(images_read_alike_into_memory_given_back) {
    // read_image() into an earlier image's memory (a batch's spare buffers): other bytes, shorter,
    // as long or longer, give the samples a fresh read gives, by every path (ours whole, libpng's
    // rows, Adam7 passes).
    TempDir dir;
    const auto fixtures = write_fixtures(dir, 23, 17, 40);
    int compared = 0;
    for (const auto& [name, raw] : fixtures) {
        const Samples fresh = PngReader(dir / name, PngLimits{}).read_image().samples;
        for (size_t size : {fresh.data.size() / 2, fresh.data.size(), fresh.data.size() * 2 + 5}) {
            const Samples reused = PngReader(dir / name, PngLimits{}).read_image(false, std::vector<unsigned char>(size, 0xab)).samples;
            EXPECT(reused.data == fresh.data && reused.width == fresh.width && reused.channels == fresh.channels, name,
                   ": other samples read into ", size, " bytes given back");
            ++compared;
        }
    }
    EXPECT(compared == 3 * 40, compared, " reads compared");
}

TEST(samples_round_half_away_from_zero) {
    // quantise_sample() rounds v max as std::lround does: at every boundary k + 1/2 of every
    // depth (the floats nearest it on both sides, and it), at the ends, and on a spread of floats.
    long bad = 0, checked = 0;
    auto check = [&](float v, unsigned max) {
        const unsigned expected = !(v > 0.0f) ? 0 : v >= 1.0f ? max : static_cast<unsigned>(std::lround(static_cast<double>(v) * max));
        bad += quantise_sample(v, max) != expected;
        ++checked;
    };
    for (int depth : {1, 2, 4, 8, 16}) {
        const unsigned max = (1u << depth) - 1;
        for (unsigned k = 0; k < max; ++k) {
            float at = static_cast<float>((k + 0.5) / max);
            for (int step = 0; step < 3; ++step) at = std::nextafter(at, 0.0f);
            for (int step = 0; step < 7; ++step, at = std::nextafter(at, 2.0f)) check(at, max);
        }
        for (float v : {0.0f, -0.0f, -1.0f, 1e-40f, 1e-30f, 0.5f, std::nextafter(1.0f, 0.0f), 1.0f, 2.0f, std::nanf("")}) check(v, max);
        for (uint32_t bits = 1; bits < 0x3f800000u; bits += 4099) {
            float v;
            std::memcpy(&v, &bits, 4);
            check(v, max);
        }
    }
    EXPECT(bad == 0, bad, " of ", checked, " samples rounded otherwise than lround");
}

TEST(sample_tables_reproduce_the_cpu_conversion) {
    // The thresholds are exact: just below each one the CPU gives k - 1, at it k.
    for (bool linear : {false, true})
        for (int depth : {1, 8, 16}) {
            Transfer t;
            std::vector<float> table = encode_table(depth, linear, t);
            const unsigned max = (1u << depth) - 1;
            long bad = 0;
            for (unsigned k = 1; k <= max; k += depth == 16 ? 97 : 1) {
                float at = table[2 * k], below = std::nextafter(at, 0.0f);
                auto q = [&](float v) { return quantise_sample(linear ? from_linear(v, t) : v, max); };
                bad += q(at) < k || q(below) >= k;
            }
            EXPECT(bad == 0, "depth ", depth, linear ? " linear" : "", ": ", bad, " thresholds off");
        }
}

TEST(shards_together_write_every_output_once) {
    TempDir dir;
    std::string inputs;
    for (int i = 0; i < 7; ++i) {
        RawPng p = fixture::random_png(20 + i, 11, 2, 8, false, false, 40 + i);
        fixture::write_file(dir / ("s" + std::to_string(i) + ".png"), fixture::encode(p));
        inputs += " " + dir / ("s" + std::to_string(i) + ".png");
    }
    int files = 0;
    for (int k = 1; k <= 3; ++k) {
        test::Result r = test::run(tool() + " -k box:3 --shard " + std::to_string(k) + "/3 -o " + dir / "out" + inputs);
        EXPECT(r.status == 0, "shard ", k, ": ", r.err);
        size_t at = r.err.find(" files, ");
        if (at != std::string::npos) files += std::atoi(r.err.c_str() + r.err.rfind(' ', at - 1) + 1);
    }
    EXPECT(files == 7, "the shards' summaries count ", files, " files, not 7");
    for (int i = 0; i < 7; ++i) EXPECT(gpufft::file_exists(dir / ("out/s" + std::to_string(i) + ".png")), "s", i, ".png missing");
    // A shard that writes an existing output fails on it: run shard 1 again.
    test::Result again = test::run(tool() + " -q -k box:3 --shard 1/3 -o " + dir / "out" + inputs);
    EXPECT(again.status == 1 && test::count_lines(again.err) == 3, "shard 1 again: ", again.err);
    test::Result bad = test::run(tool() + " -k box:3 --shard 4/3" + inputs);
    EXPECT(bad.status == 2 && test::count_lines(bad.err) == 1, "--shard 4/3: exit ", bad.status, ": ", bad.err);
}

TEST(batch_refuses_impossible_outputs_before_filtering) {
    TempDir dir;
    RawPng p = fixture::random_png(16, 16, 2, 8, false, false, 3);
    fixture::write_file(dir / "a.png", fixture::encode(p));
    fixture::write_file(dir / "b.png", fixture::encode(p));
    test::Result r = test::run(tool() + " -o " + dir / "name.png " + dir / "a.png " + dir / "b.png");
    EXPECT(r.status == 2 && test::count_lines(r.err) == 1 && r.err.find("name.png") != std::string::npos &&
               !gpufft::file_exists(dir / "name.png"),
           "-o name.png with two inputs: exit ", r.status, ": ", r.err);
    test::run("mkdir " + dir / "ro && chmod 555 " + dir / "ro");
    if (geteuid() != 0) {  // root writes anywhere
        test::Result ro = test::run(tool() + " -o " + dir / "ro " + dir / "a.png " + dir / "b.png");
        EXPECT(ro.status == 1 && test::count_lines(ro.err) == 1, "unwritable directory: exit ", ro.status, ": ", ro.err);
    }
    test::Result nodir = test::run(tool() + " -o " + dir / "a.png/sub/ " + dir / "a.png " + dir / "b.png");
    EXPECT(nodir.status != 0 && test::count_lines(nodir.err) == 1, "directory under a file: exit ", nodir.status, ": ", nodir.err);
}

TEST(directories_stand_for_their_png_files) {
    // A directory operand is the PNG files directly in it, in name order (any case of .png, a link
    // to one too), without its subdirectories, hidden files, other files or this tool's default
    // outputs' names; the outputs are those of the same files named one by one.
    TempDir dir;
    test::run("mkdir " + dir / "in" + " " + dir / "in/sub");
    std::vector<std::string> names = {"b.png", "A.PNG", "sub/c.png", ".hidden.png", "a.filtered.png", "a.spectrum.png"};
    for (size_t i = 0; i < names.size(); ++i)
        fixture::write_file(dir / ("in/" + names[i]), fixture::encode(fixture::random_png(12 + int(i), 10, 2, 8, false, false, 30 + int(i))));
    fixture::write_file(dir / "in/notes.txt", fixture::Bytes{'h', 'i'});
    test::run("ln -s b.png " + dir / "in/link.png");
    test::Result r = test::run(tool() + " -q -k box:3 " + dir / "in" + " -o " + dir / "out");
    const std::vector<std::string> outputs = TempDir::list_of(dir / "out");
    EXPECT(r.status == 0 && outputs == (std::vector<std::string>{"A.PNG", "b.png", "link.png"}), "exit ", r.status, ", ", outputs.size(),
           " outputs: ", r.err);
    // In name order (bytes: upper case first): the first of three shards takes the first file.
    EXPECT(test::run(tool() + " -q -k box:3 --shard 1/3 " + dir / "in" + " -o " + dir / "first").status == 0 &&
               TempDir::list_of(dir / "first") == std::vector<std::string>{"A.PNG"},
           "--shard 1/3 of the directory: ", TempDir::list_of(dir / "first").size(), " outputs");
    test::Result one = test::run(tool() + " -q -k box:3 " + dir / "in/A.PNG" + " " + dir / "in/b.png" + " " + dir / "in/link.png" +
                                 " -o " + dir / "named");
    EXPECT(one.status == 0, "the files by name: ", one.err);
    for (const char* name : {"A.PNG", "b.png", "link.png"})
        EXPECT(test::read_bytes(dir / ("out/" + std::string(name))) == test::read_bytes(dir / ("named/" + std::string(name))), name,
               " differs from the file named alone");
    // Without -o the outputs go beside the inputs, and a second run does not take them as inputs.
    EXPECT(test::run(tool() + " -q -k box:3 " + dir / "in").status == 0, "beside the inputs");
    test::Result again = test::run(tool() + " -k box:3 --skip-existing " + dir / "in");
    EXPECT(again.status == 0 && again.err.find("0 files, 3 skipped (their outputs exist)") != std::string::npos,
           "again, the outputs beside: ", again.err);
    test::Result file = test::run(tool() + " " + dir / "in/sub" + " -o " + dir / "one.png");
    EXPECT(file.status == 2 && test::count_lines(file.err) == 1 &&
               file.err.find("one.png: names one file, but a directory's files go into a directory") != std::string::npos &&
               !gpufft::file_exists(dir / "one.png"),
           "-o FILE.png for a directory: exit ", file.status, ": ", file.err);
    test::run("mkdir " + dir / "empty");
    test::Result empty = test::run(tool() + " " + dir / "empty");
    EXPECT(empty.status == 2 && test::count_lines(empty.err) == 1 && empty.err.find("empty: a directory with no PNG files") != std::string::npos,
           "an empty directory: exit ", empty.status, ": ", empty.err);
}

TEST(recursive_directories_keep_their_tree) {
    // -r takes the PNG files under a directory's subdirectories too, not hidden ones nor links to
    // directories (never a cycle); under -o each output keeps its input's subdirectory (so files of
    // one name in two folders stay apart), without -o it lies beside its input.
    TempDir dir;
    test::run("mkdir -p " + dir / "in/a/b " + dir / "in/.hidden " + dir / "in/c");
    const std::vector<std::string> names = {"x.png", "a/x.png", "a/b/y.png", ".hidden/z.png"};
    for (size_t i = 0; i < names.size(); ++i)
        fixture::write_file(dir / ("in/" + names[i]), fixture::encode(fixture::random_png(14, 9 + int(i), 0, 8, false, false, 70 + int(i))));
    test::run("ln -s ../a " + dir / "in/c/loop");
    test::Result r = test::run(tool() + " -r -k box:3 " + dir / "in" + " -o " + dir / "out");
    const test::Result tree = test::run("cd " + dir / "out" + " && find . -type f | sort");
    EXPECT(r.status == 0 && tree.out == "./a/b/y.png\n./a/x.png\n./x.png\n", "exit ", r.status, ", outputs:\n", tree.out, r.err);
    for (const std::string& name : {std::string("a/x.png"), std::string("a/b/y.png")}) {
        test::Result alone = test::run(tool() + " -q -f -k box:3 " + dir / ("in/" + name) + " -o " + dir / "alone.png");
        EXPECT(alone.status == 0 && test::read_bytes(dir / "alone.png") == test::read_bytes(dir / ("out/" + name)), name,
               " differs from the file filtered alone");
    }
    // Without -r, the top level alone; without -o, beside each input.
    test::Result top = test::run(tool() + " -q -k box:3 " + dir / "in" + " -o " + dir / "top");
    EXPECT(top.status == 0 && TempDir::list_of(dir / "top") == std::vector<std::string>{"x.png"}, "without -r: ", top.err);
    test::Result beside = test::run(tool() + " -q -r -k box:3 " + dir / "in");
    const test::Result found = test::run("cd " + dir / "in" + " && find . -name '*.filtered.png' | sort");
    EXPECT(beside.status == 0 && found.out == "./a/b/y.filtered.png\n./a/x.filtered.png\n./x.filtered.png\n", "beside: ", found.out,
           beside.err);
    // -o inside the tree: a second run does not take the first one's outputs for inputs.
    for (int run = 0; run < 2; ++run) {
        test::Result inside = test::run(tool() + " -q -r --skip-existing -k box:3 " + dir / "in" + " -o " + dir / "in/a/out");
        const test::Result made = test::run("cd " + dir / "in/a/out" + " && find . -type f | sort");
        EXPECT(inside.status == 0 && made.out == "./a/b/y.png\n./a/x.png\n./x.png\n", "-o inside the tree, run ", run, ": exit ",
               inside.status, ", outputs:\n", made.out, inside.err);
    }
    test::run("rm -r " + dir / "in/a/out");
    // A subdirectory that cannot be made under -o's fails its files alone.
    test::run("mkdir " + dir / "blocked && touch " + dir / "blocked/a");
    test::Result blocked = test::run(tool() + " -r -k box:3 " + dir / "in" + " -o " + dir / "blocked");
    EXPECT(blocked.status == 1 && test::count_lines(blocked.err) == 3 &&
               blocked.err.find("blocked/a: exists and is not a directory") != std::string::npos &&
               TempDir::list_of(dir / "blocked") == (std::vector<std::string>{"a", "x.png"}),
           "-o with a file where a subdirectory goes: exit ", blocked.status, ": ", blocked.err);
    test::run("mkdir " + dir / "only-links && ln -s ../in/a " + dir / "only-links/a");
    test::Result links = test::run(tool() + " -r " + dir / "only-links");
    EXPECT(links.status == 2 && test::count_lines(links.err) == 1, "a directory of links to directories: exit ", links.status, ": ", links.err);
}

/// `count` random 8-bit PNGs f0.png, f1.png, ... in `dir` (seeds from `seed`); their paths, each
/// after a space, for a command line.
std::string numbered_inputs(const TempDir& dir, int count, int width, int height, int color_type, unsigned seed) {
    std::string inputs;
    for (int i = 0; i < count; ++i) {
        const std::string path = dir / ("f" + std::to_string(i) + ".png");
        fixture::write_file(path, fixture::encode(fixture::random_png(width, height, color_type, 8, false, false, seed + i)));
        inputs += " " + path;
    }
    return inputs;
}

TEST(skip_existing_resumes_a_stopped_batch) {
    // --skip-existing leaves out the inputs whose output is there (outputs are whole or absent) and
    // filters the rest as a first run would; an output there is not touched. With --force it is a
    // usage error.
    TempDir dir;
    const std::string inputs = numbered_inputs(dir, 5, 20, 14, 6, 60);
    EXPECT(test::run(tool() + " -q -k disk:2" + inputs + " -o " + dir / "first").status == 0, "first run");
    test::run("mkdir " + dir / "out && cp " + dir / "first/f0.png " + dir / "first/f3.png " + dir / "out/");
    fixture::write_file(dir / "out/f1.png", fixture::Bytes{'k', 'e', 'p', 't'});  // not a PNG: --skip-existing trusts what is there
    test::Result r = test::run(tool() + " -k disk:2 --skip-existing" + inputs + " -o " + dir / "out");
    EXPECT(r.status == 0 && test::count_lines(r.err) == 1 && r.err.find("2 files, 0 failed, 3 skipped (their outputs exist)") != std::string::npos,
           "resumed: exit ", r.status, ": ", r.err);
    for (int i : {0, 2, 3, 4}) {
        const std::string name = "f" + std::to_string(i) + ".png";
        EXPECT(test::read_bytes(dir / ("out/" + name)) == test::read_bytes(dir / ("first/" + name)), name, " differs from the first run's");
    }
    EXPECT(test::read_bytes(dir / "out/f1.png") == "kept", "an output there was rewritten");
    test::Result both = test::run(tool() + " -f --skip-existing" + inputs + " -o " + dir / "out");
    EXPECT(both.status == 2 && test::count_lines(both.err) == 1, "--force with --skip-existing: exit ", both.status, ": ", both.err);
}

TEST(update_filters_again_what_changed) {
    // -u/--update leaves out the inputs whose output is no older than they are, and filters the
    // others again, replacing their outputs (an older output, even one that is not a PNG, and an
    // input touched after its output); it excludes --force and --skip-existing.
    TempDir dir;
    const std::string inputs = numbered_inputs(dir, 4, 18, 11, 2, 80);
    EXPECT(test::run(tool() + " -q -k disk:2" + inputs + " -o " + dir / "first").status == 0, "first run");
    test::Result none = test::run(tool() + " -u -k disk:2" + inputs + " -o " + dir / "out");
    EXPECT(none.status == 0 && none.err.find("4 files, 0 failed,") != std::string::npos, "no outputs yet: ", none.err);
    test::run("touch -d 2001-01-01 " + dir / "out/f1.png");                    // an output older than its input
    fixture::write_file(dir / "out/f2.png", fixture::Bytes{'o', 'l', 'd'});
    test::run("touch -d 2001-01-01 " + dir / "out/f2.png");                    // ... and not even a PNG
    test::run("touch -d '1 hour ago' " + dir / "out/f3.png" + " && touch " + dir / "f3.png");  // an input changed after its output
    const std::string kept = test::read_bytes(dir / "out/f0.png");
    test::Result r = test::run(tool() + " -u -k disk:2" + inputs + " -o " + dir / "out");
    EXPECT(r.status == 0 && test::count_lines(r.err) == 1 &&
               r.err.find("3 files, 0 failed, 1 skipped (their outputs are up to date)") != std::string::npos,
           "update: exit ", r.status, ": ", r.err);
    for (int i = 0; i < 4; ++i) {
        const std::string name = "f" + std::to_string(i) + ".png";
        EXPECT(test::read_bytes(dir / ("out/" + name)) == test::read_bytes(dir / ("first/" + name)), name, " differs from the first run's");
    }
    test::Result again = test::run(tool() + " -u -k disk:2" + inputs + " -o " + dir / "out");
    EXPECT(again.status == 0 && again.err.find("0 files, 4 skipped (their outputs are up to date)") != std::string::npos, "again: ", again.err);
    EXPECT(kept == test::read_bytes(dir / "out/f0.png"), "an up-to-date output changed");
    // An output replaced keeps its permission bits (as sed -i keeps them); a new one takes 0666
    // less the umask.
    chmod((dir / "out/f1.png").c_str(), 0640);
    test::run("touch " + dir / "f1.png");
    EXPECT(test::run(tool() + " -q -u -k disk:2" + inputs + " -o " + dir / "out").status == 0, "update after a touch");
    struct stat replaced, fresh;
    const mode_t mask = umask(0);
    umask(mask);
    EXPECT(stat((dir / "out/f1.png").c_str(), &replaced) == 0 && (replaced.st_mode & 0777) == 0640 &&
               stat((dir / "first/f1.png").c_str(), &fresh) == 0 && (fresh.st_mode & 0777) == (0666 & ~mask),
           "modes: replaced ", replaced.st_mode & 0777, ", new ", fresh.st_mode & 0777, " (umask ", mask, ")");
    for (const char* other : {" -f", " --skip-existing"}) {
        test::Result both = test::run(tool() + " -u" + other + inputs + " -o " + dir / "out");
        EXPECT(both.status == 2 && test::count_lines(both.err) == 1, "-u with", other, ": exit ", both.status, ": ", both.err);
    }
}

TEST(update_filters_again_what_other_options_made) {
    // Each output records how it was made (its "fftfilter" text: the options that decide its pixels
    // and the kernel's size and digest), and --update filters again an output whose record is not
    // this run's, however new: another kernel or boundary, a kernel file whose contents changed, an
    // output that records nothing. Options that change only last bits or the coding (backend,
    // compression, threads) keep outputs up to date, as does a kernel file rewritten alike.
    TempDir dir;
    const std::string inputs = numbered_inputs(dir, 3, 16, 12, 2, 90);
    auto update = [&](const std::string& options) { return test::run(tool() + " -u " + options + inputs + " -o " + dir / "out"); };
    auto expect_summary = [&](const test::Result& r, const std::string& summary, const std::string& step) {
        EXPECT(r.status == 0 && r.err.find(summary) != std::string::npos, step, ": exit ", r.status, ": ", r.err);
    };
    auto expect_fresh = [&](const std::string& options, const std::string& step) {  // the outputs a first run makes
        const std::string fresh = dir / ("fresh" + std::to_string(std::hash<std::string>()(step)));
        EXPECT(test::run(tool() + " -q " + options + inputs + " -o " + fresh).status == 0, step, ": fresh run");
        for (int i = 0; i < 3; ++i) {
            const std::string name = "f" + std::to_string(i) + ".png";
            EXPECT(test::read_bytes(dir / ("out/" + name)) == test::read_bytes(fresh + "/" + name), step, ": ", name,
                   " differs from a first run's");
        }
    };
    expect_summary(update("-k disk:2"), "3 files, 0 failed,", "first");
    expect_summary(update("-k disk:2 --compression 9 -j 1 --backend fftw"), "0 files, 3 skipped (their outputs are up to date)",
                   "the same filter, coded otherwise");
    expect_summary(update("-k disk:3"), "3 files, 0 failed,", "another kernel");
    expect_fresh("-k disk:3", "another kernel");
    expect_summary(update("-k disk:3 -b wrap"), "3 files, 0 failed,", "another boundary");
    const std::string kernel = dir / "k.png";
    const fixture::Bytes first_kernel = fixture::encode(fixture::random_png(5, 3, 0, 8, false, false, 4));
    fixture::write_file(kernel, first_kernel);
    expect_summary(update("-k " + kernel + " -b wrap"), "3 files, 0 failed,", "a kernel file");
    fixture::write_file(kernel, first_kernel);
    expect_summary(update("-k " + kernel + " -b wrap"), "0 files, 3 skipped", "the kernel file rewritten alike");
    fixture::write_file(kernel, fixture::encode(fixture::random_png(5, 3, 0, 8, false, false, 5)));
    expect_summary(update("-k " + kernel + " -b wrap"), "3 files, 0 failed,", "the kernel file changed");
    expect_fresh("-k " + kernel + " -b wrap", "the kernel file changed");
    // An output that records nothing (here a PNG another program wrote), newer than its input.
    fixture::write_file(dir / "out/f1.png", fixture::encode(fixture::random_png(16, 12, 2, 8, false, false, 91)));
    test::Result r = update("-v -k " + kernel + " -b wrap");
    expect_summary(r, "1 file, 0 failed, 2 skipped", "an output recording nothing");
    EXPECT(r.err.find(dir / "out/f1.png" + " was made otherwise") != std::string::npos, "-v does not say why: ", r.err);
    expect_fresh("-k " + kernel + " -b wrap", "an output recording nothing");
}

TEST(outputs_keep_the_inputs_metadata_and_record_how_they_were_made) {
    // An output keeps its input's text chunks (tEXt, zTXt, iTXt: title, comment, author...),
    // chromaticities (cHRM), Exif data (eXIf: a photo's orientation) and the chunks PNG does not
    // define that are marked safe to copy, through every writer; it replaces "Software" and the
    // "fftfilter" record, and leaves out a keyword that a PNG may not hold (libpng would refuse to
    // write it, failing the file) and a private chunk not safe to copy.
    TempDir dir;
    auto text_chunk = [](const std::string& key, const std::string& text) {
        fixture::Bytes d(key.begin(), key.end());
        d.push_back(0);
        d.insert(d.end(), text.begin(), text.end());
        return d;
    };
    const std::string comment = "filtered for the tests, a comment long enough to be worth compressing, compressing, compressing";
    fixture::Bytes compressed = text_chunk("Comment", "");
    compressed.push_back(0);  // deflate
    const fixture::Bytes deflated = fixture::zlib_compress(fixture::Bytes(comment.begin(), comment.end()));
    compressed.insert(compressed.end(), deflated.begin(), deflated.end());
    fixture::Bytes international = text_chunk("Author", "");
    for (const std::string& part : {std::string("\0\0en\0", 5), std::string("Autor\0", 6), std::string("Zo\xc3\xab")})
        international.insert(international.end(), part.begin(), part.end());
    const fixture::Bytes exif = {'M', 'M', 0, 42, 0, 0, 0, 8, 0, 0};  // big-endian TIFF, an empty directory
    for (bool interlaced : {false, true}) {
        fixture::Bytes bytes = fixture::encode(fixture::random_png(24, 16, 2, 8, interlaced, false, 8));
        fixture::Bytes with_text(bytes.begin(), bytes.begin() + 33);  // after IHDR
        fixture::chunk(with_text, "tEXt", text_chunk("Title", "Clouds at dusk"));
        fixture::chunk(with_text, "tEXt", text_chunk("Software", "a paint program"));
        fixture::chunk(with_text, "zTXt", compressed);
        fixture::chunk(with_text, "tEXt", text_chunk("\x01\x02", "a keyword no PNG may hold"));
        fixture::chunk(with_text, "iTXt", international);
        fixture::chunk(with_text, "tEXt", text_chunk("fftfilter", "-k box:3 -b zero; from another run"));
        fixture::Bytes chromaticities;
        for (uint32_t v : {31270u, 32900u, 64000u, 33000u, 30000u, 60000u, 15000u, 6000u}) fixture::put32(chromaticities, v);
        fixture::chunk(with_text, "cHRM", chromaticities);
        fixture::chunk(with_text, "eXIf", exif);
        fixture::chunk(with_text, "prVt", fixture::Bytes{1, 2, 3});  // private, safe to copy
        fixture::chunk(with_text, "prVT", fixture::Bytes{4, 5});     // private, not safe to copy
        with_text.insert(with_text.end(), bytes.begin() + 33, bytes.end());
        fixture::write_file(dir / (interlaced ? "i.png" : "t.png"), with_text);
    }
    const std::string software = std::string("fftfilter (gpufft) ") + kVersion;
    struct Case {
        const char* environment;
        const char* options;
        const char* recipe_starts;
    };
    const Case cases[] = {{"", "--backend fftw -k gaussian:1", "-k gaussian:1 -b reflect; kernel 9x9, digest "},
                          {"", "--backend fftw -k gaussian:1 --compression 6 --linear", "-k gaussian:1 -b reflect --linear; kernel 9x9, digest "},
                          {"", "--backend fftw -k gaussian:1 --stream always -b wrap", "-k gaussian:1 -b wrap; kernel 9x9, digest "},
                          {"GPUFFT_GPU_DEFLATE=on ", "--backend compute -k disk:2 --depth 16", "-k disk:2 -b reflect --depth 16; kernel "},
                          {"", "--spectrum", "--spectrum"}};
    for (const Case& c : cases) {
        const std::string out = dir / ("out" + std::to_string(&c - cases));
        test::Result r = test::run(std::string(c.environment) + tool() + " -q " + c.options + " " + dir / "t.png " + dir / "i.png -o " + out);
        EXPECT(r.status == 0 && r.err.empty(), c.options, ": exit ", r.status, ": ", r.err);
        for (const char* name : {"t.png", "i.png"}) {
            const PngFormat f = read_png(out + "/" + name).format;
            std::string keys;
            for (const PngText& t : f.text) keys += (keys.empty() ? "" : ",") + t.key;
            EXPECT(keys == "Title,Comment,Author,Software,fftfilter", c.options, " ", name, ": keys ", keys);
            if (f.text.size() != 5) continue;
            EXPECT(f.text[0].text == "Clouds at dusk" && f.text[0].kind == PngText::Kind::Text, c.options, " ", name, ": title");
            EXPECT(f.text[1].text == comment && f.text[1].kind == PngText::Kind::CompressedText, c.options, " ", name, ": comment ",
                   f.text[1].text);
            EXPECT(f.text[2].text == "Zo\xc3\xab" && f.text[2].kind == PngText::Kind::International && f.text[2].language == "en" &&
                       f.text[2].translated_key == "Autor",
                   c.options, " ", name, ": author ", f.text[2].text, " (", f.text[2].language, ", ", f.text[2].translated_key, ")");
            EXPECT(f.text[3].text == software, c.options, " ", name, ": software ", f.text[3].text);
            EXPECT(f.text[4].text.rfind(c.recipe_starts, 0) == 0, c.options, " ", name, ": recorded ", f.text[4].text);
            EXPECT(f.has_chrm && f.chrm == (std::array<int, 8>{31270, 32900, 64000, 33000, 30000, 60000, 15000, 6000}), c.options, " ",
                   name, ": cHRM ", f.has_chrm);
            EXPECT(f.exif == std::vector<unsigned char>(exif.begin(), exif.end()), c.options, " ", name, ": eXIf of ", f.exif.size(), " bytes");
            EXPECT(f.unknown_chunks.size() == 1 && f.unknown_chunks[0].type == "prVt" &&
                       f.unknown_chunks[0].data == (std::vector<unsigned char>{1, 2, 3}),
                   c.options, " ", name, ": ", f.unknown_chunks.size(), " unknown chunks");
        }
    }
}

TEST(dry_run_says_what_would_be_filtered_and_touches_nothing) {
    // -n/--dry-run prints "INPUT -> OUTPUT" for each file a run would filter (after --shard and -u
    // chose) and, on standard error, each problem that would fail one, with the exit status the run
    // would have; it makes no directory and reads no image (a corrupt one is listed), and an output
    // there is neither replaced nor counted as one -u would keep.
    TempDir dir;
    const std::string inputs = numbered_inputs(dir, 3, 12, 10, 2, 120);
    fixture::write_file(dir / "f3.png", fixture::Bytes{'n', 'o', 't', ' ', 'p', 'n', 'g'});
    const std::string all = inputs + " " + dir / "f3.png";
    test::Result r = test::run(tool() + " -n" + all + " -o " + dir / "new/sub");
    std::string expected;
    for (int i = 0; i < 4; ++i) expected += dir / ("f" + std::to_string(i) + ".png") + " -> " + dir / ("new/sub/f" + std::to_string(i) + ".png") + "\n";
    EXPECT(r.status == 0 && r.out == expected && test::count_lines(r.err) == 1 && r.err.find("dry run: 4 files to filter, 0 would fail") != std::string::npos,
           "exit ", r.status, ": ", r.out, r.err);
    EXPECT(!file_exists(dir / "new"), "a dry run made the output directory");
    EXPECT(test::run(tool() + " -q -k disk:2" + inputs + " -o " + dir / "out").status == 0, "a real run");
    const std::string kept = test::read_bytes(dir / "out/f1.png");
    r = test::run(tool() + " -n -k disk:2" + all + " -o " + dir / "out");
    EXPECT(r.status == 1 && r.out == dir / "f3.png -> " + dir / "out/f3.png\n" &&
               r.err.find(dir / "out/f1.png: already exists (use --force to replace it)") != std::string::npos &&
               r.err.find("1 file to filter, 3 would fail") != std::string::npos,
           "outputs there: exit ", r.status, ": ", r.out, r.err);
    r = test::run(tool() + " -n -u -k disk:3 --shard 2/2" + all + " -o " + dir / "out");
    EXPECT(r.status == 0 && r.out == dir / "f1.png -> " + dir / "out/f1.png (replacing it)\n" + dir / "f3.png -> " + dir / "out/f3.png\n",
           "-u with another kernel, the second shard: exit ", r.status, ": ", r.out, r.err);
    r = test::run(tool() + " -n -u -k disk:2" + all + " -o " + dir / "out");
    EXPECT(r.status == 0 && r.out == dir / "f3.png -> " + dir / "out/f3.png\n" && r.err.find("3 skipped (their outputs are up to date)") != std::string::npos,
           "-u with the same kernel: exit ", r.status, ": ", r.out, r.err);
    EXPECT(test::read_bytes(dir / "out/f1.png") == kept && !file_exists(dir / "out/f3.png"), "a dry run wrote an output");
    r = test::run(tool() + " -n --synth 8x8 -o " + dir / "s.png");
    EXPECT(r.status == 2 && test::count_lines(r.err) == 1, "--synth: exit ", r.status, ": ", r.err);
}

TEST(standard_output_takes_one_files_output) {
    // -o - writes the one output to standard output, the bytes a file gets (whole, streamed, a
    // spectrum, a texture); not with several inputs, --update or --skip-existing, nor to a terminal
    // or an input; a file named "-" is not touched.
    TempDir dir;
    const std::string in = numbered_inputs(dir, 1, 30, 20, 2, 150);
    for (const char* options : {"-k disk:2", "-k disk:2 --stream always", "--spectrum"}) {
        test::Result piped = test::run("cd " + dir.path() + " && echo keep > ./- && " + tool() + " -q " + options + in + " -o - > piped.png");
        test::Result file = test::run(tool() + " -q -f " + options + in + " -o " + dir / "file.png");
        EXPECT(piped.status == 0 && piped.err.empty() && file.status == 0 &&
                   test::read_bytes(dir / "piped.png") == test::read_bytes(dir / "file.png") && test::read_bytes(dir / "-") == "keep\n",
               options, ": exit ", piped.status, ": ", piped.err);
    }
    test::Result synth = test::run(tool() + " -q --synth 16x12:seed=3 -o - > " + dir / "synth.png");
    EXPECT(synth.status == 0 && test::run(tool() + " -q --synth 16x12:seed=3 -o " + dir / "synth2.png").status == 0 &&
               test::read_bytes(dir / "synth.png") == test::read_bytes(dir / "synth2.png"),
           "--synth: exit ", synth.status, ": ", synth.err);
    const std::string two = numbered_inputs(dir, 2, 8, 8, 0, 160);
    for (const std::string& refused : {two + " -o -", in + " -u -o -", in + " --skip-existing -o -", " " + dir.path() + " -o -"}) {
        test::Result r = test::run(tool() + refused + " > " + dir / "refused.png");
        EXPECT(r.status == 2 && test::count_lines(r.err) == 1, refused, ": exit ", r.status, ": ", r.err);
    }
    // A terminal (script(1) gives the command one), and standard output appended to the input.
    test::Result tty = test::run("script -qec '" + tool() + " -k disk:2" + in + " -o -' /dev/null");
    EXPECT(tty.status == 2 && tty.out.find("standard output is a terminal") != std::string::npos, "a terminal: exit ", tty.status, ": ",
           tty.out, tty.err);
    const std::string before = test::read_bytes(dir / "f0.png");
    test::Result self = test::run(tool() + " -k disk:2" + in + " -o - >> " + dir / "f0.png");
    EXPECT(self.status == 1 && self.err.find("standard output: is an input file") != std::string::npos &&
               test::read_bytes(dir / "f0.png") == before,
           "appended to the input: exit ", self.status, ": ", self.err);
}

TEST(writes_the_system_refuses_fail_their_file_with_the_reason) {
    // A write the system refuses (a full disk: ENOSPC; here the file-size limit that prlimit sets:
    // EFBIG) fails its file alone: one line with the system's reason, the temporary removed, the
    // other files written as without the limit. The tools ignore SIGXFSZ, which would otherwise end
    // the process at the limit with its temporaries left. Every writer: libdeflate's and the run
    // coder's chunks, libpng's (level 6), a streamed output, the GPU's coded stream.
    TempDir dir;
    EXPECT(test::run(tool() + " -q --synth 240x240:power=2:seed=5:colour -o " + dir / "d0.png").status == 0, "synth");
    fixture::write_file(dir / "small.png", fixture::encode(fixture::random_png(16, 16, 2, 8, false, false, 7)));
    struct Case {
        const char* environment;
        const char* options;
    };
    const Case cases[] = {{"", "--backend fftw"},
                          {"", "--backend fftw --compression 6"},
                          {"", "--backend fftw --stream always"},
                          {"GPUFFT_GPU_DEFLATE=on ", "--backend compute -j 2"}};
    for (const Case& c : cases) {
        const std::string tag = std::string(c.environment) + c.options;
        const std::string free = dir / ("free" + std::to_string(&c - cases)), held = dir / ("held" + std::to_string(&c - cases));
        const std::string args = std::string(" -q -k gaussian:2 ") + c.options + " " + dir / "d0.png " + dir / "small.png -o ";
        test::Result r = test::run(c.environment + tool() + args + free);
        const size_t large = test::read_bytes(free + "/d0.png").size(), small = test::read_bytes(free + "/small.png").size();
        EXPECT(r.status == 0 && small > 0 && large > 4 * small, tag, ": unlimited run: exit ", r.status, ", outputs of ", large, " and ",
               small, " bytes: ", r.err);
        const size_t limit = large / 2;
        r = test::run(std::string(c.environment) + "prlimit --fsize=" + std::to_string(limit) + " " + tool() + args + held);
        EXPECT(r.status == 1 && test::count_lines(r.err) == 1 &&
                   r.err.find(held + "/d0.png: cannot write PNG: write error: File too large") != std::string::npos,
               tag, ": limited to ", limit, " bytes: exit ", r.status, ": ", r.err);
        const std::vector<std::string> left = TempDir::list_of(held);
        EXPECT(left == std::vector<std::string>{"small.png"}, tag, ": left ", left.size(), " entries (", left.empty() ? "" : left[0], ")");
        EXPECT(test::read_bytes(held + "/small.png") == test::read_bytes(free + "/small.png"), tag, ": small.png differs");
    }
}

namespace {

/// The format of an RGB 8-bit PNG.
PngFormat rgb8() {
    PngFormat f;
    f.color_type = 2;
    return f;
}

/// An RGB 8-bit image of noise.
Samples rgb_noise(int width, int height, std::mt19937& rng) {
    Samples s;
    s.resize(width, height, 3, 8);
    for (unsigned char& v : s.data) v = static_cast<unsigned char>(rng());
    return s;
}

/// The IDAT chunks of a PNG file, counted (the signature skipped, each chunk's length read).
int idat_chunks(const std::string& path) {
    const std::string b = test::read_bytes(path);
    auto byte = [&](size_t i) { return static_cast<size_t>(static_cast<unsigned char>(b[i])); };
    int count = 0;
    for (size_t at = 8; at + 12 <= b.size();) {
        const size_t length = (byte(at) << 24) | (byte(at + 1) << 16) | (byte(at + 2) << 8) | byte(at + 3);
        if (std::memcmp(&b[at + 4], "IDAT", 4) == 0) ++count;
        at += 12 + length;
    }
    return count;
}

}  // namespace

TEST(fast_levels_write_images_through_our_writer) {
    // Levels 1-4 write rows filtered here and coded by the run coder or libdeflate (png_io.cpp);
    // every kind they take (grey, grey+alpha, RGB, RGBA at 8 and 16 bits), at every level and at
    // edge sizes, reads back as written, through libpng's reader. Samples half noise, half ramps,
    // so that every Paeth predictor is taken; 16-bit samples whose bytes differ, so that a byte
    // order swapped shows.
    TempDir dir;
    std::mt19937 rng(11);
    const int kinds[][2] = {{0, 8}, {0, 16}, {4, 8}, {4, 16}, {2, 8}, {2, 16}, {6, 8}, {6, 16}};
    const int sizes[][2] = {{1, 1}, {1, 9}, {9, 1}, {37, 5}, {64, 48}};
    for (const auto& kind : kinds)
        for (const auto& size : sizes) {
            PngFormat f;
            f.color_type = kind[0];
            f.bit_depth = kind[1];
            Samples s;
            s.resize(size[0], size[1], channels_of(f.color_type), f.bit_depth);
            for (int y = 0; y < s.height; ++y)
                for (int i = 0; i < s.width * s.channels; ++i) {
                    const unsigned v = (i + y) % 3 == 0 ? rng() : static_cast<unsigned>(i * 37 + y * 11) * 97u;
                    if (f.bit_depth == 16) {
                        const uint16_t w = static_cast<uint16_t>(v);
                        std::memcpy(s.row(y) + 2 * i, &w, 2);
                    } else {
                        s.row(y)[i] = static_cast<unsigned char>(v >> 3);
                    }
                }
            for (int level : {-1, 0, 1, 2, 3, 4, 5, 9}) {
                const std::string path = dir / "k.png";
                write_png_samples(path, s, f, true, level);
                const PngSamples back = read_png_samples(path);
                EXPECT(back.samples.channels == s.channels && back.samples.depth == s.depth && back.samples.width == s.width &&
                           back.samples.height == s.height && back.samples.data == s.data,
                       "colour type ", f.color_type, ", ", f.bit_depth, " bits, ", s.width, "x", s.height, ", level ", level,
                       ": samples differ");
            }
        }
    // The fast levels take that path: a whole image's data goes in one IDAT chunk (up to 1 MiB),
    // where libpng's writer (the other levels, and rows streamed) cuts chunks of 8 KiB.
    const PngFormat rgb = rgb8();
    const Samples noise = rgb_noise(128, 128, rng);
    write_png_samples(dir / "fast.png", noise, rgb, false, 3);
    write_png_samples(dir / "libpng.png", noise, rgb, false, 5);
    {
        PngWriter w(dir / "streamed.png", 128, 128, rgb, false, 5);
        w.write_rows(noise.data.data(), 128);
        w.commit();
    }
    EXPECT(idat_chunks(dir / "fast.png") == 1, "level 3, whole: ", idat_chunks(dir / "fast.png"), " IDAT chunks");
    EXPECT(idat_chunks(dir / "libpng.png") > 1 && idat_chunks(dir / "streamed.png") > 1, "level 5, whole and streamed: ",
           idat_chunks(dir / "libpng.png"), " and ", idat_chunks(dir / "streamed.png"), " IDAT chunks");
    EXPECT(read_png_samples(dir / "streamed.png").samples.data == noise.data, "rows streamed at level 5 differ");
}

namespace {

/// The samples of `p` as PngReader gives them (8 bits, or 16 in the machine's order).
std::vector<unsigned char> stored_samples(const RawPng& p) {
    std::vector<unsigned char> out;
    for (uint16_t v : p.samples) {
        if (p.depth == 16) {
            out.resize(out.size() + 2);
            std::memcpy(&out[out.size() - 2], &v, 2);
        } else {
            out.push_back(static_cast<unsigned char>(v));
        }
    }
    return out;
}

/// A PNG of `p` with rows filtered by every type in turn, or by `types` in turn
/// (fixture::filtered_scanlines), its data
/// over three IDAT chunks, one of them empty, and a tEXt chunk after them.
fixture::Bytes encode_filtered(const RawPng& p, int first_filter, const std::vector<int>& types = {0, 1, 2, 3, 4}) {
    fixture::Bytes out = fixture::signature();
    fixture::chunk(out, "IHDR", fixture::ihdr(static_cast<uint32_t>(p.width), static_cast<uint32_t>(p.height), p.depth, p.color_type, false));
    const fixture::Bytes z = fixture::zlib_compress(fixture::filtered_scanlines(p, first_filter, types));
    const size_t half = z.size() / 2;
    fixture::chunk(out, "IDAT", fixture::Bytes(z.begin(), z.begin() + static_cast<long>(half)));
    fixture::chunk(out, "IDAT", {});
    fixture::chunk(out, "IDAT", fixture::Bytes(z.begin() + static_cast<long>(half), z.end()));
    fixture::chunk(out, "tEXt", {'C', 'o', 'm', 'm', 'e', 'n', 't', 0, 'h', 'i'});
    fixture::chunk(out, "IEND", {});
    return out;
}

/// The file's rows through PngReader::read_rows, `groups` rows a call in turn (the last group
/// repeated), or its error; through libpng alone where `libpng`, else as it chooses (`decoder`).
std::string rows_of(const std::string& path, std::vector<unsigned char>* rows, bool libpng,
                    std::vector<int> groups = {1 << 30}, std::string* decoder = nullptr) {
    try {
        PngReader r(path, {});
        if (libpng) r.use_libpng();
        Samples s;
        s.resize(r.width(), r.height(), r.channels(), r.depth());
        for (int y = 0, g = 0; y < r.height(); ++g) {
            const int n = std::min(groups[std::min<size_t>(static_cast<size_t>(g), groups.size() - 1)], r.height() - y);
            r.read_rows(s.row(y), n);
            y += n;
        }
        *rows = s.data;
        if (decoder) *decoder = r.decoder();
        return "";
    } catch (const Error& e) {
        return e.what();
    }
}

std::string rows_by_libpng(const std::string& path, std::vector<unsigned char>* rows) { return rows_of(path, rows, true); }

}  // namespace

TEST(whole_images_inflate_and_unfilter_as_libpng_reads_them) {
    // A whole image, not interlaced, 8 or 16 bits, no palette or tRNS, is inflated by libdeflate
    // and unfiltered by our own loops (png_io.cpp, inflate_whole). Every kind it takes, rows under
    // every filter type (from an independent encoder), samples of noise, ramps and runs (so that
    // Paeth takes each neighbour and meets ties), give the samples written and libpng's rows.
    // Each image twice: every type in turn, then runs of rows of one type (Sub, Average and Paeth
    // rows run two at a time, from even rows and odd ones, over the streamed blocks' edges).
    const std::vector<int> runs_of_types = {4, 4, 4, 1, 1, 4, 4, 0, 4, 2, 2, 3, 3, 3, 1, 1, 1, 4, 4, 4, 4, 3, 3, 0, 0};
    TempDir dir;
    std::mt19937 rng(5);
    const int kinds[][2] = {{0, 8}, {0, 16}, {4, 8}, {4, 16}, {2, 8}, {2, 16}, {6, 8}, {6, 16}};
    const int sizes[][2] = {{1, 1}, {1, 7}, {6, 1}, {5, 3}, {17, 6}, {37, 11}, {64, 33}};
    int first = 0;
    for (const auto& kind : kinds)
        for (const auto& size : sizes)
            for (const bool runs : {false, true}) {
                RawPng p = fixture::random_png(size[0], size[1], kind[0], kind[1], false, false, rng());
                const unsigned max = (1u << p.depth) - 1;
                for (size_t i = 0; i < p.samples.size(); ++i) {
                    const unsigned pick = (static_cast<unsigned>(i) / 7 + static_cast<unsigned>(i) / 97) % 3;
                    if (pick == 1) p.samples[i] = static_cast<uint16_t>((i * 13) & max);
                    if (pick == 2) p.samples[i] = static_cast<uint16_t>(max / 3);
                }
                const std::string path = dir / "f.png", name = std::to_string(p.color_type) + "/" + std::to_string(p.depth) + " " +
                                                               std::to_string(p.width) + "x" + std::to_string(p.height) +
                                                               (runs ? " (runs of a type)" : "");
                fixture::write_file(path, runs ? encode_filtered(p, first++ % 25, runs_of_types) : encode_filtered(p, first++ % 5));
                PngReader whole(path, {});
                const PngSamples got = whole.read_image();
                std::vector<unsigned char> rows;
                const std::string problem = rows_by_libpng(path, &rows);
                EXPECT(std::string(whole.decoder()) == "libdeflate", name, ": decoded by ", whole.decoder());
                EXPECT(got.samples.data == stored_samples(p), name, ": samples differ from those written");
                EXPECT(problem.empty() && rows == got.samples.data, name, ": libpng's rows differ ", problem);
                std::vector<unsigned char> streamed;
                std::string decoder;
                const std::string streamed_problem = rows_of(path, &streamed, false, {1, 2, 5}, &decoder);
                EXPECT(decoder == "inflater" && streamed_problem.empty() && streamed == rows, name, ": rows streamed by ", decoder,
                       " differ ", streamed_problem);
            }

    // What the path does not take reads through libpng, as before: tRNS, palettes, sub-byte
    // samples, Adam7.
    const int others[][4] = {{2, 8, 0, 1}, {0, 16, 0, 1}, {3, 8, 0, 0}, {0, 4, 0, 0}, {2, 8, 1, 0}};
    for (const auto& o : others) {
        const RawPng p = fixture::random_png(9, 7, o[0], o[1], o[2] != 0, o[3] != 0, rng());
        fixture::write_file(dir / "o.png", fixture::encode(p));
        PngReader r(dir / "o.png", {});
        r.read_image();
        EXPECT(std::string(r.decoder()) == "libpng", "colour type ", o[0], ", ", o[1], " bits: decoded by ", r.decoder());
    }

    // Files not plainly right are read again by libpng, whose word stands: the same error as its
    // row reader gives, or (data past the image, which it tolerates) the same samples.
    const RawPng p = fixture::random_png(23, 9, 2, 8, false, false, 3);
    const fixture::Bytes good = encode_filtered(p, 2);
    auto with_idat = [&](const fixture::Bytes& data, bool end) {
        fixture::Bytes b = fixture::signature();
        fixture::chunk(b, "IHDR", fixture::ihdr(23, 9, 8, 2, false));
        fixture::chunk(b, "IDAT", data);
        if (end) fixture::chunk(b, "IEND", {});
        return b;
    };
    fixture::Bytes scan = fixture::filtered_scanlines(p, 2);
    fixture::Bytes bad_filter = scan;
    bad_filter[3 * (23 * 3 + 1)] = 5;
    fixture::Bytes longer = scan;
    longer.insert(longer.end(), 40, 7);
    fixture::Bytes adler = fixture::zlib_compress(scan);
    adler.back() ^= 1;
    fixture::Bytes critical = with_idat(fixture::zlib_compress(scan), false);
    fixture::chunk(critical, "PLTE", {1, 2, 3});  // a critical chunk out of place
    fixture::chunk(critical, "IEND", {});
    fixture::Bytes crc = good;
    crc[8 + 25 + 8 + 2] ^= 0x10;  // inside the first IDAT's data
    // zlib's header: its check bits, a preset dictionary, and a window of 256 bytes where the
    // stream reaches 355 back (rows 5 to 8 repeat rows 0 to 3), which libpng refuses.
    auto with_header = [](fixture::Bytes z, unsigned char cmf, unsigned char flags) {
        z[0] = cmf;
        z[1] = static_cast<unsigned char>(flags | (31 - (cmf * 256u + flags) % 31) % 31);
        return z;
    };
    fixture::Bytes check = fixture::zlib_compress(scan);
    check[1] ^= 1;
    fixture::Bytes repeats = scan;
    std::copy(scan.begin(), scan.begin() + 4 * (23 * 3 + 1), repeats.begin() + 5 * (23 * 3 + 1));
    std::map<std::string, fixture::Bytes> cases = {
        {"bad filter type", with_idat(fixture::zlib_compress(bad_filter), true)},
        {"short stream", with_idat(fixture::zlib_compress(fixture::Bytes(scan.begin(), scan.end() - 30)), true)},
        {"data past the image", with_idat(fixture::zlib_compress(longer), true)},
        {"Adler-32", with_idat(adler, true)},
        {"no IEND", with_idat(fixture::zlib_compress(scan), false)},
        {"IDAT's CRC", crc},
        {"PLTE after the data", critical},
        {"truncated in IDAT", fixture::Bytes(good.begin(), good.begin() + 8 + 25 + 8 + 20)},
        {"zlib's check bits", with_idat(check, true)},
        {"a preset dictionary", with_idat(with_header(fixture::zlib_compress(scan), 0x78, 0x20), true)},
        {"a window of 256 bytes", with_idat(with_header(fixture::zlib_compress(repeats), 0x08, 0x00), true)},
    };
    const std::set<std::string> tolerated = {"data past the image", "PLTE after the data"};  // by libpng
    for (const auto& [what, bytes] : cases) {
        fixture::write_file(dir / "bad.png", bytes);
        std::string whole_problem;
        PngSamples got;
        std::string decoder;
        try {
            PngReader r(dir / "bad.png", {});
            got = r.read_image();
            decoder = r.decoder();
        } catch (const Error& e) {
            whole_problem = e.what();
        }
        std::vector<unsigned char> rows, streamed;
        const std::string problem = rows_by_libpng(dir / "bad.png", &rows);
        EXPECT(whole_problem == problem, what, ": whole '", whole_problem, "', libpng's rows '", problem, "'");
        std::string streamed_decoder;
        const std::string streamed_problem = rows_of(dir / "bad.png", &streamed, false, {2, 3}, &streamed_decoder);
        EXPECT(streamed_problem == problem && (!problem.empty() || (streamed == rows && streamed_decoder == "libpng")), what,
               ": rows streamed '", streamed_problem, "' by ", streamed_decoder, ", libpng's rows '", problem, "'");
        EXPECT(tolerated.count(what) ? problem.empty() && rows == got.samples.data && decoder == "libpng" : !problem.empty(),
               what, ": libpng's rows say '", problem, "', the whole image decoded by '", decoder, "'");
    }
    // From memory too.
    const PngImage from_memory = read_png_memory(good.data(), good.size(), "memory");
    EXPECT(from_memory.image.width == 23 && from_memory.image.at(22, 8)[2] == p.sample(22, 8, 2) / 255.0f, "from memory");
}

TEST(streamed_rows_inflate_ahead_on_a_thread) {
    // read_rows() inflates on a thread of its own, blocks of rows a ring of four ahead of the
    // caller (png_io.cpp, StreamInflate): 240 rows make eight blocks of 30 here. Rows come as
    // libpng gives them however the calls cut the blocks; a reader left with its inflater waiting
    // on a full ring, or before its first row, goes; a problem the inflater meets far ahead of the
    // caller (the third IDAT's CRC, met while the ring fills to row 120) fails no call before one
    // that needs the rows after it, and that one with libpng's error.
    TempDir dir;
    const RawPng p = fixture::random_png(300, 240, 2, 8, false, false, 11);
    const fixture::Bytes z = fixture::zlib_compress(fixture::filtered_scanlines(p, 1));
    auto write = [&](const std::string& path, bool bad_crc) {
        fixture::Bytes b = fixture::signature();
        fixture::chunk(b, "IHDR", fixture::ihdr(300, 240, 8, 2, false));
        const size_t part = z.size() / 7 + 1;
        for (size_t at = 0; at < z.size(); at += part) {
            fixture::chunk(b, "IDAT", fixture::Bytes(z.begin() + static_cast<long>(at), z.begin() + static_cast<long>(std::min(z.size(), at + part))));
            if (bad_crc && at == 2 * part) b.back() ^= 1;
        }
        fixture::chunk(b, "IEND", {});
        fixture::write_file(path, b);
    };
    write(dir / "good.png", false);
    write(dir / "bad.png", true);
    std::vector<unsigned char> rows;
    EXPECT(rows_by_libpng(dir / "good.png", &rows).empty() && rows == stored_samples(p), "libpng's rows");
    for (const std::vector<int>& groups : std::vector<std::vector<int>>{{1}, {29, 31, 7}, {30}, {239, 1}, {240}}) {
        std::vector<unsigned char> streamed;
        std::string decoder;
        const std::string problem = rows_of(dir / "good.png", &streamed, false, groups, &decoder);
        EXPECT(problem.empty() && decoder == "inflater" && streamed == rows, "rows in groups of ", groups[0], ": by ", decoder,
               " ", problem);
    }
    // Left mid-image, the inflater waiting on the ring or still reading the file's last chunks
    // (which the reader must not close under it: repeated, for the sanitizers to see a race).
    for (int round = 0; round < 20; ++round)
        for (int read : {0, 1, 200, 239}) {
            PngReader r(dir / "good.png", {});
            std::vector<unsigned char> some(r.row_bytes() * static_cast<size_t>(std::max(read, 1)));
            if (read > 0) r.read_rows(some.data(), read);
            EXPECT(!read || std::equal(some.begin(), some.end(), rows.begin()), "the first ", read, " rows");
        }
    std::vector<unsigned char> bad_rows;
    const std::string libpng_says = rows_by_libpng(dir / "bad.png", &bad_rows);
    EXPECT(libpng_says.find("CRC") != std::string::npos, "libpng on the third IDAT's CRC: '", libpng_says, "'");
    PngReader r(dir / "bad.png", {});
    std::vector<unsigned char> first(r.row_bytes() * 60), rest(r.row_bytes() * 180);
    std::string problem;
    try {
        r.read_rows(first.data(), 30);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the inflater meets the CRC
        r.read_rows(first.data() + r.row_bytes() * 30, 30);
    } catch (const Error& e) {
        problem = e.what();
    }
    EXPECT(problem.empty() && std::string(r.decoder()) == "inflater" && std::equal(first.begin(), first.end(), rows.begin()),
           "the first 60 rows: by ", r.decoder(), " '", problem, "'");
    try {
        r.read_rows(rest.data(), 180);
    } catch (const Error& e) {
        problem = e.what();
    }
    EXPECT(problem == libpng_says, "the rest: '", problem, "', libpng: '", libpng_says, "'");
}

namespace {

/// The sync-flush markers (an empty stored block: 00 00 ff ff) in a PNG's image data.
int sync_markers(const std::string& path) {
    const std::string b = test::read_bytes(path);
    auto byte = [&](size_t i) { return static_cast<size_t>(static_cast<unsigned char>(b[i])); };
    std::string data;
    for (size_t at = 8; at + 12 <= b.size();) {
        const size_t length = (byte(at) << 24) | (byte(at + 1) << 16) | (byte(at + 2) << 8) | byte(at + 3);
        if (std::memcmp(&b[at + 4], "IDAT", 4) == 0) data += b.substr(at + 8, length);
        at += 12 + length;
    }
    int count = 0;
    for (size_t i = 0; (i = data.find(std::string("\x00\x00\xff\xff", 4), i)) != std::string::npos; ++i) ++count;
    return count;
}

}  // namespace

namespace inflater_test {

// zlib's reading of a stream: every byte it gives, and whether it ends well (Z_STREAM_END, the
// Adler-32 checked) or its message.
struct ZlibReading {
    fixture::Bytes out;
    bool ok = false;
    std::string message;
};
ZlibReading zlib_reading(const fixture::Bytes& z) {
    ZlibReading r;
    z_stream s{};
    inflateInit(&s);
    s.next_in = const_cast<unsigned char*>(z.data());
    s.avail_in = static_cast<uInt>(z.size());
    unsigned char buffer[4096];
    for (;;) {
        s.next_out = buffer;
        s.avail_out = sizeof buffer;
        const int rc = inflate(&s, Z_NO_FLUSH);
        r.out.insert(r.out.end(), buffer, buffer + (sizeof buffer - s.avail_out));
        if (rc == Z_STREAM_END) {
            r.ok = true;
            break;
        }
        if (rc != Z_OK) {
            r.message = s.msg ? s.msg : rc == Z_BUF_ERROR ? "truncated" : "error";
            break;
        }
    }
    inflateEnd(&s);
    return r;
}

// Our Inflater over `z`, given in pieces of random sizes and read in pieces of random sizes.
// `out`: the bytes it gives before its first false, asked for in pieces up to `size` and then
// one at a time up to 64 KiB past it;
// `ok`: a second reading gives exactly `size` bytes and finishes.
struct OurReading {
    fixture::Bytes out;
    bool ok = false;
};
OurReading our_reading(const fixture::Bytes& z, size_t size, std::mt19937& random) {
    OurReading r;
    for (int pass = 0; pass < 2; ++pass) {
        const size_t limit = pass == 0 ? size + 65536 : size;
        size_t at = 0, made = 0;
        Inflater inflater([&](unsigned char* buffer, size_t capacity) -> long {
            const size_t n = std::min({capacity, z.size() - at, size_t(1) + random() % 3000});
            std::memcpy(buffer, z.data() + at, n);
            at += n;
            return static_cast<long>(n);
        });
        bool failed = false;
        while (made < limit && !failed) {
            const size_t n = made < size ? std::min<size_t>(size - made, 1 + random() % 5000) : 1;
            fixture::Bytes piece(n);
            failed = !inflater.read(piece.data(), n);
            if (!failed) made += n;
            if (!failed && pass == 0) r.out.insert(r.out.end(), piece.begin(), piece.end());
        }
        if (pass == 1) r.ok = !failed && inflater.finish();
    }
    return r;
}

// Data of the kinds PNG streams hold: noise, smooth rows, runs of short periods, text-like bytes.
fixture::Bytes sample_data(int kind, size_t size, std::mt19937& random) {
    fixture::Bytes d(size);
    for (size_t i = 0; i < size; ++i) {
        switch (kind) {
            case 0: d[i] = static_cast<unsigned char>(random()); break;
            case 1: d[i] = static_cast<unsigned char>(128 + 100 * std::sin(0.01 * static_cast<double>(i)) + random() % 3); break;
            case 2: d[i] = i < 7 ? static_cast<unsigned char>(random()) : d[i - 1 - (i / 997) % 7]; break;
            default: d[i] = static_cast<unsigned char>("abcdefghij  ,.\n"[random() % 15]); break;
        }
    }
    return d;
}

fixture::Bytes deflated(const fixture::Bytes& data, int level, int strategy) {
    z_stream s{};
    deflateInit2(&s, level, Z_DEFLATED, 15, 8, strategy);
    fixture::Bytes z(deflateBound(&s, static_cast<uLong>(data.size())) + 64);
    s.next_in = const_cast<unsigned char*>(data.data());
    s.avail_in = static_cast<uInt>(data.size());
    s.next_out = z.data();
    s.avail_out = static_cast<uInt>(z.size());
    deflate(&s, Z_FINISH);
    z.resize(s.total_out);
    deflateEnd(&s);
    return z;
}

// A deflate stream written by hand, for what no encoder writes: bits from the lowest, Huffman
// codes from their first bit.
struct BitWriter {
    fixture::Bytes out{0x78, 0x01};  // zlib's header
    uint64_t bits = 0;
    int count = 0;
    void put(uint32_t value, int n) {
        bits |= uint64_t(value) << count;
        for (count += n; count >= 8; count -= 8, bits >>= 8) out.push_back(static_cast<unsigned char>(bits));
    }
    void code(uint32_t code, int length) {
        for (int b = length - 1; b >= 0; --b) put((code >> b) & 1, 1);
    }
    // The stream ended, with the Adler-32 of its output (by default none).
    fixture::Bytes ended(uint32_t adler = 1) {
        if (count > 0) put(0, 8 - count);
        for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<unsigned char>(adler >> shift));
        return out;
    }
};
// The canonical codes of `lengths` (RFC 1951, 3.2.2).
std::vector<uint32_t> canonical(const std::vector<int>& lengths) {
    std::vector<uint32_t> next(17, 0), codes(lengths.size(), 0);
    std::vector<int> count(17, 0);
    for (int l : lengths) ++count[static_cast<size_t>(l)];
    count[0] = 0;
    for (size_t len = 1, code = 0; len <= 16; ++len) next[len] = static_cast<uint32_t>(code = (code + static_cast<size_t>(count[len - 1])) << 1);
    for (size_t s = 0; s < lengths.size(); ++s)
        if (lengths[s]) codes[s] = next[static_cast<size_t>(lengths[s])]++;
    return codes;
}
// One final dynamic block of no data but its end: `nlit` literal/length codes (all 288 lengths
// below give a complete code), `ndist` distance codes (lengths of 5: 32 make a complete code, 2
// are given lengths of 1), every length sent plainly; or, with `repeat_first`, the code lengths
// opening with a repeat of the length before them (there is none).
fixture::Bytes dynamic_block(int nlit, int ndist, bool repeat_first) {
    BitWriter w;
    w.put(1, 1);
    w.put(2, 2);
    w.put(static_cast<uint32_t>(nlit - 257), 5);
    w.put(static_cast<uint32_t>(ndist - 1), 5);
    w.put(15, 4);  // all 19 code length code lengths
    std::vector<int> length_lengths(19, 0);
    for (int s = 0; s < 15; ++s) length_lengths[static_cast<size_t>(s)] = 4;
    length_lengths[repeat_first ? 16 : 15] = 4;
    const int order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
    for (int s : order) w.put(static_cast<uint32_t>(length_lengths[static_cast<size_t>(s)]), 3);
    const std::vector<uint32_t> length_codes = canonical(length_lengths);
    if (repeat_first) {
        w.code(length_codes[16], 4);
        w.put(0, 2);
    }
    std::vector<int> lit(static_cast<size_t>(nlit));
    // 257: 255 of 8 bits and 2 of 9; 288: 224 of 8 and 64 of 9 (complete either way)
    for (int s = 0; s < nlit; ++s) lit[static_cast<size_t>(s)] = s < (nlit == 257 ? 255 : 224) ? 8 : 9;
    std::vector<int> dist(static_cast<size_t>(ndist), ndist == 2 ? 1 : 5);
    for (int l : lit) w.code(length_codes[static_cast<size_t>(l)], 4);
    for (int l : dist) w.code(length_codes[static_cast<size_t>(l)], 4);
    const std::vector<uint32_t> lit_codes = canonical(lit);
    w.code(lit_codes[256], lit[256]);
    return w.ended();
}

// One final dynamic block whose codes are as long as deflate allows, 15 bits, and its output in
// `expected`: after 32768 + `lead` literals of one and two bits, a match of length code 284 and
// distance code 29 (48 bits with their extra bits), two literals of 15 bits, more of one bit and
// the end (15). With
// `lead` from 0 to 7 the match starts at every bit of a byte, so that some code after it begins
// past the bits a word refill left (a decoder may not look it up before it has them).
fixture::Bytes long_codes_block(int lead, fixture::Bytes& expected) {
    BitWriter w;
    w.put(1, 1);
    w.put(2, 2);
    w.put(286 - 257, 5);
    w.put(30 - 1, 5);
    w.put(15, 4);
    std::vector<int> length_lengths(19, 0);  // lengths 0 to 15, each a 4-bit code
    for (int s = 0; s < 16; ++s) length_lengths[static_cast<size_t>(s)] = 4;
    const int order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
    for (int s : order) w.put(static_cast<uint32_t>(length_lengths[static_cast<size_t>(s)]), 3);
    const std::vector<uint32_t> length_codes = canonical(length_lengths);
    // Both codes complete: 13 symbols of 1 to 13 bits, 4 of 15.
    std::vector<int> lit(286, 0), dist(30, 0);
    for (int k = 0; k < 13; ++k) lit[static_cast<size_t>('A' + k)] = dist[static_cast<size_t>(k)] = k + 1;
    for (int s : {int('Y'), int('Z'), 256, 284}) lit[static_cast<size_t>(s)] = 15;
    for (int s : {26, 27, 28, 29}) dist[static_cast<size_t>(s)] = 15;
    for (int l : lit) w.code(length_codes[static_cast<size_t>(l)], 4);
    for (int l : dist) w.code(length_codes[static_cast<size_t>(l)], 4);
    const std::vector<uint32_t> lit_codes = canonical(lit), dist_codes = canonical(dist);
    auto literal = [&](int c) {
        w.code(lit_codes[static_cast<size_t>(c)], lit[static_cast<size_t>(c)]);
        expected.push_back(static_cast<unsigned char>(c));
    };
    expected.clear();
    for (int i = 0; i < 32768 + lead; ++i) literal(i % 3 ? 'A' : 'B');
    w.code(lit_codes[284], 15);
    w.put(0, 5);  // length 227
    w.code(dist_codes[29], 15);
    w.put(1000, 13);  // distance 24577 + 1000
    for (int i = 0; i < 227; ++i) expected.push_back(expected[expected.size() - 25577]);
    literal('Z');
    literal('Y');
    for (int i = 0; i < 64; ++i) literal('A');  // (a decoder's fast path needs input ahead)
    w.code(lit_codes[256], 15);
    return w.ended(static_cast<uint32_t>(adler32(1, expected.data(), static_cast<uInt>(expected.size()))));
}

// A dynamic block of eight 'a's whose distance code has two codes of one bit, then a final one
// whose distance code is a single code of one bit (incomplete, as deflate allows) and whose match
// uses the other bit: zlib refuses it ("invalid distance code") after nine bytes, where a decoder
// that kept the first block's distances would read on (a distance of 2).
fixture::Bytes incomplete_distances_block() {
    BitWriter w;
    std::vector<int> length_lengths(19, 0);
    for (int s = 0; s < 16; ++s) length_lengths[static_cast<size_t>(s)] = 4;
    const std::vector<uint32_t> length_codes = canonical(length_lengths);
    std::vector<int> lit(258, 0);
    lit['a'] = 1, lit[256] = 2, lit[257] = 2;  // complete: 'a', the end, length 3
    const std::vector<uint32_t> lit_codes = canonical(lit);
    auto header = [&](bool last, const std::vector<int>& dist) {
        w.put(last, 1);
        w.put(2, 2);
        w.put(258 - 257, 5);
        w.put(static_cast<uint32_t>(dist.size() - 1), 5);
        w.put(15, 4);
        const int order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
        for (int s : order) w.put(static_cast<uint32_t>(length_lengths[static_cast<size_t>(s)]), 3);
        for (int l : lit) w.code(length_codes[static_cast<size_t>(l)], 4);
        for (int l : dist) w.code(length_codes[static_cast<size_t>(l)], 4);
    };
    header(false, {1, 1});  // distances 1 and 2, codes 0 and 1
    for (int i = 0; i < 8; ++i) w.code(lit_codes['a'], 1);
    w.code(lit_codes[256], 2);
    header(true, {1});  // distance 1 alone, code 0
    w.code(lit_codes['a'], 1);
    w.code(lit_codes[257], 2);
    w.put(1, 1);  // the distance code's unused bit
    w.code(lit_codes[256], 2);
    return w.ended();
}

// The data deflated at levels 0, 6 and 1 in turn, 9000 bytes each: stored blocks between coded ones.
fixture::Bytes mixed_levels(const fixture::Bytes& data) {
    z_stream s{};
    deflateInit(&s, 6);
    fixture::Bytes z(deflateBound(&s, static_cast<uLong>(data.size())) + 4096);
    s.next_out = z.data();
    s.avail_out = static_cast<uInt>(z.size());
    const int levels[3] = {0, 6, 1};
    for (size_t at = 0, k = 0; at < data.size(); at += 9000, ++k) {
        deflateParams(&s, levels[k % 3], Z_DEFAULT_STRATEGY);
        s.next_in = const_cast<unsigned char*>(data.data() + at);
        s.avail_in = static_cast<uInt>(std::min<size_t>(9000, data.size() - at));
        deflate(&s, Z_NO_FLUSH);
    }
    deflate(&s, Z_FINISH);
    z.resize(s.total_out);
    deflateEnd(&s);
    return z;
}

// `z` broken the `how`-th way at `at`, past its header mostly: 0 a bit flipped, 1 a byte replaced,
// 2 cut short there, 3 three bits flipped anywhere past the header.
fixture::Bytes broken_copy(const fixture::Bytes& z, int how, std::mt19937& random, size_t& at) {
    fixture::Bytes broken = z;
    at = 2 + random() % (broken.size() - 2);
    if (how == 0) broken[at] ^= static_cast<unsigned char>(1u << (random() % 8));
    else if (how == 1) broken[at] = static_cast<unsigned char>(random());
    else if (how == 2) broken.resize(at);
    else for (int k = 0; k < 3; ++k) broken[2 + random() % (broken.size() - 2)] ^= static_cast<unsigned char>(1u << (random() % 8));
    return broken;
}

}  // namespace inflater_test

TEST(inflater_reads_as_zlib_reads) {
    // Our Inflater (inflate.h) against zlib's inflate(). Streams of zlib's every strategy and
    // libdeflate's levels, whole, in random pieces: the same bytes, and the end checked (an
    // extra byte after the stream, or one asked past it, refused). Then each stream broken
    // thousands of ways (bits flipped, bytes replaced, cut short): whatever zlib refuses ours
    // refuses, never giving a byte that zlib does not give first; whatever zlib reads whole ours
    // reads whole. And the ways zlib finds a stream wrong, each met by some broken stream.
    using namespace inflater_test;
    std::mt19937 random(7);
    std::vector<std::pair<fixture::Bytes, fixture::Bytes>> streams;  // (data, stream)
    libdeflate_compressor* levels[3] = {libdeflate_alloc_compressor(1), libdeflate_alloc_compressor(6),
                                        libdeflate_alloc_compressor(12)};
    for (int kind = 0; kind < 4; ++kind)
        for (size_t size : {size_t(0), size_t(1), size_t(300), size_t(70000), size_t(600000)}) {
            const fixture::Bytes data = sample_data(kind, size, random);
            for (int level : {0, 1, 6, 9})
                streams.emplace_back(data, deflated(data, level, Z_DEFAULT_STRATEGY));
            for (int strategy : {Z_FILTERED, Z_HUFFMAN_ONLY, Z_RLE, Z_FIXED})
                streams.emplace_back(data, deflated(data, 6, strategy));
            streams.emplace_back(data, mixed_levels(data));
            for (libdeflate_compressor* c : levels) {
                fixture::Bytes z(libdeflate_zlib_compress_bound(c, size));
                z.resize(libdeflate_zlib_compress(c, data.data(), size, z.data(), z.size()));
                streams.emplace_back(data, z);
            }
        }
    for (libdeflate_compressor* c : levels) libdeflate_free_compressor(c);
    size_t bad = 0;
    for (const auto& [data, z] : streams) {
        OurReading whole = our_reading(z, data.size(), random);
        if (!whole.ok || whole.out != data) ++bad;
        fixture::Bytes longer = z;
        longer.push_back(0);
        if (our_reading(longer, data.size(), random).ok || our_reading(z, data.size() + 1, random).ok) ++bad;
    }
    EXPECT(bad == 0, bad, " of ", streams.size(), " streams misread");
    {  // a source that fails after giving the whole stream: the stream is read, but not finished
        const auto& [data, z] = *std::find_if(streams.begin(), streams.end(), [](const auto& s) { return s.first.size() == 300; });
        bool given = false;
        Inflater inflater([&](unsigned char* buffer, size_t capacity) -> long {
            if (given) return -1;
            given = true;
            std::memcpy(buffer, z.data(), std::min(capacity, z.size()));
            return static_cast<long>(std::min(capacity, z.size()));
        });
        fixture::Bytes out(data.size());
        EXPECT(inflater.read(out.data(), out.size()) && out == data && !inflater.finish(),
               "a source failing after the stream's last byte");
    }

    std::set<std::string> zlib_says;
    size_t cases = 0, wrong = 0, refused = 0;
    std::string first_wrong;
    for (const auto& [data, z] : streams) {
        if (data.size() > 70000 || z.size() < 3) continue;
        const int rounds = data.size() > 300 ? 40 : 120;  // the long streams' reads are most of the time
        for (int round = 0; round < rounds; ++round, ++cases) {
            const int how = round % 4;
            size_t at;
            const fixture::Bytes broken = broken_copy(z, how, random, at);
            const ZlibReading theirs = zlib_reading(broken);
            const OurReading ours = our_reading(broken, theirs.out.size(), random);
            const bool prefix = ours.out.size() <= theirs.out.size() &&
                                std::equal(ours.out.begin(), ours.out.end(), theirs.out.begin());
            // zlib reads no further than the stream's end; ours also refuses bytes after it
            const bool trailing = theirs.ok && broken.size() != z.size();
            const bool same_verdict = ours.ok == theirs.ok || (trailing && !ours.ok);
            if (!prefix || !same_verdict) {
                if (wrong++ == 0)
                    first_wrong = check::str("stream of ", z.size(), " bytes, way ", how, " at ", at, ": zlib ",
                                             theirs.ok ? "reads it" : theirs.message, " (", theirs.out.size(),
                                             " bytes), ours ", ours.ok ? "reads it" : "refuses it", " (",
                                             ours.out.size(), " bytes)");
            }
            if (!theirs.ok) {
                ++refused;
                zlib_says.insert(theirs.message);
            }
        }
    }
    EXPECT(wrong == 0, wrong, " of ", cases, " broken streams read otherwise than zlib; the first: ", first_wrong);
    // By hand: a block of 257 and 2 codes is read; of 288 literal/length codes, 32 distance codes,
    // or a repeat with no length before it, refused (no encoder writes such streams).
    const std::pair<fixture::Bytes, const char*> by_hand[] = {{dynamic_block(257, 2, false), ""},
                                                              {dynamic_block(288, 2, false), "too many length or distance symbols"},
                                                              {dynamic_block(257, 32, false), "too many length or distance symbols"},
                                                              {dynamic_block(257, 2, true), "invalid bit length repeat"}};
    for (const auto& [z, message] : by_hand) {
        const ZlibReading theirs = zlib_reading(z);
        const OurReading ours = our_reading(z, 0, random);
        EXPECT(theirs.message == message && ours.ok == theirs.ok && ours.out.empty(), "a block by hand: zlib '",
               theirs.message, "', ours ", ours.ok ? "reads it" : "refuses it");
    }
    {
        const fixture::Bytes z = incomplete_distances_block();
        const ZlibReading theirs = zlib_reading(z);
        const OurReading ours = our_reading(z, theirs.out.size(), random);
        EXPECT(theirs.message == "invalid distance code" && theirs.out == fixture::Bytes(9, 'a') && !ours.ok &&
                   ours.out == theirs.out,
               "an incomplete distance code after a complete one: zlib '", theirs.message, "' after ", theirs.out.size(),
               " bytes, ours ", ours.ok ? "reads it" : "refuses it", " after ", ours.out.size());
    }
    for (int lead = 0; lead < 8; ++lead) {
        fixture::Bytes expected;
        const fixture::Bytes z = long_codes_block(lead, expected);
        const ZlibReading theirs = zlib_reading(z);
        const OurReading ours = our_reading(z, expected.size(), random);
        EXPECT(theirs.ok && theirs.out == expected && ours.ok && ours.out == expected, "15-bit codes after a match (",
               lead, "): zlib ", theirs.ok ? "reads it" : theirs.message, ", ours ", ours.ok ? "reads it" : "refuses it",
               " (", ours.out.size(), " of ", expected.size(), " bytes", ours.out == expected ? "" : ", not those", ")");
    }
    for (const char* message : {"invalid block type", "invalid stored block lengths", "too many length or distance symbols",
                                "invalid code lengths set", "invalid bit length repeat", "invalid literal/lengths set",
                                "invalid distances set", "invalid literal/length code", "invalid distance code",
                                "invalid distance too far back", "incorrect data check", "truncated"})
        EXPECT(zlib_says.count(message), "no broken stream met zlib's '", message, "' (", refused, " refused)");
}

TEST(paeth_filter_rows_subtract_the_predictor_of_the_png_spec) {
    // The predictor as the PNG specification writes it (p = a + b - c, the nearest of a, b, c to
    // p, ties to a then b), independent of the writer's.
    auto predictor = [](int a, int b, int c) {
        const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
        return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
    };
    // Every (a, b, c): a pixel of 256 bytes, the first of a row of two all a (cur) and all c
    // (prev), the second's 256 bytes above them b = 0..255.
    std::vector<unsigned char> cur(512), prev(512), out(512);
    long bad = 0;
    for (int a = 0; a < 256; ++a)
        for (int c = 0; c < 256; ++c) {
            for (int k = 0; k < 256; ++k) {
                cur[k] = static_cast<unsigned char>(a);
                prev[k] = static_cast<unsigned char>(c);
                prev[256 + k] = static_cast<unsigned char>(k);
                cur[256 + k] = static_cast<unsigned char>(a * 7 + c * 3 + k);
            }
            paeth_filter_row(cur.data(), prev.data(), out.data(), 512, 256);
            for (int k = 0; k < 256; ++k)
                bad += out[256 + k] != static_cast<unsigned char>(cur[256 + k] - predictor(a, k, c)) ||
                       out[k] != static_cast<unsigned char>(cur[k] - c);  // the first pixel: its predictor is b
        }
    EXPECT(bad == 0, bad, " bytes of the 2^24 (a, b, c) filtered otherwise");
    // Rows of every pixel size the writer takes and lengths around its 16-byte steps.
    std::mt19937 random(11);
    bad = 0;
    for (size_t bpp : {1, 2, 3, 4, 6, 8})
        for (size_t stride = bpp; stride <= 80 * bpp; stride += bpp) {
            std::vector<unsigned char> up(stride), row(stride), got(stride + 16, 0x5a);
            for (size_t i = 0; i < stride; ++i) up[i] = static_cast<unsigned char>(random()), row[i] = static_cast<unsigned char>(random());
            paeth_filter_row(row.data(), up.data(), got.data(), stride, bpp);
            for (size_t i = 0; i < stride; ++i)
                bad += got[i] != static_cast<unsigned char>(row[i] - predictor(i < bpp ? 0 : row[i - bpp], up[i], i < bpp ? 0 : up[i - bpp]));
            for (size_t i = stride; i < got.size(); ++i) bad += got[i] != 0x5a;  // nothing written past the row
        }
    EXPECT(bad == 0, bad, " bytes of random rows filtered otherwise");
}

TEST(run_coder_streams_read_as_written) {
    // The run coder (deflate.h) against zlib's, libdeflate's and our inflaters: every kind of data
    // (noise, smooth, periodic, text-like, runs of every length around the match limits, one
    // byte, none), blocks of many sizes (one byte to above a stored block's 65535), whole and in
    // parts (each but the last ended by a sync flush: the parts' streams one after another are the
    // stream of the whole); frequencies that Huffman's own code would give 20-bit codes (deflate
    // allows 15); never past deflate_runs_bound().
    using namespace inflater_test;
    std::mt19937 random(19);
    std::vector<fixture::Bytes> inputs;
    for (int kind = 0; kind < 4; ++kind)
        for (size_t size : {size_t(1), size_t(300), size_t(70000), size_t(300000)}) inputs.push_back(sample_data(kind, size, random));
    inputs.emplace_back();
    inputs.emplace_back(size_t(1) << 20, 0);  // one run across blocks
    {
        fixture::Bytes runs;  // runs of 1 .. 300 bytes, each another byte than the one before
        for (size_t r = 1; r <= 300; ++r)
            for (int k = 0; k < 3; ++k) runs.insert(runs.end(), r, static_cast<unsigned char>(runs.empty() ? 1 : runs.back() + 1 + random() % 5));
        inputs.push_back(runs);
    }
    {
        fixture::Bytes skewed;  // symbol i about fib(i) times, shuffled: no code within 15 bits without limiting
        uint64_t a = 1, b = 1;
        for (int symbol = 0; symbol < 26; ++symbol, std::swap(a, b), b += a) skewed.insert(skewed.end(), a, static_cast<unsigned char>(symbol * 7));
        std::shuffle(skewed.begin(), skewed.end(), random);
        inputs.push_back(skewed);
    }
    libdeflate_decompressor* theirs = libdeflate_alloc_decompressor();
    size_t cases = 0, wrong = 0;
    std::string first;
    auto check = [&](const fixture::Bytes& data, const fixture::Bytes& raw, const std::string& what) {
        ++cases;
        // Raw deflate through libdeflate; then as a zlib stream through zlib and our inflater.
        fixture::Bytes out(data.size() + 1);
        size_t got = 0;
        const bool libdeflate_ok = libdeflate_deflate_decompress(theirs, raw.data(), raw.size(), out.data(), out.size(), &got) ==
                                       LIBDEFLATE_SUCCESS &&
                                   got == data.size() && std::equal(data.begin(), data.end(), out.begin());
        fixture::Bytes z{0x78, 0x01};
        z.insert(z.end(), raw.begin(), raw.end());
        const uint32_t adler = static_cast<uint32_t>(libdeflate_adler32(1, data.data(), data.size()));
        for (int shift = 24; shift >= 0; shift -= 8) z.push_back(static_cast<unsigned char>(adler >> shift));
        const ZlibReading zlib = zlib_reading(z);
        const OurReading ours = our_reading(z, data.size(), random);
        if (!libdeflate_ok || !zlib.ok || zlib.out != data || !ours.ok || ours.out != data) {
            if (wrong++ == 0)
                first = what + ": libdeflate " + (libdeflate_ok ? "ok" : "wrong") + ", zlib " + (zlib.ok ? "" : zlib.message) +
                        (zlib.out == data ? " same" : " other bytes") + ", ours " + (ours.ok && ours.out == data ? "ok" : "wrong");
        }
    };
    size_t coded = 0, total = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
        const fixture::Bytes& data = inputs[i];
        for (size_t block : {size_t(0), size_t(1), size_t(7), size_t(1000), size_t(65536), size_t(200000)}) {
            if ((block == 1 && data.size() > 300) || (block == 7 && data.size() > 70000)) continue;  // tiny blocks on short inputs
            const std::string what = "input " + std::to_string(i) + " (" + std::to_string(data.size()) + " bytes), blocks of " +
                                     std::to_string(block);
            fixture::Bytes raw(deflate_runs_bound(data.size(), block));
            raw.resize(deflate_runs(data.data(), data.size(), true, raw.data(), block));
            check(data, raw, what);
            if (block == 0) coded += raw.size(), total += data.size();
            if (block == 1000 || block == 65536) {  // a piece at a time (RunCoder), pieces of whole blocks: the same stream
                fixture::Bytes pieces(deflate_runs_bound(data.size(), block));
                RunCoder coder(pieces.data(), block);
                for (size_t at = 0; at < data.size();) {
                    const size_t n = std::min(data.size() - at, block * (1 + random() % 3));
                    coder.code(data.data() + at, n, at + n == data.size());
                    at += n;
                }
                pieces.resize(coder.finish(true));
                EXPECT(pieces == raw, what, ": a piece at a time, another stream");
            }
            // In parts: each part's stream after the one before (the sync flush's marker ends all but the last).
            fixture::Bytes parts;
            bool marked = true;
            const size_t cuts = 1 + random() % 3;
            for (size_t k = 0, at = 0; k <= cuts; ++k) {
                const size_t end = k == cuts ? data.size() : std::max(at, std::min(data.size(), at + random() % (data.size() / cuts + 2)));
                fixture::Bytes part(deflate_runs_bound(end - at, block));
                part.resize(deflate_runs(data.data() + at, end - at, k == cuts, part.data(), block));
                if (k < cuts) marked = marked && part.size() >= 4 && fixture::Bytes(part.end() - 4, part.end()) == fixture::Bytes{0, 0, 0xff, 0xff};
                parts.insert(parts.end(), part.begin(), part.end());
                at = end;
            }
            EXPECT(marked, what, ": a part not ended by a sync flush");
            check(data, parts, what + ", in " + std::to_string(cuts + 1) + " parts");
        }
    }
    libdeflate_free_decompressor(theirs);
    EXPECT(wrong == 0, wrong, " of ", cases, " streams read otherwise: ", first);
    // It codes: these inputs take under half their size (the long run and the runs a few hundred bytes).
    EXPECT(coded * 2 < total, "coded ", coded, " bytes of ", total);
    fixture::Bytes one(deflate_runs_bound(size_t(1) << 20));
    EXPECT(deflate_runs(inputs[17].data(), inputs[17].size(), true, one.data()) < 2000, "a run of a MiB: ",
           deflate_runs(inputs[17].data(), inputs[17].size(), true, one.data()), " bytes");
}

TEST(runs_deflated_on_the_gpu_are_the_cpu_coders) {
    // GpuRunCoder (png_filter.comp, run_coder.comp) against deflate_runs() on the
    // same bytes: the same stream byte for byte and the same Adler-32, or declined exactly where a
    // block would be stored or the stream would pass half the bytes. First streams given as they are (runs of 1-300 bytes and longer than
    // a chunk (128 bytes; 512 before) or a block of 128 KiB, at and across their edges; smooth data; one run; text
    // and noise, short last blocks, a stream of one byte), then rows filtered on the GPU (8- and
    // 16-bit, one to four channels, odd widths) against paeth_filter_row(); then a filter's output
    // through Convolver and write_png_samples(): the file the same with the GPU's stream as without.
    using namespace inflater_test;
    test::context();
    std::mt19937 random(23);
    libdeflate_decompressor* inflater = libdeflate_alloc_decompressor();
    auto cpu = [](const fixture::Bytes& data) {
        fixture::Bytes raw(deflate_runs_bound(data.size()));
        raw.resize(deflate_runs(data.data(), data.size(), true, raw.data()));
        return raw;
    };
    // Whether the GPU leaves a stream to the CPU: where the CPU's coder stores a block, or the
    // stream passes its room on the GPU, half the bytes (and 4 KiB).
    auto stored = [&](const fixture::Bytes& data) {
        for (size_t at = 0; at < data.size(); at += kRunBlock) {
            const size_t n = std::min(kRunBlock, data.size() - at);
            if (run_block_stored(run_counts(data.data() + at, n), n)) return true;
        }
        return cpu(data).size() + 4 > (data.size() / 2 + 4096) / 4 * 4;
    };
    size_t coded = 0, declined = 0;
    auto check = [&](GpuRunCoder& gpu, const fixture::Bytes& data, const std::string& what) {
        DeflatedRows out;
        const bool ok = gpu.collect(out);
        const bool store = stored(data);
        EXPECT(ok != store, what, ": the GPU ", ok ? "coded" : "declined", " a stream ", store ? "it should leave to the CPU" : "it should code");
        if (!ok || store) {
            declined += !ok;
            return;
        }
        ++coded;
        const fixture::Bytes want = cpu(data);
        size_t differs = 0;
        while (differs < std::min(want.size(), out.data.size()) && want[differs] == out.data[differs]) ++differs;
        EXPECT(out.data == want, what, ": ", out.data.size(), " bytes against the CPU's ", want.size(), ", first differing at ", differs);
        const uint32_t adler = static_cast<uint32_t>(libdeflate_adler32(1, data.data(), data.size()));
        EXPECT(out.adler == adler, what, ": Adler-32 ", out.adler, " against ", adler);
        fixture::Bytes back(data.size() + 1);
        size_t got = 0;
        EXPECT(libdeflate_deflate_decompress(inflater, out.data.data(), out.data.size(), back.data(), back.size(), &got) ==
                       LIBDEFLATE_SUCCESS &&
                   got == data.size() && std::equal(data.begin(), data.end(), back.begin()),
               what, ": libdeflate does not read the GPU's stream back");
    };
    GpuRunCoder gpu(test::programs());
    std::vector<std::pair<fixture::Bytes, std::string>> streams;
    for (int kind = 0; kind < 4; ++kind)
        for (size_t size : {size_t(1), size_t(300), size_t(70000), size_t(300000)})
            streams.emplace_back(sample_data(kind, size, random), "kind " + std::to_string(kind) + ", " + std::to_string(size) + " bytes");
    streams.emplace_back(fixture::Bytes(size_t(300000), 7), "one run over three blocks");
    {
        fixture::Bytes runs;  // runs of 1 .. 300 bytes, then longer ones, each another byte than the one before
        for (size_t r = 1; r <= 300; ++r)
            for (int k = 0; k < 3; ++k) runs.insert(runs.end(), r, static_cast<unsigned char>(runs.empty() ? 1 : runs.back() + 1 + random() % 5));
        for (size_t r : {127, 128, 129, 255, 256, 257, 511, 512, 513, 1024, 1537, 70000, 131071, 131072, 131073, 260, 261, 262, 516, 517})
            runs.insert(runs.end(), r, static_cast<unsigned char>(runs.back() + 1));
        streams.emplace_back(runs, "runs of 1-300 and past chunks and blocks");
        fixture::Bytes shifted(runs.begin() + 5, runs.end());  // the same runs meeting the edges elsewhere
        streams.emplace_back(shifted, "those runs five bytes on");
    }
    {
        fixture::Bytes smooth;  // small residuals with runs of zeros, as filtered photographs
        while (smooth.size() < 400000) {
            const size_t r = random() % 40 == 0 ? 8 + random() % 600 : 1;
            smooth.insert(smooth.end(), r, r > 1 ? 0 : static_cast<unsigned char>(int(random() % 7) - 3));
        }
        streams.emplace_back(smooth, "smooth residuals");
    }
    {
        fixture::Bytes skewed;  // symbol i about fib(i) times, shuffled: no code within 15 bits without limiting
        uint64_t a = 1, b = 1;
        for (int symbol = 0; symbol < 26; ++symbol, std::swap(a, b), b += a) skewed.insert(skewed.end(), a, static_cast<unsigned char>(symbol * 7));
        std::shuffle(skewed.begin(), skewed.end(), random);
        streams.emplace_back(skewed, "frequencies past 15 bits' codes");
    }
    for (const auto& [data, what] : streams) {
        gpu.deflate(data);
        check(gpu, data, what);
    }
    // Rows filtered on the GPU: smooth images (as a filter's outputs), so that the run coder codes them.
    for (int depth : {8, 16})
        for (int channels = 1; channels <= 4; ++channels) {
            Samples s;
            s.resize(97 + channels * 41, 300 + 50 * channels, channels, depth);
            const size_t count = s.data.size() / s.bytes_per_sample();
            for (size_t i = 0; i < count; ++i) {
                const size_t x = i / static_cast<size_t>(channels) % static_cast<size_t>(s.width), y = i / s.row_bytes() * s.bytes_per_sample();
                const unsigned v = static_cast<unsigned>(x < 40 ? 200 : (x * 3 + y * 5 + (i % channels) * 17) / 4 + random() % 2);
                if (depth == 8) s.data[i] = static_cast<unsigned char>(v);
                else reinterpret_cast<uint16_t*>(s.data.data())[i] = static_cast<uint16_t>(v * 251);
            }
            fixture::Bytes filtered;
            std::vector<unsigned char> above(s.row_bytes(), 0), row(s.row_bytes());
            const size_t bpp = static_cast<size_t>(channels) * s.bytes_per_sample();
            for (int y = 0; y < s.height; ++y) {
                for (size_t k = 0; k < s.row_bytes(); ++k) row[k] = s.row(y)[depth == 16 ? k ^ 1 : k];  // big-endian, as stored
                filtered.push_back(4);
                const size_t at = filtered.size();
                filtered.resize(at + s.row_bytes());
                paeth_filter_row(row.data(), above.data(), filtered.data() + at, s.row_bytes(), bpp);
                above = row;
            }
            std::vector<unsigned char> padded((s.data.size() + 3) / 4 * 4, 0);
            std::copy(s.data.begin(), s.data.end(), padded.begin());
            StorageBuffer words(padded.data(), padded.size());
            gpu.deflate(words, s.row_bytes(), s.height, static_cast<int>(bpp), depth == 16);
            check(gpu, filtered, std::to_string(depth) + "-bit rows of " + std::to_string(channels) + " channels");
        }
    libdeflate_free_decompressor(inflater);
    EXPECT(coded >= 15 && declined >= 1, coded, " streams coded, ", declined, " declined: the cases miss a way");
    // A filter's outputs: the file written with the GPU's stream is the file written without it.
    const Kernel k = parse_kernel("gaussian:3");
    for (int depth : {8, 16}) {
        SampleConversion c;
        c.in_channels = c.out_channels = 3;
        c.in_depth = c.out_depth = depth;
        c.deflate = true;
        Samples in;
        in.resize(300, 220, 3, depth);
        for (size_t i = 0; i < in.data.size() / in.bytes_per_sample(); ++i) {  // smooth, a few samples off
            const unsigned v = static_cast<unsigned>((i / 3 % 300) / 2 + (i % 7 == 0 ? random() % 64 : 0));
            if (depth == 8) in.data[i] = static_cast<unsigned char>(v);
            else reinterpret_cast<uint16_t*>(in.data.data())[i] = static_cast<uint16_t>((i / 3 % 300) / 60 * 9000);  // flat bands: 16-bit noise would not pay
        }
        Convolver convolver(test::programs(), k, with(Boundary::Reflect));
        convolver.submit(in, c);
        DeflatedRows deflated;
        Samples out = convolver.collect(nullptr, {}, &deflated);
        PngFormat format;
        format.color_type = 2;
        format.bit_depth = depth;
        test::TempDir dir;
        write_png_samples(dir / "gpu.png", out, format, true, 4, false, &deflated);
        write_png_samples(dir / "cpu.png", out, format, true, 4, false);
        EXPECT(deflated.coded && test::read_bytes(dir / "gpu.png") == test::read_bytes(dir / "cpu.png"), depth, "-bit output: ",
               deflated.coded ? "the files differ" : "not deflated on the GPU");
    }
}

TEST(run_coder_taken_where_a_sample_says_it_is_smaller) {
    // runs_pay(): the run coder for rows of small residuals (a smooth image filtered), libdeflate
    // for a repeated pattern (LZ77's matches far back), and for a render: the pattern between a
    // flat background above and below it (what a sample of the first and last rows misjudged);
    // and the writer follows it: fast-level files of each kind read back as written, the smooth
    // one no larger than libdeflate's stream and the render no larger than 1.02 times it.
    std::mt19937 random(5);
    PngFormat rgb;
    rgb.color_type = 2;
    rgb.bit_depth = 8;
    Samples smooth, pattern, render;
    smooth.resize(700, 600, 3, 8);
    pattern.resize(700, 600, 3, 8);
    render.resize(700, 600, 3, 8);
    for (int y = 0; y < 600; ++y)
        for (int i = 0; i < 2100; ++i) {
            smooth.row(y)[i] = static_cast<unsigned char>(128 + 60 * std::sin(0.004 * i + 0.01 * y) + random() % 5);
            pattern.row(y)[i] = static_cast<unsigned char>("drawing, text, repeated pattern"[(i + 7 * y) % 31] * (i % 3 + 1));
            render.row(y)[i] = y < 150 || y >= 450 ? static_cast<unsigned char>(40 + i % 3) : pattern.row(y)[i];
        }
    auto filtered = [](const Samples& s) {
        fixture::Bytes rows;
        for (int y = 0; y < s.height; ++y) {  // Paeth, as the writer filters (a byte a pixel's channel)
            rows.push_back(4);
            for (int i = 0; i < s.width * s.channels; ++i) {
                const int a = i >= s.channels ? s.row(y)[i - s.channels] : 0, b = y > 0 ? s.row(y - 1)[i] : 0,
                          c = y > 0 && i >= s.channels ? s.row(y - 1)[i - s.channels] : 0;
                const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
                rows.push_back(static_cast<unsigned char>(s.row(y)[i] - (pa <= pb && pa <= pc ? a : pb <= pc ? b : c)));
            }
        }
        return rows;
    };
    const fixture::Bytes smooth_rows = filtered(smooth), pattern_rows = filtered(pattern), render_rows = filtered(render);
    EXPECT(runs_pay(smooth_rows.data(), smooth_rows.size(), 4), "smooth rows: libdeflate taken");
    EXPECT(!runs_pay(pattern_rows.data(), pattern_rows.size(), 4), "a repeated pattern: the run coder taken");
    EXPECT(!runs_pay(render_rows.data(), render_rows.size(), 4), "a render: the run coder taken");
    TempDir dir;
    libdeflate_compressor* c = libdeflate_alloc_compressor(4);
    for (const Samples* s : {&smooth, &pattern, &render}) {
        const std::string path = dir / "f.png";
        write_png_samples(path, *s, rgb, true, 4);
        const PngSamples back = read_png_samples(path);
        std::vector<unsigned char> libpng_rows;
        EXPECT(back.samples.data == s->data && rows_by_libpng(path, &libpng_rows).empty() && libpng_rows == s->data,
               s == &smooth ? "smooth" : s == &pattern ? "pattern" : "render", ": read back otherwise");
        const fixture::Bytes rows = filtered(*s);
        fixture::Bytes z(libdeflate_zlib_compress_bound(c, rows.size()));
        const size_t theirs = libdeflate_zlib_compress(c, rows.data(), rows.size(), z.data(), z.size());
        const size_t file = test::read_bytes(path).size();
        EXPECT(s != &smooth || file < theirs + 100, "smooth: a file of ", file, " bytes, libdeflate's stream ", theirs);
        EXPECT(s != &render || file <= theirs * 1.02 + 100, "render: a file of ", file, " bytes, libdeflate's stream ", theirs);
    }
    // Rows of 128 KiB or less are their own sample, coded both ways once: the file holds the
    // smaller stream (each kind far smaller one way than the other at this size).
    for (const Samples* s : {&smooth, &pattern}) {
        Samples small;
        small.resize(70, 60, 3, 8);
        for (int y = 0; y < 60; ++y) std::copy_n(s->row(y), 210, small.row(y));
        const std::string path = dir / "small.png";
        write_png_samples(path, small, rgb, true, 4);
        EXPECT(read_png_samples(path).samples.data == small.data, s == &smooth ? "smooth" : "pattern", " 70x60: read back otherwise");
        const fixture::Bytes rows = filtered(small);
        fixture::Bytes z(libdeflate_zlib_compress_bound(c, rows.size()) + deflate_runs_bound(rows.size()));
        const size_t theirs = libdeflate_zlib_compress(c, rows.data(), rows.size(), z.data(), z.size());
        const size_t ours = deflate_runs(rows.data(), rows.size(), true, z.data()) + 6;
        const size_t file = test::read_bytes(path).size();
        EXPECT(file <= std::min(ours, theirs) + 100 && (s == &smooth ? ours < theirs : theirs < ours), s == &smooth ? "smooth" : "pattern",
               " 70x60: a file of ", file, " bytes, the run coder's stream ", ours, ", libdeflate's ", theirs);
    }
    libdeflate_free_compressor(c);
}

TEST(whole_image_inflates_in_parts_when_read_alone) {
    // read_image(true) (a file read alone) inflates a stream of two parts of 4 MiB or more in parts
    // on every core: the samples libpng's rows give, and the file read so; a stream too short for
    // two parts, and read_image(false), keep libdeflate.
    TempDir dir;
    std::mt19937 rng(23);
    Samples s;
    s.resize(2048, 2048, 3, 8);
    for (int y = 0; y < s.height; ++y)
        for (int i = 0; i < s.width * 3; ++i) s.row(y)[i] = static_cast<unsigned char>((i + 2 * y) / 64 + rng() % 64);
    PngFormat rgb;
    rgb.color_type = 2;
    rgb.bit_depth = 8;
    const std::string path = dir / "parts.png";
    write_png_samples(path, s, rgb, true, 1);
    std::vector<unsigned char> libpng_rows;
    EXPECT(rows_by_libpng(path, &libpng_rows).empty() && libpng_rows == s.data, "libpng's rows differ");
    for (bool parts : {true, false}) {
        PngReader r(path, {});
        const PngSamples back = r.read_image(parts);
        const std::string expected = parts ? "inflater, in parts" : "libdeflate";
        EXPECT(back.samples.data == s.data && r.decoder() == expected, "read_image(", parts, "): decoded by ", r.decoder(),
               back.samples.data == s.data ? "" : ", other samples");
    }
    Samples small = s;
    small.resize(512, 64, 3, 8);
    for (size_t i = 0; i < small.data.size(); ++i) small.data[i] = s.data[i];
    write_png_samples(path, small, rgb, true, 1);
    PngReader r(path, {});
    const PngSamples back = r.read_image(true);
    EXPECT(back.samples.data == small.data && std::string(r.decoder()) == "libdeflate", "a small file: decoded by ", r.decoder());
}

TEST(inflater_in_parts_reads_as_zlib_reads) {
    // A whole stream inflated in parts at once (inflate_in_parts: each part from the first block
    // that may start in its share, its references to the bytes before it resolved afterwards)
    // gives zlib's bytes or declines (the caller then reads the stream one way): never other
    // bytes, never a stream zlib refuses. Parts of 2 KiB, so that these streams make several (of
    // 32 KiB for streams of more than 100000 bytes: each part's search for a block's start reads
    // its share bit by bit, and 2 KiB parts of those would be most of the test's time).
    using namespace inflater_test;
    std::mt19937 random(11);
    const JobRunner run = [](std::function<void()> job) { return std::async(std::launch::async, std::move(job)); };
    auto in_parts = [&](const fixture::Bytes& z, size_t size, fixture::Bytes& out) {
        out.assign(size, 0);
        return inflate_in_parts(z.data(), z.size(), out.data(), size, 2 + random() % 7, run, size > 100000 ? 32768 : 2048);
    };
    size_t streams = 0, read = 0, wrong = 0, declined_must_read = 0;
    std::vector<fixture::Bytes> inputs;
    fixture::Bytes out;
    for (int kind = 0; kind < 4; ++kind)
        for (size_t size : {size_t(300), size_t(70000), size_t(600000)}) {
            const fixture::Bytes data = sample_data(kind, size, random);
            std::vector<fixture::Bytes> zs;
            for (int level : {0, 1, 6, 9}) zs.push_back(deflated(data, level, Z_DEFAULT_STRATEGY));
            for (int strategy : {Z_FILTERED, Z_HUFFMAN_ONLY, Z_RLE, Z_FIXED}) zs.push_back(deflated(data, 6, strategy));
            zs.push_back(mixed_levels(data));
            for (size_t i = 0; i < zs.size(); ++i) {
                ++streams;
                const bool ok = in_parts(zs[i], data.size(), out);
                read += ok;
                if (ok && out != data) ++wrong;
                // zlib's levels 1, 6 and 9 end a block every 16384 symbols at most: such streams
                // of smooth rows or text must be read in parts
                if (!ok && (kind == 1 || kind == 3) && size == 600000 && i >= 1 && i <= 3) ++declined_must_read;
                if (in_parts(zs[i], data.size() + 1, out) || (data.size() > 0 && in_parts(zs[i], data.size() - 1, out))) ++wrong;
                if (size == 70000) inputs.push_back(zs[i]);
            }
        }
    EXPECT(wrong == 0 && declined_must_read == 0, wrong, " of ", streams, " streams read otherwise than zlib reads them, ",
           declined_must_read, " of six that have many blocks declined (", read, " read in parts)");

    // Broken copies: whatever is read in parts, zlib reads whole to the same bytes.
    size_t cases = 0, lenient = 0, broken_read = 0;
    for (const fixture::Bytes& z : inputs)
        for (int round = 0; round < 21; ++round, ++cases) {
            size_t at;
            const fixture::Bytes broken = broken_copy(z, round % 3, random, at);
            const ZlibReading theirs = zlib_reading(broken);
            if (in_parts(broken, theirs.out.size(), out)) {
                ++broken_read;
                if (!theirs.ok || out != theirs.out || broken.size() != z.size()) ++lenient;
            }
        }
    EXPECT(lenient == 0, lenient, " of ", cases, " broken streams read in parts where zlib refuses them or reads other bytes (",
           broken_read, " read)");

    // Blocks' headers where no block starts: a stream's own bytes stored (level 0) hold real
    // dynamic headers at every place one began; alone and between coded blocks.
    fixture::Bytes held;
    for (const fixture::Bytes& z : inputs) held.insert(held.end(), z.begin(), z.end());
    const fixture::Bytes stored = deflated(held, 0, Z_DEFAULT_STRATEGY), mixed = mixed_levels(held);
    const bool stored_read = in_parts(stored, held.size(), out);
    EXPECT(!stored_read, "a stream of stored blocks read in parts (", out == held ? "the same bytes" : "other bytes", ")");
    EXPECT(!in_parts(mixed, held.size(), out) || out == held, "stored and coded blocks: other bytes read in parts");
}

TEST(streamed_rows_deflate_in_parallel_parts) {
    // Rows written a few at a time at the fast levels go to one zlib stream compressed in parts of
    // about 1 MiB on every core (png_io.cpp, StreamDeflate). libpng's reader (zlib) reads back the
    // samples; the file is the same however the rows arrive; the parts are there (a sync flush
    // between each two, none elsewhere).
    TempDir dir;
    std::mt19937 rng(17);
    struct Case {
        int color_type, depth, width, height, level, parts;
    };
    const Case cases[] = {{2, 8, 700, 600, 4, 2}, {4, 16, 700, 600, 1, 2}, {6, 16, 512, 700, 3, 3}, {0, 8, 33, 17, 2, 1}};
    for (const Case& c : cases) {
        PngFormat f;
        f.color_type = c.color_type;
        f.bit_depth = c.depth;
        Samples s;
        s.resize(c.width, c.height, channels_of(c.color_type), c.depth);
        for (size_t i = 0; i < s.data.size(); ++i)
            s.data[i] = static_cast<unsigned char>((i / 4096) % 2 ? rng() : (i % 251) * (i / 65536 + 1));
        const std::string name = std::to_string(c.color_type) + "/" + std::to_string(c.depth) + " " + std::to_string(c.width) +
                                 "x" + std::to_string(c.height) + " level " + std::to_string(c.level);
        {
            PngWriter w(dir / "one.png", c.width, c.height, f, true, c.level);
            w.write_rows(s.data.data(), c.height);
            w.commit();
        }
        {
            PngWriter w(dir / "many.png", c.width, c.height, f, true, c.level);
            for (int y = 0, n = 1; y < c.height; y += n, n = std::min(n * 7, 97)) {  // 1, 7, 49, 97, 97...
                n = std::min(n, c.height - y);
                w.write_rows(s.row(y), n);
            }
            w.commit();
        }
        std::vector<unsigned char> rows;
        const std::string problem = rows_by_libpng(dir / "many.png", &rows);
        EXPECT(problem.empty() && rows == s.data, name, ": libpng reads back other samples ", problem);
        EXPECT(test::read_bytes(dir / "one.png") == test::read_bytes(dir / "many.png"), name, ": the file depends on how rows came");
        EXPECT(sync_markers(dir / "one.png") == c.parts - 1, name, ": ", sync_markers(dir / "one.png"), " sync flushes for ",
               c.parts, " parts");
        // A whole image written in parts (write_image's `parts`) is the same file; of one part, the
        // file libdeflate writes.
        write_png_samples(dir / "whole.png", s, f, true, c.level, true);
        write_png_samples(dir / "libdeflate.png", s, f, true, c.level);
        EXPECT(test::read_bytes(dir / "whole.png") == test::read_bytes(dir / (c.parts > 1 ? "one.png" : "libdeflate.png")), name,
               ": whole in parts differs");
    }
    // fftfilter compresses a file filtered alone in parts, the files of a batch by libdeflate.
    const PngFormat rgb = rgb8();
    const Samples big = rgb_noise(700, 600, rng);
    write_png_samples(dir / "a.png", big, rgb, true, 4);
    write_png_samples(dir / "b.png", big, rgb, true, 4);
    test::Result alone = test::run(tool() + " -q -k box:3 -o " + dir / "alone/ " + dir / "a.png");
    test::Result batch = test::run(tool() + " -q -k box:3 -o " + dir / "batch/ " + dir / "a.png " + dir / "b.png");
    EXPECT(alone.status == 0 && batch.status == 0, alone.err, batch.err);
    EXPECT(sync_markers(dir / "alone/a.png") == 1 && sync_markers(dir / "batch/a.png") == 0, "sync flushes alone ",
           sync_markers(dir / "alone/a.png"), ", in a batch ", sync_markers(dir / "batch/a.png"));
    EXPECT(read_png_samples(dir / "alone/a.png").samples.data == read_png_samples(dir / "batch/a.png").samples.data,
           "alone and in a batch, other samples");
}

TEST(a_file_alone_filters_its_channels_at_once_on_fftw) {
    // On FFTW a file filtered alone takes every worker, a tile's channel each at once: the same
    // samples as the same file in a batch (one worker a file), in one tile (in place) and in many.
    TempDir dir;
    auto fixtures = write_fixtures(dir, 45, 38, 90);
    const std::string rgba = "t6d16.png", other = "t2d8.png";
    EXPECT(fixtures.count(rgba) && fixtures.count(other), "fixtures renamed");
    for (const std::string tiles : {"", "--max-fft 32 "}) {
        const std::string common = tool() + " -q -f --backend fftw -j 3 -k disk:3 " + tiles;
        test::Result alone = test::run(common + dir / rgba + " -o " + dir / "alone.png");
        test::Result batch = test::run(common + dir / rgba + " " + dir / other + " -o " + dir / "batch");
        EXPECT(alone.status == 0 && batch.status == 0, tiles, alone.err, batch.err);
        const PngSamples a = read_png_samples(dir / "alone.png"), b = read_png_samples(dir / ("batch/" + rgba));
        EXPECT(a.samples.data == b.samples.data && !a.samples.data.empty(), tiles, ": alone and in a batch differ");
    }
}

TEST(threads_compression_and_backends_change_no_pixel) {
    // -j 1 and -j 4 give the same files; --compression 0 and 9 the same samples, different sizes;
    // -v names the backend, each stage's time and the bottleneck.
    TempDir dir;
    auto fixtures = write_fixtures(dir, 33, 21, 70);
    test::Result one = test::run(tool() + " -q -j 1 -k disk:3 -o " + dir / "j1 " + dir.path() + "/t*.png");
    test::Result four = test::run(tool() + " -v -j 4 --compression 9 -k disk:3 -o " + dir / "j4 " + dir.path() + "/t*.png");
    test::Result none = test::run(tool() + " -q --compression 0 -k disk:3 -o " + dir / "c0 " + dir.path() + "/t*.png");
    EXPECT(one.status == 0 && four.status == 0 && none.status == 0, one.err, four.err, none.err);
    EXPECT(four.err.find("bottleneck: ") != std::string::npos && four.err.find("decode ") != std::string::npos &&
               four.err.find(", backend ") != std::string::npos,
           "-v: ", four.err.substr(0, 300));
    // On FFTW -v tells no GL stage (no GL thread, upload or GPU); on a GL backend it does.
    for (const char* backend : {"fftw", "compute"}) {
        const std::string two = dir / fixtures.begin()->first + " " + dir / std::next(fixtures.begin())->first;
        test::Result v = test::run(tool() + " -v --backend " + backend + " -k disk:3 -o " + dir / backend + " " + two);
        const bool gl = std::string(backend) != "fftw";
        for (const char* words : {"GL thread", "upload ", "GPU busy", "GL context"})
            EXPECT(v.status == 0 && (v.err.find(words) != std::string::npos) == gl, backend, ": -v ",
                   gl ? "lacks '" : "has '", words, "': ", v.err.substr(v.err.find("setup")));
    }
    for (auto& [name, raw] : fixtures) {
        PngSamples a = read_png_samples(dir / ("j1/" + name)), b = read_png_samples(dir / ("j4/" + name)),
                   c = read_png_samples(dir / ("c0/" + name));
        EXPECT(a.samples.data == b.samples.data && a.samples.data == c.samples.data, name, ": samples differ");
        EXPECT(test::read_bytes(dir / ("c0/" + name)).size() > test::read_bytes(dir / ("j4/" + name)).size(), name,
               ": --compression 0 not larger than 9");
    }
}
