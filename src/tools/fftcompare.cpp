// fftcompare: the paper's FFTW comparison (Section 6) done properly. The same work on both sides
// (four 32-bit channels: forward 2D FFT, multiply by an impulse response's spectrum, inverse),
// accuracy against FFTW in double precision next to FFTW in single precision, and speed.
#include "app/cli.h"
#include "app/options.h"
#include "fft/compute_fft.h"
#include "reference/fftw_filter.h"
#include "fft/fragment_fft.h"
#include "fft/filter.h"
#include "fft/layout.h"
#include "fft/sizes.h"
#include "gl/texture.h"
#include "reference/reference.h"
#include "image/convolve.h"
#include "image/files.h"
#include "image/kernels.h"
#include "image/png_io.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace gpufft;

namespace {

const char* kTool = "fftcompare";

struct Size {
    int m, n;
};

/// One contestant of --race: the item as written and the FFT options it sets, as (option name,
/// value) pairs applied through the options' own table (fft_option_specs).
struct RacePlan {
    std::string name;
    std::vector<std::pair<std::string, std::string>> settings;
    int batch = 1;  ///< images a filter call (Fft2D::filter_batch): key batch=B
    int images = 1;  ///< sets of `batch` images the calls take in turn: key images=K
};

struct Options {
    std::vector<Size> sizes;
    std::string input, kernel;
    int repeat = 0;  // 0: about a second's worth per measurement, 3..50
    int queue = 0;  // filters queued back to back for the throughput figure; 0: 200 (as the peers) or 0.1 s' worth
    double warm_up = 0.3;  // seconds of untimed GPU work before GPU timings
    int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    double max_error = 1e-6;
    double max_ratio = 3.0;
    std::string format = "table";
    std::string plot;
    bool speed = true;
    bool corrupt = false;  // test hook
    bool pass_costs = false;
    std::vector<RacePlan> race;  ///< --race: compute plans timed against each other in one process
    double peak_gbs = 0;  ///< --peak-bandwidth: the chip's memory bandwidth, GB/s
    bool fft_chosen = false;  // --backend, --radix, --twiddles or --half given: that one only
    int verbosity = 1;
    ContextOptions gl;
    FftOptions fft;
};

std::vector<Size> parse_sizes(const std::string& list) {
    std::vector<Size> sizes;
    for (auto [m, n] : parse_fast_size_list(list, "--sizes")) sizes.push_back({m, n});
    return sizes;
}

/// Sets FFT option --`name` to `value` on `fft`, checked as the command line checks it.
void apply_fft_option(FftOptions& fft, const std::string& name, const std::string& value) {
    for (const OptionSpec& spec : fft_option_specs(fft))
        if (spec.name == name) return spec.apply(value);
    throw std::logic_error("no FFT option --" + name);
}

/// --race's keys after '+': KEY=VALUE sets --compute-KEY VALUE (VALUE: its placeholder in --help).
constexpr struct {
    const char* key;
    const char* value;
} kRaceKeys[] = {{"lines", "G"}, {"radix", "R"}, {"fold", "F"}, {"fuse", "U"}, {"row-tail", "N|off"}, {"tail-split", "S"}, {"split", "S"}, {"max-line", "L"}, {"transpose", "on|off"}, {"fuse-tail", "on|off"}};

/// "lines=G, radix=R, ..., split=S or max-line=L": the keys for --help and the parser's message.
std::string race_keys() {
    std::string s;
    const size_t n = std::size(kRaceKeys);
    for (size_t i = 0; i < n; ++i)
        s += std::string(i == 0 ? "" : i + 1 == n ? " or " : ", ") + kRaceKeys[i].key + "=" + kRaceKeys[i].value;
    return s;
}

/// --race's list: items PLAN[+KEY=VALUE]..., PLAN a --compute-plan value ("default": the planner's
/// own), each KEY=VALUE one of kRaceKeys, checked by the option it sets.
std::vector<RacePlan> parse_race(const std::string& list) {
    std::vector<RacePlan> plans;
    for (const std::string& item : split_list(list, ';')) {
        if (item.empty()) throw UsageError("--race: an empty item (the planner's own plan is 'default')");
        const std::string what = "--race \"" + item + "\"";
        const std::vector<std::string> parts = split_list(item, '+');
        RacePlan r{item, {{"compute-plan", parts.front() == "default" ? "" : parts.front()}}};
        for (size_t i = 1; i < parts.size(); ++i) {
            const std::string key = parts[i].substr(0, parts[i].find('='));
            if ((key == "batch" || key == "images") && key.size() < parts[i].size()) {
                (key == "batch" ? r.batch : r.images) = parse_int(parts[i].substr(key.size() + 1), what + ": " + key, 1, 64);
                continue;
            }
            const bool known = std::any_of(std::begin(kRaceKeys), std::end(kRaceKeys), [&](const auto& k) { return key == k.key; });
            if (!known || key.size() == parts[i].size())
                throw UsageError(what + ": expected " + race_keys() + " after '+', not \"" + parts[i] + "\"");
            r.settings.emplace_back("compute-" + key, parts[i].substr(key.size() + 1));
        }
        FftOptions scratch;
        try {
            for (const auto& [name, value] : r.settings) apply_fft_option(scratch, name, value);
        } catch (const UsageError& e) {
            throw UsageError(what + ": " + e.what());
        }
        plans.push_back(r);
    }
    return plans;
}

void print_help();

/// Every option of fftcompare, written once: the parser and --help both read this table.
std::vector<OptionSpec> option_specs(Options& o) {
    std::vector<OptionSpec> specs = {
        {"sizes", 0, "LIST",
         "sizes, e.g. 128,256,1920x1080 (M columns x N rows, each even with\n"
         "prime factors 2, 3, 5 and 7 only; default\n"
         "128,256,512,1024,2048,1024x256,256x1024,2048x512)",
         [&o](const std::string& v) { o.sizes = parse_sizes(v); }},
        {"input", 0, "FILE.png",
         "this image instead of random data in [-1, 1) (repeated to fill each\n"
         "size; default size: the image's, rounded up to even sizes with\n"
         "prime factors 2, 3, 5 and 7)",
         [&o](const std::string& v) { o.input = v; }},
        {"kernel", 0, "SPEC", "impulse response as in fftfilter (default: random, as large as the image)",
         [&o](const std::string& v) { o.kernel = v; }},
        {"repeat", 0, "K", "timed runs per measurement (default: about one second's worth, 3..50)",
         [&o](const std::string& v) { o.repeat = parse_int(v, "--repeat", 1, 100000); }},
        {"queue", 0, "K",
         "the queued figure: K filters back to back, one wait, GPU time per filter\n"
         "(timestamps around the queue; default 200 as the cuFFT and VkFFT peers, or\n"
         "fewer where 200 take more than 0.1 s, at least 3)",
         [&o](const std::string& v) { o.queue = parse_int(v, "--queue", 1, 100000); }},
        {"warm-up", 0, "S",
         "seconds of untimed GPU work before GPU timings (default 0.3: a GPU\n"
         "clocks up only under load)",
         [&o](const std::string& v) { o.warm_up = parse_double(v, "--warm-up", 0, 60); }},
        {"threads", 0, "N", "the \"all cores\" FFTW thread count (default " + std::to_string(Options().threads) + ")",
         [&o](const std::string& v) { o.threads = parse_int(v, "--threads", 1, 4096); }},
        {"no-speed", 0, "", "accuracy only", set_flag(o.speed, false)},
        {"max-error", 0, "E", "fail if a GPU relative RMS error exceeds E (default 1e-6)",
         [&o](const std::string& v) { o.max_error = parse_double(v, "--max-error", 0, 1); }},
        {"max-ratio", 0, "R", "fail if a GPU error exceeds R times fftwf's (default 3; 0: off)",
         [&o](const std::string& v) { o.max_ratio = parse_double(v, "--max-ratio", 0, 1e6); }},
        {"csv", 0, "", "machine-readable output instead of the tables", [&o](const std::string&) { o.format = "csv"; },
         "--csv, --json"},
        {"json", 0, "", "", [&o](const std::string&) { o.format = "json"; }},
        {"plot", 0, "FILE.png", "draw time and error against size (gnuplot)", [&o](const std::string& v) { o.plot = v; }},
    };
    return specs + fft_option_specs(o.fft, &o.fft_chosen) +
           std::vector<OptionSpec>{
               gl_device_spec(o.gl),
               {"pass-costs", 0, "",
                "fragment backend: GPU time of each kind of pass per size (a copy pass,\n"
                "FFT passes, untangle, multiply), fragments/s and bytes/s; compute backend:\n"
                "each dispatch's time, bytes moved and rate, and how it runs (workgroups,\n"
                "threads, radices, exchange rounds, shared memory)",
                set_flag(o.pass_costs)},
               {"race", 0, "PLANS",
                "compute backend: time these plans against each other on every size in\n"
                "one process: ';'-separated PLAN[+KEY=VALUE]..., PLAN a --compute-plan\n"
                "value ('default': the planner's), each KEY=VALUE as --compute-KEY VALUE:\n" +
                    race_keys() +
                    ",\n"
                    "batch=B: B images a call, every dispatch for all of them before its\n"
                    "barrier (the per-dispatch us are the batch's), and images=K: the calls\n"
                    "take K images (or batches) in turn, not one; in interleaved rounds, so\n"
                    "that a shared GPU's drift hits all alike: queued ms per image, ns per\n"
                "pixel (and against the nearest power of two's of the same plan, or its\n"
                "first, where raced too: 1920x1080 against 2048x1024), each dispatch's us",
                [&o](const std::string& v) { o.race = parse_race(v); }},
               {"peak-bandwidth", 0, "GB/S",
                "--pass-costs, compute backend: the chip's memory bandwidth, to show each\n"
                "dispatch's rate against (e.g. 3350 on an H100 SXM)",
                [&o](const std::string& v) { o.peak_gbs = parse_double(v, "--peak-bandwidth", 1, 1e6); }},
               {"test-corrupt-spectrum", 0, "", "test hook: damage the GPU spectra, so the checks must fail", set_flag(o.corrupt)},
               {"quiet", 'q', "", "no progress on stderr", [&o](const std::string&) { o.verbosity = 0; }},
           } +
           help_and_version_specs(kTool, print_help);
}

void print_help() {
    Options defaults;
    std::printf(
        "Usage: fftcompare [options]\n"
        "\n"
        "Compares the GPU's FFT filter with FFTW (the paper's Section 6): for each size, four 32-bit\n"
        "channels go through forward 2D FFT, complex multiply by an impulse response's spectrum, and\n"
        "inverse 2D FFT on both sides.\n"
        "  accuracy: the GPU's forward spectrum and filtered image against FFTW in double precision\n"
        "            (relative RMS and max abs error, worst channel), next to FFTW in single precision\n"
        "            (fftwf) measured the same way, and their ratio (fftwf on --threads\n"
        "            and planned by FFTW_ESTIMATE with --no-speed, else by FFTW_MEASURE)\n"
        "  speed:    GPU time (timer queries; wall clock with upload and download shown apart) against\n"
        "            fftwf with 1 thread and with all cores (FFTW_MEASURE plans, planning not timed);\n"
        "            medians of repeated runs\n"
        "\n"
        "Options:\n%s"
        "\n"
        "Exit status: 0 within tolerance, 1 an error above it, 2 usage error, 3 no usable OpenGL.\n",
        options_help(option_specs(defaults)).c_str());
}

Options parse_options_or_throw(int argc, char** argv) {
    Options o;
    std::vector<std::string> operands = parse_command_line(argc, argv, option_specs(o));
    if (!operands.empty()) throw UsageError("unexpected argument " + operands.front());
    return o;
}

/// Any problem with the command line, a kernel spec or a name included, is a usage error.
Options parse_options(int argc, char** argv) {
    return parse_or_usage([&] { return parse_options_or_throw(argc, argv); });
}

// --- Measurements ------------------------------------------------------------------------------

/// Median milliseconds of `run` (which returns its own measure) after one untimed run (a fresh
/// timer query's first result can be junk on llvmpipe); repeats until about a second has passed
/// (3..50 runs) unless a count is given.
template <typename F>
double median_ms(int repeat, F run) {
    run();
    std::vector<double> ms;
    auto start = std::chrono::steady_clock::now();
    for (int i = 0;; ++i) {
        ms.push_back(run());
        double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (repeat ? i + 1 >= repeat : (i + 1 >= 50 || (i + 1 >= 3 && spent > 1.0))) break;
    }
    return median(ms);
}

template <typename F>
double wall_ms(F f) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

struct Errors {
    double rel_rms = 0, max_abs = 0;  // worst channel
    void add(const ErrorStats& e) {
        rel_rms = std::max(rel_rms, e.rel_rms);
        max_abs = std::max(max_abs, e.max_abs);
    }
};

struct Row {
    std::string implementation;  ///< "fragment radix-2", "fragment radix-16", "compute"
    Size size;
    Errors gpu_spectrum, fftwf_spectrum, gpu_filter, fftwf_filter;
    double gpu_ms = 0, upload_ms = 0, filter_wall_ms = 0, download_ms = 0, fftwf1_ms = 0, fftwfn_ms = 0;
    double queued_ms = 0;  ///< per filter, o.queue filters queued back to back with one wait
};

double ratio(double a, double b) { return b > 0 ? a / b : 0; }

/// The image: random data, or the input tiled to the size.
std::vector<float> make_image(const Options& o, const PngImage* png, Size s, unsigned seed) {
    std::vector<float> img(static_cast<size_t>(s.m) * static_cast<size_t>(s.n) * 4);
    if (png) {
        const Image& src = png->image;
        for (int y = 0; y < s.n; ++y)
            for (int x = 0; x < s.m; ++x)
                std::copy(src.at(x % src.width, y % src.height), src.at(x % src.width, y % src.height) + 4,
                          &img[(static_cast<size_t>(y) * s.m + x) * 4]);
    } else {
        std::mt19937 rng(seed);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        for (float& v : img) v = u(rng);
    }
    (void)o;
    return img;
}

/// Damages one texel of a spectrum on the GPU (the --test-corrupt-spectrum hook).
void corrupt(const Texture& t) {
    const float junk[4] = {0.5f, -0.5f, 0.25f, 1.0f};
    glBindTexture(GL_TEXTURE_RECTANGLE, t.id());
    glTexSubImage2D(GL_TEXTURE_RECTANGLE, 0, t.width() / 2 + 1, t.height() / 3, 1, 1, GL_RGBA, GL_FLOAT, junk);
}

/// A queue's length: --queue, else about `work_ms` of filters that take `single_ms` each (3..200).
int queue_length(const Options& o, double single_ms, double work_ms) {
    return o.queue ? o.queue : std::clamp(static_cast<int>(work_ms / std::max(single_ms, 1e-3)), 3, 200);
}

/// Throughput as the peers (../shared/peers) measure theirs: `queue` calls of `apply` (each
/// filtering `images` images) queued back to back with one wait, the GPU time from a timestamp
/// before the first to one after the last, per image filtered.
double queue_ms(const std::function<void()>& apply, int queue, int images = 1) {
    GpuTimer timer;
    timer.begin();
    for (int k = 0; k < queue; ++k) apply();
    timer.end();
    return timer.milliseconds() / queue / images;
}

double queue_ms(Filter& filter, Fft2D& fft, int queue) {
    return queue_ms([&] { filter.apply(fft.input(), fft.output()); }, queue);
}

/// The median of 3 queues of about 100 ms; `single_ms` (one filter's time) sizes the default queue.
double queued_ms(const Options& o, Filter& filter, Fft2D& fft, double single_ms) {
    const int queue = queue_length(o, single_ms, 100.0);
    std::vector<double> ms;
    for (int q = 0; q < 3; ++q) ms.push_back(queue_ms(filter, fft, queue));
    return median(ms);
}

std::vector<Row> measure(ProgramCache& programs, const Options& o, const PngImage* png, const Kernel* kernel, Size s,
                         const std::vector<FftOptions>& implementations) {
    std::vector<float> image = make_image(o, png, s, 1000u + static_cast<unsigned>(s.m * 7 + s.n));
    std::vector<float> impulse = kernel ? impulse_response(*kernel, s.m, s.n) : make_image(o, nullptr, s, 77u + static_cast<unsigned>(s.m + s.n));

    // The yardstick and FFTW in single precision for accuracy: fftwf on one thread, the timed
    // one-thread figure too, planned by measuring; with --no-speed on --threads (every core by
    // default) and planned by estimate, as the yardstick is (threads do not change the arithmetic;
    // FFTW_MEASURE on one thread took minutes at 16384^2).
    std::vector<std::vector<std::complex<double>>> reference(4);
    std::vector<std::vector<double>> convolved(4);
    Row cpu;
    cpu.size = s;
    FftwfFilter fftwf(s.m, s.n, o.speed ? 1 : o.threads, impulse, o.speed);
    std::copy(image.begin(), image.end(), fftwf.frame());
    fftwf.filter();
    std::vector<float> fftwf_filtered(fftwf.frame(), fftwf.frame() + image.size());
    const std::vector<std::vector<std::complex<double>>> fftwf_spectra = fftwf.spectra(image);
    for (int c = 0; c < 4; ++c) {
        std::vector<double> x = channel_of(image, c);
        reference[c] = reference_spectrum(x, s.m, s.n);
        convolved[c] = reference_circular_convolution(x, channel_of(impulse, c), s.m, s.n);
        cpu.fftwf_spectrum.add(compare(reference[c], fftwf_spectra[static_cast<size_t>(c)]));
        cpu.fftwf_filter.add(compare(convolved[c], channel_of(fftwf_filtered, c)));
    }
    if (o.speed) {
        auto time_fftwf = [&](FftwfFilter& f) {
            return median_ms(o.repeat, [&] {
                std::copy(image.begin(), image.end(), f.frame());  // untimed: the frame starts in memory
                return wall_ms([&] { f.filter(); });
            });
        };
        cpu.fftwf1_ms = time_fftwf(fftwf);
        if (o.threads > 1) {
            FftwfFilter threaded(s.m, s.n, o.threads, impulse);
            cpu.fftwfn_ms = time_fftwf(threaded);
        } else {
            cpu.fftwfn_ms = cpu.fftwf1_ms;
        }
    }

    std::vector<Row> rows;
    for (const FftOptions& options : implementations) {
        // The paper's radix-2 chain takes powers of two only, the fast chain sides of 4 up: beside
        // the others they sit out other sizes; asked for alone they say so (make_fft).
        const LengthModel lengths = fft_lengths(options);
        if (implementations.size() > 1 && !(lengths.allowed(s.m) && lengths.allowed(s.n))) continue;
        Row row = cpu;
        std::unique_ptr<Fft2D> fft = make_fft(programs, s.m, s.n, options);
        row.implementation = fft->name();
        Filter filter(*fft, impulse);
        if (o.corrupt) corrupt(filter.kernel());
        fft->input().upload(image.data());
        fft->forward(fft->input(), fft->output());
        if (o.corrupt) corrupt(fft->output().texture());
        std::vector<float> gpu_spectrum = fft->output().download();
        filter.apply(fft->input(), fft->output());
        std::vector<float> gpu_filtered = fft->output().download();
        for (int c = 0; c < 4; ++c) {
            row.gpu_spectrum.add(compare(reference[c], unpack_half(gpu_spectrum.data(), s.m, s.n, c)));
            row.gpu_filter.add(compare(convolved[c], channel_of(gpu_filtered, c)));
        }
        if (o.speed) {
            GpuTimer timer;
            saturating_warm_up(o.warm_up, [&] { filter.apply(fft->input(), fft->output()); });
            row.gpu_ms = median_ms(o.repeat, [&] {
                timer.begin();
                filter.apply(fft->input(), fft->output());
                timer.end();
                return timer.milliseconds();
            });
            // Throughput as the peers measure theirs: a queue of filters, one wait, GPU time from a
            // timestamp before the first to one after the last (median of 3 queues).
            row.queued_ms = queued_ms(o, filter, *fft, row.gpu_ms);
            row.upload_ms = median_ms(o.repeat, [&] { return wall_ms([&] { fft->input().upload(image.data()); glFinish(); }); });
            row.filter_wall_ms = median_ms(o.repeat, [&] { return wall_ms([&] { filter.apply(fft->input(), fft->output()); glFinish(); }); });
            std::vector<float> out(image.size());
            row.download_ms = median_ms(o.repeat, [&] { return wall_ms([&] { fft->output().download(out.data()); }); });
        }
        rows.push_back(row);
    }
    return rows;
}

// --- Output ------------------------------------------------------------------------------------

std::string size_name(Size s) { return std::to_string(s.m) + "x" + std::to_string(s.n); }

void print_table(const std::vector<Row>& rows, const Options& o, const std::string& gpu, const std::string& cpu) {
    std::printf("fftcompare: GPU %s against FFTW %s on %s\n", gpu.c_str(), FftwfFilter::version(), cpu.c_str());
    std::printf("\nAccuracy against FFTW in double precision: relative RMS error (worst of 4 channels); ratio = GPU / fftwf\n");
    std::printf("%-18s %-10s | %-28s | %-28s | %s\n", "implementation", "size", "    forward spectrum", "    filtered image", "max abs error, filter");
    std::printf("%-18s %-10s | %9s %9s %7s | %9s %9s %7s | %9s %9s\n", "", "", "GPU", "fftwf", "ratio", "GPU", "fftwf", "ratio", "GPU", "fftwf");
    for (const Row& r : rows)
        std::printf("%-18s %-10s | %9.2e %9.2e %7.2f | %9.2e %9.2e %7.2f | %9.2e %9.2e\n", r.implementation.c_str(), size_name(r.size).c_str(),
                    r.gpu_spectrum.rel_rms, r.fftwf_spectrum.rel_rms, ratio(r.gpu_spectrum.rel_rms, r.fftwf_spectrum.rel_rms),
                    r.gpu_filter.rel_rms, r.fftwf_filter.rel_rms, ratio(r.gpu_filter.rel_rms, r.fftwf_filter.rel_rms),
                    r.gpu_filter.max_abs, r.fftwf_filter.max_abs);
    if (!o.speed) return;
    std::printf("\nSpeed of the whole filter (forward + multiply + inverse, 4 channels), median ms\n");
    std::printf("%-18s %-10s | %9s %9s | %8s %8s %8s | %10s %10s | %8s %8s\n", "implementation", "size", "GPU", "queued", "upload", "wall", "download",
                "fftwf 1T", ("fftwf " + std::to_string(o.threads) + "T").c_str(), "vs 1T", ("vs " + std::to_string(o.threads) + "T").c_str());
    for (const Row& r : rows)
        std::printf("%-18s %-10s | %9.4f %9.4f | %8.3f %8.3f %8.3f | %10.3f %10.3f | %7.2fx %7.2fx\n", r.implementation.c_str(), size_name(r.size).c_str(),
                    r.gpu_ms, r.queued_ms, r.upload_ms, r.filter_wall_ms, r.download_ms, r.fftwf1_ms, r.fftwfn_ms, ratio(r.fftwf1_ms, r.gpu_ms),
                    ratio(r.fftwfn_ms, r.gpu_ms));
    std::printf("(GPU: timer query of one filter, median; queued: %s filters back to back with one wait, GPU time per\n"
                " filter; wall: one filter with glFinish; vs: fftwf time / GPU time)\n",
                o.queue ? std::to_string(o.queue).c_str() : "200 (or 0.1 s' worth)");
}

void print_csv(const std::vector<Row>& rows) {
    std::printf("implementation,size,width,height,gpu_spectrum_rel_rms,fftwf_spectrum_rel_rms,gpu_filter_rel_rms,fftwf_filter_rel_rms,"
                "gpu_filter_max_abs,fftwf_filter_max_abs,gpu_ms,upload_ms,filter_wall_ms,download_ms,fftwf_1t_ms,fftwf_nt_ms,gpu_queued_ms\n");
    for (const Row& r : rows)
        std::printf("%s,%s,%d,%d,%.4e,%.4e,%.4e,%.4e,%.4e,%.4e,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.5f\n", r.implementation.c_str(), size_name(r.size).c_str(), r.size.m, r.size.n,
                    r.gpu_spectrum.rel_rms, r.fftwf_spectrum.rel_rms, r.gpu_filter.rel_rms, r.fftwf_filter.rel_rms, r.gpu_filter.max_abs,
                    r.fftwf_filter.max_abs, r.gpu_ms, r.upload_ms, r.filter_wall_ms, r.download_ms, r.fftwf1_ms, r.fftwfn_ms, r.queued_ms);
}

void print_json(const std::vector<Row>& rows, const Options& o, const std::string& gpu, const std::string& cpu) {
    std::printf("{\"gpu\": \"%s\", \"fftw\": \"%s\", \"cpu\": \"%s\", \"threads\": %d, \"rows\": [", gpu.c_str(),
                FftwfFilter::version(), cpu.c_str(), o.threads);
    for (size_t i = 0; i < rows.size(); ++i) {
        const Row& r = rows[i];
        std::printf("%s\n  {\"implementation\": \"%s\", \"size\": \"%s\", \"width\": %d, \"height\": %d, "
                    "\"spectrum\": {\"gpu_rel_rms\": %.4e, \"fftwf_rel_rms\": %.4e, \"gpu_max_abs\": %.4e, \"fftwf_max_abs\": %.4e}, "
                    "\"filter\": {\"gpu_rel_rms\": %.4e, \"fftwf_rel_rms\": %.4e, \"gpu_max_abs\": %.4e, \"fftwf_max_abs\": %.4e}, "
                    "\"ms\": {\"gpu\": %.4f, \"gpu_queued\": %.5f, \"upload\": %.4f, \"filter_wall\": %.4f, \"download\": %.4f, \"fftwf_1t\": %.4f, \"fftwf_nt\": %.4f}}",
                    i ? "," : "", r.implementation.c_str(), size_name(r.size).c_str(), r.size.m, r.size.n, r.gpu_spectrum.rel_rms, r.fftwf_spectrum.rel_rms,
                    r.gpu_spectrum.max_abs, r.fftwf_spectrum.max_abs, r.gpu_filter.rel_rms, r.fftwf_filter.rel_rms, r.gpu_filter.max_abs,
                    r.fftwf_filter.max_abs, r.gpu_ms, r.queued_ms, r.upload_ms, r.filter_wall_ms, r.download_ms, r.fftwf1_ms, r.fftwfn_ms);
    }
    std::printf("\n]}\n");
}

/// Two panels: time and error against the number of pixels, a line per implementation, drawn by
/// gnuplot into a temporary file that is renamed into place.
void plot(const std::vector<Row>& rows, const Options& o, const std::string& path) {
    std::string dir = parent_directory(path);
    std::string data_name = "/tmp/fftcompare-XXXXXX";
    int fd = make_temporary_file(data_name);
    if (fd < 0) throw Error("cannot create a temporary file for gnuplot");
    close(fd);
    std::vector<std::string> names;
    {
        std::vector<Row> sorted = rows;  // lines run left to right: by pixel count
        std::stable_sort(sorted.begin(), sorted.end(), [](const Row& a, const Row& b) {
            return static_cast<double>(a.size.m) * a.size.n < static_cast<double>(b.size.m) * b.size.n;
        });
        std::ofstream data(data_name);
        for (const Row& r : rows)
            if (std::find(names.begin(), names.end(), r.implementation) == names.end()) names.push_back(r.implementation);
        for (const std::string& name : names) {  // one gnuplot data block (index) per implementation
            for (const Row& r : sorted)
                if (r.implementation == name)
                    data << static_cast<double>(r.size.m) * r.size.n << ' ' << r.gpu_ms << ' ' << r.fftwf1_ms << ' ' << r.fftwfn_ms << ' '
                         << r.gpu_filter.rel_rms << ' ' << r.fftwf_filter.rel_rms << '\n';
            data << "\n\n";
        }
        if (!data.flush()) {  // (a full /tmp would leave gnuplot part of the points, silently)
            const int e = errno;
            data.close();
            remove_temporary_file(data_name);
            throw Error(path + ": cannot write gnuplot's data to " + data_name + (e ? std::string(": ") + std::strerror(e) : ""));
        }
    }
    std::string temp = dir + "/." + base_name(path) + ".tmp-plot.png", file = "'" + data_name + "'";
    std::string times, errors;
    for (size_t i = 0; i < names.size(); ++i) {
        times += file + " index " + std::to_string(i) + " u 1:2 w lp t '" + names[i] + "', ";
        errors += file + " index " + std::to_string(i) + " u 1:5 w lp t '" + names[i] + "', ";
    }
    std::string script = "set terminal pngcairo size 1100,450 font ',10'; set output '" + temp + "';"
        "set multiplot layout 1,2; set logscale xy; set grid; set key top left; set xlabel 'pixels (M N)';"
        "set ylabel 'ms (median)'; set title 'Filter time: forward + multiply + inverse, 4 channels';"
        "plot " + times + file + " index 0 u 1:3 w lp t 'fftwf 1 thread', " + file + " index 0 u 1:4 w lp t 'fftwf " +
        std::to_string(o.threads) + " threads';"
        "set ylabel 'relative RMS error of the filter vs FFTW double'; set format y '%.0e'; set title 'Accuracy';"
        "plot " + errors + file + " index 0 u 1:6 w lp t 'fftwf';"
        "unset multiplot";
    list_temporary_file(temp);
    int rc = run_program({"gnuplot", "-e", script}, true);  // its messages on stdout, as before
    remove_temporary_file(data_name);
    const bool made = rc == 0 && file_exists(temp);
    const bool placed = made && std::rename(temp.c_str(), path.c_str()) == 0;
    if (placed) forget_temporary_file(temp);
    else remove_temporary_file(temp);
    if (!made) throw Error(path + ": gnuplot failed (is gnuplot installed?)");
    if (!placed) throw Error(path + ": cannot write the plot");
}

/// The impulse response a speed run filters by: --kernel's on the grid, else the image itself.
std::vector<float> timed_impulse(const Kernel* kernel, Size s, const std::vector<float>& image) {
    return kernel ? impulse_response(*kernel, s.m, s.n) : image;
}

/// What bounds a pass: median GPU time of a plain copy, and of the filter plan's passes grouped by
/// kind ("row FFT, radix 16", "multiply", ...), with the bytes they write per microsecond.
void print_pass_costs(ProgramCache& programs, const Options& o, const Kernel* kernel, const std::string& gpu) {
    std::printf("Pass costs on %s: median GPU microseconds (timer queries), %s\n", gpu.c_str(),
                o.fft.radix == 2 ? "the radix-2 chain" : "the fast chain where it applies");
    for (Size s : o.sizes) {
        std::unique_ptr<Fft2D> base = make_fft(programs, s.m, s.n, o.fft);
        auto* fft = dynamic_cast<FragmentFft*>(base.get());
        if (!fft) {  // the compute backend: per dispatch, and the read-back
            std::vector<float> image = make_image(o, nullptr, s, 5);
            Filter filter(*base, timed_impulse(kernel, s, image));
            base->input().upload(image.data());
            std::vector<std::vector<double>> per(8);
            std::vector<double> total, download;
            std::vector<std::string> labels;
            std::vector<double> bytes;
            std::vector<float> out(image.size());
            saturating_warm_up(o.warm_up, [&] { filter.apply(base->input(), base->output()); });
            for (int r = 0; r <= (o.repeat ? o.repeat : 9); ++r) {
                Profile p;
                filter.apply(base->input(), base->output(), &p);
                double d = wall_ms([&] { base->output().download(out.data()); });
                if (r == 0) continue;
                labels = p.pass_labels;
                bytes = p.pass_bytes;
                total.push_back(p.total_ms);
                download.push_back(d);
                for (size_t k = 0; k < p.pass_ms.size() && k < per.size(); ++k) per[k].push_back(p.pass_ms[k] * 1e3);
            }
            const double queued = queued_ms(o, filter, *base, median(total));
            std::printf("\n%s (%s): filter %.4f ms in %zu dispatches, %.4f ms a filter queued; read-back %.3f ms\n", size_name(s).c_str(),
                        base->name().c_str(), median(total), labels.size(), queued, median(download));
            // Per dispatch: GPU time, the bytes it reads and writes in global memory, and the rate
            // (against the chip's peak where --peak-bandwidth gives it).
            const bool peak = o.peak_gbs > 0;
            std::printf("  %-44s %10s %10s %10s%s\n", "dispatch", "us", "MB moved", "GB/s", peak ? "  of peak" : "");
            double all_bytes = 0;
            for (size_t k = 0; k < labels.size(); ++k) {
                const double us = median(per[k]), b = k < bytes.size() ? bytes[k] : 0, gbs = b / us * 1e-3;
                all_bytes += b;
                std::printf("  %-44s %10.1f %10.3f %10.1f", labels[k].c_str(), us, b * 1e-6, gbs);
                if (peak) std::printf("  %7.0f%%", 100 * gbs / o.peak_gbs);
                std::printf("\n");
            }
            const double all_gbs = all_bytes / (median(total) * 1e3) * 1e-3;
            std::printf("  %-44s %10.1f %10.3f %10.1f", "filter", median(total) * 1e3, all_bytes * 1e-6, all_gbs);
            if (peak) std::printf("  %7.0f%%; at the peak it would take %.1f us", 100 * all_gbs / o.peak_gbs, all_bytes / o.peak_gbs * 1e-3);
            std::printf("\n");
            // How each dispatch runs on this GL (the device row's plans and limits): workgroups,
            // lines and threads, radices, exchange rounds, shared memory, route.
            if (const auto* compute = dynamic_cast<const ComputeFft*>(base.get())) {
                std::printf("  how each dispatch runs:\n");
                for (const std::string& d : compute->describe_dispatches()) std::printf("    %s\n", d.c_str());
            }
            continue;
        }
        std::vector<float> image = make_image(o, nullptr, s, 5);
        Filter filter(*fft, timed_impulse(kernel, s, image));
        fft->input().upload(image.data());
        Plan copy{s.m, s.n, {}};
        Pass pass;
        pass.label = "copy";
        pass.source = Surface::Input;
        pass.target = Surface::Output;
        pass.draws.push_back(Draw{Variant{Program::Pass, {}}, Region{0, 0, s.m, s.n}});
        copy.passes.push_back(pass);
        const Plan& plan = *fft->filter_plan();
        std::vector<std::vector<double>> per_pass(plan.passes.size()), copies(1), totals(1);
        const int runs = o.repeat ? o.repeat : 9;
        warm_up(o.warm_up, [&] { fft->run(plan, fft->input(), fft->output(), &filter.spectrum().texture()); glFinish(); });
        for (int r = 0; r <= runs; ++r) {
            Profile p, c;
            fft->run(plan, fft->input(), fft->output(), &filter.spectrum().texture(), &p);
            fft->run(copy, fft->input(), fft->output(), nullptr, &c);
            if (r == 0) continue;  // warm-up
            copies[0].push_back(c.pass_ms[0] * 1e3);
            totals[0].push_back(p.total_ms);
            for (size_t k = 0; k < plan.passes.size(); ++k) per_pass[k].push_back(p.pass_ms[k] * 1e3);
        }
        const double texels = static_cast<double>(s.m) * s.n;
        std::printf("\n%s (%s): filter %.3f ms in %zu passes; copy pass %.1f us (%.2f G texels/s, %.0f GB/s written)\n",
                    size_name(s).c_str(), fft->name().c_str(), median(totals[0]), plan.passes.size(), median(copies[0]),
                    texels / median(copies[0]) * 1e-3, texels * 16 / median(copies[0]) * 1e-3);
        std::printf("  %-48s %6s %12s %12s %12s %10s\n", "passes", "count", "us each", "MB written", "fetches/tx", "GB/s out");
        Totals totals_by_program = plan_totals(plan);
        (void)totals_by_program;
        // Consecutive passes of the same kind and program variant form a group: a folded pass
        // (LOAD_UNTANGLE_ROWS, LOAD_MULTIPLY, ...) stands on its own line.
        auto kind = [&](size_t k) {
            const Pass& p = plan.passes[k];
            std::string key = p.label.substr(0, p.label.find(", P ="));
            for (const Draw& d : p.draws)
                if (d.variant.fast) key += std::string(" ") + define_of(d.variant.fast->load) + " " + define_of(d.variant.fast->store);
            return key;
        };
        for (size_t k = 0; k < plan.passes.size();) {
            std::string group = kind(k);
            size_t j = k;
            double us = 0, bytes = 0, fetches = 0, written = 0;
            for (; j < plan.passes.size() && kind(j) == group; ++j) {
                us += median(per_pass[j]);
                for (const Draw& d : plan.passes[j].draws) {
                    Cost c = cost_of(d.variant);
                    bytes += static_cast<double>(d.region.area()) * c.writes * 16;
                    fetches += static_cast<double>(d.region.area()) * c.fetches;
                    written += static_cast<double>(d.region.area()) * c.writes;
                }
            }
            size_t count = j - k;
            std::string label = plan.passes[k].label.substr(0, plan.passes[k].label.find(", P ="));
            if (const auto& f = plan.passes[k].draws.front().variant.fast) {
                // The folded loads and the direct store, by their define's name without the prefix.
                if (f->load != FastVariant::Load::Planes) label += std::string(" ") + (define_of(f->load) + 5);
                if (f->store == FastVariant::Store::Image) label += std::string(" ") + (define_of(f->store) + 6);
            }
            std::printf("  %-48s %6zu %12.1f %12.1f %12.2f %10.1f\n", label.c_str(), count, us / count, bytes / count / 1048576.0,
                        fetches / written, bytes / us * 1e-3);
            k = j;
        }
    }
}

/// --race: every (size, plan) pair built once (programs compiled, setup seconds shown), then timed
/// in rounds that visit each pair in turn (one profiled filter, then a queue of filters timed by
/// two timestamps), so that the drift of a shared GPU between processes and over time falls on
/// all pairs alike. Medians over the rounds; "vs first" compares a size's plans with its first,
/// "vs 2^k" its time a pixel with its power of two's (nearest_power_of_two()) under the same
/// plan, or the first, where the race holds that size: issue 15's measure of the mixed sizes.
void print_race(ProgramCache& programs, const Options& o, const Kernel* kernel, const std::string& gpu) {
    if (o.fft.backend != Backend::Compute) throw UsageError("--race times compute plans: add --backend compute");
    struct Entry {
        Size s;
        RacePlan plan;
        std::unique_ptr<Fft2D> fft;
        std::unique_ptr<Filter> filter;
        double setup_s = 0;
        int queue = 0;
        std::vector<double> queued, single;
        std::vector<std::vector<double>> per;
        // batch=B, images=K: K sets of B images in and B out, the calls taking them in turn, each
        // set filtered by one call (Fft2D::filter_batch); else the transform's own input and
        // output.
        std::vector<Texture> inputs;
        std::vector<RenderTarget> outputs;
        size_t calls = 0;
        void apply(Profile* p = nullptr) {
            if (inputs.empty()) return filter->apply(fft->input(), fft->output(), p);
            const size_t b = static_cast<size_t>(plan.batch), first = calls++ % (inputs.size() / b) * b;
            std::vector<const Texture*> in;
            std::vector<RenderTarget*> out;
            for (size_t i = first; i < first + b; ++i) {
                in.push_back(&inputs[i]);
                out.push_back(&outputs[i]);
            }
            filter->apply(in, out, p);
        }
    };
    std::vector<Entry> entries;
    for (Size s : o.sizes) {
        std::vector<float> image = make_image(o, nullptr, s, 5);
        for (const RacePlan& plan : o.race) {
            Entry e;
            e.s = s;
            e.plan = plan;
            const auto start = std::chrono::steady_clock::now();
            FftOptions f = o.fft;
            for (const auto& [name, value] : plan.settings) apply_fft_option(f, name, value);
            e.fft = make_fft(programs, s.m, s.n, f);
            e.filter = std::make_unique<Filter>(*e.fft, timed_impulse(kernel, s, image));
            e.fft->input().upload(image.data());
            for (int b = 0; b < plan.batch * plan.images && plan.batch * plan.images > 1; ++b) {
                e.inputs.emplace_back(s.m, s.n, Storage::Float32);
                e.inputs.back().upload(image.data());
                e.outputs.emplace_back(s.m, s.n, Storage::Float32);
            }
            Profile p;
            e.apply(&p);
            e.setup_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            e.per.resize(p.pass_ms.size());
            e.queue = queue_length(o, p.total_ms, 20.0);
            if (o.verbosity)
                std::fprintf(stderr, "%s: %s %s: set up in %.1f s\n", kTool, size_name(s).c_str(), plan.name.c_str(),
                             e.setup_s);
            entries.push_back(std::move(e));
        }
    }
    for (Entry& e : entries) saturating_warm_up(o.warm_up, [&] { e.apply(); });
    const int rounds = o.repeat ? o.repeat : 15;
    for (int r = 0; r < rounds; ++r)
        for (Entry& e : entries) {
            Profile p;
            e.apply(&p);
            e.single.push_back(p.total_ms / e.plan.batch);
            for (size_t k = 0; k < p.pass_ms.size() && k < e.per.size(); ++k) e.per[k].push_back(p.pass_ms[k] * 1e3);
            e.queued.push_back(queue_ms([&] { e.apply(); }, e.queue, e.plan.batch));
        }
    std::printf("Plan race on %s: %d interleaved rounds, medians (min); queued: GPU time per filter of a queue\n", gpu.c_str(),
                rounds);
    if (kernel)
        std::printf("Kernel %s%s\n", kernel->name.c_str(),
                    entries.empty() ? "" : entries.front().filter->real_spectrum() ? " (point symmetric: a real spectrum)" : " (a complex spectrum)");
    std::printf("%-11s %-40s %8s %18s %8s %8s %8s %9s | dispatches, us\n", "size", "plan", "setup s", "queued ms (min)", "ns/px",
                "vs first", "vs 2^k", "single ms");
    auto per_pixel = [](const Entry& e) { return median(e.queued) / (static_cast<double>(e.s.m) * e.s.n) * 1e6; };
    double first = 0;
    for (size_t i = 0; i < entries.size(); ++i) {
        const Entry& e = entries[i];
        const double q = median(e.queued);
        if (i == 0 || entries[i - 1].s.m != e.s.m || entries[i - 1].s.n != e.s.n) first = q;
        const long long pm = nearest_power_of_two(e.s.m), pn = nearest_power_of_two(e.s.n);
        // The power of two's entry of the same plan where the race has one, else its first.
        auto at_power = [&](const Entry& p) { return p.s.m == pm && p.s.n == pn; };
        auto power = std::find_if(entries.begin(), entries.end(), [&](const Entry& p) { return at_power(p) && p.plan.name == e.plan.name; });
        if (power == entries.end()) power = std::find_if(entries.begin(), entries.end(), at_power);
        char against[16] = "-";
        if (power != entries.end()) std::snprintf(against, sizeof against, "%.3fx", per_pixel(e) / per_pixel(*power));
        std::printf("%-11s %-40s %8.1f %9.4f (%6.4f) %8.4f %7.3fx %8s %9.4f |", size_name(e.s).c_str(),
                    e.plan.name.c_str(), e.setup_s, q, *std::min_element(e.queued.begin(), e.queued.end()),
                    per_pixel(e), q / first, against, median(e.single));
        for (const std::vector<double>& us : e.per) std::printf(" %.1f", median(us));
        std::printf("\n");
    }
}

std::string cpu_name() {
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);)
        if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
    return "CPU";
}

