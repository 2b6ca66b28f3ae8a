// teapot: the paper's test application (Section 6). A lit Utah teapot rendered into a float
// target, filtered by the fragment-program FFT and shown, interactively in a freeglut window or
// headless through EGL; --bench prints Table 3 (and Tables 1 and 2) for this machine.
#include "app/cli.h"
#include "app/options.h"
#include "app/resources.h"
#include "fft/compute_fft.h"
#include "fft/plan.h"
#include "image/files.h"
#include "image/kernels.h"
#include "image/png_io.h"
#include "scene/frame.h"

#include <GL/freeglut.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

// Xlib, declared by hand: its header's macros (None, Bool, Status) collide with ordinary names.
extern "C" {
struct _XDisplay;
_XDisplay* XOpenDisplay(const char*);
int XCloseDisplay(_XDisplay*);
}

using namespace gpufft;

namespace {

const char* kTool = "teapot";

/// The frame (and FFT) size: any even size with prime factors 2, 3, 5 and 7 along each axis.
struct FrameSize {
    int width = 512, height = 512;
    std::string name() const { return width == height ? std::to_string(width) : std::to_string(width) + "x" + std::to_string(height); }
    bool operator==(FrameSize o) const { return width == o.width && height == o.height; }
};

struct Options {
    bool headless = false;
    bool bench = false;
    FrameSize size;
    std::string filter;                // initial filter spec
    std::vector<std::string> kernels;  // PNG kernels from the command line
    std::string output = "teapot.png";
    int frames = 0;                    // exit after this many frames (windowed; 0: run until quit)
    bool report_resources = false;
    std::string screenshot;
    bool spectrum = false;
    bool filtering = true;
    Tonemap tonemap = Tonemap::Aces;
    float exposure = 1.0f;
    SceneLook look;
    int depth = 8;
    int window_width = 0, window_height = 0;
    std::vector<FrameSize> bench_sizes;
    int bench_frames = 0;
    double warm_up = 0.3;  // seconds of untimed frames before each size's timings
    std::string format = "table";  // table | csv | json
    bool verbose = false;
    ContextOptions gl;
    FftOptions fft;
    bool fft_chosen = false;  // --backend, --radix, --twiddles or --half given
    Camera camera;
};

/// Throws UsageError where the GPU cannot hold a frame of `size`.
void check_frame_size(FrameSize size) {
    if (std::max(size.width, size.height) > max_texture_side())
        throw UsageError("--size " + size.name() + " is above this GPU's limit of " + std::to_string(max_texture_side()));
}

/// The next frame size up (step +1) or down (-1) from `size` that `lengths` takes: the width one
/// allowed length further, the height the allowed length nearest the same aspect ratio; `size`
/// itself where none is within [128, limit].
FrameSize step_size(FrameSize size, int step, const LengthModel& lengths, int limit) {
    for (long long w = size.width + step; w >= 128 && w <= limit; w += step) {
        if (!lengths.allowed(w)) continue;
        const long long ideal = (static_cast<long long>(size.height) * w + size.width / 2) / size.width;
        long long h = 0;
        for (long long d = 0; d <= ideal && !h; ++d)  // the allowed height nearest the ideal
            for (long long c : {ideal - d, ideal + d})
                if (!h && c >= 4 && c <= limit && lengths.allowed(c)) h = c;
        if (h) return {static_cast<int>(w), static_cast<int>(h)};
    }
    return size;
}

std::vector<FrameSize> parse_sizes(const std::string& list) {
    std::vector<FrameSize> sizes;
    for (auto [w, h] : parse_fast_size_list(list, "--bench-sizes")) sizes.push_back({w, h});
    return sizes;
}

void print_help();

/// --headless and --bench, listed apart in --help.
std::vector<OptionSpec> mode_specs(Options& o) {
    return {
        {"headless", 0, "", "no window (EGL): render one frame and write it to --output", [&o](const std::string&) { o.headless = true; }},
        {"bench", 0, "",
         "headless Table 3: frame rate and GPU ms per program for sizes 128..2048\n"
         "(and 4096 where it fits), with Tables 1 and 2",
         [&o](const std::string&) { o.bench = o.headless = true; }},
    };
}

/// The other options of teapot, written once: the parser and --help both read these tables.
std::vector<OptionSpec> option_specs(Options& o) {
    std::vector<OptionSpec> specs = {
        {"size", 0, "N|WxH",
         "frame and FFT size, each side even with prime factors 2, 3, 5 and 7\n"
         "only (default 512; e.g. 1920x1080)",
         [&o](const std::string& v) {
             int w = 0, h = 0;
             parse_size(v, "--size", w, h);
             require_fast_size(w, h, "--size");
             o.size = {w, h};
         }},
        {"filter", 0, "SPEC", "initial filter: a kernel spec as in fftfilter (default gaussian:4)", [&o](const std::string& v) { o.filter = v; }},
        {"no-filter", 0, "", "start with filtering off", set_flag(o.filtering, false)},
        {"spectrum", 0, "", "start in the spectrum view (log magnitude, centred, as Figure 4b)", set_flag(o.spectrum)},
        {"output", 'o', "FILE", "headless: the PNG to write (default teapot.png)", [&o](const std::string& v) { o.output = v; }},
        {"frames", 0, "K",
         "render K frames, then exit (with --screenshot: save it first); headless:\n"
         "the camera turns a degree a frame, the last frame is the one written",
         [&o](const std::string& v) { o.frames = parse_int(v, "--frames", 1, 1000000); }},
        {"report-resources", 0, "",
         "headless: resident memory and live GL objects after the first and the\n"
         "last frame (a long run should leave both flat)",
         set_flag(o.report_resources)},
        {"screenshot", 0, "FILE", "windowed: save the window to FILE after --frames", [&o](const std::string& v) { o.screenshot = v; }},
        {"window", 0, "WxH", "window size (default: the FFT size, at most 1024)",
         [&o](const std::string& v) { parse_size(v, "--window", o.window_width, o.window_height); }},
        {"tonemap", 0, "aces|clamp",
         "aces (default): exposure, ACES filmic curve, sRGB encoding;\n"
         "clamp: values clamped to [0, 1], no curve",
         [&o](const std::string& v) { o.tonemap = parse_tonemap(v); }},
        {"exposure", 0, "E", "exposure before the ACES curve (default 1)",
         [&o](const std::string& v) { o.exposure = static_cast<float>(parse_double(v, "--exposure", 0, 1000)); }},
        {"highlight", 0, "H", "specular intensity of the scene (default 6)",
         [&o](const std::string& v) { o.look.highlight = static_cast<float>(parse_double(v, "--highlight", 0, 1000)); }},
        {"ldr", 0, "", "clamp the scene to [0, 1] before filtering (for comparisons with files)", set_flag(o.look.ldr)},
        {"depth", 0, "8|16", "bit depth of headless output (default 8)",
         [&o](const std::string& v) {
             o.depth = parse_int(v, "--depth", 8, 16);
             if (o.depth != 8 && o.depth != 16) throw UsageError("--depth must be 8 or 16");
         }},
        {"yaw", 0, "D", "the view (default -35, 20, 4.2)",
         [&o](const std::string& v) { o.camera.yaw = static_cast<float>(parse_double(v, "--yaw", -3600, 3600)); },
         "--yaw D, --pitch D, --distance Z"},
        {"pitch", 0, "D", "", [&o](const std::string& v) { o.camera.pitch = static_cast<float>(parse_double(v, "--pitch", -89, 89)); }},
        {"distance", 0, "Z", "",
         [&o](const std::string& v) { o.camera.distance = static_cast<float>(parse_double(v, "--distance", 1.5, 100)); }},
        {"bench-sizes", 0, "LIST", "comma-separated sizes for --bench", [&o](const std::string& v) { o.bench_sizes = parse_sizes(v); }},
        {"bench-frames", 0, "K", "frames timed per size (default: about one second's worth, 3..60)",
         [&o](const std::string& v) { o.bench_frames = parse_int(v, "--bench-frames", 1, 100000); }},
        {"warm-up", 0, "S",
         "untimed frames for S seconds before each size (default 0.3: a GPU\n"
         "clocks up only under load)",
         [&o](const std::string& v) { o.warm_up = parse_double(v, "--warm-up", 0, 60); }},
        {"csv", 0, "", "--bench output format (default: a table)", [&o](const std::string&) { o.format = "csv"; }, "--csv, --json"},
        {"json", 0, "", "", [&o](const std::string&) { o.format = "json"; }},
    };
    return specs + fft_option_specs(o.fft, &o.fft_chosen) +
           std::vector<OptionSpec>{
               gl_device_spec(o.gl, "EGL device index for --headless/--bench (default 0, or $GPUFFT_EGL_DEVICE)"),
               {"verbose", 'v', "", "say what changes (filter, size, view) on standard output", set_flag(o.verbose)},
           } +
           help_and_version_specs(kTool, print_help);
}

void print_help() {
    Options defaults;
    std::printf(
        "Usage: teapot [options] [KERNEL.png...]\n"
        "\n"
        "Renders a lit Utah teapot into a float RGBA target every frame, filters it with the FFT on the GPU\n"
        "(forward, multiply by the kernel's spectrum, inverse: Moreland & Angel) and shows it. Highlights\n"
        "exceed 1.0, so wide kernels bloom. KERNEL.png files join the built-in filters in the cycle.\n"
        "\n"
        "Modes:\n"
        "  (default)             a freeglut window (needs an X display)\n"
        "%s"
        "\n"
        "Options:\n%s"
        "\n"
        "Keys (window): f / F next / previous filter, space filtering on/off, s spectrum view,\n"
        "+ / - FFT size up / down, p save a screenshot, r reset the view, h key list, q or Esc quit.\n"
        "Mouse: drag to rotate, wheel to zoom.\n"
        "\n"
        "Filters:\n%s",
        options_help(mode_specs(defaults)).c_str(), options_help(option_specs(defaults)).c_str(), kernel_help().c_str());
}

Options parse_options_or_throw(int argc, char** argv) {
    Options o;
    o.kernels = parse_command_line(argc, argv, mode_specs(o) + option_specs(o));
    if (!o.screenshot.empty() && o.frames == 0) throw UsageError("--screenshot needs --frames K");
    if (o.headless && !o.screenshot.empty()) throw UsageError("--screenshot is for the window (headless: --output)");
    if (o.bench && o.frames) throw UsageError("--frames is not for --bench (see --bench-frames)");
    return o;
}

/// Any problem with the command line, a kernel spec or a name included, is a usage error.
Options parse_options(int argc, char** argv) {
    return parse_or_usage([&] { return parse_options_or_throw(argc, argv); });
}

/// The filters the viewer cycles through: the built-in examples, then the PNGs given.
std::vector<Kernel> load_filters(const Options& o, size_t& selected) {
    std::vector<std::string> specs;
    for (const char* const* e = builtin_kernel_examples(); *e; ++e) specs.push_back(*e);
    specs.insert(specs.end(), o.kernels.begin(), o.kernels.end());
    std::string first = o.filter.empty() ? "gaussian:4" : o.filter;
    auto it = std::find(specs.begin(), specs.end(), first);
    if (it == specs.end()) it = specs.insert(specs.begin(), first);
    selected = static_cast<size_t>(it - specs.begin());
    std::vector<Kernel> kernels;
    KernelOptions ko;
    ko.max_side = 1024;
    for (const std::string& s : specs) {
        try {
            kernels.push_back(parse_kernel(s, ko));
        } catch (const Error& e) {
            throw UsageError(e.what());
        }
    }
    return kernels;
}

/// Reads back the bound framebuffer's [0, w) x [0, h) and writes it as an RGB PNG, top row first.
void save_framebuffer(const std::string& path, int w, int h, bool overwrite) {
    std::vector<unsigned char> rgb(static_cast<size_t>(w) * static_cast<size_t>(h) * 3);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadPixels(0, 0, w, h, GL_RGB, GL_UNSIGNED_BYTE, rgb.data());
    check_gl("reading the window");
    Image image(w, h, 1.0f);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
            for (int c = 0; c < 3; ++c)
                image.at(x, h - 1 - y)[c] = rgb[(static_cast<size_t>(y) * w + x) * 3 + c] / 255.0f;
    PngFormat f;
    f.color_type = 2;
    f.bit_depth = 8;
    write_png(path, image, f, overwrite);
}

/// Headless: one frame, tone-mapped, written as RGB.
int run_headless(const Options& o) {
    HeadlessContext context(o.gl);
    require_fragment_chain_support();
    check_frame_size(o.size);
    ProgramCache programs;
    TeapotScene scene(programs);
    size_t selected = 0;
    std::vector<Kernel> filters = load_filters(o, selected);
    TeapotFrame frame(programs, scene, o.size.width, o.size.height, o.fft);
    frame.set_kernel(filters[selected]);
    // --frames K: K frames in this process, the camera a degree further round each frame before the
    // last, the kernel's spectrum remade every tenth frame; then the requested view is written.
    const int frames = std::max(o.frames, 1);
    const int width = o.size.width, height = o.size.height;
    RenderTarget view(width, height);
    FrameDisplay display(programs);
    ResourceUse first_use;
    for (int i = 0; i < frames; ++i) {
        Camera turned = o.camera;
        turned.yaw += static_cast<float>(frames - 1 - i);
        if (i % 10 == 9) frame.set_kernel(filters[selected]);
        const Texture& shown = frame.render(turned, o.look, o.filtering, o.spectrum);
        view.bind_for_drawing();
        display.draw(shown, width, height, o.spectrum ? Tonemap::Clamp : o.tonemap, o.exposure);
        glFinish();
        if (i == 0) first_use = measure_resources();
    }
    std::vector<float> pixels = view.download();
    Image image(width, height);
    const size_t row = static_cast<size_t>(width) * 4;
    for (int y = 0; y < height; ++y)  // GL rows are bottom-up
        std::copy(&pixels[static_cast<size_t>(height - 1 - y) * row], &pixels[static_cast<size_t>(height - y) * row], image.at(0, y));
    PngFormat f;
    f.color_type = 2;
    f.bit_depth = o.depth;
    write_png(o.output, image, f, true);
    if (o.report_resources)
        report_resources(kTool, "frame 1", first_use, "frame " + std::to_string(frames),
                         measure_resources());
    if (o.verbose) std::printf("wrote %s: %dx%d, filter %s\n", o.output.c_str(), width, height, filters[selected].name.c_str());
    return kExitOk;
}

// --- Table 3 -------------------------------------------------------------------------------

struct BenchRow {
    std::string implementation;  ///< "fragment radix-2", "fragment radix-16", "compute"
    FrameSize size;
    double hz = 0, frame_ms = 0, fft_ms = 0;
    double call_ms = 0, call_cpu_ms = 0;  ///< TextureFilter::apply(): GPU time (the copies in and out included), CPU time
    std::array<double, kProgramCount> program_ms{};
    Totals totals;
    int frames = 0;
    bool fragment_programs = false;  ///< false for the compute backend: no per-program figures
    std::string error;
};

const Program kPrograms[kProgramCount] = {Program::Fft, Program::Untangle, Program::Scale, Program::Tangle, Program::Pass, Program::Multiply};

BenchRow bench_size(ProgramCache& programs, TeapotScene& scene, const Kernel& kernel, const Options& o, const FftOptions& fft, FrameSize size) {
    BenchRow row;
    row.size = size;
    TeapotFrame frame(programs, scene, size.width, size.height, fft);
    row.implementation = frame.filter().backend();
    frame.set_kernel(kernel);
    RenderTarget screen(size.width, size.height);
    FrameDisplay display(programs);
    auto one_frame = [&](GpuTimes* times) {
        const Texture& shown = frame.render(o.camera, o.look, true, false, nullptr, times);
        screen.bind_for_drawing();
        display.draw(shown, size.width, size.height, o.tonemap, o.exposure);
        glFinish();
    };
    using clock = std::chrono::steady_clock;
    auto start = clock::now();
    one_frame(nullptr);  // first use of programs and buffers
    double first = std::chrono::duration<double>(clock::now() - start).count();
    warm_up(o.warm_up, [&] { one_frame(nullptr); });
    int frames = o.bench_frames ? o.bench_frames : std::clamp(static_cast<int>(1.0 / std::max(first, 1e-4)), 3, 60);
    std::vector<double> frame_ms, fft_ms, call_ms, call_cpu_ms;
    std::vector<std::vector<std::pair<std::string, double>>> per_program;
    for (int i = 0; i < frames; ++i) {
        auto t0 = clock::now();
        one_frame(nullptr);
        frame_ms.push_back(std::chrono::duration<double, std::milli>(clock::now() - t0).count());
        call_cpu_ms.push_back(frame.filter_cpu_ms());
    }
    for (int i = 0; i < std::min(frames, 5); ++i) {  // GPU time per program, from timestamps between draws
        GpuTimes t;
        one_frame(&t);
        fft_ms.push_back(t.total_ms);
        call_ms.push_back(t.call_ms);
        per_program.push_back(t.programs);
    }
    row.frames = frames;
    row.frame_ms = median(frame_ms);
    row.hz = 1000.0 / row.frame_ms;
    row.fft_ms = median(fft_ms);
    row.call_ms = median(call_ms);
    row.call_cpu_ms = median(call_cpu_ms);
    for (int p = 0; p < kProgramCount; ++p) {
        std::vector<double> v;
        for (auto& a : per_program) v.push_back(a.at(static_cast<size_t>(p)).second);
        row.program_ms[static_cast<size_t>(p)] = median(v);
    }
    // The fragment chains' plans, for Tables 1 and 2 (what the filter runs, counted on the CPU).
    if (row.implementation.rfind("fragment", 0) == 0) {
        const bool radix2 = row.implementation == "fragment radix-2";
        row.totals = plan_totals(radix2 ? filter_plan(size.width, size.height) : fast_filter_plan(size.width, size.height, fft.computed_twiddles));
        row.fragment_programs = true;
    }
    return row;
}

void print_csv(const std::vector<BenchRow>& rows) {
    std::printf("implementation,size,frames,hz,frame_ms,fft_gpu_ms,call_gpu_ms,call_cpu_ms");
    for (Program p : kPrograms)
        for (const char* what : {"ms", "invocations", "table1", "mflop", "mb_read", "mb_written"}) std::printf(",%s_%s", program_name(p), what);
    std::printf(",error\n");
    for (const BenchRow& r : rows) {
        std::printf("%s,%s,%d,%.4f,%.3f,%.3f,%.3f,%.3f", r.implementation.c_str(), r.size.name().c_str(), r.frames, r.hz, r.frame_ms, r.fft_ms,
                    r.call_ms, r.call_cpu_ms);
        for (Program p : kPrograms) {
            size_t i = static_cast<size_t>(p);
            if (!r.fragment_programs) {
                std::printf(",,,,,,");
                continue;
            }
            std::printf(",%.4f,%lld,%lld,%.3f,%.3f,%.3f", r.program_ms[i], r.totals.invocations[i], table1_invocations(p, r.size.width, r.size.height),
                        r.totals.flops[i] * 1e-6, r.totals.bytes_read[i] / 1048576.0, r.totals.bytes_written[i] / 1048576.0);
        }
        std::printf(",%s\n", r.error.c_str());
    }
}

void print_json(const std::vector<BenchRow>& rows, const std::string& device) {
    std::printf("{\"device\": \"%s\", \"rows\": [", device.c_str());
    for (size_t k = 0; k < rows.size(); ++k) {
        const BenchRow& r = rows[k];
        const std::string size = r.size.width == r.size.height ? r.size.name() : "\"" + r.size.name() + "\"";  // a number where square
        std::printf("%s\n  {\"implementation\": \"%s\", \"size\": %s, \"frames\": %d, \"hz\": %.4f, \"frame_ms\": %.3f, \"fft_gpu_ms\": %.3f, "
                    "\"call_gpu_ms\": %.3f, \"call_cpu_ms\": %.3f, \"programs\": {",
                    k ? "," : "", r.implementation.c_str(), size.c_str(), r.frames, r.hz, r.frame_ms, r.fft_ms, r.call_ms, r.call_cpu_ms);
        for (int j = 0; j < kProgramCount && r.fragment_programs; ++j) {
            Program p = kPrograms[j];
            size_t i = static_cast<size_t>(p);
            std::printf("%s\"%s\": {\"gpu_ms\": %.4f, \"invocations\": %lld, \"table1\": %lld, \"mflop\": %.3f, \"mb_read\": %.3f, \"mb_written\": %.3f}",
                        j ? ", " : "", program_name(p), r.program_ms[i], r.totals.invocations[i], table1_invocations(p, r.size.width, r.size.height),
                        r.totals.flops[i] * 1e-6, r.totals.bytes_read[i] / 1048576.0, r.totals.bytes_written[i] / 1048576.0);
        }
        std::printf("}%s%s%s}", r.error.empty() ? "" : ", \"error\": \"", r.error.c_str(), r.error.empty() ? "" : "\"");
    }
    std::printf("\n]}\n");
}

void print_tables(const std::vector<BenchRow>& rows, const std::string& device) {
    std::printf("Table 3 on %s: filtering a rendered teapot frame (RGBA32F, forward + multiply + inverse)\n", device.c_str());
    std::printf("%-18s %9s %9s %10s %9s %9s %9s |", "implementation", "size", "rate Hz", "frame ms", "FFT GPU", "call GPU", "call CPU");
    for (Program p : kPrograms) std::printf(" %9s", program_name(p));
    std::printf("   (GPU ms per program; the paper: 0.37 Hz at 1024^2)\n");
    std::printf("(FFT GPU: the filter's passes; call GPU, call CPU: the whole TextureFilter::apply(), copies in and out included)\n");
    for (const BenchRow& r : rows) {
        if (!r.error.empty()) {
            std::printf("%-18s %9s  %s\n", r.implementation.c_str(), r.size.name().c_str(), r.error.c_str());
            continue;
        }
        std::printf("%-18s %9s %9.2f %10.2f %9.3f %9.3f %9.3f |", r.implementation.c_str(), r.size.name().c_str(), r.hz, r.frame_ms, r.fft_ms,
                    r.call_ms, r.call_cpu_ms);
        for (Program p : kPrograms)
            if (r.fragment_programs) std::printf(" %9.3f", r.program_ms[static_cast<size_t>(p)]);
        if (!r.fragment_programs) std::printf(" (compute shaders: no fragment programs)");
        std::printf("\n");
    }
    // Tables 1 and 2 for each implementation at one size (1024^2 where measured; --csv has all).
    std::vector<std::string> done;
    for (const BenchRow& r : rows) {
        if (!r.error.empty() || !r.fragment_programs || std::find(done.begin(), done.end(), r.implementation) != done.end()) continue;
        const BenchRow* pick = &r;
        for (const BenchRow& other : rows)
            if (other.implementation == r.implementation && other.error.empty() && other.fragment_programs && other.size.width == 1024 &&
                other.size.height == 1024)
                pick = &other;
        done.push_back(r.implementation);
        const BenchRow& b = *pick;
        std::printf("\nTables 1 and 2, %s at %dx%d: fragments per program (ours | Table 1), operations, MB read / written\n",
                    b.implementation.c_str(), b.size.width, b.size.height);
        std::printf("  %-9s %14s %14s %16s %16s %11s %11s %11s %11s\n", "program", "invocations", "Table 1", "flops (ours)", "instr (paper)",
                    "MB read", "(paper)", "MB written", "(paper)");
        for (Program p : kPrograms) {
            size_t i = static_cast<size_t>(p);
            long long t1 = table1_invocations(p, b.size.width, b.size.height);
            PaperInstructions pi = paper_instructions(p);
            std::printf("  %-9s %14lld %14lld %16.0f %16lld %11.1f %11.1f %11.1f %11.1f\n", program_name(p), b.totals.invocations[i], t1,
                        b.totals.flops[i], t1 * pi.arithmetic, b.totals.bytes_read[i] / 1048576.0, t1 * pi.texture * 16.0 / 1048576.0,
                        b.totals.bytes_written[i] / 1048576.0, t1 * 16.0 / 1048576.0);
        }
    }
}

/// What --bench compares: the implementation asked for, else every one this context runs.
std::vector<FftOptions> bench_implementations(const Options& o) {
    if (o.fft_chosen) return {o.fft};
    std::vector<FftOptions> all;
    for (const Implementation& i : gl_implementations(o.fft)) all.push_back(i.options);
    return all;
}

int run_bench(const Options& o) {
    HeadlessContext context(o.gl);
    require_fragment_chain_support();
    ProgramCache programs;
    TeapotScene scene(programs);
    size_t selected = 0;
    std::vector<Kernel> filters = load_filters(o, selected);
    std::vector<FrameSize> sizes = o.bench_sizes;
    if (sizes.empty()) {
        for (int n : {128, 256, 512, 1024, 2048}) sizes.push_back({n, n});
        if (max_texture_side() >= 4096) sizes.push_back({4096, 4096});
    }
    std::vector<BenchRow> rows;
    for (const FftOptions& fft : bench_implementations(o)) {
        for (FrameSize size : sizes) {
            try {
                if (std::max(size.width, size.height) > max_texture_side())
                    throw Error("above this GPU's limit of " + std::to_string(max_texture_side()));
                rows.push_back(bench_size(programs, scene, filters[selected], o, fft, size));
            } catch (const std::exception& e) {
                BenchRow r;
                r.implementation = rows.empty() ? backend_name(fft.backend) : rows.back().implementation;
                r.size = size;
                r.error = std::string("does not fit: ") + e.what();
                rows.push_back(r);
            }
            if (o.verbose) std::fprintf(stderr, "%s: %s %s done\n", kTool, rows.back().implementation.c_str(), size.name().c_str());
        }
    }
    if (o.format == "csv") print_csv(rows);
    else if (o.format == "json") print_json(rows, describe_gl());
    else print_tables(rows, describe_gl());
    return kExitOk;
}

// --- The window ------------------------------------------------------------------------------

struct Viewer {
    Options options;
    std::unique_ptr<ProgramCache> programs;
    std::unique_ptr<TeapotScene> scene;
    std::unique_ptr<TeapotFrame> frame;
    std::unique_ptr<FrameDisplay> display;
    std::vector<Kernel> filters;
    size_t selected = 0;
    bool filtering = true, spectrum = false, help = false;
    int width = 512, height = 512, frames = 0, shots = 0;
    int drag_x = -1, drag_y = -1;
    double fft_ms = 0, fps = 0;
    std::chrono::steady_clock::time_point fps_start = std::chrono::steady_clock::now();
    int fps_frames = 0;
    int exit_status = kExitOk;

