// Images larger than memory (issue: "Images larger than memory: stream rows through overlap-save
// strips in bounded memory"): streamed outputs equal the in-memory path's bit for bit, memory
// follows the strip, corrupt data mid-stream, GPU memory retries, the memory planner.
#include "check.h"
#include "common.h"
#include "png_fixture.h"
#include "tool.h"

#include "image/files.h"
#include "image/kernels.h"
#include "image/png_io.h"
#include "image/strips.h"

#include <cstdlib>
#include <random>

using namespace gpufft;
using test::TempDir;

namespace {

std::string tool() { return test::bin_dir() + "/fftfilter"; }

struct Fixture {
    int color_type, depth;
    bool trns, interlace;
    int width, height;
};

// Every kind of PNG the reader expands differently, at sizes where 32-point tiles (blocks of 20
// columns and rows under a 13-tap kernel), strips and the image edges meet in every way: a last
// block of 1 row, an image narrower than one tile, exact multiples, a single strip.
const Fixture kFixtures[] = {
    {0, 1, false, false, 41, 47},  {0, 8, false, false, 61, 21},  {0, 16, true, false, 40, 60},
    {4, 8, false, false, 19, 83},  {4, 16, false, false, 33, 41}, {2, 8, false, false, 75, 53},
    {2, 16, false, false, 64, 64}, {2, 8, true, false, 21, 100},  {6, 8, false, false, 57, 39},
    {6, 16, false, false, 42, 81}, {3, 4, true, false, 50, 45},   {3, 8, false, false, 20, 20},
    {2, 8, false, true, 47, 66},   {6, 16, false, true, 35, 52},
};

std::vector<std::string> write_fixtures(const TempDir& dir, const std::vector<Fixture>& which) {
    std::vector<std::string> names;
    unsigned seed = 900;
    for (const Fixture& f : which) {
        std::string name = "t" + std::to_string(f.color_type) + "d" + std::to_string(f.depth) + (f.trns ? "trns" : "") +
                           (f.interlace ? "i" : "") + "-" + std::to_string(f.width) + "x" + std::to_string(f.height) + ".png";
        fixture::write_file(dir / name,
                            fixture::encode(fixture::random_png(f.width, f.height, f.color_type, f.depth, f.interlace, f.trns, seed++)));
        names.push_back(name);
    }
    return names;
}

/// Runs fftfilter on every fixture in one batch, in memory (--stream never) and streamed (always),
/// and expects the same samples for each (interlaced inputs give interlaced outputs only in memory).
void expect_streamed_equals_whole(const std::vector<Fixture>& which, const std::string& options) {
    TempDir dir;
    const std::vector<std::string> names = write_fixtures(dir, which);
    std::string inputs;
    for (const std::string& n : names) inputs += " " + dir / n;
    // 32-point tiles at most (strips of 20 rows where the kernel has 13 taps), and a budget the
    // larger fixtures do not fit whole, which they are planned by in both runs.
    const std::string common = tool() + " -v --max-fft 32 --max-memory 100K " + options;
    test::Result whole = test::run(common + " --stream never -o " + dir / "whole" + inputs);
    test::Result streamed = test::run(common + " --stream always -o " + dir / "streamed" + inputs);
    EXPECT(whole.status == 0 && streamed.status == 0, options, ": exits ", whole.status, ", ", streamed.status, ": ", whole.err,
           streamed.err);
    EXPECT(whole.err.find("streamed") == std::string::npos, options, ": --stream never streamed: ", whole.err);
    for (const std::string& n : names) {
        EXPECT(streamed.err.find(n + " (") != std::string::npos &&
                   streamed.err.find("streamed: ", streamed.err.find(n + " (")) != std::string::npos,
               options, ": ", n, " not streamed: ", streamed.err);
        PngSamples a = read_png_samples(dir / ("whole/" + n)), b = read_png_samples(dir / ("streamed/" + n));
        EXPECT(a.samples.width == b.samples.width && a.samples.height == b.samples.height &&
                   a.samples.channels == b.samples.channels && a.samples.depth == b.samples.depth,
               options, ": ", n, ": formats differ");
        EXPECT(a.samples.data == b.samples.data, options, ": ", n, ": samples differ");
        EXPECT(!b.format.interlaced, options, ": ", n, ": a streamed output is interlaced");
    }
}

}  // namespace

