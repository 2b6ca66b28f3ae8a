// The public API (issue 18): gpufft::TextureFilter on textures of the caller's context, against
// FFTW in double precision, with the caller's GL state left as it was and every failure one
// gpufft::Error.
#include "check.h"
#include "common.h"

#include <gpufft/gpufft.h>

#include "image/convolve.h"
#include "image/deflate.h"
#include "image/png_io.h"
#include "reference/reference.h"

#include <GL/glew.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <thread>

using namespace gpufft;
using test::Size;

namespace {

// The filter's error against FFTW in double (the core tests' bound, test_core.cpp): relative RMS
// 1e-6; RGBA16F textures carry 11 bits, so a half-float output is read against 2^-10 relative.
constexpr double kRelRms = 1e-6;
constexpr double kHalfRelRms = 2e-3;

GLuint make_texture(GLenum target, GLenum format, int w, int h, const float* rgba) {
    GLuint t = 0;
    glGenTextures(1, &t);
    glBindTexture(target, t);
    glTexParameteri(target, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(target, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexImage2D(target, 0, static_cast<GLint>(format), w, h, 0, GL_RGBA, GL_FLOAT, rgba);
    glBindTexture(target, 0);
    return t;
}

std::vector<float> read_texture(GLenum target, GLuint t, int w, int h) {
    std::vector<float> out(static_cast<size_t>(w) * static_cast<size_t>(h) * 4);
    glBindTexture(target, t);
    glPixelStorei(GL_PACK_ALIGNMENT, 4);
    glGetTexImage(target, 0, GL_RGBA, GL_FLOAT, out.data());
    glBindTexture(target, 0);
    return out;
}

/// A kernel whose taps are a random image of the filter's size (origin at its centre tap, the
/// API mirrors it vertically for bottom-up textures), and the impulse response FFTW sees: the
/// same taps mirrored and rotated to origin (0, 0).
struct RandomKernel {
    Kernel kernel;
    std::vector<float> impulse;
};
RandomKernel random_kernel(Size s, unsigned seed) {
    RandomKernel r;
    r.kernel.weights = Image(s.m, s.n);
    r.kernel.weights.rgba = test::random_image(s, seed);
    r.kernel.cx = s.m / 2;
    r.kernel.cy = s.n / 2;
    r.impulse.resize(r.kernel.weights.rgba.size());
    // Tap (i, j), top row first, lands at (i - cx, cy - j) in a bottom-up texture.
    for (int j = 0; j < s.n; ++j)
        for (int i = 0; i < s.m; ++i) {
            const int x = ((i - r.kernel.cx) % s.m + s.m) % s.m, y = ((r.kernel.cy - j) % s.n + s.n) % s.n;
            std::memcpy(&r.impulse[(static_cast<size_t>(y) * s.m + x) * 4], r.kernel.weights.at(i, j), 4 * sizeof(float));
        }
    return r;
}

void expect_matches_fftw(const std::string& what, Size s, const std::vector<float>& image, const std::vector<float>& impulse,
                         const std::vector<float>& out, double bound) {
    for (int c = 0; c < 4; ++c) {
        auto ref = reference_circular_convolution(channel_of(image, c), channel_of(impulse, c), s.m, s.n);
        ErrorStats e = compare(ref, channel_of(out, c));
        EXPECT(e.rel_rms <= bound, what, " ", s.m, "x", s.n, " channel ", c, ": rel RMS ", e.rel_rms, " (bound ", bound, ")");
    }
}

/// `got` against direct convolution in double of `image` (rows top first) under rule `b`.
void expect_direct_convolution(const std::string& what, const Image& image, const Kernel& k, Boundary b, const Image& got) {
    const int m = image.width, n = image.height;
    for (int c = 0; c < 4; ++c) {
        std::vector<double> ref(static_cast<size_t>(m) * n), out(ref.size());
        for (int y = 0; y < n; ++y)
            for (int x = 0; x < m; ++x) {
                double sum = 0;
                for (int j = 0; j < k.weights.height; ++j)
                    for (int i = 0; i < k.weights.width; ++i) {
                        const long long ix = boundary_index(x + k.cx - i, m, b), iy = boundary_index(y + k.cy - j, n, b);
                        if (ix >= 0 && iy >= 0) sum += double(k.weights.at(i, j)[c]) * image.at(int(ix), int(iy))[c];
                    }
                ref[static_cast<size_t>(y) * m + x] = sum;
                out[static_cast<size_t>(y) * m + x] = got.at(x, y)[c];
            }
        ErrorStats e = compare(ref, out);
        EXPECT(e.rel_rms <= kRelRms, what, " channel ", c, ": rel RMS ", e.rel_rms);
    }
}

std::vector<FftOptions> backends() {
    test::context();
    FftOptions fragment, compute;
    fragment.backend = Backend::Fragment;
    compute.backend = Backend::Compute;
    std::vector<FftOptions> out = {fragment};
    if (GLEW_VERSION_4_3) out.push_back(compute);
    return out;
}

/// The state a caller could have set, read back with plain GL queries (not the library's).
struct CallerState {
    GLint program, draw_fbo, read_fbo, active, array_buffer, vertex_array;
    std::array<GLint, 4> viewport;
    std::array<std::array<GLint, 2>, 4> textures;  // 2D and rectangle of units 0-3
    std::array<GLint, 4> samplers;                 // sampler objects of units 0-3
    GLboolean blend, depth, scissor, cull;
    GLint blend_src, blend_dst, blend_equation;
    std::array<GLboolean, 4> color_mask;
    std::array<GLfloat, 4> clear_color;
    GLint image0 = 0, storage0 = 0;
    GLint compiler_threads = 0;   // KHR/ARB_parallel_shader_compile's setting

    static bool parallel_compile() { return GLEW_KHR_parallel_shader_compile || GLEW_ARB_parallel_shader_compile; }

    static CallerState read() {
        CallerState s{};
        glGetIntegerv(GL_CURRENT_PROGRAM, &s.program);
        glGetIntegerv(GL_DRAW_FRAMEBUFFER_BINDING, &s.draw_fbo);
        glGetIntegerv(GL_READ_FRAMEBUFFER_BINDING, &s.read_fbo);
        glGetIntegerv(GL_ACTIVE_TEXTURE, &s.active);
        glGetIntegerv(GL_ARRAY_BUFFER_BINDING, &s.array_buffer);
        glGetIntegerv(GL_VERTEX_ARRAY_BINDING, &s.vertex_array);
        glGetIntegerv(GL_VIEWPORT, s.viewport.data());
        for (int u = 0; u < 4; ++u) {
            glActiveTexture(GL_TEXTURE0 + static_cast<GLenum>(u));
            glGetIntegerv(GL_TEXTURE_BINDING_2D, &s.textures[u][0]);
            glGetIntegerv(GL_TEXTURE_BINDING_RECTANGLE, &s.textures[u][1]);
            glGetIntegerv(GL_SAMPLER_BINDING, &s.samplers[u]);
        }
        glActiveTexture(static_cast<GLenum>(s.active));
        s.blend = glIsEnabled(GL_BLEND);
        s.depth = glIsEnabled(GL_DEPTH_TEST);
        s.scissor = glIsEnabled(GL_SCISSOR_TEST);
        s.cull = glIsEnabled(GL_CULL_FACE);
        glGetIntegerv(GL_BLEND_SRC_RGB, &s.blend_src);
        glGetIntegerv(GL_BLEND_DST_RGB, &s.blend_dst);
        glGetIntegerv(GL_BLEND_EQUATION_RGB, &s.blend_equation);
        glGetBooleanv(GL_COLOR_WRITEMASK, s.color_mask.data());
        glGetFloatv(GL_COLOR_CLEAR_VALUE, s.clear_color.data());
        if (GLEW_VERSION_4_3) {
            glGetIntegeri_v(GL_IMAGE_BINDING_NAME, 0, &s.image0);
            glGetIntegeri_v(GL_SHADER_STORAGE_BUFFER_BINDING, 0, &s.storage0);
        }
        if (parallel_compile()) glGetIntegerv(GL_MAX_SHADER_COMPILER_THREADS_KHR, &s.compiler_threads);
        return s;
    }
    bool operator==(const CallerState& o) const {
        return program == o.program && draw_fbo == o.draw_fbo && read_fbo == o.read_fbo && active == o.active &&
               array_buffer == o.array_buffer && vertex_array == o.vertex_array && viewport == o.viewport && textures == o.textures && samplers == o.samplers &&
               blend == o.blend && depth == o.depth && scissor == o.scissor && cull == o.cull && blend_src == o.blend_src &&
               blend_dst == o.blend_dst && blend_equation == o.blend_equation && color_mask == o.color_mask &&
               clear_color == o.clear_color && image0 == o.image0 && storage0 == o.storage0 &&
               compiler_threads == o.compiler_threads;
    }
};

std::string describe(const CallerState& a, const CallerState& b) {
    return check::str("program ", a.program, "/", b.program, ", draw fbo ", a.draw_fbo, "/", b.draw_fbo, ", read fbo ", a.read_fbo, "/",
                      b.read_fbo, ", active ", a.active, "/", b.active, ", viewport ", a.viewport[2], "/", b.viewport[2], ", unit 1 2D ",
                      a.textures[1][0], "/", b.textures[1][0], ", unit 0 sampler ", a.samplers[0], "/", b.samplers[0], ", blend ", int(a.blend), "/", int(b.blend), ", scissor ", int(a.scissor), "/",
                      int(b.scissor), ", image 0 ", a.image0, "/", b.image0, ", vertex array ", a.vertex_array, "/", b.vertex_array,
                      ", compiler threads ", a.compiler_threads, "/", b.compiler_threads);
}

/// Sets state no library pass wants: a program, two framebuffers, textures on four units, a
/// viewport, blending, depth and scissor tests, a colour mask, a vertex array, and sampler objects
/// (mipmapped, repeating: no texture the library reads would be complete under them) on units 0, 1,
/// and 3 shader compiler threads where the GL takes a number.
struct CallerSetup {
    GLuint program = 0, fbo[2] = {0, 0}, textures[8] = {}, vao = 0, buffer = 0, image = 0, sampler = 0;

    CallerSetup() {
        const char* vs = "#version 120\nvoid main() { gl_Position = gl_Vertex; }\n";
        const char* fs = "#version 120\nvoid main() { gl_FragColor = vec4(1.0); }\n";
        program = glCreateProgram();
        for (auto [type, src] : {std::pair<GLenum, const char*>{GL_VERTEX_SHADER, vs}, {GL_FRAGMENT_SHADER, fs}}) {
            GLuint sh = glCreateShader(type);
            glShaderSource(sh, 1, &src, nullptr);
            glCompileShader(sh);
            glAttachShader(program, sh);
            glDeleteShader(sh);
        }
        glLinkProgram(program);
        glUseProgram(program);
        glGenTextures(8, textures);
        for (int u = 0; u < 4; ++u) {
            glActiveTexture(GL_TEXTURE0 + static_cast<GLenum>(u));
            glBindTexture(GL_TEXTURE_2D, textures[2 * u]);
            glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, 4, 4, 0, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
            glBindTexture(GL_TEXTURE_RECTANGLE, textures[2 * u + 1]);
            glTexImage2D(GL_TEXTURE_RECTANGLE, 0, GL_RGBA8, 4, 4, 0, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
        }
        glGenSamplers(1, &sampler);
        glSamplerParameteri(sampler, GL_TEXTURE_MIN_FILTER, GL_LINEAR_MIPMAP_LINEAR);
        glSamplerParameteri(sampler, GL_TEXTURE_WRAP_S, GL_REPEAT);
        glBindSampler(0, sampler);
        glBindSampler(1, sampler);
        glActiveTexture(GL_TEXTURE2);
        glGenFramebuffers(2, fbo);
        glBindFramebuffer(GL_DRAW_FRAMEBUFFER, fbo[0]);
        glFramebufferTexture2D(GL_DRAW_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, textures[0], 0);
        glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo[1]);
        glFramebufferTexture2D(GL_READ_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, textures[2], 0);
        glViewport(3, 5, 77, 66);
        glEnable(GL_BLEND);
        glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
        glBlendEquation(GL_FUNC_ADD);
        glEnable(GL_DEPTH_TEST);
        glEnable(GL_SCISSOR_TEST);
        glScissor(1, 1, 2, 2);
        glEnable(GL_CULL_FACE);
        glColorMask(GL_TRUE, GL_FALSE, GL_TRUE, GL_FALSE);
        glClearColor(0.25f, 0.5f, 0.75f, 1.0f);
        glGenVertexArrays(1, &vao);
        glBindVertexArray(vao);
        glGenBuffers(1, &buffer);
        glBindBuffer(GL_ARRAY_BUFFER, buffer);
        if (GLEW_VERSION_4_3) {
            image = make_texture(GL_TEXTURE_2D, GL_RGBA32F, 4, 4, nullptr);
            glBindImageTexture(0, image, 0, GL_FALSE, 0, GL_READ_ONLY, GL_RGBA32F);
            glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, buffer);
        }
        compiler_threads(3);
    }
    static void compiler_threads(GLuint n) {
        if (GLEW_KHR_parallel_shader_compile) glMaxShaderCompilerThreadsKHR(n);
        else if (GLEW_ARB_parallel_shader_compile) glMaxShaderCompilerThreadsARB(n);
    }
    ~CallerSetup() {
        glUseProgram(0);
        glBindFramebuffer(GL_FRAMEBUFFER, 0);
        glDisable(GL_BLEND);
        glDisable(GL_DEPTH_TEST);
        glDisable(GL_SCISSOR_TEST);
        glDisable(GL_CULL_FACE);
        glColorMask(GL_TRUE, GL_TRUE, GL_TRUE, GL_TRUE);
        glBindVertexArray(0);
        glBindBuffer(GL_ARRAY_BUFFER, 0);
        glActiveTexture(GL_TEXTURE0);
        if (GLEW_VERSION_4_3) {
            glBindImageTexture(0, 0, 0, GL_FALSE, 0, GL_READ_ONLY, GL_RGBA32F);
            glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, 0);
        }
        glBindSampler(0, 0);
        glBindSampler(1, 0);
        glDeleteSamplers(1, &sampler);
        compiler_threads(0xFFFFFFFFu);   // the extensions' initial value
        glDeleteProgram(program);
        glDeleteFramebuffers(2, fbo);
        glDeleteTextures(8, textures);
        if (image) glDeleteTextures(1, &image);
        glDeleteVertexArrays(1, &vao);
        glDeleteBuffers(1, &buffer);
    }
};

}  // namespace