    void say(const std::string& what) const {
        if (options.verbose) {
            std::printf("%s\n", what.c_str());
            std::fflush(stdout);
        }
    }
    /// The frame of another size while its filter's programs compile (a GPU takes seconds for a
    /// size's first use): the frame shown stays until it is ready (settle()).
    std::unique_ptr<TeapotFrame> next;
    /// Frames asked for and then passed over, kept until their compiles are done: destroying
    /// them before would wait for those (TextureFilter, Compile::Background).
    std::vector<std::unique_ptr<TeapotFrame>> passed_over;

    static FrameSize size_of(const TeapotFrame& f) { return {f.width(), f.height()}; }
    std::unique_ptr<TeapotFrame> make_frame(FrameSize size) {
        return std::make_unique<TeapotFrame>(*programs, *scene, size.width, size.height, options.fft, filters[selected], Compile::Background);
    }
    void start(FrameSize size) {
        frame = make_frame(size);
        say("size " + size.name());
    }
    /// + and -: the next fast size up or down that the backend takes, aspect ratio kept, from the
    /// size asked for last.
    void step(int direction) {
        const FrameSize from = size_of(next ? *next : *frame);
        const FrameSize to = step_size(from, direction, fft_lengths(options.fft), max_texture_side());
        if (to == from) return;
        if (next) passed_over.push_back(std::move(next));
        if (to == size_of(*frame)) say("size " + to.name());   // back to the size shown
        else next = make_frame(to);
    }
    /// Once a frame: the size asked for replaces the one shown once it filters without waiting.
    void settle() {
        passed_over.erase(std::remove_if(passed_over.begin(), passed_over.end(), [](auto& f) { return f->ready(); }), passed_over.end());
        if (!next || !next->ready()) return;
        frame = std::move(next);
        say("size " + size_of(*frame).name());
    }
    void select(size_t k) {
        selected = k % filters.size();
        frame->set_kernel(filters[selected]);   // shown unfiltered until its programs are ready
        if (next) next->set_kernel(filters[selected]);
        say("filter " + filters[selected].name);
    }
    void release() {  // GL objects go while the context is still there
        passed_over.clear();
        next.reset();
        frame.reset();
        display.reset();
        scene.reset();
        programs.reset();
    }
};

Viewer* viewer = nullptr;

void draw_text(int x, int y, const std::string& text) {
    glWindowPos2i(x, y);
    glutBitmapString(GLUT_BITMAP_8_BY_13, reinterpret_cast<const unsigned char*>(text.c_str()));
}

struct Key {
    unsigned char key;
    const char* help;
    void (*act)(Viewer&);
};

void save_screenshot(Viewer& v, const std::string& path, bool overwrite) {
    glReadBuffer(GL_BACK);
    save_framebuffer(path, v.width, v.height, overwrite);
    v.say("saved " + path);
}

const Key kKeys[] = {
    {'f', "f      next filter", [](Viewer& v) { v.select(v.selected + 1); }},
    {'F', "F      previous filter", [](Viewer& v) { v.select(v.selected + v.filters.size() - 1); }},
    {' ', "space  filtering on/off", [](Viewer& v) { v.filtering = !v.filtering; v.say(v.filtering ? "filtering on" : "filtering off"); }},
    {'s', "s      spectrum view (log magnitude, centred)", [](Viewer& v) { v.spectrum = !v.spectrum; v.say(v.spectrum ? "spectrum on" : "spectrum off"); }},
    {'+', "+ / -  FFT size up / down (the next fast size)", [](Viewer& v) { v.step(1); }},
    {'=', nullptr, [](Viewer& v) { v.step(1); }},
    {'-', nullptr, [](Viewer& v) { v.step(-1); }},
    {'p', "p      save a screenshot (teapot-N.png)", [](Viewer& v) { v.shots = -1; }},
    {'r', "r      reset the view", [](Viewer& v) { v.options.camera = Camera{}; }},
    {'h', "h      this key list", [](Viewer& v) { v.help = !v.help; }},
    {'q', "q Esc  quit", [](Viewer&) { glutLeaveMainLoop(); }},
    {27, nullptr, [](Viewer&) { glutLeaveMainLoop(); }},
};

void on_display() {
    Viewer& v = *viewer;
    try {
        v.settle();
        // Until the filter's programs are compiled, the scene is shown unfiltered (they compile on
        // the driver's threads; the window stays live).
        const bool ready = v.frame->ready(), spectrum = v.spectrum && ready;
        const Texture& shown = v.frame->render(v.options.camera, v.options.look, v.filtering && ready, spectrum, &v.fft_ms);
        glBindFramebuffer(GL_FRAMEBUFFER, 0);
        glDrawBuffer(GL_BACK);
        v.display->draw(shown, v.width, v.height, spectrum ? Tonemap::Clamp : v.options.tonemap, v.options.exposure);
        const bool as_asked = (ready || (!v.filtering && !v.spectrum)) && !v.next;
        if (as_asked) ++v.frames;   // --frames counts the frames shown as asked
        if (v.options.frames && v.frames >= v.options.frames) {
            // Saved before the text overlay, so it matches the headless frame.
            if (!v.options.screenshot.empty()) save_screenshot(v, v.options.screenshot, true);
            glutLeaveMainLoop();
            return;
        }
        if (v.shots < 0) {  // 'p': the next free teapot-N.png
            int n = 1;
            while (file_exists("teapot-" + std::to_string(n) + ".png")) ++n;
            save_screenshot(v, "teapot-" + std::to_string(n) + ".png", false);
            v.shots = n;
        }
        // The status line and the key list: fixed-function bitmaps over the frame.
        ++v.fps_frames;
        double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - v.fps_start).count();
        if (elapsed > 0.5) {
            v.fps = v.fps_frames / elapsed;
            v.fps_frames = 0;
            v.fps_start = std::chrono::steady_clock::now();
        }
        char status[256];
        std::string compiling;
        if (v.next) compiling = "  compiling " + Viewer::size_of(*v.next).name() + "...";
        else if (!ready && (v.filtering || v.spectrum)) compiling = "  compiling...";
        std::snprintf(status, sizeof status, "%dx%d  %s%s  %.1f fps  FFT %.2f ms GPU%s  (h: keys)", v.frame->width(), v.frame->height(),
                      v.filtering ? v.filters[v.selected].name.c_str() : "no filter", spectrum ? "  spectrum" : "", v.fps,
                      v.fft_ms, compiling.c_str());
        glColor3f(1.0f, 1.0f, 0.6f);
        draw_text(8, 8, status);
        if (v.help) {
            int y = v.height - 20;
            for (const Key& k : kKeys)
                if (k.help) draw_text(8, y, k.help), y -= 15;
            draw_text(8, y, "drag   rotate;  wheel  zoom");
        }
        glutSwapBuffers();
    } catch (const std::exception& e) {
        report(kTool, e.what(), kExitFailed);
        v.exit_status = kExitFailed;
        glutLeaveMainLoop();
    }
}

