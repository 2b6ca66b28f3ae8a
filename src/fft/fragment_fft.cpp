#include "fft/fragment_fft.h"

#include "fft/twiddle.h"

#include <algorithm>
#include <stdexcept>

namespace gpufft {

namespace {

ProgramSpec spec_of(const Variant& v) {
    return ProgramSpec{"quad.vert", std::string(program_name(v.program)) + ".frag", v.defines, true};
}

void bind_texture(int unit, GLuint id) {
    glActiveTexture(GL_TEXTURE0 + static_cast<GLenum>(unit));
    glBindTexture(GL_TEXTURE_RECTANGLE, id);
}

}  // namespace

FragmentFft::FragmentFft(ProgramCache& programs, int width, int height, Storage storage)
    : Fft2D(width, height, storage),
      programs_(programs),
      forward_(gpufft::forward_plan(width, height)),
      inverse_(gpufft::inverse_plan(width, height)),
      filter_(gpufft::filter_plan(width, height)) {
    check_texture_size(width, height);
    ping_pong_[0] = RenderTarget(width, height, storage);
    ping_pong_[1] = RenderTarget(width, height, storage);
    int table = std::max(width, height);
    twiddles_ = Texture::table(table, twiddle_table(table).data());
    add_regions(filter_);  // the filter holds every region of the forward and inverse plans too
    // Compile every variant now, so the first frame is not slower than the rest and a driver that
    // rejects a program fails here with its log.
    for (const Pass& pass : filter_.passes)
        for (const Draw& d : pass.draws) programs_.get(spec_of(d.variant));
    check_gl("setting up the fragment FFT");
}

FragmentFft::~FragmentFft() {
    if (!timestamps_.empty()) glDeleteQueries(static_cast<GLsizei>(timestamps_.size()), timestamps_.data());
}

void FragmentFft::add_regions(const Plan& plan) {
    std::vector<Region> regions;
    for (const Pass& pass : plan.passes)
        for (const Draw& d : pass.draws) regions.push_back(d.region);
    quads_.add(regions);
}

void FragmentFft::set_state() {
    prepare_pass_state();
    quads_.bind();
}

void FragmentFft::run(const Plan& plan, const Texture& src, RenderTarget& dst, const Texture* kernel,
                      Profile* profile) {
    if (plan.width != width_ || plan.height != height_ || dst.width() != width_ || dst.height() != height_ ||
        src.width() != width_ || src.height() != height_)
        throw std::invalid_argument("plan, source and destination sizes differ");
    add_regions(plan);
    set_state();

    const size_t count = plan.passes.size();
    // dst is ping_pong_[last] when it is one of the pair; intermediates alternate back from there.
    int last = &dst == &ping_pong_[1] ? 1 : 0;
    auto target_of = [&](size_t k) -> RenderTarget& {
        if (k + 1 == count) return dst;
        return ping_pong_[(last + (count - 1 - k)) % 2];
    };
    size_t draws = 0;
    for (const Pass& pass : plan.passes) draws += pass.draws.size();
    if (profile) {
        if (timestamps_.size() < draws + 1) {
            if (!timestamps_.empty()) glDeleteQueries(static_cast<GLsizei>(timestamps_.size()), timestamps_.data());
            timestamps_.assign(draws + 1, 0);
            glGenQueries(static_cast<GLsizei>(timestamps_.size()), timestamps_.data());
        }
        glQueryCounter(timestamps_[0], GL_TIMESTAMP);
    }

    bind_texture(2, twiddles_.id());
    bind_texture(1, kernel ? kernel->id() : 0);
    const float table = static_cast<float>(twiddles_.width());
    const Texture* source = &src;
    size_t query = 1;
    for (size_t k = 0; k < count; ++k) {
        const Pass& pass = plan.passes[k];
        if (pass.reads_kernel && !kernel) throw std::invalid_argument("the filter plan needs a kernel spectrum");
        RenderTarget& target = target_of(k);
        if (target.texture().id() == source->id()) throw std::logic_error("a pass would overwrite its own source");
        target.bind_for_drawing();
        bind_texture(0, source->id());
        for (const Draw& d : pass.draws) {
            const GlProgram& program = programs_.get(spec_of(d.variant));
            program.use();
            program.set(Uniform::Size, static_cast<float>(width_), static_cast<float>(height_));
            program.set(Uniform::Stride, pass.stride);
            if (pass.axis_length > 0) program.set(Uniform::TwiddleStep, table / pass.axis_length);
            program.set(Uniform::Scale, pass.scale);
            program.set(Uniform::Gain, pass.scale);
            quads_.draw(d.region);
            if (profile) glQueryCounter(timestamps_[query++], GL_TIMESTAMP);
        }
        source = &target.texture();
    }
    glUseProgram(0);
    quads_.unbind();
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    check_gl("running the fragment chain");

    if (profile) {
        *profile = Profile{};
        std::vector<GLuint64> t(draws + 1);
        for (size_t i = 0; i <= draws; ++i) glGetQueryObjectui64v(timestamps_[i], GL_QUERY_RESULT, &t[i]);
        size_t i = 0;
        for (const Pass& pass : plan.passes) {
            double pass_ms = 0;
            for (const Draw& d : pass.draws) {
                double ms = static_cast<double>(t[i + 1] - t[i]) * 1e-6;
                profile->program_ms[static_cast<size_t>(d.variant.program)] += ms;
                pass_ms += ms;
                ++i;
            }
            profile->pass_ms.push_back(pass_ms);
            profile->total_ms += pass_ms;
        }
    }
}

void FragmentFft::forward(const Texture& image, RenderTarget& spectrum, Profile* profile) {
    run(forward_, image, spectrum, nullptr, profile);
}

void FragmentFft::inverse(const Texture& spectrum, RenderTarget& image, Profile* profile) {
    run(inverse_, spectrum, image, nullptr, profile);
}

void FragmentFft::filter(const Texture& image, const Texture& kernel_spectrum, RenderTarget& out, Profile* profile) {
    run(filter_, image, out, &kernel_spectrum, profile);
}

}  // namespace gpufft
