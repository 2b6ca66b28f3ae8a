// compiletime: what the first use of a grid costs, program by program. Each program a compute
// filter of that grid needs (Fft2D::filter_programs: the forward for the kernel's spectrum and the
// filter) is compiled and linked alone, one after another, and timed. Run it with every cache off
// for a cold compile (GPUFFT_PROGRAM_CACHE=off; NVIDIA's __GL_SHADER_DISK_CACHE=0), and with
// GPUFFT_PROGRAMS_DIR to time another version of the programs. Usage:
//   compiletime [WxH,...] [real|complex] [PLANS]     defaults: 1920x1080 real, the planner's
// (PLANS as fftcompare's --compute-plan)
#include "app/cli.h"
#include "base/clock.h"
#include "base/parse.h"
#include "fft/fft2d.h"
#include "gl/context.h"
#include "gl/program.h"

#include <cstdio>
#include <memory>
#include <sstream>
#include <string>

using namespace gpufft;

namespace {

/// The defines that tell one of a filter's programs from another, in one line.
std::string describe(const ProgramSpec& spec) {
    std::string out = spec.fragment;
    for (const std::string& d : spec.defines) {
        const std::string name = d.substr(0, d.find(' '));
        for (const char* shown : {"ROWS", "COLUMNS", "PAIR0", "FORWARD", "INVERSE", "FILTER", "FILTER_TAIL", "STEP_A", "STEP_B",
                                  "LENGTH", "THREADS", "LINES", "COMPONENTS", "KERNEL_REAL", "CHANNEL_PAIRS"})
            if (name == shown) out += " " + d;
    }
    return out;
}

int run(int argc, char** argv) {
    const std::string sizes = argc > 1 ? argv[1] : "1920x1080";
    const bool real = !(argc > 2 && std::string(argv[2]) == "complex");
    HeadlessContext context;
    std::stringstream list(sizes);
    for (std::string size; std::getline(list, size, ',');) {
        int w = 0, h = 0;
        parse_size(size, "WxH", w, h);
        FftOptions options;
        options.backend = Backend::Compute;
        if (argc > 3) options.compute_plan = argv[3];
        ProgramCache cache;
        auto start = Clock::now();
        std::unique_ptr<Fft2D> fft = make_fft(cache, w, h, options);
        const double made = seconds_since(start);
        double total = 0, longest = 0;
        const std::vector<ProgramSpec> specs = fft->filter_programs(real);
        for (const ProgramSpec& spec : specs) {
            start = Clock::now();
            GlProgram program(spec);
            const double s = seconds_since(start);
            total += s;
            longest = std::max(longest, s);
            std::printf("%s %s: %.2f s  %s\n", size.c_str(), real ? "real" : "complex", s, describe(spec).c_str());
            std::fflush(stdout);
        }
        std::printf("%s: %zu programs, %.2f s one after another (longest %.2f), transform made in %.2f s\n", size.c_str(),
                    specs.size(), total, longest, made);
    }
    return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
    return run_tool("compiletime", [&] { return run(argc, argv); });
}
