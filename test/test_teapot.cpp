// bin/teapot: the window under Xvfb, headless frames against the other tools, bad options, the
// benchmark's output (issue: "teapot: filter a rendered teapot frame interactively").
#include "check.h"
#include "tool.h"

#include "image/png_io.h"

#include <algorithm>
#include <cmath>
#include <sstream>

using namespace gpufft;
using test::TempDir;

static const check::Serial serial("xvfb-run -a picks a display that another process may take");

namespace {

std::string teapot() { return test::bin_dir() + "/teapot"; }
std::string fftfilter() { return test::bin_dir() + "/fftfilter"; }
/// Under Xvfb. (In the sanitizer build, leak checking is off for window runs only: freeglut closes
/// the X display at exit, Mesa's GLX driver is unloaded with it, and its process-lifetime
/// allocations then show as leaks of an unknown module that no suppression can name. Memory errors
/// and undefined behaviour are still checked.)
std::string xvfb(const std::string& command) {
    return "ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0 xvfb-run -a -s '-screen 0 1024x768x24' " + command;
}

/// Largest difference between two images' samples, in steps of `depth` bits; -1 if sizes differ.
long max_steps(const Image& a, const Image& b, int depth, int channels = 3) {
    if (a.width != b.width || a.height != b.height) return -1;
    const double max = (1 << depth) - 1;
    long worst = 0;
    for (size_t p = 0; p < a.pixels(); ++p)
        for (int c = 0; c < channels; ++c)
            worst = std::max(worst, std::labs(std::lround(a.rgba[4 * p + c] * max) - std::lround(b.rgba[4 * p + c] * max)));
    return worst;
}

double mean_abs_difference(const Image& a, const Image& b) {
    double sum = 0;
    for (size_t i = 0; i < a.rgba.size(); ++i) sum += std::abs(a.rgba[i] - b.rgba[i]);
    return sum / static_cast<double>(a.rgba.size());
}

/// A teapot pixel is copper: red well above blue. The background is dark blue.
bool copper(const float* p) { return p[0] > 0.25f && p[0] > p[2] + 0.1f; }
bool background(const float* p) { return p[0] < 0.2f && p[2] > p[0]; }

}  // namespace

TEST(window_renders_the_teapot_and_matches_headless) {
    TempDir dir;
    test::Result w = test::run(xvfb(teapot() + " --size 256 --frames 4 --filter gaussian:3 --screenshot " + dir / "win.png"));
    EXPECT(w.status == 0, "windowed teapot: exit ", w.status, ": ", w.err);
    test::Result h = test::run(teapot() + " --headless --size 256 --filter gaussian:3 -o " + dir / "head.png");
    EXPECT(h.status == 0, "headless teapot: exit ", h.status, ": ", h.err);
    Image win = read_png(dir / "win.png").image, head = read_png(dir / "head.png").image;
    EXPECT(win.width == 256 && win.height == 256, "screenshot ", win.width, "x", win.height);
    // The object where expected: the body straddles the centre; the corners are background.
    int teapot_pixels = 0;
    for (int y = 96; y < 160; ++y)
        for (int x = 96; x < 160; ++x) teapot_pixels += copper(win.at(x, y));
    EXPECT(teapot_pixels > 3000, "only ", teapot_pixels, " of 4096 centre pixels show the teapot");
    for (auto [x, y] : {std::pair{2, 2}, {253, 2}, {2, 253}, {253, 253}})
        EXPECT(background(win.at(x, y)), "corner (", x, ",", y, ") is not background");
    long steps = max_steps(win, head, 8);
    EXPECT(steps >= 0 && steps <= 1, "window and headless frames differ by ", steps, " steps");
}

