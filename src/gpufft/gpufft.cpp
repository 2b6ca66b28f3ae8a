// The public API (gpufft/gpufft.h) over the library's layers: the caller's textures are blitted in
// and out of the filter's own render targets, every call runs inside SavedGlState, and every
// failure leaves as gpufft::Error.
#include <gpufft/gpufft.h>

#include "fft/fft2d.h"
#include "fft/filter.h"
#include "fft/layout.h"
#include "gl/context.h"
#include "gl/state.h"
#include "image/convolve.h"
#include "image/kernels.h"
#include "image/png_io.h"

#include <algorithm>
#include <complex>
#include <new>
#include <utility>

namespace gpufft {

namespace {

/// Checks that a context is current and GLEW's entry points are loaded (the caller may use
/// another loader): the library's calls go through GLEW's.
void require_context() {
    if (!glGetString(GL_VERSION)) throw Error("no current OpenGL context");
    if (!glUseProgram) {  // GLEW's pointers are null until glewInit()
        glewExperimental = GL_TRUE;
        const GLenum status = glewInit();
        if (status != GLEW_OK && status != GLEW_ERROR_NO_GLX_DISPLAY)
            throw Error(std::string("cannot load OpenGL entry points: ") + reinterpret_cast<const char*>(glewGetErrorString(status)));
        while (glGetError() != GL_NO_ERROR) {}
    }
    if (!glUseProgram || !glBindFramebuffer || !glBlitFramebuffer)
        throw Error("the OpenGL context lacks programs or framebuffer objects (GL 3.0 is needed)");
}

/// Runs `f` with the caller's GL state saved and every failure as gpufft::Error.
template <class F>
auto guarded(F&& f) -> decltype(f()) {
    try {
        require_context();
        // Errors the caller left pending are not ours to report (check_gl reads them).
        while (glGetError() != GL_NO_ERROR) {}
        SavedGlState saved;
        return f();
    } catch (const Error&) {
        throw;
    } catch (const std::bad_alloc&) {
        throw Error("out of memory");
    } catch (const std::exception& e) {
        throw Error(e.what());
    }
}

const char* target_name(unsigned target) {
    return target == kTexture2D ? "GL_TEXTURE_2D" : target == kTextureRectangle ? "GL_TEXTURE_RECTANGLE" : "?";
}

}  // namespace

const char* version() { return GPUFFT_VERSION; }

Image load_png(const std::string& path) { return read_png(path).image; }

void save_png(const std::string& path, const Image& image, int depth, bool overwrite) {
    if (depth != 8 && depth != 16) throw Error(path + ": the depth must be 8 or 16 bits, not " + std::to_string(depth));
    if (image.width < 1 || image.height < 1 || image.rgba.size() != image.pixels() * 4)
        throw Error(path + ": the image is not width x height RGBA floats");
    PngFormat format;
    format.bit_depth = depth;
    write_png(path, image, format, overwrite);
}

int filter_length(int need, const FftOptions& options) {
    return guarded([&] {
        if (options.backend == Backend::Fftw) throw Error("the fftw backend filters on the CPU, not textures");
        const long long n = fft_lengths(options).best(std::max(need, 2), max_texture_side());
        if (n == 0) throw Error("no length from " + std::to_string(need) + " up fits this GL (limit " + std::to_string(max_texture_side()) + ")");
        return static_cast<int>(n);
    });
}

struct TextureFilter::Impl {
    int width, height;
    ProgramCache programs;
    std::unique_ptr<Fft2D> fft;
    std::unique_ptr<Filter> filter;
    RenderTarget input, output, spectrum;
    FramebufferHandle caller_fbo;

    Impl(int w, int h, const Kernel& kernel, const FftOptions& options) : width(w), height(h) {
        if (options.backend == Backend::Fftw) throw Error("the fftw backend filters on the CPU, not textures");
        const LengthModel lengths = fft_lengths(options);
        for (auto [n, axis] : {std::pair<int, const char*>{w, "width"}, {h, "height"}}) {
            if (n < 2 || n > max_texture_side())
                throw Error(std::to_string(w) + "x" + std::to_string(h) + ": the " + axis + " must be within 2 .. " +
                            std::to_string(max_texture_side()) + " on this GL");
            if (!lengths.allowed(n)) {
                const long long near = lengths.best(n, max_texture_side());
                throw Error(std::to_string(w) + "x" + std::to_string(h) + ": the " + lengths.name + " backend does not transform a " +
                            axis + " of " + std::to_string(n) +
                            (near ? "; the nearest it takes is " + std::to_string(near) + " (gpufft::filter_length)" : ""));
            }
        }
        fft = make_fft(programs, w, h, options);
        input = RenderTarget(w, h);
        output = RenderTarget(w, h);
        caller_fbo = new_framebuffer();
        set_kernel(kernel);
    }

