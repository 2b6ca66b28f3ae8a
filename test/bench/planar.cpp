// planar: a planar design's dispatches (test/bench/planar.comp: lines of RG32F texels, one
// channel's complex value a texel, several lines a workgroup), timed with GL timer queries, to
// decide whether to build it: beside fft_line.comp's RGBA lines (fftcompare on the same GPU).
//   rows:LxR:G   the forward DFT of R rows of L points, G a workgroup. An S x S RGBA filter's rows
//                forward transform S/2 row pairs of four complex channels: 2S planar lines of S
//                points, the same bytes, so the default cases are S x 2S.
//   filter:S     a whole filter of the same bytes as an S x S RGBA one: four complex planes of
//                S/2 x S (the real channels' halves, as a real-to-complex transform packs them),
//                rows forward, columns forward-multiply-inverse, rows inverse; each dispatch at
//                every lines-a-workgroup that fits, then the fastest three queued back to back.
// Every case is first checked against FFTW in double (rows: the first 64; filters up to S = 1024:
// all four planes): relative RMS error at most 1e-5. It leaves out what the real-to-complex
// packing adds (the untangle and tangle, pair 0), so it guides; it does not measure the design.
// Usage:
//   planar [PEAK_GB/S] [CASE ...]     default: rows of 1024-8192 (x 2 each), filters of 1024-8192
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
#include <string>
#include <vector>

using namespace gpufft;

namespace {

using cd = std::complex<double>;

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

TextureHandle rg32f(int width, int height, const float* values = nullptr) { return bench::narrow_texture(width, height, 2, values); }

/// One dispatch of planar.comp: `count` lines of `length` points, `lines` a workgroup.
struct Pass {
    int axis = 0, mode = 0, length = 0, count = 0, lines = 1, width = 0;
    bool grey = false;
    double scale = 1;
    const GlProgram* program = nullptr;
    int threads = 0;

    /// Builds the program; false where the lines do not fit a workgroup (threads, registers,
    /// shared memory).
    bool build(ProgramCache& programs, GLint shared_bytes) {
        threads = std::min(length / 8, 1024 / lines);
        const int elements = length / std::max(threads, 1);
        const std::vector<int> r = stage_radices(length);
        int components = 0;
        for (int k : {2, 1})
            if (components == 0 && static_cast<long long>(lines) * length * k * 4 <= shared_bytes) components = k;
        bool fits = threads > 0 && components > 0 && elements <= 32 && r.size() <= 6 && count % lines == 0;
        for (int k : r) fits = fits && elements % k == 0;
        if (!fits) return false;
        char scale_text[64];
        std::snprintf(scale_text, sizeof scale_text, "SCALE %.17g", scale);
        std::vector<std::string> defines = {"AXIS " + std::to_string(axis), "MODE " + std::to_string(mode), "LENGTH " + std::to_string(length),
                                            "WIDTH " + std::to_string(width), "LINES " + std::to_string(lines),
                                            "THREADS " + std::to_string(threads), "GROUP_SIZE " + std::to_string(threads * lines),
                                            "COMPONENTS " + std::to_string(components), "STAGE_COUNT " + std::to_string(r.size()),
                                            "GREY_KERNEL " + std::to_string(grey ? 1 : 0), scale_text};
        for (size_t s = 0; s < 6; ++s) defines.push_back("RADIX" + std::to_string(s) + " " + std::to_string(s < r.size() ? r[s] : 2));
        program = &programs.get({"", "planar.comp", defines, false});
        return true;
    }

    void dispatch(GLuint src, GLuint dst, GLuint kernel = 0) const {
        program->use();
        glActiveTexture(GL_TEXTURE1);
        glBindTexture(GL_TEXTURE_RECTANGLE, kernel);
        glActiveTexture(GL_TEXTURE0);
        glBindTexture(GL_TEXTURE_RECTANGLE, src);
        glBindImageTexture(0, dst, 0, GL_FALSE, 0, GL_WRITE_ONLY, GL_RG32F);
        glDispatchCompute(static_cast<GLuint>(count / lines), 1, 1);
        glMemoryBarrier(GL_TEXTURE_FETCH_BARRIER_BIT | GL_SHADER_IMAGE_ACCESS_BARRIER_BIT);
    }