TEST(streamed_outputs_equal_in_memory_outputs_fftw) {
    const std::vector<Fixture> all(std::begin(kFixtures), std::end(kFixtures));
    for (const char* b : {"reflect", "clamp", "zero", "wrap"})
        expect_streamed_equals_whole(all, std::string("--backend fftw -k gaussian:2 -b ") + b);
    // An even kernel (its centre off the middle), linear light, premultiplied alpha.
    expect_streamed_equals_whole(all, "--backend fftw -k box:4 -b reflect --linear --premultiply");
    expect_streamed_equals_whole(all, "--backend fftw -k box:4 -b wrap --linear");
}

TEST(streamed_outputs_equal_in_memory_outputs_compute) {
    const std::vector<Fixture> some = {kFixtures[1], kFixtures[4], kFixtures[5], kFixtures[9], kFixtures[10], kFixtures[12]};
    // (Each run compiles the compute programs of its tile lengths on llvmpipe: a few configurations.)
    for (const char* b : {"reflect", "clamp", "wrap"})
        expect_streamed_equals_whole(some, std::string("--backend compute -k gaussian:2 -b ") + b);
    expect_streamed_equals_whole(some, "--backend compute -k box:4 -b zero --linear");
}

TEST(a_file_alone_streams_where_its_tiles_make_four_rows) {
    // A file filtered alone on the GPU streams though it fits whole, where its tiles make four rows
    // or more (decoding, filtering and encoding overlap): the same samples as held whole. Not with
    // fewer rows, not in a batch of two, not where streaming would refuse it (premultiplied alpha
    // on the GPU), not with --stream never.
    TempDir dir;
    const std::vector<Fixture> which = {{2, 8, false, false, 80, 90}, {2, 8, false, false, 80, 30}, {6, 8, false, false, 60, 90}};
    const std::vector<std::string> names = write_fixtures(dir, which);
    const std::string common = tool() + " -v --backend compute -k gaussian:2 --max-fft 32 ";
    auto streamed = [](const test::Result& r) { return r.err.find("streamed: ") != std::string::npos; };
    const test::Result alone = test::run(common + dir / names[0] + " -o " + dir / "alone.png");
    const test::Result never = test::run(common + "--stream never " + dir / names[0] + " -o " + dir / "never.png");
    EXPECT(alone.status == 0 && never.status == 0 && streamed(alone) && !streamed(never), "80x90 alone: ", alone.err, never.err);
    const PngSamples a = read_png_samples(dir / "alone.png"), b = read_png_samples(dir / "never.png");
    EXPECT(a.samples.data == b.samples.data && !a.samples.data.empty(), "80x90 alone: samples differ from the whole path's");
    const test::Result short_one = test::run(common + dir / names[1] + " -o " + dir / "short.png");
    EXPECT(short_one.status == 0 && !streamed(short_one), "80x30 (two rows of tiles) alone streamed: ", short_one.err);
    const test::Result two = test::run(common + dir / names[0] + " " + dir / names[1] + " -o " + dir / "two");
    EXPECT(two.status == 0 && !streamed(two), "a batch of two streamed: ", two.err);
    const test::Result premultiplied = test::run(common + "--premultiply " + dir / names[2] + " -o " + dir / "alpha.png");
    EXPECT(premultiplied.status == 0 && !streamed(premultiplied), "premultiplied alpha alone: ", premultiplied.err);
}