    void set_kernel(const Kernel& kernel) {
        if (kernel.weights.width < 1 || kernel.weights.height < 1 || kernel.weights.rgba.size() != kernel.weights.pixels() * 4)
            throw Error("kernel '" + kernel.name + "': its weights are not width x height RGBA floats");
        upload_impulse_response(kernel, fft->input(), true);
        if (filter) filter->set_impulse_response(fft->input());
        else filter = std::make_unique<Filter>(*fft, fft->input());
    }

    /// Attaches the caller's texture to caller_fbo as `binding` (GL_READ_FRAMEBUFFER or
    /// GL_DRAW_FRAMEBUFFER) after checking its size.
    void attach(GLenum binding, TextureRef texture, const char* role) {
        const unsigned name = texture.name, target = texture.target;
        const std::string what = std::string("the ") + role + " texture " + std::to_string(name);
        if (target != kTexture2D && target != kTextureRectangle) throw Error(what + ": the target must be GL_TEXTURE_2D or GL_TEXTURE_RECTANGLE");
        if (!name || !glIsTexture(name)) throw Error(what + " is not a texture of the current context");
        glActiveTexture(GL_TEXTURE0);
        glBindTexture(target, name);
        if (glGetError() != GL_NO_ERROR) throw Error(what + " is not a " + target_name(target) + " texture");
        GLint w = 0, h = 0;
        glGetTexLevelParameteriv(target, 0, GL_TEXTURE_WIDTH, &w);
        glGetTexLevelParameteriv(target, 0, GL_TEXTURE_HEIGHT, &h);
        glBindTexture(target, 0);
        if (w != width || h != height)
            throw Error(what + " is " + std::to_string(w) + "x" + std::to_string(h) + ", the filter's size is " + std::to_string(width) + "x" +
                        std::to_string(height));
        glBindFramebuffer(binding, caller_fbo.get());
        glFramebufferTexture2D(binding, GL_COLOR_ATTACHMENT0, target, name, 0);
        const GLenum status = glCheckFramebufferStatus(binding);
        if (status != GL_FRAMEBUFFER_COMPLETE) {
            detach(binding);
            throw Error(what + " cannot be attached to a framebuffer (status " + std::to_string(status) + "): not a colour-renderable format");
        }
    }
    void detach(GLenum binding) {
        glBindFramebuffer(binding, caller_fbo.get());
        glFramebufferTexture2D(binding, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, 0, 0);
    }

    /// The caller's texture into one of ours, converted to RGBA32F by the blit.
    void copy_in(TextureRef from, RenderTarget& to, const char* role) {
        attach(GL_READ_FRAMEBUFFER, from, role);
        glReadBuffer(GL_COLOR_ATTACHMENT0);
        glBindFramebuffer(GL_DRAW_FRAMEBUFFER, to.framebuffer());
        glBlitFramebuffer(0, 0, width, height, 0, 0, width, height, GL_COLOR_BUFFER_BIT, GL_NEAREST);
        detach(GL_READ_FRAMEBUFFER);
        check_gl("copying the input texture");
    }
    void copy_out(const RenderTarget& from, TextureRef to) {
        attach(GL_DRAW_FRAMEBUFFER, to, "output");
        const GLenum buffer = GL_COLOR_ATTACHMENT0;
        glDrawBuffers(1, &buffer);
        glBindFramebuffer(GL_READ_FRAMEBUFFER, from.framebuffer());
        glReadBuffer(GL_COLOR_ATTACHMENT0);
        glBindFramebuffer(GL_DRAW_FRAMEBUFFER, caller_fbo.get());
        glBlitFramebuffer(0, 0, width, height, 0, 0, width, height, GL_COLOR_BUFFER_BIT, GL_NEAREST);
        detach(GL_DRAW_FRAMEBUFFER);
        check_gl("copying to the output texture");
    }