// The compute backend's programs compile in the background (gpufft::Compile): the window shows the
// scene unfiltered meanwhile, and --frames counts the frames shown filtered, so the screenshot is
// the filtered frame, as headless renders it.
TEST(window_filters_on_the_compute_backend_once_compiled) {
    TempDir dir;
    const std::string common = " --backend compute --size 96x64 --filter gaussian:3 ";
    test::Result w = test::run(xvfb(teapot() + common + "--frames 2 --screenshot " + dir / "win.png"));
    EXPECT(w.status == 0, "windowed teapot: exit ", w.status, ": ", w.err);
    test::Result h = test::run(teapot() + common + "--headless -o " + dir / "head.png");
    test::Result plain = test::run(teapot() + common + "--headless --no-filter -o " + dir / "plain.png");
    EXPECT(h.status == 0 && plain.status == 0, "headless teapot: ", h.err, plain.err);
    Image win = read_png(dir / "win.png").image, head = read_png(dir / "head.png").image, unfiltered = read_png(dir / "plain.png").image;
    long steps = max_steps(win, head, 8);
    EXPECT(steps >= 0 && steps <= 1, "window and headless frames differ by ", steps, " steps");
    EXPECT(max_steps(win, unfiltered, 8) > 8, "the screenshot is the unfiltered frame");
}

TEST(spectrum_view_differs_from_the_image) {
    TempDir dir;
    test::Result a = test::run(xvfb(teapot() + " --size 128 --frames 3 --screenshot " + dir / "image.png"));
    test::Result b = test::run(xvfb(teapot() + " --size 128 --frames 3 --spectrum --screenshot " + dir / "spectrum.png"));
    EXPECT(a.status == 0 && b.status == 0, a.err, b.err);
    Image image = read_png(dir / "image.png").image, spectrum = read_png(dir / "spectrum.png").image;
    EXPECT(mean_abs_difference(image, spectrum) > 0.05, "the spectrum view looks like the image: mean difference ",
           mean_abs_difference(image, spectrum));
    // Centred: the DC term (the mean) is the brightest value, at the centre.
    float brightest = 0;
    for (size_t p = 0; p < spectrum.pixels(); ++p) brightest = std::max(brightest, spectrum.rgba[4 * p]);
    EXPECT(spectrum.at(64, 64)[0] == brightest, "the centre ", spectrum.at(64, 64)[0], " is not the brightest ", brightest);
}

TEST(spectrum_view_equals_fftfilter_spectrum) {
    TempDir dir;
    const std::string common = " --headless --size 128 --ldr --tonemap clamp --no-filter ";
    test::Result raw = test::run(teapot() + common + "--depth 16 -o " + dir / "raw.png");
    test::Result view = test::run(teapot() + common + "--spectrum -o " + dir / "view.png");
    test::Result f = test::run(fftfilter() + " -q --spectrum -b wrap " + dir / "raw.png" + " -o " + dir / "spectrum.png");
    EXPECT(raw.status == 0 && view.status == 0 && f.status == 0, raw.err, view.err, f.err);
    long steps = max_steps(read_png(dir / "view.png").image, read_png(dir / "spectrum.png").image, 8);
    EXPECT(steps >= 0 && steps <= 1, "teapot's spectrum view and fftfilter --spectrum differ by ", steps, " steps");
}