TEST(texture_filter_matches_fftw) {
    // RGBA32F 2D textures in and out, a rectangle texture in and the filter's own out, and the
    // CPU convenience; power-of-two and mixed-radix sizes.
    for (const FftOptions& o : backends())
        for (Size s : {Size{64, 32}, Size{48, 40}}) {
            if (!test::takes({"", o}, s)) continue;
            const std::string what = o.backend == Backend::Compute ? "compute" : "fragment";
            RandomKernel k = random_kernel(s, 7);
            std::vector<float> image = test::random_image(s, 3);
            TextureFilter filter(s.m, s.n, k.kernel, o);
            EXPECT(filter.width() == s.m && filter.height() == s.n, what);
            const GLuint in = make_texture(GL_TEXTURE_2D, GL_RGBA32F, s.m, s.n, image.data());
            const GLuint out = make_texture(GL_TEXTURE_2D, GL_RGBA32F, s.m, s.n, nullptr);
            filter.apply(in, out);
            expect_matches_fftw(what + " 2D in, 2D out", s, image, k.impulse, read_texture(GL_TEXTURE_2D, out, s.m, s.n), kRelRms);
            const GLuint rect = make_texture(GL_TEXTURE_RECTANGLE, GL_RGBA32F, s.m, s.n, image.data());
            const GLuint own = filter.apply({rect, kTextureRectangle}).name;
            expect_matches_fftw(what + " rectangle in, own out", s, image, k.impulse, read_texture(GL_TEXTURE_RECTANGLE, own, s.m, s.n),
                                kRelRms);
            // In place: the same texture in and out.
            filter.apply(in, in);
            expect_matches_fftw(what + " in place", s, image, k.impulse, read_texture(GL_TEXTURE_2D, in, s.m, s.n), kRelRms);
            // The CPU convenience takes rows top first: the texture's rows reversed.
            Image top_first(s.m, s.n);
            for (int y = 0; y < s.n; ++y) std::memcpy(top_first.at(0, y), &image[static_cast<size_t>(s.n - 1 - y) * s.m * 4], s.m * 4 * sizeof(float));
            Image filtered = filter.apply_image(top_first);
            std::vector<float> bottom_up(filtered.rgba.size());
            for (int y = 0; y < s.n; ++y) std::memcpy(&bottom_up[static_cast<size_t>(s.n - 1 - y) * s.m * 4], filtered.at(0, y), s.m * 4 * sizeof(float));
            expect_matches_fftw(what + " Image", s, image, k.impulse, bottom_up, kRelRms);
            GLuint names[3] = {in, out, rect};
            glDeleteTextures(3, names);
        }
}