    void run_filter(GpuTimes* times) {
        Profile profile;
        filter->apply(input.texture(), output, times ? &profile : nullptr);
        if (times) {
            times->total_ms = profile.total_ms;
            times->labels = profile.pass_labels;
            times->pass_ms = profile.pass_ms;
            times->programs.clear();
            for (int p = 0; p < kProgramCount; ++p)
                times->programs.emplace_back(program_name(static_cast<Program>(p)), profile.program_ms[static_cast<size_t>(p)]);
        }
        check_gl("filtering");
    }
};

TextureFilter::TextureFilter(int width, int height, const Kernel& kernel, const FftOptions& options)
    : impl_(guarded([&] { return std::make_unique<Impl>(width, height, kernel, options); })) {}

TextureFilter::TextureFilter(int width, int height, const std::string& kernel_spec, const FftOptions& options)
    : TextureFilter(width, height, parse_kernel(kernel_spec), options) {}

TextureFilter::~TextureFilter() {
    if (impl_ && glGetString(GL_VERSION)) {
        SavedGlState saved;  // deleting bound objects would unbind them
        impl_.reset();
    }
}
TextureFilter::TextureFilter(TextureFilter&&) noexcept = default;
TextureFilter& TextureFilter::operator=(TextureFilter&& other) noexcept {
    if (this != &other) {
        if (impl_ && glGetString(GL_VERSION)) {
            SavedGlState saved;
            impl_.reset();
        }
        impl_ = std::move(other.impl_);
    }
    return *this;
}

int TextureFilter::width() const { return impl_->width; }
int TextureFilter::height() const { return impl_->height; }
std::string TextureFilter::backend() const { return impl_->fft->name(); }

void TextureFilter::set_kernel(const Kernel& kernel) {
    guarded([&] { impl_->set_kernel(kernel); });
}

void TextureFilter::apply(TextureRef input, TextureRef output, GpuTimes* times) {
    guarded([&] {
        impl_->copy_in(input, impl_->input, "input");
        impl_->run_filter(times);
        impl_->copy_out(impl_->output, output);
    });
}

TextureRef TextureFilter::apply(TextureRef input, GpuTimes* times) {
    return guarded([&] {
        impl_->copy_in(input, impl_->input, "input");
        impl_->run_filter(times);
        return TextureRef(impl_->output.texture().id(), kTextureRectangle);
    });
}

TextureRef TextureFilter::forward(TextureRef input) {
    return guarded([&] {
        Impl& m = *impl_;
        if (!m.spectrum.framebuffer()) m.spectrum = RenderTarget(m.width, m.height);
        m.copy_in(input, m.input, "input");
        m.fft->forward(m.input.texture(), m.spectrum);
        check_gl("the forward transform");
        return TextureRef(m.spectrum.texture().id(), kTextureRectangle);
    });
}

void TextureFilter::inverse(TextureRef spectrum, TextureRef output) {
    guarded([&] {
        Impl& m = *impl_;
        m.copy_in(spectrum, m.input, "spectrum");
        m.fft->inverse(m.input.texture(), m.output);
        check_gl("the inverse transform");
        m.copy_out(m.output, output);
    });
}

TextureRef TextureFilter::kernel_spectrum() const { return TextureRef(impl_->filter->spectrum().texture().id(), kTextureRectangle); }

Image TextureFilter::apply_image(const Image& image) {
    return guarded([&] {
        Impl& m = *impl_;
        if (image.width != m.width || image.height != m.height || image.rgba.size() != image.pixels() * 4)
            throw Error("the image is " + std::to_string(image.width) + "x" + std::to_string(image.height) + ", the filter's size is " +
                        std::to_string(m.width) + "x" + std::to_string(m.height));
        // Image rows are top first, a texture's bottom first: rows reversed on the way in and out.
        const size_t row = static_cast<size_t>(m.width) * 4;
        std::vector<float> flipped(image.rgba.size());
        for (int y = 0; y < m.height; ++y)
            std::copy_n(image.at(0, m.height - 1 - y), row, flipped.begin() + static_cast<std::ptrdiff_t>(y * row));
        m.input.texture().upload(flipped.data());
        m.run_filter(nullptr);
        m.output.download(flipped.data());
        Image out(m.width, m.height);
        for (int y = 0; y < m.height; ++y)
            std::copy_n(flipped.begin() + static_cast<std::ptrdiff_t>(y * row), row, out.at(0, m.height - 1 - y));
        return out;
    });
}

void spectrum_value(const float* packed, int width, int height, int u, int v, int channel, double* re, double* im) {
    const std::complex<double> f = packed_value(packed, width, height, u, v, channel);
    *re = f.real();
    *im = f.imag();
}

std::vector<double> unpack_spectrum(const float* packed, int width, int height, int channel) {
    const std::vector<std::complex<double>> half = unpack_half(packed, width, height, channel);
    std::vector<double> out(2 * half.size());
    for (size_t i = 0; i < half.size(); ++i) {
        out[2 * i] = half[i].real();
        out[2 * i + 1] = half[i].imag();
    }
    return out;
}

void pack_spectrum(const double* half, int width, int height, int channel, float* packed) {
    std::vector<std::complex<double>> values(static_cast<size_t>(width / 2 + 1) * static_cast<size_t>(height));
    for (size_t i = 0; i < values.size(); ++i) values[i] = {half[2 * i], half[2 * i + 1]};
    pack_half(values.data(), width, height, channel, packed);
}

}  // namespace gpufft