int run(Options o) {
    if (!o.plot.empty()) {
        std::string dir = parent_directory(o.plot);
        if (!is_directory(dir)) throw UsageError("--plot " + o.plot + ": no directory " + dir);
    }
    std::unique_ptr<PngImage> png;
    if (!o.input.empty()) png = std::make_unique<PngImage>(read_png(o.input));
    if (o.sizes.empty()) {
        if (png) {
            o.sizes = {{static_cast<int>(next_fast_size(png->image.width)), static_cast<int>(next_fast_size(png->image.height))}};
        } else {
            o.sizes = {{128, 128}, {256, 256}, {512, 512}, {1024, 1024}, {2048, 2048}, {1024, 256}, {256, 1024}, {2048, 512}};
        }
    }
    std::unique_ptr<Kernel> kernel;
    if (!o.kernel.empty()) {
        try {
            kernel = std::make_unique<Kernel>(parse_kernel(o.kernel));
        } catch (const Error& e) {
            throw UsageError(e.what());
        }
    }
    HeadlessContext context(o.gl);
    require_fragment_chain_support();
    // Sizes past the GPU's texture limit are refused before any memory is taken for them.
    for (Size s : o.sizes) {
        try {
            check_texture_size(s.m, s.n);
        } catch (const std::invalid_argument& e) {
            throw UsageError(std::string("--sizes: ") + e.what());
        }
    }
    ProgramCache programs;
    std::string gpu = describe_gl(), cpu = cpu_name() + ", " + std::to_string(std::thread::hardware_concurrency()) + " threads";

    if (o.pass_costs) {
        print_pass_costs(programs, o, kernel.get(), gpu);
        return kExitOk;
    }
    if (!o.race.empty()) {
        print_race(programs, o, kernel.get(), gpu);
        return kExitOk;
    }
    std::vector<FftOptions> implementations = {o.fft};
    if (!o.fft_chosen) {  // every implementation side by side
        implementations.clear();
        for (const Implementation& i : gl_implementations(o.fft)) implementations.push_back(i.options);
    }
    std::vector<Row> rows;
    for (Size s : o.sizes) {
        if (o.verbosity) std::fprintf(stderr, "%s: %s ...\n", kTool, size_name(s).c_str());
        try {
            for (Row& r : measure(programs, o, png.get(), kernel.get(), s, implementations)) rows.push_back(r);
        } catch (const std::bad_alloc&) {
            throw Error(size_name(s) + ": not enough memory for its images and FFTW's references");
        }
    }
    // Implementation by implementation (in the order they ran: the paper's chain first), sizes in order.
    std::vector<std::string> order;
    for (const Row& r : rows)
        if (std::find(order.begin(), order.end(), r.implementation) == order.end()) order.push_back(r.implementation);
    auto rank = [&](const Row& r) { return std::find(order.begin(), order.end(), r.implementation) - order.begin(); };
    std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) { return rank(a) < rank(b); });
    if (o.format == "csv") print_csv(rows);
    else if (o.format == "json") print_json(rows, o, gpu, cpu);
    else print_table(rows, o, gpu, cpu);
    if (!o.plot.empty()) plot(rows, o, o.plot);

    // The tolerance: the core's bound, and FFTW-class accuracy relative to fftwf.
    int failures = 0;
    for (const Row& r : rows) {
        const struct {
            const char* what;
            double gpu, fftwf;
        } checks[] = {{"forward spectrum", r.gpu_spectrum.rel_rms, r.fftwf_spectrum.rel_rms},
                      {"filtered image", r.gpu_filter.rel_rms, r.fftwf_filter.rel_rms}};
        for (const auto& c : checks) {
            char line[256];
            if (!(c.gpu <= o.max_error)) {
                std::snprintf(line, sizeof line, "%s %s: %s relative RMS error %.3e exceeds %.1e", r.implementation.c_str(),
                              size_name(r.size).c_str(), c.what, c.gpu, o.max_error);
                report(kTool, line, kExitFailed);
                ++failures;
            } else if (o.max_ratio > 0 && !(c.gpu <= o.max_ratio * c.fftwf)) {
                std::snprintf(line, sizeof line, "%s %s: %s relative RMS error %.3e exceeds %.3g x fftwf's %.3e", r.implementation.c_str(),
                              size_name(r.size).c_str(), c.what, c.gpu, o.max_ratio, c.fftwf);
                report(kTool, line, kExitFailed);
                ++failures;
            }
        }
    }
    return failures ? kExitFailed : kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
    return run_tool(kTool, [&] { return run(parse_options(argc, argv)); });
}