TEST(padded_sizes_follow_each_boundary_rule) {
    // Sizes no backend transforms (odd) and every boundary rule, against direct convolution in
    // double of the image as given top row first (apply_image), and the texture path against that.
    test::context();
    if (!GLEW_VERSION_4_3) return;  // padding extends frames with a compute shader
    const Size s{37, 29};
    Kernel k;
    k.weights = Image(5, 3);
    k.weights.rgba = test::random_image({5, 3}, 21);
    k.cx = 1;
    k.cy = 2;  // off centre, so that a slip in the rows' order or the grid's lead shows
    Image image(s.m, s.n);
    image.rgba = test::random_image(s, 4);
    for (const FftOptions& o : backends())
        for (Boundary b : {Boundary::Reflect, Boundary::Clamp, Boundary::Zero, Boundary::Wrap}) {
            const std::string what = check::str(o.backend == Backend::Compute ? "compute " : "fragment ", int(b));
            TextureFilter filter(s.m, s.n, k, o, b);
            EXPECT(filter.grid_width() >= s.m + 4 && filter.grid_height() >= s.n + 2, what, ": grid ", filter.grid_width(), "x", filter.grid_height());
            Image got = filter.apply_image(image);
            expect_direct_convolution(what, image, k, b, got);
            // The same through textures: the frame bottom row first, out into a caller's RGBA32F.
            std::vector<float> bottom_up(image.rgba.size());
            for (int y = 0; y < s.n; ++y) std::memcpy(&bottom_up[static_cast<size_t>(s.n - 1 - y) * s.m * 4], image.at(0, y), s.m * 4 * sizeof(float));
            const GLuint in = make_texture(GL_TEXTURE_2D, GL_RGBA32F, s.m, s.n, bottom_up.data());
            const GLuint out = make_texture(GL_TEXTURE_2D, GL_RGBA32F, s.m, s.n, nullptr);
            filter.apply(in, out);
            std::vector<float> tex = read_texture(GL_TEXTURE_2D, out, s.m, s.n);
            bool same = true;
            for (int y = 0; y < s.n; ++y) same &= std::memcmp(&tex[static_cast<size_t>(s.n - 1 - y) * s.m * 4], got.at(0, y), s.m * 4 * sizeof(float)) == 0;
            EXPECT(same, what, ": the texture path equals apply_image bit for bit");
            const TextureRef own = filter.apply(in);
            EXPECT(read_texture(own.target, own.name, s.m, s.n) == tex, what, ": the filter's own texture holds the same");
            GLuint names[2] = {in, out};
            glDeleteTextures(2, names);
        }
    // A larger kernel on a padded filter: the grid is made again.
    TextureFilter padded(s.m, s.n, k, {}, Boundary::Reflect);
    Kernel wide;
    wide.weights = Image(9, 7);
    wide.weights.rgba = test::random_image({9, 7}, 31);
    wide.cx = 6;
    wide.cy = 2;
    const int before_width = padded.grid_width();
    padded.set_kernel(wide);
    EXPECT(padded.grid_width() >= s.m + 8 && padded.grid_height() >= s.n + 6, "grid after set_kernel: ", padded.grid_width(), "x",
           padded.grid_height(), " (was ", before_width, " wide)");
    expect_direct_convolution("after set_kernel", image, wide, Boundary::Reflect, padded.apply_image(image));
    // A padded filter has no frame-sized spectrum.
    bool refused = false;
    try {
        padded.forward(1);
    } catch (const Error& e) {
        refused = std::string(e.what()).find("needs an unpadded filter") != std::string::npos;
    }
    EXPECT(refused, "forward() on a padded filter");
}