void on_key(unsigned char key, int, int) {
    for (const Key& k : kKeys)
        if (k.key == key) {
            k.act(*viewer);
            return;
        }
}

void on_mouse(int button, int state, int x, int y) {
    Viewer& v = *viewer;
    if (button == GLUT_LEFT_BUTTON) {
        v.drag_x = state == GLUT_DOWN ? x : -1;
        v.drag_y = y;
    } else if ((button == 3 || button == 4) && state == GLUT_DOWN) {  // the wheel
        v.options.camera.distance = std::clamp(v.options.camera.distance * (button == 3 ? 0.9f : 1.1f), 1.5f, 30.0f);
    }
}

void on_motion(int x, int y) {
    Viewer& v = *viewer;
    if (v.drag_x < 0) return;
    v.options.camera.yaw += 0.4f * static_cast<float>(x - v.drag_x);
    v.options.camera.pitch = std::clamp(v.options.camera.pitch + 0.4f * static_cast<float>(y - v.drag_y), -89.0f, 89.0f);
    v.drag_x = x;
    v.drag_y = y;
}

void on_reshape(int w, int h) {
    viewer->width = std::max(1, w);
    viewer->height = std::max(1, h);
}

int run_window(const Options& o, int argc, char** argv) {
    const char* name = std::getenv("DISPLAY");
    _XDisplay* x = XOpenDisplay(nullptr);
    if (!x)
        return report(kTool, std::string("cannot open the X display") + (name && *name ? std::string(" '") + name + "'" : " (DISPLAY is not set)") +
                                 "; use --headless, or run under xvfb-run",
                      kExitNoGl);
    XCloseDisplay(x);

    Viewer v;
    v.options = o;
    v.filtering = o.filtering;
    v.spectrum = o.spectrum;
    v.filters = load_filters(o, v.selected);
    // The frame's size where it fits 1024 x 1024, else scaled down to fit.
    const double fit = std::min(1.0, 1024.0 / std::max(o.size.width, o.size.height));
    v.width = o.window_width ? o.window_width : std::max(1, static_cast<int>(o.size.width * fit));
    v.height = o.window_height ? o.window_height : std::max(1, static_cast<int>(o.size.height * fit));
    viewer = &v;

    glutInit(&argc, argv);
    glutSetOption(GLUT_ACTION_ON_WINDOW_CLOSE, GLUT_ACTION_GLUTMAINLOOP_RETURNS);
    glutInitDisplayMode(GLUT_RGBA | GLUT_DOUBLE);
    glutInitWindowSize(v.width, v.height);
    glutCreateWindow("teapot: FFT filtering on the GPU");
    load_gl_entry_points();
    require_fragment_chain_support();
    check_frame_size(o.size);
    v.programs = std::make_unique<ProgramCache>();
    v.scene = std::make_unique<TeapotScene>(*v.programs);
    v.display = std::make_unique<FrameDisplay>(*v.programs);
    v.start(o.size);
    v.say("filter " + v.filters[v.selected].name);

    glutDisplayFunc(on_display);
    glutIdleFunc([] { glutPostRedisplay(); });
    glutReshapeFunc(on_reshape);
    glutKeyboardFunc(on_key);
    glutMouseFunc(on_mouse);
    glutMotionFunc(on_motion);
    glutCloseFunc([] { viewer->release(); });
    glutMainLoop();
    if (glutGetWindow()) {
        v.release();
        glutDestroyWindow(glutGetWindow());
    }
    viewer = nullptr;
    return v.exit_status;
}

}  // namespace

int main(int argc, char** argv) {
    return run_tool(kTool, [&] {
        Options o = parse_options(argc, argv);
        if (o.bench) return run_bench(o);
        if (o.headless) return run_headless(o);
        return run_window(o, argc, argv);
    });
}