TEST(a_streamed_image_stays_within_its_memory_bound) {
    // 4096x4096 RGB 8-bit: 256 MiB as float RGBA, which the whole-image path holds (and more); the
    // stream, under --max-memory 64M, holds strips of 256 rows. Peak RSS from /usr/bin/time.
    TempDir dir;
    const int n = 4096;
    {
        PngFormat f;
        f.color_type = 2;
        PngWriter w(dir / "big.png", n, n, f, false, 1);
        std::vector<unsigned char> row(static_cast<size_t>(n) * 3);
        std::mt19937 rng(5);
        for (int y = 0; y < n; ++y) {
            for (int x = 0; x < n; ++x)
                for (int c = 0; c < 3; ++c)
                    row[static_cast<size_t>(3 * x + c)] = static_cast<unsigned char>((x * (c + 1) + y * (3 - c)) / 16 + rng() % 8);
            w.write_rows(row.data(), 1);
        }
        w.commit();
    }
    auto peak_mib = [&](const std::string& args, const std::string& out) {
        test::Result r = test::run("/usr/bin/time -f 'peak %M' " + tool() + " -v -k gaussian:8 " + args + " -o " + dir / out + " " +
                                   dir / "big.png");
        EXPECT(r.status == 0, args, ": exit ", r.status, ": ", r.err);
        const size_t at = r.err.rfind("peak ");
        return at == std::string::npos ? -1.0 : std::atof(r.err.c_str() + at + 5) / 1024.0;
    };
    const double streamed = peak_mib("--max-memory 64M", "streamed.png");
    const double whole = peak_mib("--max-memory 64M --stream never", "whole.png");
    std::printf("     peak RSS 4096x4096 RGB8, gaussian:8: streamed %.0f MiB, whole %.0f MiB\n", streamed, whole);
#ifndef GPUFFT_SANITIZE
    // The strips' 64 MiB, the program, its libraries (Mesa's and LLVM's among them), FFTW's plans.
    EXPECT(streamed > 0 && streamed < 256, "streamed peak ", streamed, " MiB");
    EXPECT(whole > 400, "the whole-image path peaked at ", whole, " MiB: the bound above would not tell the paths apart");
#else
    // AddressSanitizer's shadow memory and quarantine: only the comparison.
    EXPECT(streamed > 0 && streamed < whole, "streamed peak ", streamed, " MiB, whole ", whole);
#endif
    EXPECT(read_png_samples(dir / "streamed.png").samples.data == read_png_samples(dir / "whole.png").samples.data,
           "streamed and whole outputs differ");
}

TEST(a_corrupt_row_mid_stream_leaves_no_output) {
    TempDir dir;
    fixture::RawPng p = fixture::random_png(200, 300, 2, 8, false, false, 77);
    fixture::Bytes raw = fixture::scanlines(p);
    raw[raw.size() / 2 - raw.size() / 2 % 601] = 9;  // a row's filter byte: only 0-4 exist
    fixture::Bytes png = fixture::signature();
    fixture::chunk(png, "IHDR", fixture::ihdr(200, 300, 8, 2, false));
    fixture::chunk(png, "IDAT", fixture::zlib_compress(raw));
    fixture::chunk(png, "IEND", {});
    fixture::write_file(dir / "bad.png", png);
    test::run("mkdir " + dir / "out");
    test::Result r = test::run(tool() + " --stream always --max-memory 256K --max-fft 64 -k gaussian:2 -o " + dir / "out " + dir / "bad.png");
    EXPECT(r.status == 1, "exit ", r.status);
    EXPECT(test::count_lines(r.err) == 1 && r.err.find("bad.png: corrupt PNG") != std::string::npos, r.err);
    test::Result left = test::run("ls -A " + dir / "out");
    EXPECT(left.out.empty(), "left behind: ", left.out);
}