TEST(image_filter_in_memory) {
    // The public ImageFilter (what fftfilter runs): any size, a boundary rule, tiles; floats
    // against direct convolution in double, stored samples through the GPU against the floats
    // (quantised the same way), and the caller's GL state left alone.
    test::context();
    const Size s{61, 45};
    Kernel k;
    k.weights = Image(7, 4);
    k.weights.rgba = test::random_image({7, 4}, 5);
    k.cx = 2;
    k.cy = 1;
    Image image(s.m, s.n);
    for (float& v : image.rgba) v = 0.5f;
    std::vector<float> noise = test::random_image(s, 8);
    for (size_t i = 0; i < noise.size(); ++i) image.rgba[i] += 0.5f * noise[i];
    CallerSetup caller;
    const CallerState before = CallerState::read();
    for (int max_fft : {0, 32}) {  // whole, then tiles of 32
        ImageFilter filter(k, {}, Boundary::Reflect, max_fft);
        Image got = filter.apply(image);
        EXPECT(CallerState::read() == before, "after apply: ", describe(before, CallerState::read()));
        EXPECT(filter.last().tiles == (max_fft ? filter.tiling(s.m, s.n).first.tiles(s.m) * filter.tiling(s.m, s.n).second.tiles(s.n) : 1),
               "tiles ", filter.last().tiles);
        expect_direct_convolution(check::str("max_fft ", max_fft), image, k, Boundary::Reflect, got);
        if (!ImageFilter::sample_limits().supported) continue;
        // 8-bit RGBA samples of the same image through the GPU's sample path.
        Samples in;
        in.resize(s.m, s.n, 4, 8);
        for (size_t i = 0; i < in.data.size(); ++i) in.data[i] = static_cast<unsigned char>(std::lround(image.rgba[i] * 255));
        Image expected = filter.apply(samples_to_image(in));  // the CPU's conversions
        SampleConversion conversion;
        filter.submit(in, conversion);
        Samples out = filter.collect();
        EXPECT(CallerState::read() == before, "after submit and collect: ", describe(before, CallerState::read()));
        long worst = 0;
        for (size_t i = 0; i < out.data.size() && out.data.size() == in.data.size(); ++i)
            worst = std::max(worst, std::labs(long(out.data[i]) - long(quantise_sample(expected.rgba[i], 255))));
        EXPECT(out.data.size() == in.data.size() && worst == 0, "samples against the floats: ", worst, " steps");
    }
    ImageFilter filter(k, {}, Boundary::Zero);
    Image spectrum = filter.spectrum(image);
    EXPECT(spectrum.width == 64 && spectrum.height == 64, "the spectrum of 61x45 on 64x64: ", spectrum.width, "x", spectrum.height);
    EXPECT(CallerState::read() == before, "after spectrum: ", describe(before, CallerState::read()));
    SynthSpec synth;
    synth.width = 64;
    synth.height = 32;
    Image texture = synthesize(synth);
    EXPECT(texture.width == 64 && texture.height == 32, "synthesize's size");
    EXPECT(CallerState::read() == before, "after synthesize: ", describe(before, CallerState::read()));
}

TEST(image_filter_shares_lengths_across_a_batch) {
    // Told a batch's sizes, the compute backend's ImageFilter tiles them on fewer lengths than
    // each size's own best (share_lengths), compiles every grid's programs at once
    // (prepare_programs), filters on the shared grid as direct convolution says, and leaves the
    // caller's GL state alone. A batch of one size keeps its own grid.
    test::context();
    FftOptions compute;
    compute.backend = Backend::Compute;
    if (!ImageFilter::sample_limits().supported) return;  // no compute shaders
    Kernel k;
    k.weights = Image(7, 4);
    k.weights.rgba = test::random_image({7, 4}, 15);
    k.cx = 3;
    k.cy = 2;
    const std::vector<std::array<int, 2>> sizes = {{40, 30}, {46, 35}, {52, 41}};
    CallerSetup caller;
    const CallerState before = CallerState::read();
    ImageFilter own(k, compute), shared(k, compute), alone(k, compute);
    shared.share_lengths(sizes);
    alone.share_lengths({sizes[1], sizes[1]});
    std::set<int> own_lengths, shared_lengths;
    for (const auto& [w, h] : sizes) {
        own_lengths.insert({own.tiling(w, h).first.fft, own.tiling(w, h).second.fft});
        shared_lengths.insert({shared.tiling(w, h).first.fft, shared.tiling(w, h).second.fft});
    }
    EXPECT(shared_lengths.size() < own_lengths.size(), "shared: ", shared_lengths.size(), " lengths, each its own: ", own_lengths.size());
    EXPECT(alone.tiling(46, 35).first.fft == own.tiling(46, 35).first.fft && alone.tiling(46, 35).second.fft == own.tiling(46, 35).second.fft,
           "one size shared another grid");
    shared.prepare_programs(sizes);
    EXPECT(CallerState::read() == before, "after prepare_programs: ", describe(before, CallerState::read()));
    Image image(40, 30);
    const std::vector<float> noise = test::random_image({40, 30}, 16);
    for (size_t i = 0; i < noise.size(); ++i) image.rgba[i] = 0.5f + 0.5f * noise[i];
    const Image got = shared.apply(image);
    EXPECT(shared.last().fft_width == shared.tiling(40, 30).first.fft && shared.last().fft_height == shared.tiling(40, 30).second.fft,
           "filtered on ", shared.last().fft_width, "x", shared.last().fft_height);
    expect_direct_convolution("a shared grid", image, k, Boundary::Reflect, got);
    EXPECT(CallerState::read() == before, "after apply: ", describe(before, CallerState::read()));
}

