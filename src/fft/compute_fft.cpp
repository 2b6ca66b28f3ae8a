#include "fft/compute_fft.h"

#include "fft/twiddle.h"

#include <algorithm>
#include <stdexcept>

namespace gpufft {

namespace {

GLint shared_memory_limit() {
    GLint bytes = 0;
    glGetIntegerv(GL_MAX_COMPUTE_SHARED_MEMORY_SIZE, &bytes);
    return bytes;
}

/// Mesa's llvmpipe: a JIT for which big unrolled compute programs are slow to compile (measured:
/// 10-20 s for a radix-16 line program, 13 s with 8 components per exchange round; radix 4 with 2
/// components: about 1 s), while the CPU gains nothing from fewer stages or rounds.
bool software_renderer() {
    const char* renderer = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
    return renderer && std::string(renderer).find("llvmpipe") != std::string::npos;
}

/// Components (real or imaginary parts of one channel) per exchange round that fit the shared
/// memory: the line plus one float of padding per 32, 4 bytes each. 0 if not even one fits.
int components_for(int length) {
    const long long line = (static_cast<long long>(length) + length / 32) * 4;
    for (int c : {8, 4, 2, 1})
        if (c * line <= shared_memory_limit() && (c <= 2 || !software_renderer())) return c;
    return 0;
}

/// The stages of a transform as literal calls: butterflies(r, P, dir), and between stages
/// exchange(r_out, r_in, P_in), P the output stride L / S.
std::string stage_calls(const std::vector<int>& radices, int length, const char* dir) {
    std::string s;
    int size = 1;
    for (size_t i = 0; i < radices.size(); ++i) {
        size *= radices[i];
        s += "butterflies(" + std::to_string(radices[i]) + ", " + std::to_string(length / size) + ", " + dir + "); ";
        if (i + 1 < radices.size())
            s += "exchange(" + std::to_string(radices[i]) + ", " + std::to_string(radices[i + 1]) + ", " +
                 std::to_string(length / (size * radices[i + 1])) + "); ";
    }
    return s;
}

void bind(int unit, const Texture* t) {
    glActiveTexture(GL_TEXTURE0 + static_cast<GLenum>(unit));
    glBindTexture(GL_TEXTURE_RECTANGLE, t ? t->id() : 0);
}

}  // namespace

std::vector<int> ComputeFft::line_radices(int length, int max_radix) {
    if (length == 2) return {2};
    if (max_radix >= 16) return radices(length);  // as the fast fragment chain: 16s, then 8 and/or 4
    int n = log2_exact(length), k = log2_exact(max_radix);
    std::vector<int> r(static_cast<size_t>(n / k), max_radix);
    if (n % k) r.push_back(1 << (n % k));
    return r;
}

int ComputeFft::radix_for(int option) {
    if (option == 4 || option == 8 || option == 16) return option;
    if (option != 0) throw std::invalid_argument("the compute radix must be 4, 8 or 16");
    // Measured on the H200 (filter of 1024^2): radix 4 0.146 ms, 8 0.65 ms, 16 0.92 ms (the larger
    // radices hold 8 or 16 elements a thread in registers and spill); on llvmpipe radix 4 also
    // compiles fastest.
    return 4;
}

bool ComputeFft::supported(int length) {
    return (GLEW_VERSION_4_3 || GLEW_ARB_compute_shader) && length >= 2 && components_for(length) > 0;
}

ComputeFft::ComputeFft(ProgramCache& programs, int width, int height, const FftOptions& options)
    : Fft2D(width, height, options.storage), programs_(programs), options_(options), max_radix_(radix_for(options.compute_radix)) {
    check_fft_size(width, height);
    check_texture_size(width, height);
    if (!supported(width) || !supported(height))
        throw GlError("the compute backend needs OpenGL 4.3 compute shaders and lines that fit shared memory");
    rows_out_ = RenderTarget(width, height, options.storage);
    columns_out_ = RenderTarget(width, height, options.storage);
    for (int length : {width, height})
        if (!twiddles_.count(length)) twiddles_.emplace(length, Texture::table(length, twiddle_table(length).data()));
    // Compile every variant now: a driver that rejects one fails here with its log.
    for (const char* v : {"ROWS_FORWARD", "COLUMNS_FORWARD", "COLUMNS_FILTER", "COLUMNS_INVERSE", "ROWS_INVERSE"}) {
        bool rows = v[0] == 'R';
        bool intermediate = std::string(v) == "ROWS_FORWARD" || std::string(v) == "COLUMNS_FILTER" || std::string(v) == "COLUMNS_INVERSE";
        for (const Step& d : dispatches({Step{v, rows, nullptr, nullptr, 1, 1, options.storage == Storage::Float16 && intermediate}}))
            programs_.get(spec(d));
    }
    check_gl("setting up the compute FFT");
}

ComputeFft::~ComputeFft() {
    if (!timestamps_.empty()) glDeleteQueries(static_cast<GLsizei>(timestamps_.size()), timestamps_.data());
}

ProgramSpec ComputeFft::spec(const Step& step) const {
    const int length = step.rows ? width_ : height_;
    // At most 1024 threads a workgroup, the GL's limit: the radix grows with the line where it has to.
    int radix = max_radix_;
    while (length / radix > 1024) radix *= 2;
    std::vector<int> forward = line_radices(length, std::min(radix, 16)), inverse = forward;
    // The filter's inverse column stage starts with the forward's last radix: the first inverse
    // butterfly reads exactly the elements the last forward one wrote, still in registers.
    if (std::string(step.variant) == "COLUMNS_FILTER") {
        inverse.assign(1, forward.back());
        inverse.insert(inverse.end(), forward.begin(), forward.end() - 1);
    }
    std::vector<std::string> defines = {
        step.variant,
        "LENGTH " + std::to_string(length),
        "RADIX " + std::to_string(forward.front()),
        "THREADS " + std::to_string(length / forward.front()),
        "FORWARD_TRANSFORM " + stage_calls(forward, length, "-1.0"),
        "FORWARD_FIRST " + std::to_string(forward.front()),
        "FORWARD_LAST " + std::to_string(forward.back()),
        "INVERSE_TRANSFORM " + stage_calls(inverse, length, "1.0"),
        "INVERSE_FIRST " + std::to_string(inverse.front()),
        "INVERSE_LAST " + std::to_string(inverse.back()),
        "COMPONENTS " + std::to_string(components_for(length)),
        std::string("IMAGE_FORMAT ") + (step.half_target ? "rgba16f" : "rgba32f"),
    };
    if (step.pair0) defines.push_back("PAIR0");
    return ProgramSpec{"", "fft_line.comp", defines, false};
}

std::vector<ComputeFft::Step> ComputeFft::dispatches(std::vector<Step> steps) const {
    std::vector<Step> out;
    for (Step s : steps) {
        if (s.rows) {
            out.push_back(s);
            continue;
        }
        if (width_ / 2 > 1) out.push_back(s);  // pairs 1 .. M/2 - 1
        s.pair0 = true;
        out.push_back(s);
    }
    return out;
}

void ComputeFft::run(const std::vector<Step>& given, const Texture* kernel, Profile* profile) {
    const std::vector<Step> steps = dispatches(given);
    if (profile) {
        if (timestamps_.size() < steps.size() + 1) {
            if (!timestamps_.empty()) glDeleteQueries(static_cast<GLsizei>(timestamps_.size()), timestamps_.data());
            timestamps_.assign(steps.size() + 1, 0);
            glGenQueries(static_cast<GLsizei>(timestamps_.size()), timestamps_.data());
        }
        glQueryCounter(timestamps_[0], GL_TIMESTAMP);
    }
    bind(1, kernel);
    for (size_t i = 0; i < steps.size(); ++i) {
        const Step& s = steps[i];
        if (s.source->id() == s.target->id()) throw std::logic_error("a dispatch would overwrite its own source");
        const GlProgram& program = programs_.get(spec(s));
        program.use();
        program.set(Uniform::Size, static_cast<float>(width_), static_cast<float>(height_));
        program.set(Uniform::Scale, s.scale);
        program.set(Uniform::Gain, s.gain);
        bind(0, s.source);
        bind(2, &twiddles_.at(s.rows ? width_ : height_));
        glBindImageTexture(0, s.target->id(), 0, GL_FALSE, 0, GL_WRITE_ONLY, s.half_target ? GL_RGBA16F : GL_RGBA32F);
        glDispatchCompute(static_cast<GLuint>(s.rows ? height_ / 2 : s.pair0 ? 1 : width_ / 2 - 1), 1, 1);
        // What one dispatch wrote, the next reads as a texture; the caller may read it back or
        // draw from it. A column step's two dispatches (pairs 1.. and pair 0) read the same
        // source and write different texels: no barrier between them, so the one-workgroup pair-0
        // dispatch runs alongside the other (alone it cost 26 us of latency at 1024^2).
        bool twin_follows = !s.rows && !s.pair0 && i + 1 < steps.size() && steps[i + 1].pair0;
        if (!twin_follows)
            glMemoryBarrier(GL_TEXTURE_FETCH_BARRIER_BIT | GL_SHADER_IMAGE_ACCESS_BARRIER_BIT | GL_FRAMEBUFFER_BARRIER_BIT |
                        GL_TEXTURE_UPDATE_BARRIER_BIT | GL_PIXEL_BUFFER_BARRIER_BIT);
        if (profile) glQueryCounter(timestamps_[i + 1], GL_TIMESTAMP);
    }
    glUseProgram(0);
    glBindImageTexture(0, 0, 0, GL_FALSE, 0, GL_WRITE_ONLY, GL_RGBA32F);
    for (int unit : {2, 1, 0}) bind(unit, nullptr);
    check_gl("running the compute FFT");
    if (profile) {
        *profile = Profile{};
        std::vector<GLuint64> t(steps.size() + 1);
        for (size_t i = 0; i <= steps.size(); ++i) glGetQueryObjectui64v(timestamps_[i], GL_QUERY_RESULT, &t[i]);
        for (size_t i = 0; i < steps.size(); ++i) {
            double ms = static_cast<double>(t[i + 1] - t[i]) * 1e-6;
            profile->pass_ms.push_back(ms);
            profile->pass_labels.push_back(std::string(steps[i].variant) + (steps[i].pair0 ? " (pair 0)" : ""));
            profile->program_ms[static_cast<size_t>(Program::Fft)] += ms;
            profile->total_ms += ms;
        }
    }
}

void ComputeFft::forward(const Texture& image, RenderTarget& spectrum, Profile* profile) {
    const float m = static_cast<float>(width_), n = static_cast<float>(height_);
    const bool half = storage_ == Storage::Float16;
    run({{"ROWS_FORWARD", true, &image, &rows_out_.texture(), 1, 1, half},
         {"COLUMNS_FORWARD", false, &rows_out_.texture(), &spectrum.texture(), 1 / m, 1 / n}},
        nullptr, profile);
}

void ComputeFft::inverse(const Texture& spectrum, RenderTarget& image, Profile* profile) {
    const bool half = storage_ == Storage::Float16;
    run({{"COLUMNS_INVERSE", false, &spectrum, &columns_out_.texture(), 1, 1, half},
         {"ROWS_INVERSE", true, &columns_out_.texture(), &image.texture(), 1, 1}},
        nullptr, profile);
}

void ComputeFft::filter(const Texture& image, const Texture& kernel_spectrum, RenderTarget& out, Profile* profile) {
    // The kernel's spectrum carries 1/(MN); the image's column transform lacks its 1/N: gain M.
    const float m = static_cast<float>(width_);
    const bool half = storage_ == Storage::Float16;
    run({{"ROWS_FORWARD", true, &image, &rows_out_.texture(), 1, 1, half},
         {"COLUMNS_FILTER", false, &rows_out_.texture(), &columns_out_.texture(), 1 / m, m, half},
         {"ROWS_INVERSE", true, &columns_out_.texture(), &out.texture(), 1, 1}},
        &kernel_spectrum, profile);
}

}  // namespace gpufft