TEST(gpu_out_of_memory_retries_with_smaller_tiles) {
    TempDir dir;
    fixture::write_file(dir / "a.png", fixture::encode(fixture::random_png(200, 150, 2, 8, false, false, 3)));
    fixture::write_file(dir / "small.png", fixture::encode(fixture::random_png(14, 14, 0, 8, false, false, 4)));
    const std::string args = " -v --backend compute -k gaussian:2 -o " + dir / "out/ ";
    // A GPU that takes no texture above 10000 texels: the 212x162 grid fails, 128-point tiles
    // fail, 64-point tiles fit.
    test::Result r = test::run("GPUFFT_TEST_MAX_TEXELS=10000 " + tool() + args + dir / "a.png");
    EXPECT(r.status == 0, "exit ", r.status, ": ", r.err);
    EXPECT(r.err.find("tiles of at most 64x64 after running out of GPU memory") != std::string::npos, r.err);
    test::Result ref = test::run(tool() + " -q --backend fftw -k gaussian:2 -o " + dir / "ref.png " + dir / "a.png");
    EXPECT(ref.status == 0, ref.err);
    PngSamples got = read_png_samples(dir / "out/a.png"), want = read_png_samples(dir / "ref.png");
    int worst = 0;
    for (size_t i = 0; i < want.samples.data.size() && i < got.samples.data.size(); ++i)
        worst = std::max(worst, std::abs(int(got.samples.data[i]) - int(want.samples.data[i])));
    EXPECT(got.samples.data.size() == want.samples.data.size() && worst <= 1, "differs from FFTW by ", worst);
    // Below the smallest tiles (56x56 here): that file fails with one line, the other is filtered.
    test::run("rm -rf " + dir / "out");
    r = test::run("GPUFFT_TEST_MAX_TEXELS=2000 " + tool() + " -q --backend compute -k gaussian:2 -o " + dir / "out/ " + dir / "a.png " +
                  dir / "small.png");
    EXPECT(r.status == 1, "exit ", r.status, ": ", r.err);
    EXPECT(test::count_lines(r.err) == 1 && r.err.find("a.png: out of GPU memory") != std::string::npos &&
               r.err.find(", with tiles down to ") != std::string::npos,
           r.err);
    EXPECT(!file_exists(dir / "out/a.png") && file_exists(dir / "out/small.png"), "outputs");
}

TEST(memory_planner_streams_what_does_not_fit) {
    Kernel k = parse_kernel("gaussian:8", KernelOptions{});
    MemoryLimits l;
    l.max_memory = 6LL << 30;
    l.max_pixels = 1LL << 28;
    l.max_fft = 1 << 24;
    // 65536^2 RGB 8-bit: strips within the 512 MiB a strip may take, tiles of at most 2048.
    MemoryPlan p = plan_memory(65536, 65536, 3, 3, k, Boundary::Reflect, fftw_lengths(), l);
    EXPECT(p.strips && p.strip_bytes <= (512LL << 20) && p.max_fft_x == 2048 && p.y.block > 256, p.strip_bytes, " ", p.y.fft);
    // A 2048^2 image fits whole and keeps the backend's tiling.
    p = plan_memory(2048, 2048, 3, 3, k, Boundary::Reflect, fftw_lengths(), l);
    EXPECT(!p.strips && p.max_fft_x == l.max_fft && p.max_fft_y == l.max_fft, "2048^2 planned in strips");
    // Above --max-pixels, strips too.
    l.max_pixels = 1000;
    EXPECT(plan_memory(100, 100, 3, 3, k, Boundary::Reflect, fftw_lengths(), l).strips, "max_pixels ignored");
    // Nothing fits: one clear error.
    l.max_memory = 4096;
    try {
        plan_memory(65536, 65536, 3, 3, k, Boundary::Reflect, fftw_lengths(), l);
        EXPECT(false, "no error");
    } catch (const Error& e) {
        EXPECT(std::string(e.what()).find("above --max-memory 4 KiB") != std::string::npos, e.what());
    }
}

TEST(max_memory_and_stream_options) {
    TempDir dir;
    fixture::write_file(dir / "a.png", fixture::encode(fixture::random_png(64, 48, 2, 8, false, false, 1)));
    fixture::write_file(dir / "i.png", fixture::encode(fixture::random_png(64, 48, 2, 8, true, false, 2)));
    struct Case {
        std::string args;
        int status;
        std::string needle;
    };
    const std::vector<Case> cases = {
        {"--max-memory lots " + dir / "a.png", 2, "--max-memory 'lots' is not a size in bytes"},
        {"--stream sometimes " + dir / "a.png", 2, "--stream sometimes: auto, always or never"},
        {"--max-memory 1K -o " + dir / "o.png " + dir / "a.png", 1, "a.png: 64x48 needs 84 KiB whole and"},
        {"--max-pixels 100 --stream never -o " + dir / "o.png " + dir / "a.png", 1, "a.png: 64x48 is 3072 pixels, above the limit of 100"},
        {"--max-pixels 100 -o " + dir / "o.png " + dir / "i.png", 1, "above the limit of 100 for an interlaced PNG"},
        {"--max-pixels 100 --spectrum -o " + dir / "o.png " + dir / "a.png", 1, "above the limit of 100"},
        {"--max-memory 64K -k gaussian:1 -o " + dir / "o.png " + dir / "a.png", 0, ""},
    };
    for (const Case& c : cases) {
        test::Result r = test::run(tool() + " -q " + c.args);
        EXPECT(r.status == c.status, c.args, ": exit ", r.status, ": ", r.err);
        if (!c.needle.empty()) EXPECT(test::count_lines(r.err) == 1 && r.err.find(c.needle) != std::string::npos, c.args, ": ", r.err);
        test::run("rm -f " + dir / "o.png");
    }
    // Above --max-pixels, a non-interlaced PNG streams rather than fails.
    test::Result r = test::run(tool() + " -v --max-pixels 100 -o " + dir / "o.png " + dir / "a.png");
    EXPECT(r.status == 0 && r.err.find("streamed: ") != std::string::npos, r.err);
}