TEST(half_float_textures_in_and_out) {
    const Size s{32, 32};
    for (const FftOptions& o : backends()) {
        RandomKernel k = random_kernel(s, 11);
        std::vector<float> image = test::random_image(s, 5);
        // What the RGBA16F input holds: the image rounded to half floats, read back.
        const GLuint in = make_texture(GL_TEXTURE_2D, GL_RGBA16F, s.m, s.n, image.data());
        std::vector<float> held = read_texture(GL_TEXTURE_2D, in, s.m, s.n);
        const GLuint out = make_texture(GL_TEXTURE_2D, GL_RGBA16F, s.m, s.n, nullptr);
        TextureFilter filter(s.m, s.n, k.kernel, o);
        filter.apply(in, out);
        expect_matches_fftw("RGBA16F", s, held, k.impulse, read_texture(GL_TEXTURE_2D, out, s.m, s.n), kHalfRelRms);
        GLuint names[2] = {in, out};
        glDeleteTextures(2, names);
    }
}

TEST(spectrum_round_trip_and_layout) {
    // forward() is the compressed layout of Eq. 10 (unpack_spectrum: FFTW's r2c half spectrum),
    // inverse() brings the image back.
    const Size s{32, 16};
    for (const FftOptions& o : backends()) {
        std::vector<float> image = test::random_image(s, 9);
        const GLuint in = make_texture(GL_TEXTURE_2D, GL_RGBA32F, s.m, s.n, image.data());
        TextureFilter filter(s.m, s.n, "identity", o);
        const TextureRef spectrum = filter.forward(in);
        std::vector<float> packed = read_texture(spectrum.target, spectrum.name, s.m, s.n);
        for (int c = 0; c < 4; ++c) {
            auto ref = reference_spectrum(channel_of(image, c), s.m, s.n);
            std::vector<double> got = unpack_spectrum(packed.data(), s.m, s.n, c);
            std::vector<std::complex<double>> half(ref.size());
            for (size_t i = 0; i < half.size(); ++i) half[i] = {got[2 * i], got[2 * i + 1]};
            ErrorStats e = compare(ref, half);
            EXPECT(e.rel_rms <= kRelRms, "spectrum channel ", c, ": rel RMS ", e.rel_rms);
            double re = 0, im = 0;
            spectrum_value(packed.data(), s.m, s.n, 3, 5, c, &re, &im);
            const std::complex<double> f = ref[5 * (s.m / 2 + 1) + 3];
            EXPECT(std::abs(re - f.real()) + std::abs(im - f.imag()) <= 1e-5, "spectrum_value(3, 5) channel ", c);
            // pack_spectrum is unpack's inverse on the values it writes.
            std::vector<float> repacked(packed.size());
            for (int ch = 0; ch < 4; ++ch) pack_spectrum(unpack_spectrum(packed.data(), s.m, s.n, ch).data(), s.m, s.n, ch, repacked.data());
            EXPECT(repacked == packed, "pack_spectrum(unpack_spectrum(x)) == x");
        }
        const GLuint back = make_texture(GL_TEXTURE_2D, GL_RGBA32F, s.m, s.n, nullptr);
        filter.inverse(spectrum, back);
        std::vector<float> got = read_texture(GL_TEXTURE_2D, back, s.m, s.n);
        for (int c = 0; c < 4; ++c) {
            ErrorStats e = compare(channel_of(image, c), channel_of(got, c));
            EXPECT(e.rel_rms <= kRelRms, "inverse(forward(x)) channel ", c, ": rel RMS ", e.rel_rms);
        }
        GLuint names[2] = {in, back};
        glDeleteTextures(2, names);
    }
}

TEST(every_way_in_and_out_gives_the_same_floats) {
    // The caller's texture is read by the passes themselves (a rectangle texture), copied by a
    // compute pass (a 2D one), or blitted (no compute shaders); the result is stored by a compute
    // pass in the output's format, or blitted (a 2D texture whose filter wants mipmaps it lacks,
    // under mutable storage). Each way must give the floats of the plain one (RGBA32F 2D in and
    // out, checked against FFTW above), at an unpadded and a padded size, also with the caller's
    // own sampler object (mipmapped, repeating) bound, which the reads must not use.
    test::context();
    auto texture = [](GLenum target, GLenum format, Size s, const float* rgba, GLint min_filter, bool immutable) {
        GLuint t = 0;
        glGenTextures(1, &t);
        glBindTexture(target, t);
        if (immutable) {
            glTexStorage2D(target, 1, format, s.m, s.n);
            if (rgba) glTexSubImage2D(target, 0, 0, 0, s.m, s.n, GL_RGBA, GL_FLOAT, rgba);
        } else {
            glTexImage2D(target, 0, static_cast<GLint>(format), s.m, s.n, 0, GL_RGBA, GL_FLOAT, rgba);
        }
        glTexParameteri(target, GL_TEXTURE_MIN_FILTER, min_filter);
        glBindTexture(target, 0);
        return t;
    };
    const GLint mipmapped = GL_NEAREST_MIPMAP_LINEAR;  // GL_TEXTURE_2D's default: level 0 alone is incomplete
    struct Way {
        const char* what;
        GLenum in_target, in_format;
        GLint in_filter;
        GLenum out_target, out_format;
        GLint out_filter;
        bool out_immutable;
        // Against the plain way: 0 (bit for bit), or one step of an 8-bit output. GL leaves the
        // rounding to a normalised value to the driver: llvmpipe's is to nearest (half a step);
        // NVIDIA's (580, H100) was 0.56 step off, by blit and image store alike.
        double tolerance;
    };
    const Way ways[] = {
        {"2D in, mipmap filter, no mipmaps", GL_TEXTURE_2D, GL_RGBA32F, mipmapped, GL_TEXTURE_2D, GL_RGBA32F, GL_NEAREST, false, 0},
        {"rectangle in, rectangle out", GL_TEXTURE_RECTANGLE, GL_RGBA32F, GL_LINEAR, GL_TEXTURE_RECTANGLE, GL_RGBA32F, GL_LINEAR, false, 0},
        {"2D out, mutable, mipmap filter (blit)", GL_TEXTURE_2D, GL_RGBA32F, GL_NEAREST, GL_TEXTURE_2D, GL_RGBA32F, mipmapped, false, 0},
        {"2D out, immutable, mipmap filter", GL_TEXTURE_2D, GL_RGBA32F, GL_NEAREST, GL_TEXTURE_2D, GL_RGBA32F, mipmapped, true, 0},
        {"RGBA8 out, 2D (blit)", GL_TEXTURE_2D, GL_RGBA32F, GL_NEAREST, GL_TEXTURE_2D, GL_RGBA8, mipmapped, false, 1.0 / 255},
        {"RGBA8 out, rectangle", GL_TEXTURE_RECTANGLE, GL_RGBA32F, GL_NEAREST, GL_TEXTURE_RECTANGLE, GL_RGBA8, GL_NEAREST, false, 1.0 / 255},
    };
    const Size unpadded{48, 40}, padded{37, 29};
    for (const FftOptions& o : backends())
        for (Size s : {unpadded, padded}) {
            const bool pads = s.m == padded.m;
            if (pads && !GLEW_VERSION_4_3) continue;
            // Values in [0, 1] after filtering (a normalised kernel on a [0, 1] image), so that
            // an 8-bit output holds them unclamped.
            std::vector<float> image = test::random_image(s, 12);
            for (float& v : image) v = 0.5f + 0.5f * v;
            TextureFilter filter(s.m, s.n, "box:5", o, pads ? Boundary::Reflect : Boundary::Wrap);
            const GLuint plain_in = make_texture(GL_TEXTURE_2D, GL_RGBA32F, s.m, s.n, image.data());
            const GLuint plain_out = make_texture(GL_TEXTURE_2D, GL_RGBA32F, s.m, s.n, nullptr);
            filter.apply(plain_in, plain_out);
            const std::vector<float> want = read_texture(GL_TEXTURE_2D, plain_out, s.m, s.n);
            for (bool sampler_bound : {false, true}) {
                CallerSetup caller;
                if (!sampler_bound) glBindSampler(0, 0);
                for (const Way& w : ways) {
                    const std::string what = check::str(o.backend == Backend::Compute ? "compute " : "fragment ", s.m, "x", s.n, " ", w.what,
                                                        sampler_bound ? ", the caller's sampler bound" : "");
                    const GLuint in = texture(w.in_target, w.in_format, s, image.data(), w.in_filter, false);
                    const GLuint out = texture(w.out_target, w.out_format, s, nullptr, w.out_filter, w.out_immutable);
                    glBindSampler(0, sampler_bound ? caller.sampler : 0);
                    filter.apply({in, w.in_target}, {out, w.out_target});
                    glBindSampler(0, 0);  // glGetTexImage below reads no sampler, but keep it plain
                    const std::vector<float> got = read_texture(w.out_target, out, s.m, s.n);
                    double worst = 0;
                    for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, static_cast<double>(std::abs(got[i] - want[i])));
                    if (w.tolerance == 0) EXPECT(got == want, what, ": not the plain way's floats (largest difference ", worst, ")");
                    else EXPECT(worst <= w.tolerance, what, ": ", worst, " from the plain way's floats");
                    GLuint names[2] = {in, out};
                    glDeleteTextures(2, names);
                }
            }
            GLuint names[2] = {plain_in, plain_out};
            glDeleteTextures(2, names);
        }
}