TEST(a_key_press_changes_the_filter_and_size) {
    TempDir dir;
    // f: the next filter after gaussian:4 is box:9; p saves the window; q quits. Each key waits for
    // the program to show it acted on the last one (the log, the screenshot), so load cannot race it.
    std::string script =
        "cd " + dir.path() + " && (" + teapot() + " --size 128 --frames 20000 -v > log.txt 2>&1 & pid=$!; "
        "until_seen() { for i in $(seq 200); do eval \"$1\" && return 0; sleep 0.1; done; return 1; }; "
        "until_seen \"grep -q gaussian:4 log.txt\"; "
        "wid=$(timeout 20 xdotool search --sync --onlyvisible --name \"^teapot\" | head -1); "
        "xdotool mousemove --window $wid 10 10; "
        "xdotool key --window $wid f; until_seen \"grep -q box:9 log.txt\"; "
        "xdotool key --window $wid plus; until_seen \"grep -q \\\"size 140\\\" log.txt\"; "
        "xdotool key --window $wid minus; until_seen \"test \\$(grep -c \\\"size 128\\\" log.txt) = 2\"; "
        "xdotool key --window $wid p; until_seen \"test -s teapot-1.png\"; "
        "xdotool key --window $wid q; wait $pid)";
    test::Result r = test::run(xvfb("bash -c '" + script + "'"));
    EXPECT(r.status == 0, "exit ", r.status, ": ", r.err);
    std::string log = test::read_bytes(dir / "log.txt");
    EXPECT(log.find("filter gaussian:4\nfilter box:9\n") != std::string::npos, "log: ", log);
    // + and -: the next fast size up from 128 that the backend takes (140 = 4 x 5 x 7), and back.
    EXPECT(log.find("box:9\nsize 140\nsize 128\n") != std::string::npos, "log: ", log);
    test::Result h = test::run(teapot() + " --headless --size 128 --filter box:9 -o " + dir / "box.png");
    EXPECT(h.status == 0, h.err);
    long steps = max_steps(read_png(dir / "teapot-1.png").image, read_png(dir / "box.png").image, 8);
    EXPECT(steps >= 0 && steps <= 1, "the screenshot after 'f' is not the box:9 frame (", steps, " steps)");
}

TEST(window_resizes_letterbox_the_frame) {
    TempDir dir;
    test::Result r = test::run(xvfb(teapot() + " --size 128 --window 320x200 --frames 3 --screenshot " + dir / "wide.png"));
    EXPECT(r.status == 0, r.err);
    Image w = read_png(dir / "wide.png").image;
    EXPECT(w.width == 320 && w.height == 200, "screenshot ", w.width, "x", w.height);
    // A 200x200 frame centred: black bars of 60 pixels left and right.
    EXPECT(w.at(30, 100)[0] == 0 && w.at(30, 100)[2] == 0 && w.at(290, 100)[2] == 0, "no black bars");
    EXPECT(background(w.at(63, 5)) && copper(w.at(160, 100)), "the frame is not centred");
}

TEST(headless_identity_equals_the_unfiltered_render) {
    TempDir dir;
    test::Result a = test::run(teapot() + " --headless --size 256 --filter identity -o " + dir / "identity.png");
    test::Result b = test::run(teapot() + " --headless --size 256 --no-filter -o " + dir / "plain.png");
    EXPECT(a.status == 0 && b.status == 0, a.err, b.err);
    long steps = max_steps(read_png(dir / "identity.png").image, read_png(dir / "plain.png").image, 8);
    EXPECT(steps >= 0 && steps <= 1, "identity filter off by ", steps, " steps");
}

TEST(headless_filter_equals_fftfilter_wrap) {
    TempDir dir;
    // --ldr and --tonemap clamp keep every value in [0, 1] and linear, so 16-bit files hold the frame.
    const std::string common = " --headless --size 128 --ldr --tonemap clamp --depth 16 ";
    test::Result raw = test::run(teapot() + common + "--no-filter -o " + dir / "raw.png");
    EXPECT(raw.status == 0, raw.err);
    for (const char* spec : {"gaussian:3", "motion:11,30"}) {  // the motion blur is not symmetric
        std::string name = std::string(spec).substr(0, 6);
        test::Result t = test::run(teapot() + common + "--filter " + spec + " -o " + dir / (name + "-teapot.png"));
        test::Result f = test::run(fftfilter() + " -q -b wrap -k " + spec + " " + dir / "raw.png" + " -o " + dir / (name + "-fftfilter.png"));
        EXPECT(t.status == 0 && f.status == 0, t.err, f.err);
        long steps = max_steps(read_png(dir / (name + "-teapot.png")).image, read_png(dir / (name + "-fftfilter.png")).image, 16);
        EXPECT(steps >= 0 && steps <= 1, spec, ": teapot and fftfilter --boundary wrap differ by ", steps, " 16-bit steps");
    }
}

