// stageprobe: where the time of one batch image goes on the GL thread. For one synthetic image of
// stored samples (RGB 8-bit by default) and a kernel, each stage of Convolver::submit is run alone
// and timed twice: the CPU time of its GL calls (the GL thread blocked in them), and the time until
// glFinish returns. Then alternative transfer routes are timed the same way, and finally the real
// submit/collect pipeline back to back. Usage:
//   stageprobe [WxH] [KERNEL] [BACKEND] [RUNS] [pipeline|all] [LOAD]     defaults: 2048x2048 gaussian:8 compute 5 all 0
// (pipeline: only the pipeline, as fftfilter's batch runs it, each way; LOAD: threads copying
// memory meanwhile)
#include "app/cli.h"
#include "fft/fft2d.h"
#include "fft/filter.h"
#include "gl/context.h"
#include "gl/state.h"
#include "gpufft/gpufft.h"
#include "image/convolve.h"
#include "image/gpu_samples.h"
#include "image/kernels.h"
#include "probes.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <random>
#include <string>
#include <vector>

using namespace gpufft;

namespace {

double now_ms() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// A placement of a mapped buffer to time: its name and its glBufferStorage flags.
struct Way {
    const char* name;
    GLbitfield flags;
};

/// Median of `runs`: the CPU time in `step` and the time until glFinish returns after it.
void time_step(const char* name, int runs, const std::function<void()>& step) {
    glFinish();
    std::vector<double> call, done;
    for (int r = 0; r < runs; ++r) {
        double t0 = now_ms();
        step();
        double t1 = now_ms();
        glFinish();
        double t2 = now_ms();
        call.push_back(t1 - t0);
        done.push_back(t2 - t0);
    }
    check_gl(name);
    std::printf("  %-52s calls %8.3f ms   finished %8.3f ms\n", name, median(call), median(done));
}

}  // namespace