TEST(host_areas_carry_samples_both_ways) {
    // HostAreas: made on the GL thread, taken on others; submit() through them (input, output or
    // both) gives the bytes of the plain submit(), three images queued at once, the caller's GL
    // state left alone; an area too small is refused with an Error; a taken area is not given
    // twice, and comes back when destroyed.
    test::context();
    if (!ImageFilter::sample_limits().supported) return;
    CallerSetup caller;
    const CallerState before = CallerState::read();
    HostAreas areas;
    const Size s{53, 37};
    const size_t in_bytes = size_t(s.m) * s.n * 3, out_bytes = size_t(s.m) * s.n * 4 * 2;  // RGB 8-bit in, RGBA 16-bit out
    EXPECT(!areas.take(1), "no area before any is made");
    for (int i = 0; i < 3; ++i) EXPECT(areas.add(in_bytes, 6, size_t(1) << 20), "area ", i, " made");
    for (int i = 0; i < 3; ++i) EXPECT(areas.add(out_bytes, 6, size_t(1) << 20), "area ", 3 + i, " made");
    EXPECT(!areas.add(16, 6, size_t(1) << 20), "a seventh area beyond the count of six");
    EXPECT(areas.count() == 6 && areas.bytes() == 3 * ((in_bytes + 3) / 4 * 4) + 3 * out_bytes, "areas ", areas.count(), ", bytes ",
           areas.bytes());
    EXPECT(CallerState::read() == before, "after making areas: ", describe(before, CallerState::read()));
    {
        HostArea big = areas.take(out_bytes);
        EXPECT(big && big.capacity() == out_bytes, "the smallest area that holds the output: ", big.capacity());
        HostArea small = areas.take(1);
        EXPECT(small && small.capacity() == (in_bytes + 3) / 4 * 4, "the smallest free area: ", small.capacity());
        EXPECT(!areas.take(out_bytes + 1), "no area holds more than was made");
        std::vector<HostArea> rest;
        while (HostArea a = areas.take(1)) rest.push_back(std::move(a));
        EXPECT(rest.size() == 4, "six areas, each taken once: ", rest.size() + 2);
    }
    EXPECT(areas.take(out_bytes), "areas come back when destroyed");
    {
        // grow(): the smallest free area smaller than asked is made that large, the count kept.
        const size_t before_bytes = areas.bytes(), in_words = (in_bytes + 3) / 4 * 4;
        HostArea held = areas.take(1);  // an input-sized one, not free: not the one grown
        EXPECT(!areas.grow(16, size_t(1) << 20), "no free area smaller than 16 bytes to grow");
        EXPECT(!areas.grow(2 * out_bytes, before_bytes), "a growth past the limit is refused");
        EXPECT(areas.grow(2 * out_bytes, size_t(1) << 20), "a free input-sized area grown");
        EXPECT(areas.count() == 6 && areas.bytes() == before_bytes - in_words + 2 * out_bytes, "after growing: ", areas.count(),
               " areas, ", areas.bytes(), " bytes");
        HostArea grown = areas.take(2 * out_bytes);
        EXPECT(grown && grown.capacity() == 2 * out_bytes, "the grown area taken");
        EXPECT(held && held.capacity() == in_words, "the area held kept its size");
    }

    SampleConversion conversion;
    conversion.in_channels = 3;
    conversion.out_channels = 4;
    conversion.out_depth = 16;
    // The plain submit's outputs from a filter of their own; the filter under test first takes
    // other images through each of its three slots (what its buffers then hold is not the answer).
    ImageFilter reference(parse_kernel("gaussian:2")), filter(parse_kernel("gaussian:2"));
    std::vector<Samples> inputs(3), plain(3);
    for (int i = 0; i < 3; ++i) {
        inputs[i].resize(s.m, s.n, 3, 8);
        std::mt19937 rng(40 + i);
        for (auto& b : inputs[i].data) b = static_cast<unsigned char>(rng());
        reference.submit(inputs[i], conversion);
        plain[i] = reference.collect();
        Samples other = inputs[i];
        for (auto& b : other.data) b = static_cast<unsigned char>(255 - b);
        filter.submit(other, conversion);
        filter.collect();
    }
    // Each way in turn, three queued: samples from an area, into one, both.
    std::vector<HostArea> from(3), to(3);
    for (int i = 0; i < 3; ++i) {
        if (i != 1) {  // taken and filled on another thread, as fftfilter's workers do
            std::thread([&] {
                from[i] = areas.take(in_bytes);
                if (from[i]) std::memcpy(from[i].data(), inputs[i].data.data(), in_bytes);
            }).join();
            EXPECT(from[i], "image ", i, ": an area for its samples");
        }
        if (i != 0) to[i] = areas.take(out_bytes);
        Samples shape = inputs[i];
        if (from[i]) shape.data.clear();  // not read
        filter.submit(shape, from[i] ? &from[i] : nullptr, to[i] ? &to[i] : nullptr, conversion);
    }
    EXPECT(CallerState::read() == before, "after submits through areas: ", describe(before, CallerState::read()));
    for (int i = 0; i < 3; ++i) {
        Samples out = filter.collect();
        const std::vector<unsigned char> got = to[i] ? std::vector<unsigned char>(to[i].data(), to[i].data() + plain[i].data.size()) : out.data;
        EXPECT(out.width == s.m && out.height == s.n && out.channels == 4 && out.depth == 16, "image ", i, "'s shape");
        EXPECT(!to[i] || out.data.empty(), "image ", i, ": collect() leaves the output in its area");
        EXPECT(got == plain[i].data, "image ", i, " through host areas (from ", bool(from[i]), ", to ", bool(to[i]),
               "): the plain submit's samples");
    }
    EXPECT(CallerState::read() == before, "after collects: ", describe(before, CallerState::read()));
    from.clear();  // collected: given back
    to.clear();
    bool refused = false;
    try {
        HostArea none;
        filter.submit(inputs[0], nullptr, &none, conversion);
    } catch (const Error& e) {
        refused = std::string(e.what()).find("host area") != std::string::npos;
    }
    EXPECT(refused, "an empty host area for the output is refused with an Error");
    refused = false;
    try {
        HostArea in_area = areas.take(1);  // holds the input, not the 16-bit RGBA output
        EXPECT(in_area && in_area.capacity() < out_bytes, "an input-sized area");
        filter.submit(inputs[0], nullptr, &in_area, conversion);
    } catch (const Error& e) {
        refused = std::string(e.what()).find("host area") != std::string::npos;
    }
    EXPECT(refused, "an area too small for the output is refused with an Error");
    EXPECT(filter.pending() == 0, "nothing queued by the refused submits");
}