TEST(bad_options_give_one_line) {
    struct Case {
        std::string args;
        int status;
        std::string needle;
    };
    const Case cases[] = {
        {"--headless --filter nosuch:3", 2, "unknown kernel 'nosuch:3'"},
        {"--headless --size 110", 2, "--size 110 is not an even size with prime factors 2, 3, 5 and 7 only"},
        {"--headless --size 128x99", 2, "--size 128x99 is not two even sizes"},
        {"--headless --size 65536", 2, "above this GPU's limit"},
        {"--headless --tonemap pretty", 2, "unknown tone map 'pretty'"},
        {"--bench --bench-sizes 64,99", 2, "99 is not an even size"},
        {"--screenshot x.png", 2, "--screenshot needs --frames"},
        {"--headless --frames 2 --screenshot x.png", 2, "--screenshot is for the window"},
        {"--size 128 --frames 2", 3, "cannot open the X display"},
    };
    for (const Case& c : cases) {
        test::Result r = test::run("env -u DISPLAY " + teapot() + " " + c.args);
        EXPECT(r.status == c.status && test::count_lines(r.err) == 1 && r.err.find(c.needle) != std::string::npos &&
                   r.err.rfind("teapot: ", 0) == 0,
               "'", c.args, "': exit ", r.status, ", stderr: ", r.err);
    }
}

TEST(bench_reports_table3_in_every_format) {
    test::Result csv = test::run(teapot() + " --bench --bench-sizes 64,128 --bench-frames 2 --warm-up 0 --csv");
    EXPECT(csv.status == 0, csv.err);
    std::istringstream lines(csv.out);
    std::string header, line;
    std::getline(lines, header);
    std::vector<std::string> columns;
    for (std::istringstream h(header); std::getline(h, line, ',');) columns.push_back(line);
    auto column = [&](const std::string& name) {
        return static_cast<size_t>(std::find(columns.begin(), columns.end(), name) - columns.begin());
    };
    int rows = 0, radix2 = 0, compute = 0;
    while (std::getline(lines, line)) {
        std::vector<std::string> cells;
        for (std::istringstream l(line); std::getline(l, header, ',');) cells.push_back(header);
        if (cells.size() + 1 < columns.size()) continue;
        ++rows;
        EXPECT(std::stod(cells[column("hz")]) > 0, "rate ", cells[column("hz")]);
        EXPECT(std::stod(cells[column("fft_gpu_ms")]) > 0, "no GPU time for the FFT: ", line);
        // The whole call holds the passes (timestamps around both), and takes CPU time.
        EXPECT(std::stod(cells[column("call_gpu_ms")]) >= std::stod(cells[column("fft_gpu_ms")]) * 0.9, "the call's GPU time below its passes': ", line);
        EXPECT(std::stod(cells[column("call_cpu_ms")]) > 0, "no CPU time for the call: ", line);
        if (cells[column("implementation")] == "fragment radix-2") {
            ++radix2;
            EXPECT(cells[column("fft_invocations")] == cells[column("fft_table1")], "FFT invocations differ from Table 1: ", line);
            EXPECT(cells[column("multiply_invocations")] == cells[column("multiply_table1")], "multiply invocations: ", line);
        }
        if (cells[column("implementation")] == "compute") {
            ++compute;
            EXPECT(cells[column("fft_invocations")].empty(), "the compute backend runs no fragment programs: ", line);
        }
    }
    EXPECT(rows == 6 && radix2 == 2 && compute == 2, rows, " CSV rows, ", radix2, " radix-2, ", compute, " compute: ", csv.out);
    test::Result json = test::run(teapot() + " --bench --bench-sizes 64 --bench-frames 2 --warm-up 0 --json");
    EXPECT(json.status == 0 && json.out.find("\"size\": 64") != std::string::npos &&
               json.out.find("\"fft\": {\"gpu_ms\"") != std::string::npos && json.out.back() == '\n',
           json.out);
    test::Result table = test::run(teapot() + " --bench --bench-sizes 64 --bench-frames 2 --warm-up 0");
    EXPECT(table.status == 0 && table.out.find("Table 3") != std::string::npos && table.out.find("Table 1") != std::string::npos,
           table.out);
}
