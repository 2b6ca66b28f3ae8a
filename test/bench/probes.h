// What the probe programs of test/bench share: their GLSL, embedded at build time
// (bench_programs.inc, from test/bench/*.frag and *.comp), and GPU timing by timer queries.
#pragma once

#include "app/cli.h"
#include "fft/twiddle.h"
#include "gl/buffer.h"
#include "gl/handle.h"
#include "gl/program.h"
#include "gl/timer.h"

#include <atomic>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

namespace gpufft::bench {

/// `threads` threads copying 32 MB buffers over and over for the object's life, loading the host's
/// memory as a batch's decoders do while the GL thread works.
class MemoryLoad {
public:
    explicit MemoryLoad(int threads) {
        for (int t = 0; t < threads; ++t)
            threads_.emplace_back([this] {
                std::vector<unsigned char> a(size_t(32) << 20, 1), b(a.size());
                while (!stop_.load(std::memory_order_relaxed)) std::memcpy(b.data(), a.data(), a.size());
            });
    }
    ~MemoryLoad() {
        stop_ = true;
        for (std::thread& t : threads_) t.join();
    }
    MemoryLoad(const MemoryLoad&) = delete;
    MemoryLoad& operator=(const MemoryLoad&) = delete;

private:
    std::atomic<bool> stop_{false};
    std::vector<std::thread> threads_;
};

/// Makes the embedded probe programs loadable by name (ProgramCache).
inline void add_probe_programs() {
    struct ProbeSource {
        const char* name;
        const char* text;
    };
    static const ProbeSource probes[] = {
#include "bench_programs.inc"
    };
    for (const ProbeSource& p : probes) add_program_source(p.name, p.text);
}

/// W_n^k = exp(-2 pi i k / n) for k < n, one vec2 each (std430), in a storage buffer.
inline StorageBuffer unit_roots(int n) {
    std::vector<float> table(2 * static_cast<size_t>(n));
    for (int k = 0; k < n; ++k) {
        const std::complex<double> w = unit_root(k, n);
        table[2 * k] = static_cast<float>(w.real());
        table[2 * k + 1] = static_cast<float>(w.imag());
    }
    return StorageBuffer(table.data(), table.size() * sizeof(float));
}

/// `count` floats uniform in [-1, 1) from `seed`: the probes' images and kernels.
inline std::vector<float> random_values(size_t count, unsigned seed) {
    std::vector<float> v(count);
    std::mt19937 random(seed);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (float& f : v) f = uniform(random);
    return v;
}

/// A rectangle texture of one or two floats a texel (R32F, RG32F: the planar probes' texels), with
/// nearest sampling, filled from `values` (width x height x components floats) where given.
inline GLenum narrow_format(int components) { return components == 2 ? GL_RG : GL_RED; }
inline TextureHandle narrow_texture(int width, int height, int components, const float* values = nullptr) {
    TextureHandle t = new_texture();
    glBindTexture(GL_TEXTURE_RECTANGLE, t.get());
    glTexStorage2D(GL_TEXTURE_RECTANGLE, 1, components == 2 ? GL_RG32F : GL_R32F, width, height);
    glTexParameteri(GL_TEXTURE_RECTANGLE, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_RECTANGLE, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    if (values) glTexSubImage2D(GL_TEXTURE_RECTANGLE, 0, 0, 0, width, height, narrow_format(components), GL_FLOAT, values);
    check_gl("an R32F or RG32F texture");
    return t;
}

/// A narrow_texture()'s floats.
inline std::vector<float> download_narrow(GLuint texture, int width, int height, int components) {
    std::vector<float> out(static_cast<size_t>(width) * height * components);
    glBindTexture(GL_TEXTURE_RECTANGLE, texture);
    glGetTexImage(GL_TEXTURE_RECTANGLE, 0, narrow_format(components), GL_FLOAT, out.data());
    return out;
}

/// Median microseconds of `draw` (GPU time of `batch` repetitions, divided), after `warm` seconds of
/// untimed batches, each waited for (saturating_warm_up): an H200 left idle a few seconds (a probe's check on the CPU)
/// runs short dispatches several times slower until it clocks up again (smemline, 2026-11-26:
/// 1024^2 rows 111.7 us against 26.0 in a fresh process; warpline's slow first runs).
template <typename F>
double time_us(F draw, int batch = 10, int runs = 7, double warm = 0.3) {
    GpuTimer timer;
    saturating_warm_up(warm, draw, batch);
    std::vector<double> us;
    for (int r = 0; r < runs; ++r) {
        timer.begin();
        for (int i = 0; i < batch; ++i) draw();
        timer.end();
        us.push_back(timer.milliseconds() * 1e3 / batch);
    }
    return median(us);
}

}  // namespace gpufft::bench
