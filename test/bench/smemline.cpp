// smemline: the rows' forward FFT with each row resident in shared memory (test/bench/smemline.comp),
// rows as channel pairs (R + iG, B + iA), timed with GL timer queries beside nothing else: what that
// decomposition costs against fft_line.comp's rows forward (fftcompare --pass-costs's "rows
// forward" on the same GPU and size). Each variant first checks its spectra against a direct DFT in
// double precision on a few rows (relative RMS error at most 1e-5).
// Usage:
//   smemline [PEAK_GB/S [WIDTHxHEIGHT:RADICES/THREADS[/ROWS[/PAD[/OPAQUE]]] ...]]
// e.g. smemline 4800 1920x1080:8x4x4x3x5/240
#include "app/cli.h"
#include "base/parse.h"
#include "gl/buffer.h"
#include "gl/context.h"
#include "gl/program.h"
#include "gl/texture.h"
#include "probes.h"

#include <cmath>
#include <complex>
#include <cstdio>
#include <string>
#include <vector>

using namespace gpufft;

namespace {

struct RowVariant {
    int width = 0, height = 0, threads = 0, rows = 1, pad = 0, opaque = 0;
    std::vector<int> radices;
    std::string text;
};

RowVariant parse_variant(const std::string& s) {
    RowVariant v;
    v.text = s;
    int used = 0;
    if (std::sscanf(s.c_str(), "%dx%d:%n", &v.width, &v.height, &used) != 2 || used == 0)
        throw UsageError("smemline: expected WIDTHxHEIGHT:RADICES/THREADS[/ROWS[/PAD[/OPAQUE]]], not \"" + s + "\"");
    const std::vector<std::string> parts = split_list(s.substr(used), '/');
    if (parts.size() < 2 || parts.size() > 5) throw UsageError("smemline: \"" + s + "\": RADICES/THREADS[/ROWS[/PAD[/OPAQUE]]]");
    int length = 1;
    for (const std::string& r : split_list(parts[0], 'x')) {
        v.radices.push_back(parse_int(r, "radix", 2, 8));
        if (v.radices.back() == 6 || v.radices.back() == 7) throw UsageError("smemline: radices 2, 3, 4, 5 and 8 only");
        length *= v.radices.back();
    }
    if (length != v.width) throw UsageError("smemline: \"" + s + "\": the radices' product is not the width");
    v.threads = parse_int(parts[1], "threads", 1, 1024);
    if (parts.size() > 2) v.rows = parse_int(parts[2], "rows", 1, 8);
    if (parts.size() > 3) v.pad = parse_int(parts[3], "pad", 0, 2);
    if (parts.size() > 4) v.opaque = parse_int(parts[4], "opaque", 0, 1);
    if (v.pad == 2 && v.width % 8) throw UsageError("smemline: \"" + s + "\": PAD 2 swizzles blocks of eight: the width must be a multiple of 8");
    if (v.height % v.rows || v.threads * v.rows > 1024) throw UsageError("smemline: \"" + s + "\": rows must divide the height, at most 1024 threads");
    return v;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const double peak = argc > 1 ? parse_double(argv[1], "peak", 1, 1e5) : 4800;
        std::vector<RowVariant> variants;
        for (int i = 2; i < argc; ++i) variants.push_back(parse_variant(argv[i]));
        if (variants.empty())
            for (const char* s : {"1920x1080:8x4x4x3x5/240/1/1", "1920x1080:8x4x4x3x5/240/1/2", "1920x1080:8x4x4x3x5/240/1/2/1",
                                  "1920x1080:4x4x4x2x3x5/480/1/2/1", "2048x1024:8x8x8x4/256/1/1", "2048x1024:8x8x8x4/256/1/2",
                                  "2048x1024:4x4x4x4x4x2/512/1/2/1", "1024x1024:8x8x4x4/128/1/2", "1024x1024:4x4x4x4x4/256/1/2/1"})
                variants.push_back(parse_variant(s));
        bench::add_probe_programs();
        HeadlessContext context;
        ProgramCache programs;
        std::printf("smemline on %s: rows' forward FFT, rows as channel pairs resident in shared memory, RGBA32F, median of timer queries\n",
                    describe_gl().c_str());
        std::printf("%-34s %9s %8s %6s  %s\n", "variant (size:radices/threads/rows/pad/opaque)", "us", "GB/s", "peak", "relative RMS error");
        for (const RowVariant& v : variants) {
            const int width = v.width, height = v.height;
            const size_t count = static_cast<size_t>(width) * height * 4;
            const std::vector<float> image = bench::random_values(count, 7);
            Texture src(width, height);
            src.upload(image.data());
            RenderTarget dst(width, height);
            const StorageBuffer twiddles = bench::unit_roots(width);
            std::string radices;
            for (int r : v.radices) radices += (radices.empty() ? "" : ",") + std::to_string(r);
            const GlProgram& prog = programs.get({"", "smemline.comp",
                                                  {"LENGTH " + std::to_string(width), "STAGES " + std::to_string(v.radices.size()),
                                                   "RADICES " + radices, "THREADS " + std::to_string(v.threads),
                                                   "ROWS " + std::to_string(v.rows), "PAD " + std::to_string(v.pad),
                                                   "OPAQUE " + std::to_string(v.opaque)},
                                                  false});
            prog.use();
            glActiveTexture(GL_TEXTURE0);
            glBindTexture(GL_TEXTURE_RECTANGLE, src.id());
            glBindImageTexture(0, dst.texture().id(), 0, GL_FALSE, 0, GL_WRITE_ONLY, GL_RGBA32F);
            twiddles.bind(0);
            auto dispatch = [&] {
                glDispatchCompute(static_cast<GLuint>(height / v.rows), 1, 1);
                glMemoryBarrier(GL_TEXTURE_FETCH_BARRIER_BIT | GL_SHADER_IMAGE_ACCESS_BARRIER_BIT);
            };
            dst.texture().clear();
            dispatch();
            const std::vector<float> out = dst.download();
            check_gl(v.text.c_str());
            // Rows 0, 1, the middle and the last against a direct DFT in double: each channel pair
            // (R + iG, B + iA) its own complex line.
            double err = 0, ref = 0;
            for (int y : {0, 1, height / 2, height - 1})
                for (int pair = 0; pair < 2; ++pair) {
                    auto at = [&](const std::vector<float>& a, int x, int re) {
                        return static_cast<double>(a[(static_cast<size_t>(y) * width + x) * 4 + 2 * pair + re]);
                    };
                    for (int k = 0; k < width; ++k) {
                        std::complex<double> sum = 0;
                        for (int n = 0; n < width; ++n)
                            sum += std::complex<double>(at(image, n, 0), at(image, n, 1)) *
                                   std::polar(1.0, -2 * M_PI * static_cast<double>((static_cast<long>(n) * k) % width) / width);
                        err += std::norm(std::complex<double>(at(out, k, 0), at(out, k, 1)) - sum);
                        ref += std::norm(sum);
                    }
                }
            const double rms = std::sqrt(err / ref);
            const double bytes = 2.0 * width * height * 16;
            const double t = bench::time_us(dispatch, 20, 9);
            std::printf("%-34s %9.1f %8.0f %5.0f%%  %.2e%s\n", v.text.c_str(), t, bytes / t * 1e-3, bytes / t * 1e-3 / peak * 100, rms,
                        rms > 1e-5 ? "  WRONG" : "");
            if (rms > 1e-5) return kExitFailed;
        }
        return kExitOk;
    } catch (const std::exception& e) {
        return report("smemline", e.what(), kExitFailed);
    }
}