TEST(host_areas_keep_the_samples_a_stream_stands_for) {
    // SampleConversion::samples_if_needed: where the GPU codes the output's stream, collect()
    // leaves the output's area untouched and gives the filtered rows' sample bands instead (the
    // bytes filtered_rows() makes of the plain output there), the plain submit's stream beside
    // them; where it does not (noise under a near-delta kernel: the stream would pass half the
    // rows), the samples come into the area after all, the plain submit's.
    test::context();
    if (!ImageFilter::sample_limits().supported) return;
    HostAreas areas;
    const Size s{320, 160};  // past 128 KiB of filtered rows: four bands of 32 KiB, apart
    const size_t in_bytes = size_t(s.m) * s.n * 3;
    for (int i = 0; i < 4; ++i) EXPECT(areas.add(in_bytes, 4, size_t(1) << 22), "area ", i, " made");
    SampleConversion conversion;
    conversion.in_channels = conversion.out_channels = 3;
    conversion.deflate = true;
    for (const char* kernel : {"gaussian:3", "disk:0.5"}) {
        const bool smooth = std::string(kernel) == "gaussian:3";
        Samples in;
        in.resize(s.m, s.n, 3, 8);
        std::mt19937 rng(7);
        for (auto& b : in.data) b = static_cast<unsigned char>(rng());
        ImageFilter reference(parse_kernel(kernel)), filter(parse_kernel(kernel));
        DeflatedRows plain_stream, stream;
        reference.submit(in, conversion);
        const Samples plain = reference.collect(nullptr, {}, plain_stream);
        HostArea from = areas.take(in_bytes), to = areas.take(in_bytes);
        EXPECT(from && to, kernel, ": areas");
        if (!from || !to) return;
        std::memcpy(from.data(), in.data.data(), in_bytes);
        std::memset(to.data(), 0xab, to.capacity());
        SampleConversion skipping = conversion;
        skipping.samples_if_needed = true;
        Samples shape = in;
        shape.data.clear();
        filter.submit(shape, &from, &to, skipping);
        const Samples out = filter.collect(nullptr, {}, stream);
        EXPECT(out.data.empty() && plain_stream.coded == smooth && stream.coded == smooth && stream.data == plain_stream.data &&
                   stream.adler == plain_stream.adler,
               kernel, ": the plain submit's stream (coded ", plain_stream.coded, ", here ", stream.coded, ")");
        if (smooth) {
            const std::vector<unsigned char> rows = filtered_rows(plain);
            std::vector<unsigned char> bands;
            for (const auto& [first, bytes] : runs_sample(rows.size(), 4))
                bands.insert(bands.end(), rows.begin() + static_cast<long>(first), rows.begin() + static_cast<long>(first + bytes));
            EXPECT(stream.without_samples && stream.bands == bands, kernel, ": the bands of the filtered rows instead of the samples (",
                   stream.bands.size(), " bytes, ", bands.size(), " expected)");
            EXPECT(std::all_of(to.data(), to.data() + to.capacity(), [](unsigned char b) { return b == 0xab; }),
                   kernel, ": the output's area left untouched");
        } else {
            EXPECT(!stream.without_samples && stream.bands.empty() &&
                       std::equal(plain.data.begin(), plain.data.end(), to.data()),
                   kernel, ": the samples in the area after all, the plain submit's");
        }
    }
}

namespace {

/// Asks `f` whether it is ready, as a renderer would once a frame, for up to 5 minutes.
bool settled(TextureFilter& f) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::minutes(5);
    while (!f.ready() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return f.ready();
}

}  // namespace

