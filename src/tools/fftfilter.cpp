// fftfilter: batch filtering of PNG files on the GPU with the fragment-program FFT.
#include "app/cli.h"
#include "app/resources.h"
#include "image/colour.h"
#include "image/convolve.h"
#include "image/files.h"
#include "image/kernels.h"
#include "image/png_io.h"
#include "image/spectral.h"

#include <getopt.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <vector>

using namespace gpufft;

namespace {

const char* kTool = "fftfilter";

struct Options {
    std::string kernel = "gaussian:2";
    std::string output;
    Boundary boundary = Boundary::Reflect;
    bool spectrum = false;
    std::string synth;
    bool force = false;
    int verbosity = 1;  // 0 quiet, 1 normal, 2 verbose
    bool normalize = true;
    bool linear = false;
    bool premultiply = false;
    int max_fft = 0;
    long long max_pixels = PngLimits().max_pixels;
    int depth = 8;  // --synth output
    bool report_resources = false;
    ContextOptions gl;
    FftOptions fft;
    std::vector<std::string> inputs;
};

void print_help() {
    std::printf(
        "Usage: fftfilter [options] INPUT.png...     (- reads a list of paths from standard input)\n"
        "       fftfilter --synth WxH[:power=P][:seed=S][:colour] -o OUT.png\n"
        "\n"
        "Filters PNG images on the GPU: forward 2D FFT, multiply by the kernel's spectrum, inverse FFT\n"
        "(Moreland & Angel, \"The FFT on a GPU\"), all four channels at once.\n"
        "\n"
        "Options:\n"
        "  -k, --kernel SPEC     impulse response (default gaussian:2), see Kernels below\n"
        "  -o, --output PATH     output file for one input; a directory for several (created if missing).\n"
        "                        Default: NAME.filtered.png (NAME.spectrum.png) beside each input\n"
        "  -b, --boundary MODE   reflect (default) | clamp | zero | wrap: what lies beyond the edges.\n"
        "                        wrap is circular convolution (the paper's); the others pad the image\n"
        "  --spectrum            write the centred log-magnitude spectrum (Figure 4b) instead of filtering\n"
        "  --synth SPEC          no input: a texture from random phases (Figure 5), |F| ~ f^-power,\n"
        "                        e.g. --synth 512x512:power=2:seed=7 (add :colour for RGB)\n"
        "  --depth 8|16          bit depth of --synth output (default 8)\n"
        "  -f, --force           replace existing outputs (never an input)\n"
        "  --no-normalize        PNG kernels keep their raw values (8/16-bit mapped to [0, 1])\n"
        "  --linear              filter in linear light: decode sRGB (or the file's gAMA) first, encode\n"
        "                        after. Default: filter the stored values\n"
        "  --premultiply         filter colour premultiplied by alpha (no dark fringes at transparent edges)\n"
        "  --max-fft N           largest FFT side; larger images are filtered in overlap-save tiles\n"
        "                        (default: the GPU's texture limit)\n"
        "  --max-pixels N        refuse images with more pixels (default %lld)\n"
        "%s"
        "  --gl-device N         EGL device index (default 0, or $GPUFFT_EGL_DEVICE)\n"
        "  --report-resources    print resident memory and live GL objects after the first and the\n"
        "                        last file (a batch should leave both flat)\n"
        "  -q, --quiet           only errors\n"
        "  -v, --verbose         a line per file: format, FFT size, tiles, GPU time\n"
        "  -h, --help            this text\n"
        "  --version             the version\n"
        "\n"
        "Kernels:\n%s"
        "\n"
        "Outputs keep the input's colour type and bit depth (palette images come out RGB(A), tRNS\n"
        "transparency as an alpha channel), rounded to nearest and clamped. Files are written under a\n"
        "temporary name and renamed, so an output is whole or absent.\n"
        "\n"
        "Exit status: 0 all files done, 1 some file failed (the others are still done), 2 usage error,\n"
        "3 no usable OpenGL.\n",
        PngLimits().max_pixels, fft_options_help(), kernel_help().c_str());
}

Options parse_options_or_throw(int argc, char** argv) {
    enum { kSpectrum = 1000, kSynth, kNoNormalize, kLinear, kPremultiply, kMaxFft, kMaxPixels, kBackend, kGlDevice,
           kVersion_, kDepth, kReportResources };
    std::vector<option> longs = {
        {"kernel", required_argument, nullptr, 'k'},     {"output", required_argument, nullptr, 'o'},
        {"boundary", required_argument, nullptr, 'b'},   {"spectrum", no_argument, nullptr, kSpectrum},
        {"synth", required_argument, nullptr, kSynth},   {"force", no_argument, nullptr, 'f'},
        {"quiet", no_argument, nullptr, 'q'},            {"verbose", no_argument, nullptr, 'v'},
        {"help", no_argument, nullptr, 'h'},             {"version", no_argument, nullptr, kVersion_},
        {"no-normalize", no_argument, nullptr, kNoNormalize}, {"linear", no_argument, nullptr, kLinear},
        {"premultiply", no_argument, nullptr, kPremultiply},  {"max-fft", required_argument, nullptr, kMaxFft},
        {"max-pixels", required_argument, nullptr, kMaxPixels}, {"gl-device", required_argument, nullptr, kGlDevice},
        {"depth", required_argument, nullptr, kDepth}, {"report-resources", no_argument, nullptr, kReportResources}};
    add_fft_long_options(longs, kBackend);
    Options o;
    opterr = 0;
    int c;
    int index = 0;
    while ((c = getopt_long(argc, argv, ":k:o:b:fqvh", longs.data(), &index)) != -1) {
        switch (c) {
            case 'k': o.kernel = optarg; break;
            case 'o': o.output = optarg; break;
            case 'b': o.boundary = parse_boundary(optarg); break;
            case kSpectrum: o.spectrum = true; break;
            case kSynth: o.synth = optarg; break;
            case 'f': o.force = true; break;
            case 'q': o.verbosity = 0; break;
            case 'v': o.verbosity = 2; break;
            case 'h': print_help(); std::exit(kExitOk);
            case kVersion_: std::printf("fftfilter (gpufft) %s\n", kVersion); std::exit(kExitOk);
            case kNoNormalize: o.normalize = false; break;
            case kLinear: o.linear = true; break;
            case kPremultiply: o.premultiply = true; break;
            case kMaxFft: {
                int v = parse_int(optarg, "--max-fft", 2, 1 << 16);
                if (v & (v - 1)) throw UsageError("--max-fft " + std::string(optarg) + " is not a power of two");
                o.max_fft = v;
                break;
            }
            case kMaxPixels: o.max_pixels = static_cast<long long>(parse_double(optarg, "--max-pixels", 1, 1e15)); break;
            case kBackend: parse_fft_option(longs[index].name, optarg, o.fft); break;
            case kGlDevice: o.gl.device = parse_int(optarg, "--gl-device", 0, 1024); break;
            case kReportResources: o.report_resources = true; break;
            case kDepth: o.depth = parse_int(optarg, "--depth", 8, 16); if (o.depth != 8 && o.depth != 16) throw UsageError("--depth must be 8 or 16"); break;
            default: throw_option_error(c, argv, optind);
        }
    }
    for (int i = optind; i < argc; ++i) {
        if (std::string(argv[i]) == "-") {
            std::string line;
            while (std::getline(std::cin, line))
                if (!line.empty()) o.inputs.push_back(line);
        } else {
            o.inputs.push_back(argv[i]);
        }
    }
    if (o.synth.empty() && o.inputs.empty()) throw UsageError("no input files");
    if (!o.synth.empty() && !o.inputs.empty()) throw UsageError("--synth takes no input files");
    if (!o.synth.empty() && o.spectrum) throw UsageError("--synth and --spectrum exclude each other");
    return o;
}

/// Any problem with the command line, a kernel spec or a name included, is a usage error.
Options parse_options(int argc, char** argv) {
    return parse_or_usage([&] { return parse_options_or_throw(argc, argv); });
}

/// The GL context and programs, made when the first file needs them.
struct Gpu {
    HeadlessContext context;
    ProgramCache programs;
    explicit Gpu(const ContextOptions& options) : context(options) { require_fragment_chain_support(); }
};

class Progress {
public:
    Progress(size_t total, bool show) : total_(total), show_(show && total > 1 && isatty(2)) {}
    void update(size_t done, const std::string& name) {
        if (!show_) return;
        std::fprintf(stderr, "\r\033[K[%zu/%zu] %s", done + 1, total_, name.c_str());
        std::fflush(stderr);
    }
    void clear() {
        if (show_) std::fprintf(stderr, "\r\033[K");
    }

private:
    size_t total_;
    bool show_;
};

struct Job {
    std::string input, output;
};

std::vector<Job> plan_outputs(const Options& o) {
    const bool directory = o.inputs.size() > 1 || (!o.output.empty() && (is_directory(o.output) || o.output.back() == '/'));
    const char* suffix = o.spectrum ? ".spectrum.png" : ".filtered.png";
    if (directory && !o.output.empty()) make_directories(o.output);
    std::vector<Job> jobs;
    for (const std::string& in : o.inputs) {
        std::string out;
        if (o.output.empty()) out = parent_directory(in) + "/" + strip_extension(base_name(in)) + suffix;
        else if (directory) out = o.output + (o.output.back() == '/' ? "" : "/") + base_name(in);
        else out = o.output;
        jobs.push_back({in, out});
    }
    return jobs;
}

/// Refuses outputs that are inputs (any input of the batch) or that two inputs would share.
std::string output_problem(const Job& job, const std::vector<Job>& jobs, const std::set<std::string>& taken) {
    for (const Job& other : jobs)
        if (other.input == job.output || same_file(other.input, job.output))
            return job.output + ": is an input file; refusing to overwrite it";
    if (taken.count(job.output)) return job.output + ": another input already writes this output";
    return "";
}

int run(const Options& o) {
    KernelOptions ko;
    ko.normalize = o.normalize;
    std::unique_ptr<Gpu> gpu;
    auto gpu_ready = [&]() -> Gpu& {
        if (!gpu) gpu = std::make_unique<Gpu>(o.gl);
        return *gpu;
    };
    auto start = std::chrono::steady_clock::now();

    if (!o.synth.empty()) {
        SynthSpec spec = parse_synth(o.synth);
        std::string out = o.output.empty() ? "synth.png" : o.output;
        if (is_directory(out)) out += "/synth.png";
        Image texture = synthesize(gpu_ready().programs, spec, o.fft);
        PngFormat f;
        f.color_type = spec.colour ? 2 : 0;
        f.bit_depth = o.depth;
        write_png(out, texture, f, o.force);
        if (o.verbosity > 0) std::fprintf(stderr, "%s: wrote %s (%dx%d)\n", kTool, out.c_str(), spec.width, spec.height);
        return kExitOk;
    }

    // The kernel is read before any file is touched: a bad spec is a usage error.
    Kernel kernel;
    std::unique_ptr<Convolver> convolver;
    if (!o.spectrum) {
        try {
            kernel = parse_kernel(o.kernel, ko);
        } catch (const Error& e) {
            throw UsageError(e.what());
        }
    }

    std::vector<Job> jobs = plan_outputs(o);
    Progress progress(jobs.size(), o.verbosity > 0);
    std::set<std::string> taken;
    size_t failed = 0;
    double megapixels = 0;
    PngLimits limits;
    limits.max_pixels = o.max_pixels;
    ResourceUse first_use;
    for (size_t i = 0; i < jobs.size(); ++i) {
        if (o.report_resources && i == 1) first_use = measure_resources();
        const Job& job = jobs[i];
        progress.update(i, job.input);
        try {
            std::string problem = output_problem(job, jobs, taken);
            if (!problem.empty()) throw Error(problem);
            taken.insert(job.output);
            if (!o.force && file_exists(job.output))
                throw Error(job.output + ": already exists (use --force to replace it)");
            PngImage png = read_png(job.input, limits);
            Image image = std::move(png.image);
            Gpu& g = gpu_ready();
            Transfer transfer = transfer_of(png.format);
            if (o.linear) to_linear(image, transfer);
            PngFormat format;
            std::string detail;
            Image result;
            if (o.spectrum) {
                result = spectrum_image(g.programs, image, o.boundary, o.fft);
                format = output_format(png.format, false);
                format.color_type = png.format.is_grey() ? 0 : 2;  // a spectrum has no alpha
                format.srgb = false;
                format.gamma = 0;
                format.icc_profile.clear();
                if (format.bit_depth < 8) format.bit_depth = 8;
                detail = std::to_string(result.width) + "x" + std::to_string(result.height) + " FFT";
            } else {
                if (!convolver) {
                    ConvolveOptions co;
                    co.boundary = o.boundary;
                    co.max_fft = o.max_fft;
                    co.fft = o.fft;
                    convolver = std::make_unique<Convolver>(g.programs, kernel, co);
                }
                if (o.premultiply && png.format.has_alpha()) premultiply(image);
                result = convolver->apply(image);
                if (o.premultiply && png.format.has_alpha()) unpremultiply(result);
                if (o.linear) from_linear(result, transfer);
                bool colour = png.format.is_grey() && kernel.per_channel && has_colour(result, 16);
                format = output_format(png.format, colour);
                const Convolver::Stats& s = convolver->last();
                char buf[160];
                std::snprintf(buf, sizeof buf, "%d tile%s of %dx%d, GPU %.2f ms", s.tiles, s.tiles == 1 ? "" : "s",
                              s.fft_width, s.fft_height, s.gpu_ms);
                detail = buf;
            }
            write_png(job.output, result, format, o.force);
            megapixels += static_cast<double>(image.pixels()) * 1e-6;
            if (o.verbosity > 1) {
                progress.clear();
                std::fprintf(stderr, "%s: %s (%s, %dx%d) -> %s (%s): %s\n", kTool, job.input.c_str(),
                             png.format.describe().c_str(), image.width, image.height, job.output.c_str(),
                             format.describe().c_str(), detail.c_str());
            }
        } catch (const std::exception& e) {
            progress.clear();
            bool gl = dynamic_cast<const GlError*>(&e) != nullptr;
            if (gl && !gpu) return report(kTool, std::string("no usable OpenGL: ") + e.what(), kExitNoGl);
            if (gl) convolver.reset();  // GPU memory may be short: start the next file afresh
            // Every message names its file: those from reading and writing do already.
            std::string message = e.what();
            if (message.rfind(job.input + ":", 0) != 0 && message.rfind(job.output + ":", 0) != 0)
                message = job.input + ": " + message;
            report(kTool, message, kExitFailed);
            ++failed;
        }
    }
    progress.clear();
    if (o.report_resources)
        report_resources(kTool, "file 1", jobs.size() > 1 ? first_use : measure_resources(), "file " + std::to_string(jobs.size()),
                         measure_resources());
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (o.verbosity > 0 && (jobs.size() > 1 || o.verbosity > 1))
        std::fprintf(stderr, "%s: %zu file%s, %zu failed, %.1f MP in %.2f s, %.1f MP/s\n", kTool, jobs.size(),
                     jobs.size() == 1 ? "" : "s", failed, megapixels, seconds, seconds > 0 ? megapixels / seconds : 0.0);
    return failed ? kExitFailed : kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
    return run_tool(kTool, [&] { return run(parse_options(argc, argv)); });
}