int main(int argc, char** argv) {
    try {
        int width = 2048, height = 2048;
        if (argc > 1) parse_size(argv[1], "size", width, height);
        const std::string kernel_spec = argc > 2 ? argv[2] : "gaussian:8";
        FftOptions fft;
        fft.backend = argc > 3 ? parse_backend(argv[3]) : Backend::Compute;
        const int runs = argc > 4 ? parse_int(argv[4], "runs", 1, 1000) : 5;
        const bool pipeline_only = argc > 5 && std::string(argv[5]) == "pipeline";
        if (argc > 5 && !pipeline_only && std::string(argv[5]) != "all")
            throw UsageError(std::string("the fifth argument is 'pipeline' or 'all', not '") + argv[5] + "'");
        HeadlessContext context;
        std::printf("stageprobe: %s\n%dx%d RGB 8-bit, %s, %s backend, median of %d\n", describe_gl().c_str(), width, height,
                    kernel_spec.c_str(), backend_name(fft.backend), runs);
        ProgramCache programs;
        Kernel kernel = parse_kernel(kernel_spec);
        LengthModel lengths = fft_lengths(fft);
        lengths.tile_to = 0;  // the stages of one grid
        AxisTiling tx = tile_axis(width, kernel.weights.width, kernel.cx, Boundary::Reflect, 16384, lengths);
        AxisTiling ty = tile_axis(height, kernel.weights.height, kernel.cy, Boundary::Reflect, 16384, lengths);
        std::printf("grid %dx%d\n", tx.fft, ty.fft);

        Samples in;
        in.resize(width, height, 3, 8);
        std::mt19937 rng(1);
        for (auto& b : in.data) b = static_cast<unsigned char>(rng());
        SampleConversion c;
        c.in_channels = c.out_channels = 3;

        if (!pipeline_only) {  // each stage alone, then the transfer routes
            std::unique_ptr<Fft2D> f = make_fft(programs, tx.fft, ty.fft, fft);
            Filter filter(*f, impulse_response(kernel, tx.fft, ty.fft));
            Texture grid(tx.fft, ty.fft);
            SampleIo io(programs);
            Region out{0, 0, width, height};

            std::printf("\nstages of submit, each alone:\n");
            time_step("upload (storage buffer)", runs, [&] { io.upload(in); });
            time_step("unpack (samples -> float grid)", runs, [&] { io.unpack(c, Boundary::Reflect, -tx.lead, -ty.lead, grid); });
            time_step("filter", runs, [&] { filter.apply(grid, f->output()); });
            time_step("pack (float -> RGBA8UI)", runs, [&] { io.pack(c, f->output().texture(), tx.lead, ty.lead, out); });
            time_step("serialize + read back + collect", runs, [&] {
                io.read_back(c);
                io.collect();
            });

            std::printf("\ntransfer routes:\n");
            const size_t bytes = in.data.size();
            GLuint pbo, tex8, tex16, ssbo;
            glGenBuffers(1, &pbo);
            glGenBuffers(1, &ssbo);
            glGenTextures(1, &tex8);
            glGenTextures(1, &tex16);
            glBindTexture(GL_TEXTURE_RECTANGLE, tex8);
            glTexImage2D(GL_TEXTURE_RECTANGLE, 0, GL_RGBA8UI, width, height, 0, GL_RGBA_INTEGER, GL_UNSIGNED_BYTE, nullptr);
            glBindTexture(GL_TEXTURE_RECTANGLE, tex16);
            glTexImage2D(GL_TEXTURE_RECTANGLE, 0, GL_RGBA16UI, width, height, 0, GL_RGBA_INTEGER, GL_UNSIGNED_SHORT, nullptr);
            glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
            std::vector<unsigned char> rgba(static_cast<size_t>(width) * height * 4, 7);
            auto tex_upload = [&](GLuint tex, GLenum format, const void* data, size_t n, bool use_pbo) {
                glBindTexture(GL_TEXTURE_RECTANGLE, tex);
                if (use_pbo) {
                    glBindBuffer(GL_PIXEL_UNPACK_BUFFER, pbo);
                    glBufferData(GL_PIXEL_UNPACK_BUFFER, static_cast<GLsizeiptr>(n), data, GL_STREAM_DRAW);
                    data = nullptr;
                }
                glTexSubImage2D(GL_TEXTURE_RECTANGLE, 0, 0, 0, width, height, format, GL_UNSIGNED_BYTE, data);
                glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
            };
            time_step("PBO RGB8 -> RGBA16UI", runs, [&] { tex_upload(tex16, GL_RGB_INTEGER, in.data.data(), bytes, true); });
            time_step("PBO RGB8 -> RGBA8UI", runs, [&] { tex_upload(tex8, GL_RGB_INTEGER, in.data.data(), bytes, true); });
            time_step("PBO RGBA8 -> RGBA8UI", runs, [&] { tex_upload(tex8, GL_RGBA_INTEGER, rgba.data(), rgba.size(), true); });
            time_step("client RGB8 -> RGBA16UI", runs, [&] { tex_upload(tex16, GL_RGB_INTEGER, in.data.data(), bytes, false); });
            time_step("client RGBA8 -> RGBA8UI", runs, [&] { tex_upload(tex8, GL_RGBA_INTEGER, rgba.data(), rgba.size(), false); });
            time_step("SSBO glBufferData (orphan + copy)", runs, [&] {
                glBindBuffer(GL_SHADER_STORAGE_BUFFER, ssbo);
                glBufferData(GL_SHADER_STORAGE_BUFFER, static_cast<GLsizeiptr>(bytes), in.data.data(), GL_STREAM_DRAW);
            });
            time_step("SSBO glBufferSubData", runs, [&] {
                glBindBuffer(GL_SHADER_STORAGE_BUFFER, ssbo);
                glBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, static_cast<GLsizeiptr>(bytes), in.data.data());
            });
            if (GLEW_VERSION_4_4 || GLEW_ARB_buffer_storage) {
                GLuint persistent;
                glGenBuffers(1, &persistent);
                glBindBuffer(GL_COPY_WRITE_BUFFER, persistent);
                const GLbitfield flags = GL_MAP_WRITE_BIT | GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT;
                glBufferStorage(GL_COPY_WRITE_BUFFER, static_cast<GLsizeiptr>(bytes), nullptr, flags);
                void* p = glMapBufferRange(GL_COPY_WRITE_BUFFER, 0, static_cast<GLsizeiptr>(bytes), flags);
                time_step("persistent mapped buffer memcpy", runs, [&] { std::memcpy(p, in.data.data(), bytes); });
                glUnmapBuffer(GL_COPY_WRITE_BUFFER);
                glDeleteBuffers(1, &persistent);
            }
            std::vector<unsigned char> back(static_cast<size_t>(width) * height * 4);
            GLuint fbo;
            glGenFramebuffers(1, &fbo);
            glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo);
            glFramebufferTexture2D(GL_READ_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_RECTANGLE, tex8, 0);
            glPixelStorei(GL_PACK_ALIGNMENT, 1);
            auto read = [&](GLenum format, size_t n) {
                glBindBuffer(GL_PIXEL_PACK_BUFFER, pbo);
                glBufferData(GL_PIXEL_PACK_BUFFER, static_cast<GLsizeiptr>(n), nullptr, GL_STREAM_READ);
                glReadPixels(0, 0, width, height, format, GL_UNSIGNED_BYTE, nullptr);
                void* m = glMapBufferRange(GL_PIXEL_PACK_BUFFER, 0, static_cast<GLsizeiptr>(n), GL_MAP_READ_BIT);
                if (m) std::memcpy(back.data(), m, n);
                glUnmapBuffer(GL_PIXEL_PACK_BUFFER);
                glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
            };
            time_step("read RGBA8UI as RGB through a PBO (+ map)", runs, [&] { read(GL_RGB_INTEGER, bytes); });
            time_step("read RGBA8UI as RGBA through a PBO (+ map)", runs, [&] { read(GL_RGBA_INTEGER, rgba.size()); });
            time_step("glGetBufferSubData of an SSBO", runs, [&] {
                glBindBuffer(GL_SHADER_STORAGE_BUFFER, ssbo);
                glGetBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, static_cast<GLsizeiptr>(bytes), back.data());
            });
            time_step("a fresh vector of the samples' size (zeroed, its pages faulted)", runs, [&] {
                std::vector<unsigned char> fresh(bytes);
                back[0] = fresh[bytes / 2];
            });
            // Read back through a buffer the CPU maps persistently: the copy on the GPU, a fence,
            // then a memcpy out of the mapping (what a worker thread could do instead of the GL
            // thread's glGetBufferSubData), for each placement the flags may ask for.
            if (GLEW_VERSION_4_4 || GLEW_ARB_buffer_storage) {
                const Way ways[] = {{"mapped read buffer, client storage, coherent",
                                     GL_MAP_READ_BIT | GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT | GL_CLIENT_STORAGE_BIT},
                                    {"mapped read buffer, client storage", GL_MAP_READ_BIT | GL_MAP_PERSISTENT_BIT | GL_CLIENT_STORAGE_BIT},
                                    {"mapped read buffer, coherent", GL_MAP_READ_BIT | GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT}};
                for (const Way& way : ways) {
                    GLuint readback;
                    glGenBuffers(1, &readback);
                    glBindBuffer(GL_COPY_WRITE_BUFFER, readback);
                    glBufferStorage(GL_COPY_WRITE_BUFFER, static_cast<GLsizeiptr>(bytes), nullptr, way.flags);
                    const void* m = glMapBufferRange(GL_COPY_WRITE_BUFFER, 0, static_cast<GLsizeiptr>(bytes), way.flags & ~GL_CLIENT_STORAGE_BIT);
                    auto copy_on_gpu = [&] {
                        glBindBuffer(GL_COPY_READ_BUFFER, ssbo);
                        glBindBuffer(GL_COPY_WRITE_BUFFER, readback);
                        glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, 0, static_cast<GLsizeiptr>(bytes));
                        if (!(way.flags & GL_MAP_COHERENT_BIT)) glMemoryBarrier(GL_CLIENT_MAPPED_BUFFER_BARRIER_BIT);
                        GLsync done = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
                        glClientWaitSync(done, GL_SYNC_FLUSH_COMMANDS_BIT, GLuint64(10) * 1000000000);
                        glDeleteSync(done);
                    };
                    if (m) {
                        time_step((std::string(way.name) + ": the copy and its fence").c_str(), runs, copy_on_gpu);
                        time_step((std::string(way.name) + ": memcpy out").c_str(), runs, [&] { std::memcpy(back.data(), m, bytes); });
                        copy_on_gpu();
                        std::vector<unsigned char> direct(bytes);
                        glBindBuffer(GL_SHADER_STORAGE_BUFFER, ssbo);
                        glGetBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, static_cast<GLsizeiptr>(bytes), direct.data());
                        std::printf("  (%s: %s)\n", way.name, std::memcmp(direct.data(), m, bytes) == 0 ? "the same bytes" : "OTHER BYTES");
                    } else {
                        std::printf("  %s: not mapped\n", way.name);
                    }
                    glBindBuffer(GL_COPY_WRITE_BUFFER, readback);
                    if (m) glUnmapBuffer(GL_COPY_WRITE_BUFFER);
                    glDeleteBuffers(1, &readback);
                }
            }
            // The upload the other way round: samples a worker writes (or decodes) straight into a
            // buffer in the host's memory that the GPU copies from, so that the GL thread only
            // queues the copy. Each placement: writing into it, a decoder's in-place pass over it
            // (each row's bytes plus the row above's: PNG's Up filter undone) beside the same pass
            // in a vector, and the GPU's copy out of it.
            if (GLEW_VERSION_4_4 || GLEW_ARB_buffer_storage) {
                const GLbitfield rw = GL_MAP_READ_BIT | GL_MAP_WRITE_BIT | GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT;
                const Way ways[] = {{"upload area, client storage, read+write", rw | GL_CLIENT_STORAGE_BIT},
                                    {"upload area, read+write", rw},
                                    {"upload area, client storage, write only",
                                     GL_MAP_WRITE_BIT | GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT | GL_CLIENT_STORAGE_BIT}};
                const size_t row = static_cast<size_t>(width) * 3;
                auto undo_up = [&](unsigned char* p) {
                    for (size_t y = 1; y < static_cast<size_t>(height); ++y)
                        for (size_t i = 0; i < row; ++i) p[y * row + i] = static_cast<unsigned char>(p[y * row + i] + p[(y - 1) * row + i]);
                };
                std::vector<unsigned char> plain(in.data);
                time_step("(a vector: the decoder's in-place pass)", runs, [&] { undo_up(plain.data()); });
                for (const Way& way : ways) {
                    GLuint area;
                    glGenBuffers(1, &area);
                    glBindBuffer(GL_COPY_READ_BUFFER, area);
                    glBufferStorage(GL_COPY_READ_BUFFER, static_cast<GLsizeiptr>(bytes), nullptr, way.flags);
                    auto* m = static_cast<unsigned char*>(
                        glMapBufferRange(GL_COPY_READ_BUFFER, 0, static_cast<GLsizeiptr>(bytes), way.flags & ~GL_CLIENT_STORAGE_BIT));
                    if (!m) {
                        std::printf("  %s: not mapped\n", way.name);
                    } else {
                        time_step((std::string(way.name) + ": memcpy in").c_str(), runs, [&] { std::memcpy(m, in.data.data(), bytes); });
                        time_step((std::string(way.name) + ": the decoder's in-place pass").c_str(), runs, [&] { undo_up(m); });
                        std::memcpy(m, in.data.data(), bytes);
                        time_step((std::string(way.name) + ": copy to the SSBO").c_str(), runs, [&] {
                            glBindBuffer(GL_COPY_READ_BUFFER, area);
                            glBindBuffer(GL_COPY_WRITE_BUFFER, ssbo);
                            glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, 0, static_cast<GLsizeiptr>(bytes));
                        });
                        std::vector<unsigned char> direct(bytes);
                        glBindBuffer(GL_SHADER_STORAGE_BUFFER, ssbo);
                        glGetBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, static_cast<GLsizeiptr>(bytes), direct.data());
                        std::printf("  (%s: %s)\n", way.name, direct == in.data ? "the same bytes" : "OTHER BYTES");
                        glBindBuffer(GL_COPY_READ_BUFFER, area);
                        glUnmapBuffer(GL_COPY_READ_BUFFER);
                    }
                    glDeleteBuffers(1, &area);
                }
            }
            glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
            glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
        }

        // The pipeline as fftfilter's batch runs it: three in flight, with the measured model's
        // tiles and with one grid, the samples from the GL thread's memory or through host areas
        // (both ways), the outputs deflated on the GPU or not; each once a round, two rounds.
        // With LOAD threads (the sixth argument), that many threads copy memory meanwhile, as a
        // batch's decoders load the host.
        const int load = argc > 6 ? parse_int(argv[6], "load threads", 0, 1024) : 0;
        const bench::MemoryLoad loading(load);
        std::printf("\nthe pipeline: submit/collect back to back, three in flight (Convolver), %d images a round, %d loading threads\n",
                    runs, load);
        HostAreas areas;
        const size_t in_bytes = in.data.size(), out_bytes = in_bytes;
        for (int i = 0; i < 6; ++i) areas.add(in_bytes, 6, size_t(1) << 34);
        for (int round = 0; round < 16; ++round) {
            ConvolveOptions options;
            options.fft = fft;
            options.measured_tiles = round % 2 == 1;
            const bool through_areas = (round / 2) % 2 == 1, deflate = (round / 4) % 2 == 1;
            SampleConversion cd = c;
            cd.deflate = deflate;
            Convolver convolver(programs, kernel, options);
            const auto [px, py] = convolver.tiling(width, height);
            std::deque<std::pair<HostArea, HostArea>> held;
            auto submit = [&] {
                HostArea from, to;
                if (through_areas) {
                    from = areas.take(in_bytes);
                    to = areas.take(out_bytes);
                    std::memcpy(from.data(), in.data.data(), in_bytes);  // (a worker's copy: not timed)
                }
                const double a = now_ms();
                convolver.submit(in, cd, {}, from ? &from : nullptr, to ? &to : nullptr);
                held.emplace_back(std::move(from), std::move(to));
                return now_ms() - a;
            };
            std::vector<unsigned char> storage;
            DeflatedRows deflated;
            auto collect = [&](double* g) {
                const double a = now_ms();
                Samples out = convolver.collect(g, std::move(storage), &deflated);
                const double t = now_ms() - a;
                storage = std::move(out.data);
                held.pop_front();
                return t;
            };
            submit();
            collect(nullptr);
            glFinish();
            std::vector<double> submit_ms, collect_ms, gpu_ms;
            const double t0 = now_ms();
            for (int r = 0; r < runs + 3; ++r) {
                if (r < runs) submit_ms.push_back(submit());
                if (convolver.pending() == 3 || (r >= runs && convolver.pending() > 0)) {
                    double g = 0;
                    collect_ms.push_back(collect(&g));
                    gpu_ms.push_back(g);
                }
            }
            const double total = now_ms() - t0;
            std::printf("  %-8s %-13s %-9s %2d tiles of %5dx%-5d submit %7.3f ms, collect %7.3f ms, GPU (upload to read-back) %7.3f ms "
                        "(medians); %6.1f images/s, %7.1f MP/s\n",
                        options.measured_tiles ? "tiles" : "one grid", through_areas ? "host areas" : "GL thread's", deflate ? "deflated" : "samples",
                        px.tiles(width) * py.tiles(height), px.fft, py.fft, median(submit_ms), median(collect_ms), median(gpu_ms),
                        runs * 1000.0 / total, runs * double(width) * height / total / 1000.0);
        }
        // What the public API adds on the GL thread: each call saves and restores the caller's
        // GL state (SavedGlState), then the same pipeline through ImageFilter.
        std::printf("\nthe public API:\n");
        time_step("SavedGlState: saved and restored", runs, [] { SavedGlState saved; });
        for (const bool deflate : {false, true}) {
            ImageFilter filter(kernel, fft, Boundary::Reflect);
            SampleConversion cd = c;
            cd.deflate = deflate;
            std::deque<std::pair<HostArea, HostArea>> held;
            std::vector<unsigned char> storage;
            DeflatedRows deflated;
            std::vector<double> submit_ms, collect_ms;
            auto one = [&](bool timed) {
                HostArea from = areas.take(in_bytes), to = areas.take(out_bytes);
                std::memcpy(from.data(), in.data.data(), in_bytes);
                double a = now_ms();
                filter.submit(in, &from, &to, cd);
                if (timed) submit_ms.push_back(now_ms() - a);
                held.emplace_back(std::move(from), std::move(to));
                if (filter.pending() == 3) {
                    a = now_ms();
                    Samples out = filter.collect(nullptr, std::move(storage), deflated);
                    if (timed) collect_ms.push_back(now_ms() - a);
                    storage = std::move(out.data);
                    held.pop_front();
                }
            };
            one(false);
            const double t0 = now_ms();
            for (int r = 0; r < runs; ++r) one(true);
            while (filter.pending() > 0) {
                filter.collect(nullptr, std::move(storage), deflated);
                held.pop_front();
            }
            const double total = now_ms() - t0;
            std::printf("  ImageFilter, host areas, %-9s submit %7.3f ms, collect %7.3f ms (medians); %6.1f images/s\n",
                        deflate ? "deflated" : "samples", median(submit_ms), median(collect_ms), runs * 1000.0 / total);
        }
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "stageprobe: %s\n", e.what());
        return 1;
    }
}