// Compile::Background: the constructor and set_kernel() start the compiles and return; ready()
// takes them without waiting, and apply() before it waits for them. Either way the filter is the
// one Compile::Now makes, bit for bit.
TEST(texture_filters_compile_in_the_background) {
    const Size s{48, 40};
    std::vector<float> image = test::random_image(s, 5);
    const RandomKernel k = random_kernel(s, 11);   // not point-symmetric: the complex multiply
    const Kernel symmetric = parse_kernel("gaussian:2");
    for (const FftOptions& o : backends()) {
        if (!test::takes({"", o}, s)) continue;
        const std::string what = o.backend == Backend::Compute ? "compute" : "fragment";
        const GLuint in = make_texture(GL_TEXTURE_2D, GL_RGBA32F, s.m, s.n, image.data());
        const GLuint out = make_texture(GL_TEXTURE_2D, GL_RGBA32F, s.m, s.n, nullptr);
        auto filtered = [&](TextureFilter& f) {
            f.apply(in, out);
            return read_texture(GL_TEXTURE_2D, out, s.m, s.n);
        };
        for (Boundary b : {Boundary::Wrap, Boundary::Reflect}) {
            const std::string where = what + (b == Boundary::Wrap ? ", wrap" : ", reflect");
            TextureFilter now(s.m, s.n, symmetric, o, b);
            const std::vector<float> symmetric_now = filtered(now);
            now.set_kernel(k.kernel);
            const std::vector<float> random_now = filtered(now);

            TextureFilter polled(s.m, s.n, symmetric, o, b, Compile::Background);
            EXPECT(settled(polled), where, ": not ready after 5 minutes");
            EXPECT(filtered(polled) == symmetric_now, where, ": a filter compiled in the background differs from one compiled at once");
            polled.set_kernel(k.kernel);   // another symmetry: other programs
            EXPECT(settled(polled), where, ": not ready after set_kernel");
            const std::vector<float> random_polled = filtered(polled);
            EXPECT(random_polled == random_now, where, ": after set_kernel, a filter compiled in the background differs");
            if (b == Boundary::Wrap) expect_matches_fftw(where + " compiled in the background", s, image, k.impulse, random_polled, kRelRms);

            TextureFilter waited(s.m, s.n, k.kernel, o, b, Compile::Background);
            EXPECT(filtered(waited) == random_now, where, ": apply() before ready() differs");   // it waits for the programs
            EXPECT(waited.ready(), where, ": not ready after apply()");
        }
        GLuint names[2] = {in, out};
        glDeleteTextures(2, names);
    }
}

TEST(gl_state_is_left_as_found) {
    const Size s{32, 32};
    std::vector<float> image = test::random_image(s, 1);
    for (const FftOptions& o : backends()) {
        CallerSetup caller;
        const GLuint in = make_texture(GL_TEXTURE_2D, GL_RGBA32F, s.m, s.n, image.data());
        const GLuint out = make_texture(GL_TEXTURE_2D, GL_RGBA16F, s.m, s.n, nullptr);
        glBindTexture(GL_TEXTURE_2D, caller.textures[4]);  // make_texture unbound unit 2's
        const CallerState before = CallerState::read();
        {
            TextureFilter filter(s.m, s.n, "gaussian:2", o);
            EXPECT(CallerState::read() == before, "after construction: ", describe(before, CallerState::read()));
            {
                // While its programs compile, the shader compiler threads alone may differ (one a
                // core: NVIDIA's driver finishes the compiles in flight before it takes another number).
                TextureFilter background(s.m, s.n, "disk:2", o, Boundary::Wrap, Compile::Background);
                CallerState compiling = CallerState::read();
                compiling.compiler_threads = before.compiler_threads;
                EXPECT(compiling == before, "after construction in the background: ", describe(before, compiling));
                EXPECT(settled(background), "not ready after 5 minutes");
                EXPECT(CallerState::read() == before, "after ready(): ", describe(before, CallerState::read()));
                background.set_kernel(parse_kernel("motion:3"));   // another symmetry: compiles again
            }
            EXPECT(CallerState::read() == before, "after a filter compiling in the background is gone: ", describe(before, CallerState::read()));
            filter.apply(in, out);
            EXPECT(CallerState::read() == before, "after apply: ", describe(before, CallerState::read()));
            filter.apply(in);
            filter.set_kernel(parse_kernel("disk:3"));
            filter.inverse(filter.forward(in), out);
            EXPECT(CallerState::read() == before, "after forward, inverse, set_kernel: ", describe(before, CallerState::read()));
            try {
                filter.apply(in, 987654);  // throws after the input copy
            } catch (const Error&) {
            }
            EXPECT(CallerState::read() == before, "after a failed apply: ", describe(before, CallerState::read()));
        }
        EXPECT(CallerState::read() == before, "after destruction: ", describe(before, CallerState::read()));
        EXPECT(glGetError() == GL_NO_ERROR, "no GL error left behind");
        GLuint names[2] = {in, out};
        glDeleteTextures(2, names);
    }
}

TEST(failures_are_one_line_errors) {
    test::context();
    auto message = [](auto&& f) -> std::string {
        try {
            f();
        } catch (const Error& e) {
            return e.what();
        } catch (const std::exception& e) {
            return std::string("not a gpufft::Error: ") + e.what();
        }
        return "no error";
    };
    auto expect_says = [](const std::string& got, const std::string& part) {
        EXPECT(got.find(part) != std::string::npos && got.find('\n') == std::string::npos, "'", got, "' should say '", part, "'");
    };
    FftOptions compute;
    compute.backend = Backend::Compute;
    if (GLEW_VERSION_4_3) EXPECT(filter_length(1366, compute) == 1372, filter_length(1366, compute));
    expect_says(message([] { TextureFilter(64, 64, "nosuch:3"); }), "kernel 'nosuch:3'");
    expect_says(message([] { TextureFilter(64, 64, "/nonexistent/k.png"); }), "/nonexistent/k.png");
    FftOptions cpu;
    cpu.backend = Backend::Fftw;
    expect_says(message([&] { TextureFilter(64, 64, "identity", cpu); }), "fftw backend");
    expect_says(message([] { TextureFilter(0, 64, "identity"); }), "the width and height must be within");
    TextureFilter filter(16, 16, "identity");
    const GLuint small = make_texture(GL_TEXTURE_2D, GL_RGBA32F, 8, 16, nullptr);
    expect_says(message([&] { filter.apply(small); }), "is 8x16, the filter's size is 16x16");
    expect_says(message([&] { filter.apply(123456); }), "is not a texture");
    expect_says(message([&] { filter.apply({small, kTextureRectangle}); }), "is not a GL_TEXTURE_RECTANGLE texture");
    expect_says(message([&] { filter.apply_image(Image(4, 4)); }), "the image is 4x4");
    glDeleteTextures(1, &small);
    // Without a current context (a new thread has none).
    std::string no_context;
    std::thread([&] { no_context = message([] { TextureFilter(16, 16, "identity"); }); }).join();
    expect_says(no_context, "no current OpenGL context");
    EXPECT(std::string(version()) == GPUFFT_VERSION, version());
}