TEST(a_streamed_image_shows_its_strips_on_a_terminal) {
    // A large image may stream for minutes: on a terminal (script(1) gives fftfilter one) it
    // reports its strips as they are filtered, one line rewritten in place and cleared at the end,
    // alone or in a batch; off a terminal, or with -q, nothing.
    TempDir dir;
    fixture::write_file(dir / "a.png", fixture::encode(fixture::random_png(64, 100, 2, 8, false, false, 4)));
    fixture::write_file(dir / "b.png", fixture::encode(fixture::random_png(30, 20, 0, 8, false, false, 5)));
    // 32-point tiles at most: a few strips (`-v` says how many).
    const std::string cmd = tool() + " --backend fftw --max-fft 32 -k gaussian:2 --stream always --force ";
    auto on_terminal = [&](const std::string& args) { return test::run("script -qec '" + cmd + args + "' /dev/null"); };
    const test::Result told = test::run(cmd + "-v -o " + dir / "o.png " + dir / "a.png");
    const size_t said = told.err.find("streamed: ");
    const int strips = said == std::string::npos ? 0 : std::atoi(told.err.c_str() + said + 10);
    EXPECT(told.status == 0 && strips > 2, "-v: ", told.err);
    test::Result alone = on_terminal("-o " + dir / "o.png " + dir / "a.png");
    EXPECT(alone.status == 0, "exit ", alone.status, ": ", alone.out, alone.err);
    size_t at = 0;
    for (int k = 1; k <= strips; ++k) {
        const std::string line = "\r\033[K" + dir / "a.png" + ": strip " + std::to_string(k) + "/" + std::to_string(strips);
        at = alone.out.find(line, at);
        EXPECT(at != std::string::npos, "no '", line.substr(4), "' in order: ", alone.out);
        if (at == std::string::npos) return;
    }
    EXPECT(alone.out.find("\r\033[K", at + 1) != std::string::npos, "the line is not cleared: ", alone.out);
    test::Result batch = on_terminal("-o " + dir / "out/ " + dir / "a.png " + dir / "b.png");
    EXPECT(batch.status == 0 && batch.out.find("a.png: strip " + std::to_string(strips) + "/" + std::to_string(strips)) != std::string::npos &&
               batch.out.find("b.png: strip 1/") != std::string::npos && batch.out.find("[2/2] ") != std::string::npos,
           "a batch: ", batch.out);
    // A batch's files: "[done/total] name", with the rate and the time left (here from the start:
    // the test hook; by default after two seconds), the last line without them.
    test::Result rated = test::run("script -qec 'GPUFFT_TEST_PROGRESS_RATE_AFTER=0 " + cmd + "-o " + dir / "out/ " + dir / "b.png " +
                                   dir / "a.png' /dev/null");
    const size_t first = rated.out.find("[1/2, ");
    EXPECT(rated.status == 0 && first != std::string::npos && rated.out.find(" files/s, ", first) != std::string::npos &&
               rated.out.find(" left] ", first) != std::string::npos && rated.out.find("[2/2] ") != std::string::npos,
           "rate and time left: ", rated.out);
    test::Result quiet = on_terminal("-q -o " + dir / "o.png " + dir / "a.png");
    EXPECT(quiet.status == 0 && quiet.out.find("strip") == std::string::npos, "-q: ", quiet.out);
    test::Result off = test::run(cmd + "-o " + dir / "o.png " + dir / "a.png");
    EXPECT(off.status == 0 && off.err.empty(), "off a terminal: ", off.err);
}
