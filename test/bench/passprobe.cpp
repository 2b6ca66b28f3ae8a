// passprobe: what bounds a pass on this GPU. Times synthetic full-screen passes (test/bench/probe.frag)
// with 1..32 texel fetches per fragment and 1..8 render targets per fragment, in RGBA32F and
// RGBA16F, and the same work as a compute shader (test/bench/probe.comp), with GL timer queries.
// Built by `make bench` (bin/bench/passprobe); the probes are embedded in this program alone.
#include "app/cli.h"
#include "gl/context.h"
#include "gl/program.h"
#include "gl/quad.h"
#include "gl/texture.h"
#include "gl/timer.h"
#include "probes.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

using namespace gpufft;

int main(int argc, char** argv) {
    try {
        int size = argc > 1 ? parse_int(argv[1], "size", 64, 16384) : 1024;
        bench::add_probe_programs();
        HeadlessContext context;
        require_fragment_chain_support();
        ProgramCache programs;
        GlInfo info = query_gl_info();
        std::printf("passprobe on %s, OpenGL %s: %dx%d fragments per pass, median of timer queries\n", info.renderer.c_str(),
                    info.version.c_str(), size, size);
        Texture src(size, size);
        std::vector<float> data(static_cast<size_t>(size) * size * 4, 0.5f);
        src.upload(data.data());
        QuadBuffer quads;
        Region all{0, 0, size, size};
        quads.add({all});
        const double fragments = static_cast<double>(size) * size;

        std::printf("\nfragment passes: microseconds (G fragments/s, GB/s written)\n%-8s %-8s", "format", "targets");
        const int fetches[] = {1, 2, 4, 8, 16, 32};
        for (int f : fetches) std::printf(" %21s", (std::to_string(f) + " fetch" + (f > 1 ? "es" : "")).c_str());
        std::printf("\n");
        for (Storage storage : {Storage::Float32, Storage::Float16}) {
            for (int targets : {1, 2, 4, 8}) {
                if (targets > info.max_draw_buffers) continue;
                std::vector<RenderTarget> outs;
                for (int t = 0; t < targets; ++t) outs.emplace_back(size, size, storage);
                GLuint fbo;
                glGenFramebuffers(1, &fbo);
                glBindFramebuffer(GL_FRAMEBUFFER, fbo);
                std::vector<GLenum> buffers;
                for (int t = 0; t < targets; ++t) {
                    glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0 + t, GL_TEXTURE_RECTANGLE, outs[t].texture().id(), 0);
                    buffers.push_back(GL_COLOR_ATTACHMENT0 + t);
                }
                glDrawBuffers(targets, buffers.data());
                std::printf("%-8s %-8d", storage == Storage::Float32 ? "RGBA32F" : "RGBA16F", targets);
                for (int f : fetches) {
                    const GlProgram& p = programs.get({"quad.vert", "probe.frag", {"FETCHES " + std::to_string(f), "TARGETS " + std::to_string(targets)}, true});
                    prepare_pass_state();
                    p.use();
                    p.set(Uniform::Size, float(size), float(size));
                    p.set(Uniform::TargetSize, float(size), float(size));
                    p.set(Uniform::Stride, float(size / (2 * f) + 1));
                    glViewport(0, 0, size, size);
                    glActiveTexture(GL_TEXTURE0);
                    glBindTexture(GL_TEXTURE_RECTANGLE, src.id());
                    quads.bind();
                    double us = bench::time_us([&] { quads.draw(all); });
                    double bytes = fragments * targets * (storage == Storage::Float32 ? 16 : 8);
                    char cell[64];
                    std::snprintf(cell, sizeof cell, "%7.1f (%4.2f, %5.0f)", us, fragments / us * 1e-3, bytes / us * 1e-3);
                    std::printf(" %21s", cell);
                }
                std::printf("\n");
                glBindFramebuffer(GL_FRAMEBUFFER, 0);
                glDeleteFramebuffers(1, &fbo);
            }
        }
        check_gl("fragment probes");

        if (info.compute) {
            std::printf("\ncompute passes (16x16 groups, image store): microseconds (G invocations/s)\n%-17s", "");
            for (int f : fetches) std::printf(" %21s", (std::to_string(f) + " fetch" + (f > 1 ? "es" : "")).c_str());
            std::printf("\n%-17s", "RGBA32F");
            Texture dst(size, size);
            for (int f : fetches) {
                const GlProgram& p = programs.get({"", "probe.comp", {"FETCHES " + std::to_string(f)}, false});
                p.use();
                p.set(Uniform::Size, float(size), float(size));
                p.set(Uniform::Stride, float(size / (2 * f) + 1));
                glActiveTexture(GL_TEXTURE0);
                glBindTexture(GL_TEXTURE_RECTANGLE, src.id());
                glBindImageTexture(0, dst.id(), 0, GL_FALSE, 0, GL_WRITE_ONLY, GL_RGBA32F);
                double us = bench::time_us([&] {
                    glDispatchCompute(static_cast<GLuint>(size / 16), static_cast<GLuint>(size / 16), 1);
                    glMemoryBarrier(GL_TEXTURE_FETCH_BARRIER_BIT | GL_SHADER_IMAGE_ACCESS_BARRIER_BIT);
                });
                char cell[64];
                std::snprintf(cell, sizeof cell, "%7.1f (%5.2f)", us, fragments / us * 1e-3);
                std::printf(" %21s", cell);
            }
            std::printf("\n");
            check_gl("compute probes");
        }
        return kExitOk;
    } catch (const std::exception& e) {
        return report("passprobe", e.what(), kExitFailed);
    }
}
