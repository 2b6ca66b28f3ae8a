// planerows: the forward DFT of whole rows of planar complex texels (RG32F, one channel's complex
// value a texel; test/bench/planerows.comp), several rows a workgroup, timed with GL timer queries:
// what the rows of a planar design would cost, beside fft_line.comp's RGBA rows (fftcompare
// --pass-costs's "rows forward" on the same GPU). An S x S RGBA filter's rows forward transform S/2
// row pairs of four complex channels: 2S planar lines of S points, the same bytes, so the default
// cases are S x 2S textures. Each case is first checked against FFTW (double) on its first rows:
// relative RMS error at most 1e-5.
// Usage:
//   planerows [PEAK_GB/S] [LENGTHxROWS:LINES ...]     default: 1024, 2048, 4096, 8192 (x 2 each) at
//                                                      every LINES that fits (1, 2, 4, 8)
#include "app/cli.h"
#include "base/parse.h"
#include "gl/buffer.h"
#include "gl/context.h"
#include "gl/handle.h"
#include "gl/program.h"
#include "probes.h"

#include <fftw3.h>

#include <cmath>
#include <complex>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

using namespace gpufft;

namespace {

struct Case {
    int length, rows, lines;
};

Case parse_case(const std::string& text) {
    const size_t x = text.find('x'), colon = text.find(':');
    if (x == std::string::npos || colon == std::string::npos || colon < x) throw UsageError("case '" + text + "': LENGTHxROWS:LINES expected");
    Case c{parse_int(text.substr(0, x), "length", 16, 16384), parse_int(text.substr(x + 1, colon - x - 1), "rows", 1, 32768),
           parse_int(text.substr(colon + 1), "lines", 1, 8)};
    if ((c.length & (c.length - 1)) || c.rows % c.lines) throw UsageError("case '" + text + "': a power-of-two length, lines dividing rows");
    return c;
}

// Radix 8 stages, the rest in one stage of 2 or 4 (last).
std::vector<int> stage_radices(int length) {
    std::vector<int> r;
    while (length % 8 == 0 && length > 4) {
        r.push_back(8);
        length /= 8;
    }
    if (length > 1) r.push_back(length);
    return r;
}

TextureHandle rg32f(int width, int height) {
    TextureHandle t = new_texture();
    glBindTexture(GL_TEXTURE_RECTANGLE, t.get());
    glTexStorage2D(GL_TEXTURE_RECTANGLE, 1, GL_RG32F, width, height);
    glTexParameteri(GL_TEXTURE_RECTANGLE, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_RECTANGLE, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    return t;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const double peak = argc > 1 ? parse_double(argv[1], "peak", 1, 1e5) : 4800;
        bench::add_probe_programs();
        HeadlessContext context;
        ProgramCache programs;
        GLint shared_bytes = 0;
        glGetIntegerv(GL_MAX_COMPUTE_SHARED_MEMORY_SIZE, &shared_bytes);
        std::vector<Case> cases;
        for (int i = 2; i < argc; ++i) cases.push_back(parse_case(argv[i]));
        if (cases.empty())
            for (int length : {1024, 2048, 4096, 8192})
                for (int lines : {1, 2, 4, 8}) cases.push_back({length, 2 * length, lines});
        std::printf("planerows on %s: forward DFTs of RG32F rows, median of timer queries, GB/s against %.0f\n", describe_gl().c_str(), peak);
        std::printf("%-18s %8s %9s %9s %8s %6s  %s\n", "case", "threads", "us", "MB", "GB/s", "peak", "error against FFTW");
        for (const Case& c : cases) {
            const std::string name = std::to_string(c.length) + "x" + std::to_string(c.rows) + ":" + std::to_string(c.lines);
            // Threads a row: one radix-8 butterfly each where the workgroup holds them, else more
            // elements a thread (at most 32); shared memory: both floats a round where they fit.
            const int threads = std::min(c.length / 8, 1024 / c.lines), elements = c.length / threads;
            const std::vector<int> r = stage_radices(c.length);
            int components = 0;
            for (int k : {2, 1})
                if (components == 0 && static_cast<long long>(c.lines) * c.length * k * 4 <= shared_bytes) components = k;
            bool fits = components > 0 && elements <= 32 && r.size() <= 6;
            for (int k : r) fits = fits && elements % k == 0;
            if (!fits) {
                std::printf("%-18s skipped: %d elements a thread, %d KB of shared memory a float\n", name.c_str(), elements,
                            c.lines * c.length * 4 / 1024);
                continue;
            }
            std::vector<std::string> defines = {"LENGTH " + std::to_string(c.length), "LINES " + std::to_string(c.lines),
                                                "THREADS " + std::to_string(threads), "GROUP_SIZE " + std::to_string(threads * c.lines),
                                                "COMPONENTS " + std::to_string(components), "STAGE_COUNT " + std::to_string(r.size())};
            for (size_t s = 0; s < 6; ++s) defines.push_back("RADIX" + std::to_string(s) + " " + std::to_string(s < r.size() ? r[s] : 2));
            const GlProgram& prog = programs.get({"", "planerows.comp", defines, false});

            const size_t count = static_cast<size_t>(c.length) * c.rows;
            std::vector<float> input(2 * count);
            std::mt19937 random(11);
            std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
            for (float& v : input) v = uniform(random);
            TextureHandle src = rg32f(c.length, c.rows), dst = rg32f(c.length, c.rows);
            glBindTexture(GL_TEXTURE_RECTANGLE, src.get());
            glTexSubImage2D(GL_TEXTURE_RECTANGLE, 0, 0, 0, c.length, c.rows, GL_RG, GL_FLOAT, input.data());
            const StorageBuffer twiddles = bench::unit_roots(c.length);
            prog.use();
            glActiveTexture(GL_TEXTURE0);
            glBindTexture(GL_TEXTURE_RECTANGLE, src.get());
            glBindImageTexture(0, dst.get(), 0, GL_FALSE, 0, GL_WRITE_ONLY, GL_RG32F);
            twiddles.bind(0);
            auto dispatch = [&] {
                glDispatchCompute(static_cast<GLuint>(c.rows / c.lines), 1, 1);
                glMemoryBarrier(GL_TEXTURE_FETCH_BARRIER_BIT | GL_SHADER_IMAGE_ACCESS_BARRIER_BIT);
            };
            dispatch();
            std::vector<float> out(2 * count);
            glBindTexture(GL_TEXTURE_RECTANGLE, dst.get());
            glGetTexImage(GL_TEXTURE_RECTANGLE, 0, GL_RG, GL_FLOAT, out.data());
            check_gl(name.c_str());
            // The first rows (at most 64) against FFTW in double.
            const int checked = std::min(c.rows, 64);
            std::vector<std::complex<double>> line(c.length), spectrum(c.length);
            fftw_plan plan = fftw_plan_dft_1d(c.length, reinterpret_cast<fftw_complex*>(line.data()),
                                              reinterpret_cast<fftw_complex*>(spectrum.data()), FFTW_FORWARD, FFTW_ESTIMATE);
            double error = 0, norm = 0;
            for (int y = 0; y < checked; ++y) {
                for (int n = 0; n < c.length; ++n) {
                    const size_t k = 2 * (static_cast<size_t>(y) * c.length + n);
                    line[n] = {input[k], input[k + 1]};
                }
                fftw_execute(plan);
                for (int n = 0; n < c.length; ++n) {
                    const size_t k = 2 * (static_cast<size_t>(y) * c.length + n);
                    error += std::norm(std::complex<double>(out[k], out[k + 1]) - spectrum[n]);
                    norm += std::norm(spectrum[n]);
                }
            }
            fftw_destroy_plan(plan);
            const double relative = std::sqrt(error / norm);
            const double t = bench::time_us(dispatch, 5);
            const double bytes = 2.0 * 8 * count;
            std::printf("%-18s %8d %9.1f %9.1f %8.0f %5.0f%%  %.2e%s\n", name.c_str(), threads * c.lines, t, bytes * 1e-6, bytes / t * 1e-3,
                        bytes / t * 1e-3 / peak * 100, relative, relative > 1e-5 ? "  WRONG" : "");
            if (relative > 1e-5) return kExitFailed;
        }
        return kExitOk;
    } catch (const std::exception& e) {
        return report("planerows", e.what(), kExitFailed);
    }
}