    std::string name() const {
        static const char* const kinds[] = {"forward", "filter", "inverse"};
        return std::string(axis ? "columns " : "rows ") + kinds[mode] + " " + std::to_string(length) + ":" + std::to_string(lines);
    }
};

double relative_rms(const std::vector<float>& out, const std::vector<cd>& reference) {
    double error = 0, norm = 0;
    for (size_t k = 0; k < reference.size(); ++k) {
        error += std::norm(cd(out[2 * k], out[2 * k + 1]) - reference[k]);
        norm += std::norm(reference[k]);
    }
    return std::sqrt(error / norm);
}

int run_rows(ProgramCache& programs, GLint shared_bytes, double peak, int length, int rows, int lines, const StorageBuffer& twiddles) {
    const std::string name = "rows:" + std::to_string(length) + "x" + std::to_string(rows) + ":" + std::to_string(lines);
    Pass pass;
    pass.length = length;
    pass.count = rows;
    pass.lines = lines;
    pass.width = length;
    if (!pass.build(programs, shared_bytes)) {
        std::printf("%-22s skipped: does not fit a workgroup\n", name.c_str());
        return kExitOk;
    }
    const std::vector<float> input = bench::random_values(2 * static_cast<size_t>(length) * rows, 11);
    TextureHandle src = rg32f(length, rows, input.data()), dst = rg32f(length, rows);
    twiddles.bind(0);
    auto dispatch = [&] { pass.dispatch(src.get(), dst.get()); };
    dispatch();
    const std::vector<float> out = bench::download_narrow(dst.get(), length, rows, 2);
    check_gl(name.c_str());
    const int checked = std::min(rows, 64);
    std::vector<cd> line(length), reference;
    std::vector<cd> spectrum(length);
    fftw_plan plan = fftw_plan_dft_1d(length, reinterpret_cast<fftw_complex*>(line.data()), reinterpret_cast<fftw_complex*>(spectrum.data()),
                                      FFTW_FORWARD, FFTW_ESTIMATE);
    for (int y = 0; y < checked; ++y) {
        for (int n = 0; n < length; ++n) line[n] = {input[2 * (static_cast<size_t>(y) * length + n)], input[2 * (static_cast<size_t>(y) * length + n) + 1]};
        fftw_execute(plan);
        reference.insert(reference.end(), spectrum.begin(), spectrum.end());
    }
    fftw_destroy_plan(plan);
    const double error = relative_rms(out, reference);
    const double t = bench::time_us(dispatch, 5);
    const double bytes = 2.0 * 8 * length * static_cast<double>(rows);
    std::printf("%-22s %8d %9.1f %9.1f %8.0f %5.0f%%  %.2e%s\n", name.c_str(), pass.threads * lines, t, bytes * 1e-6, bytes / t * 1e-3,
                bytes / t * 1e-3 / peak * 100, error, error > 1e-5 ? "  WRONG" : "");
    return error > 1e-5 ? kExitFailed : kExitOk;
}

int run_filter(ProgramCache& programs, GLint shared_bytes, double peak, int size) {
    // Four planes of W x H complex texels stacked: W x 4H.
    const int w = size / 2, h = size, planes = 4;
    const size_t texels = static_cast<size_t>(w) * h * planes;
    const std::vector<float> image = bench::random_values(2 * texels, 5), kernel = bench::random_values(2 * texels, 6);
    TextureHandle src = rg32f(w, planes * h, image.data()), spectrum = rg32f(w, planes * h, kernel.data());
    TextureHandle t1 = rg32f(w, planes * h), t2 = rg32f(w, planes * h), out = rg32f(w, planes * h);
    const StorageBuffer row_twiddles = bench::unit_roots(w), column_twiddles = bench::unit_roots(h);
    // Each dispatch at every lines-a-workgroup that fits: the fastest is kept.
    struct Step {
        Pass pass;
        double us = 0;
    };
    auto best = [&](Pass base, GLuint from, GLuint to, GLuint with, const StorageBuffer& twiddles) {
        Step kept;
        for (int lines : {1, 2, 4, 8}) {
            Pass p = base;
            p.lines = lines;
            if (!p.build(programs, shared_bytes)) continue;
            twiddles.bind(0);
            const double t = bench::time_us([&] { p.dispatch(from, to, with); }, 5);
            std::printf("  %-28s %9.1f us\n", p.name().c_str(), t);
            if (kept.pass.program == nullptr || t < kept.us) kept = {p, t};
        }
        if (kept.pass.program == nullptr) throw GlError("filter:" + std::to_string(size) + ": " + base.name() + " fits no workgroup");
        return kept;
    };
    Pass rows;
    rows.length = w;
    rows.count = planes * h;
    rows.width = w;
    Pass columns = rows;
    columns.axis = 1;
    columns.mode = 1;
    columns.length = h;
    columns.count = planes * w;
    columns.scale = 1.0 / (static_cast<double>(w) * h);
    Pass inverse = rows;
    inverse.mode = 2;
    std::printf("filter:%d (four %dx%d complex planes)\n", size, w, h);
    const Step a = best(rows, src.get(), t1.get(), 0, row_twiddles);
    const Step b = best(columns, t1.get(), t2.get(), spectrum.get(), column_twiddles);
    const Step c = best(inverse, t2.get(), out.get(), 0, row_twiddles);
    auto filter = [&] {
        row_twiddles.bind(0);
        a.pass.dispatch(src.get(), t1.get());
        column_twiddles.bind(0);
        b.pass.dispatch(t1.get(), t2.get(), spectrum.get());
        row_twiddles.bind(0);
        c.pass.dispatch(t2.get(), out.get());
    };
    filter();
    std::string check = "not checked (S > 1024)";
    bool wrong = false;
    if (size <= 1024) {
        const std::vector<float> result = bench::download_narrow(out.get(), w, planes * h, 2);
        check_gl("planar filter");
        std::vector<cd> plane(static_cast<size_t>(w) * h), reference;
        fftw_plan forward = fftw_plan_dft_2d(h, w, reinterpret_cast<fftw_complex*>(plane.data()), reinterpret_cast<fftw_complex*>(plane.data()),
                                             FFTW_FORWARD, FFTW_ESTIMATE);
        fftw_plan backward = fftw_plan_dft_2d(h, w, reinterpret_cast<fftw_complex*>(plane.data()), reinterpret_cast<fftw_complex*>(plane.data()),
                                              FFTW_BACKWARD, FFTW_ESTIMATE);
        for (int p = 0; p < planes; ++p) {
            const size_t base = static_cast<size_t>(p) * w * h;
            for (size_t k = 0; k < plane.size(); ++k) plane[k] = {image[2 * (base + k)], image[2 * (base + k) + 1]};
            fftw_execute(forward);
            for (size_t k = 0; k < plane.size(); ++k) plane[k] *= cd(kernel[2 * (base + k)], kernel[2 * (base + k) + 1]) / (static_cast<double>(w) * h);
            fftw_execute(backward);
            reference.insert(reference.end(), plane.begin(), plane.end());
        }
        fftw_destroy_plan(forward);
        fftw_destroy_plan(backward);
        const double error = relative_rms(result, reference);
        char text[64];
        std::snprintf(text, sizeof text, "%.2e%s", error, error > 1e-5 ? "  WRONG" : "");
        check = text;
        wrong = error > 1e-5;
    }
    const double queued = bench::time_us(filter, 20);
    // Bytes as ComputeFft::bytes_moved counts an RGBA filter's: each texel read and written once a
    // dispatch, the kernel's spectrum once.
    const double bytes = 8.0 * texels * 7;
    std::printf("filter:%-15d %9.1f us queued (dispatches alone %.1f + %.1f + %.1f), %.0f GB/s, %.0f%% of peak; against FFTW %s\n", size, queued, a.us,
                b.us, c.us, bytes / queued * 1e-3, bytes / queued * 1e-3 / peak * 100, check.c_str());
    return wrong ? kExitFailed : kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const double peak = argc > 1 ? parse_double(argv[1], "peak", 1, 1e5) : 4800;
        std::vector<std::string> cases(argv + std::min(argc, 2), argv + argc);
        if (cases.empty()) {
            for (int length : {1024, 2048, 4096, 8192})
                for (int lines : {1, 2, 4, 8}) cases.push_back("rows:" + std::to_string(length) + "x" + std::to_string(2 * length) + ":" + std::to_string(lines));
            for (int size : {1024, 2048, 4096, 8192}) cases.push_back("filter:" + std::to_string(size));
        }
        bench::add_probe_programs();
        HeadlessContext context;
        ProgramCache programs;
        GLint shared_bytes = 0;
        glGetIntegerv(GL_MAX_COMPUTE_SHARED_MEMORY_SIZE, &shared_bytes);
        std::printf("planar on %s: RG32F lines, median of timer queries, GB/s against %.0f\n", describe_gl().c_str(), peak);
        std::printf("%-22s %8s %9s %9s %8s %6s  %s\n", "case", "threads", "us", "MB", "GB/s", "peak", "error against FFTW");
        int rc = kExitOk;
        for (const std::string& text : cases) {
            const size_t colon = text.find(':');
            const std::string kind = text.substr(0, colon), rest = colon == std::string::npos ? "" : text.substr(colon + 1);
            if (kind == "filter") {
                const int size = parse_int(rest, "filter size", 16, 16384);
                if (size & (size - 1)) throw UsageError("case '" + text + "': a power-of-two size");
                rc = std::max(rc, run_filter(programs, shared_bytes, peak, size));
            } else if (kind == "rows") {
                const size_t x = rest.find('x'), second = rest.find(':');
                if (x == std::string::npos || second == std::string::npos || second < x) throw UsageError("case '" + text + "': rows:LxR:G expected");
                const int length = parse_int(rest.substr(0, x), "length", 16, 16384), rows = parse_int(rest.substr(x + 1, second - x - 1), "rows", 1, 32768),
                          lines = parse_int(rest.substr(second + 1), "lines", 1, 8);
                if (length & (length - 1)) throw UsageError("case '" + text + "': a power-of-two length");
                rc = std::max(rc, run_rows(programs, shared_bytes, peak, length, rows, lines, bench::unit_roots(length)));
            } else {
                throw UsageError("case '" + text + "': rows:LxR:G or filter:S");
            }
        }
        return rc;
    } catch (const std::exception& e) {
        return report("planar", e.what(), kExitFailed);
    }
}
