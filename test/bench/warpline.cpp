// warpline: a 1024^2 column filter with each channel's line in one warp (test/bench/warpline.comp),
// timed with GL timer queries beside nothing else: what that decomposition costs against the
// column filter of fft_line.comp (fftcompare --pass-costs's "columns filter" on the same GPU).
// First it checks the result: a kernel spectrum of a linear phase must shift every column pair by
// five rows, to 1e-5.
// Usage:
//   warpline [PEAK_GB/S]
#include "app/cli.h"
#include "base/parse.h"
#include "gl/buffer.h"
#include "gl/context.h"
#include "gl/program.h"
#include "gl/texture.h"
#include "probes.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

using namespace gpufft;

int main(int argc, char** argv) {
    try {
        const int size = 1024, shift = 5;
        const double peak = argc > 1 ? parse_double(argv[1], "peak", 1, 1e5) : 4800;
        bench::add_probe_programs();
        HeadlessContext context;
        ProgramCache programs;
        std::printf("warpline on %s: %dx%d RGBA32F column filter (pairs 1 .. M/2 - 1), median of timer queries\n", describe_gl().c_str(),
                    size, size);
        const size_t count = static_cast<size_t>(size) * size * 4;
        const std::vector<float> image = bench::random_values(count, 7);
        std::vector<float> kernel(count, 0.0f);
        // K(v) = exp(-2 pi i v shift / N): column p its real part, column M - p its imaginary part.
        for (int y = 0; y < size; ++y) {
            const double a = 2 * M_PI * static_cast<double>(y) * shift / size;
            for (int x = 1; x < size / 2; ++x)
                for (int ch = 0; ch < 4; ++ch) {
                    kernel[(static_cast<size_t>(y) * size + x) * 4 + ch] = static_cast<float>(std::cos(a));
                    kernel[(static_cast<size_t>(y) * size + size - x) * 4 + ch] = static_cast<float>(-std::sin(a));
                }
        }
        Texture src(size, size), spectrum(size, size);
        src.upload(image.data());
        spectrum.upload(kernel.data());
        RenderTarget dst(size, size);
        const StorageBuffer twiddles = bench::unit_roots(size);
        const bool subgroups = GLEW_KHR_shader_subgroup;
        const int pairs = size / 2 - 1;
        // Bytes as the column filter counts them: two texels read and two written an element, and
        // two of the kernel's spectrum.
        const double bytes = 2.0 * pairs * size * (16 + 16 + 16);
        std::printf("%-28s %9s %8s %6s  %s\n", "variant", "us", "GB/s", "peak", "max error");
        for (int warp_sync : {0, 1})
            for (int load_shared : {0, 1}) {
                const std::string name = std::string(warp_sync ? "warp sync" : "workgroup barriers") + (load_shared ? ", shared load" : ", direct load");
                if (warp_sync && !subgroups) {
                    std::printf("%-28s skipped: no GL_KHR_shader_subgroup\n", name.c_str());
                    continue;
                }
                const GlProgram& prog = programs.get({"", "warpline.comp",
                                                      {"WIDTH " + std::to_string(size), "WARP_SYNC " + std::to_string(warp_sync),
                                                       "LOAD_SHARED " + std::to_string(load_shared)},
                                                      false});
                prog.use();
                glActiveTexture(GL_TEXTURE0);
                glBindTexture(GL_TEXTURE_RECTANGLE, src.id());
                glActiveTexture(GL_TEXTURE1);
                glBindTexture(GL_TEXTURE_RECTANGLE, spectrum.id());
                glActiveTexture(GL_TEXTURE0);
                glBindImageTexture(0, dst.texture().id(), 0, GL_FALSE, 0, GL_WRITE_ONLY, GL_RGBA32F);
                twiddles.bind(0);
                auto dispatch = [&] {
                    glDispatchCompute(static_cast<GLuint>(pairs), 1, 1);
                    glMemoryBarrier(GL_TEXTURE_FETCH_BARRIER_BIT | GL_SHADER_IMAGE_ACCESS_BARRIER_BIT);
                };
                dst.texture().clear();
                dispatch();
                const std::vector<float> out = dst.download();
                check_gl(name.c_str());
                double worst = 0;
                for (int y = 0; y < size; ++y)
                    for (int x = 1; x < size; ++x) {
                        if (x == size / 2) continue;
                        const int from = (y - shift + size) % size;
                        for (int ch = 0; ch < 4; ++ch)
                            worst = std::max(worst, static_cast<double>(std::fabs(out[(static_cast<size_t>(y) * size + x) * 4 + ch] -
                                                                                  image[(static_cast<size_t>(from) * size + x) * 4 + ch])));
                    }
                const double t = bench::time_us(dispatch, 20, 9);
                std::printf("%-28s %9.1f %8.0f %5.0f%%  %.2e%s\n", name.c_str(), t, bytes / t * 1e-3, bytes / t * 1e-3 / peak * 100, worst,
                            worst > 1e-5 ? "  WRONG" : "");
                if (worst > 1e-5) return kExitFailed;
            }
        return kExitOk;
    } catch (const std::exception& e) {
        return report("warpline", e.what(), kExitFailed);
    }
}
