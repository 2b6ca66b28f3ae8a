#include "fft/fragment_fft.h"

#include "fft/twiddle.h"

#include <algorithm>
#include <stdexcept>

namespace gpufft {

namespace {

ProgramSpec spec_of(const Variant& v) { return ProgramSpec{"quad.vert", v.file_name(), v.defines, true}; }

void bind_texture(int unit, GLenum target, GLuint id) {
    glActiveTexture(GL_TEXTURE0 + static_cast<GLenum>(unit));
    glBindTexture(target, id);
}

/// The fast chain's twiddles for an axis of length L: texel (a, j) holds W_L^((2j+1) a) in .xy and
/// W_L^((2j+2) a) in .zw: every twiddle a radix-16 stage needs in eight fetches (j < 8, or more
/// for the radices up to 28), for a < L/4 where 4 divides L and every radix (each fragment's four
/// outputs one butterfly's), else a < L.
Texture radix_twiddle_table(int length) {
    const std::vector<int> r = radices(length);
    const int blocks = plane_blocks(length);
    const bool quarter = std::all_of(r.begin(), r.end(), [blocks](int x) { return butterfly_outputs(x, blocks) == 4; });
    const int most = *std::max_element(r.begin(), r.end());
    const int width = quarter ? length / 4 : length, rows = std::max(8, most / 2);
    std::vector<float> table(static_cast<size_t>(width) * rows * 4);
    for (int j = 0; j < rows; ++j)
        for (int a = 0; a < width; ++a) {
            std::complex<double> w1 = unit_root(static_cast<long long>(2 * j + 1) * a, length);
            std::complex<double> w2 = unit_root(static_cast<long long>(2 * j + 2) * a, length);
            float* t = &table[(static_cast<size_t>(j) * width + a) * 4];
            t[0] = static_cast<float>(w1.real());
            t[1] = static_cast<float>(w1.imag());
            t[2] = static_cast<float>(w2.real());
            t[3] = static_cast<float>(w2.imag());
        }
    Texture t(width, rows, Storage::Float32);
    t.upload(table.data());
    return t;
}

/// Texels fetched per output that cost a pass as much as its write (LengthModel): below them the
/// write bounds a pass, above them the fetches (H200, src/README.md "Axes of 2 mod 4": 10.0-10.5
/// at six radices on planes of two and four blocks).
constexpr double kFetchesPerWrite = 10.3;

}  // namespace

bool FragmentFft::fast_supported(int width, int height) {
    GLint buffers = 0;
    glGetIntegerv(GL_MAX_DRAW_BUFFERS, &buffers);
    return fast_chain_size(width, height) && buffers >= 8 && (GLEW_VERSION_3_0 || GLEW_EXT_texture_array);
}

LengthModel FragmentFft::lengths(const FftOptions& options) {
    auto power_of_two = [](long long n) { return n >= 2 && is_power_of_two(n); };
    if (options.radix == 2 || !fast_supported(4, 4)) return {power_of_two, [](long long) { return 1.0; }, false, "radix-2 chain"};
    // Below 4 (and for powers of two where the other side is one too) the radix-2 chain stands in.
    return {[](long long n) { return fast_chain_length(n) || (n >= 2 && is_power_of_two(n)); },
            [](long long n) {
                // Per stage: the pass's write of the array (1), or its fetches per output where
                // they cost more (the radix's inputs and twiddles per butterfly, over the
                // butterfly's outputs the fragment keeps: 4, 2 or 1 of its four, 2 or 1 of its
                // two along an axis of 2 mod 4).
                double cost = 0;
                const int blocks = plane_blocks(n);
                for (int r : radices(static_cast<int>(n)))
                    cost += std::max(1.0, (2.0 * r + (r - 1) / 2 + 1) / butterfly_outputs(r, blocks) / kFetchesPerWrite);
                return cost;
            },
            false, "fast chain"};
}

FragmentFft::FragmentFft(ProgramCache& programs, int width, int height, const FftOptions& options)
    : Fft2D(width, height, options.storage), programs_(programs), options_(options) {
    check_fft_size(width, height);
    check_texture_size(width, height);
    if (options.radix != 0 && options.radix != 2) throw std::invalid_argument("radix must be 2 (the paper's chain) or 0 (auto)");
    fast_ = options.radix == 0 && fast_supported(width, height);
    // The paper's chain takes powers of two; the fast chain every fast size from 4 up.
    if (!fast_ && !(is_power_of_two(width) && is_power_of_two(height))) {
        if (options.radix == 2) check_power_of_two_size(width, height);
        check_fast_size(width, height);  // says why the fast chain cannot
        throw std::invalid_argument("the fast chain needs 8 draw buffers and texture arrays for " + std::to_string(width) + "x" +
                                    std::to_string(height) + ", and the radix-2 chain takes powers of two only");
    }
    if (fast_) {
        forward_ = fast_forward_plan(width, height, options.computed_twiddles);
        inverse_ = fast_inverse_plan(width, height, options.computed_twiddles);
        filter_ = fast_filter_plan(width, height, options.computed_twiddles);
        for (int i = 0; i < 2; ++i) {
            const int row_blocks = plane_blocks(width), column_blocks = plane_blocks(height);
            row_planes_[i] = PlaneTarget(width / row_blocks, height / 2, 2 * row_blocks, options.storage);
            column_planes_[i] = PlaneTarget(height / column_blocks, width / 2, 2 * column_blocks, options.storage);
        }
        for (int length : {width, height})
            if (!radix_twiddles_.count(length)) radix_twiddles_.emplace(length, radix_twiddle_table(length));
    } else {
        forward_ = gpufft::forward_plan(width, height);
        inverse_ = gpufft::inverse_plan(width, height);
        filter_ = gpufft::filter_plan(width, height);
        int table = std::max(width, height);
        twiddles_ = Texture::table(table, twiddle_table(table).data());
    }
    ping_pong_[0] = RenderTarget(width, height, options.storage);
    ping_pong_[1] = RenderTarget(width, height, options.storage);
    // Every region and program now (compiled side by side where the driver can): a driver that
    // rejects a program fails here with its log, and the first frame is not slower than the rest.
    std::vector<ProgramSpec> specs;
    for (const Plan* plan : {&forward_, &inverse_, &filter_}) {
        std::vector<Region> regions;
        for (const Pass& pass : plan->passes)
            for (const Draw& d : pass.draws) {
                regions.push_back(d.region);
                specs.push_back(spec_of(d.variant));
            }
        quads_.add(regions);
    }
    programs_.prepare(specs);
    check_gl("setting up the fragment FFT");
}

std::string FragmentFft::name() const { return fast_ ? "fragment radix-16" : "fragment radix-2"; }

const Texture& FragmentFft::twiddles(const Pass& pass) {
    if (pass.radix) return radix_twiddles_.at(static_cast<int>(pass.axis_length));
    return twiddles_;
}

void FragmentFft::run(const Plan& plan, const Texture& src, RenderTarget& dst, const Texture* kernel, Profile* profile) {
    if (plan.width != width_ || plan.height != height_ || dst.width() != width_ || dst.height() != height_ ||
        src.width() != width_ || src.height() != height_)
        throw std::invalid_argument("plan, source and destination sizes differ");
    std::vector<Region> regions;
    for (const Pass& p : plan.passes) {
        for (const Draw& d : p.draws) regions.push_back(d.region);
        bool planes = p.source == Surface::RowPlanes || p.source == Surface::ColumnPlanes || p.target == Surface::RowPlanes ||
                      p.target == Surface::ColumnPlanes;
        if (planes && !fast_) throw std::invalid_argument("this transform has no planes for the fast chain");
        if (p.reads_kernel && !kernel) throw std::invalid_argument("the filter plan needs a kernel spectrum");
    }
    quads_.add(regions);  // plans made elsewhere (a copy pass, a probe) bring their own regions

    // Writes to the pair alternate; the last one must not be dst when dst is one of the pair.
    int pair_writes = 0;
    for (const Pass& p : plan.passes) pair_writes += p.target == Surface::Pair;
    int dst_in_pair = &dst == &ping_pong_[0] ? 0 : &dst == &ping_pong_[1] ? 1 : -1;
    int next_pair = dst_in_pair < 0 ? 0 : (dst_in_pair + pair_writes) % 2;
    int latest_pair = -1, latest_rows = -1, latest_columns = -1;

    if (profile) timestamps_.start();

    prepare_pass_state();
    quads_.bind();
    bind_texture(1, GL_TEXTURE_RECTANGLE, kernel ? kernel->id() : 0);
    for (const Pass& pass : plan.passes) {
        // The source: a rectangle texture at unit 0, or planes at unit 3.
        GLuint source = 0;
        switch (pass.source) {
            case Surface::Input: source = src.id(); break;
            case Surface::Output: source = dst.texture().id(); break;
            case Surface::Pair: source = ping_pong_[latest_pair < 0 ? 0 : latest_pair].texture().id(); break;
            case Surface::RowPlanes: source = row_planes_[latest_rows < 0 ? 0 : latest_rows].texture(); break;
            case Surface::ColumnPlanes: source = column_planes_[latest_columns < 0 ? 0 : latest_columns].texture(); break;
        }
        bool planes = pass.source == Surface::RowPlanes || pass.source == Surface::ColumnPlanes;
        bind_texture(planes ? 3 : 0, planes ? GL_TEXTURE_2D_ARRAY : GL_TEXTURE_RECTANGLE, source);
        bind_texture(planes ? 0 : 3, planes ? GL_TEXTURE_RECTANGLE : GL_TEXTURE_2D_ARRAY, 0);
        bind_texture(2, GL_TEXTURE_RECTANGLE, pass.axis_length > 0 ? twiddles(pass).id() : 0);

        // The target.
        GLuint written = 0;
        int target_width = width_, target_height = height_;
        switch (pass.target) {
            case Surface::Input: throw std::logic_error("a pass cannot write its input");
            case Surface::Output:
                dst.bind_for_drawing();
                written = dst.texture().id();
                break;
            case Surface::Pair:
                ping_pong_[next_pair].bind_for_drawing();
                written = ping_pong_[next_pair].texture().id();
                latest_pair = next_pair;
                next_pair = 1 - next_pair;
                break;
            case Surface::RowPlanes:
            case Surface::ColumnPlanes: {
                bool rows = pass.target == Surface::RowPlanes;
                int& latest = rows ? latest_rows : latest_columns;
                PlaneTarget& t = (rows ? row_planes_ : column_planes_)[latest < 0 ? 0 : 1 - latest];
                t.bind_for_drawing();
                written = t.texture();
                target_width = t.width();
                target_height = t.height();
                latest = latest < 0 ? 0 : 1 - latest;
                break;
            }
        }
        if (written == source) throw std::logic_error("a pass would overwrite its own source");

        const float table = pass.radix ? 0.0f : static_cast<float>(twiddles_.width());
        for (const Draw& d : pass.draws) {
            const GlProgram& program = programs_.get(spec_of(d.variant));
            program.use();
            program.set(Uniform::Size, static_cast<float>(width_), static_cast<float>(height_));
            program.set(Uniform::TargetSize, static_cast<float>(target_width), static_cast<float>(target_height));
            program.set(Uniform::Stride, pass.stride);
            if (pass.axis_length > 0 && !pass.radix) program.set(Uniform::TwiddleStep, table / pass.axis_length);
            program.set(Uniform::Scale, pass.scale);
            program.set(Uniform::Gain, pass.scale);
            quads_.draw(d.region);
            if (profile) timestamps_.mark();
        }
    }
    glUseProgram(0);
    quads_.unbind();
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    for (int unit : {3, 2, 1, 0}) bind_texture(unit, unit == 3 ? GL_TEXTURE_2D_ARRAY : GL_TEXTURE_RECTANGLE, 0);
    check_gl("running the fragment chain");

    if (profile) {
        *profile = Profile{};
        const std::vector<double> draw_ms = timestamps_.intervals_ms();
        size_t i = 0;
        for (const Pass& pass : plan.passes) {
            double pass_ms = 0;
            for (const Draw& d : pass.draws) {
                const double ms = draw_ms[i];
                profile->program_ms[static_cast<size_t>(d.variant.program)] += ms;
                pass_ms += ms;
                ++i;
            }
            profile->pass_ms.push_back(pass_ms);
            profile->pass_labels.push_back(pass.label);
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

void FragmentFft::filter(const Texture& image, const Texture& kernel_spectrum, bool real_kernel, RenderTarget& out, Profile* profile) {
    (void)real_kernel;  // multiply.frag reads the whole spectrum
    run(filter_, image, out, &kernel_spectrum, profile);
}

}  // namespace gpufft
