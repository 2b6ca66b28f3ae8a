// The public API (gpufft/gpufft.h) over the library's layers: the caller's textures are read by
// the passes themselves and stored into by a compute pass (framebuffer blits where GL 4.3 or the
// texture's format does not allow), every call runs inside SavedGlState, and every failure leaves
// as gpufft::Error.
#include <gpufft/gpufft.h>

#include "fft/fft2d.h"
#include "fft/filter.h"
#include "fft/layout.h"
#include "gl/context.h"
#include "gl/state.h"
#include "image/convolve.h"
#include "image/gpu_samples.h"
#include "image/kernels.h"
#include "image/png_io.h"
#include "image/spectral.h"

#include <algorithm>
#include <complex>
#include <mutex>
#include <new>
#include <optional>
#include <utility>

namespace gpufft {

namespace {

/// Drops pending GL errors (at most a few: a lost context may report one on every call).
void clear_gl_errors() {
    for (int i = 0; i < 16 && glGetError() != GL_NO_ERROR; ++i) {}
}

/// Checks that a context is current and GLEW's entry points are loaded (the caller may use
/// another loader): the library's calls go through GLEW's.
void require_context() {
    if (!glGetString(GL_VERSION)) throw Error("no current OpenGL context");
    if (!glUseProgram) {  // GLEW's pointers are null until glewInit()
        glewExperimental = GL_TRUE;
        const GLenum status = glewInit();
        if (status != GLEW_OK && status != GLEW_ERROR_NO_GLX_DISPLAY)
            throw Error(std::string("cannot load OpenGL entry points: ") + reinterpret_cast<const char*>(glewGetErrorString(status)));
        clear_gl_errors();
    }
    if (!glUseProgram || !glBindFramebuffer || !glBlitFramebuffer)
        throw Error("the OpenGL context lacks programs or framebuffer objects (GL 3.0 is needed)");
}

/// Runs `f` with the caller's GL state saved and every failure as gpufft::Error.
template <class F>
auto guarded(F&& f) -> decltype(f()) {
    try {
        require_context();
        clear_gl_errors();  // errors the caller left pending are not ours to report (check_gl reads them)
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

/// Textures are stored bottom row first, kernels and Images top row first: the rows of a width x
/// height RGBA image in reverse order.
void mirror_rows(const float* from, float* to, int width, int height) {
    const size_t row = static_cast<size_t>(width) * 4;
    for (int y = 0; y < height; ++y) std::copy_n(from + static_cast<size_t>(height - 1 - y) * row, row, to + static_cast<size_t>(y) * row);
}

void require_gl_backend(const FftOptions& options) {
    if (options.backend == Backend::Fftw) throw Error("the fftw backend filters on the CPU, not textures");
}

/// Frees a filter's GL objects with the caller's state saved (deleting a bound object would unbind
/// it); without a current context there is nothing to free them in.
template <class Impl>
void release(std::unique_ptr<Impl>& impl) {
    if (impl && glGetString(GL_VERSION)) {
        SavedGlState saved;
        impl.reset();
    }
    impl.reset();
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
        require_gl_backend(options);
        const long long n = fft_lengths(options).best(std::max(need, 2), max_texture_side());
        if (n == 0) throw Error("no length from " + std::to_string(need) + " up fits this GL (limit " + std::to_string(max_texture_side()) + ")");
        return static_cast<int>(n);
    });
}

struct TextureFilter::Impl {
    int width, height;
    Boundary boundary;
    FftOptions options;
    LengthModel lengths;
    ProgramCache programs;
    std::unique_ptr<Fft2D> fft;
    std::unique_ptr<Filter> filter;
    bool padded = false;
    AxisTiling tx, ty;  // the grid along each axis (padded: one overlap-save tile)
    RenderTarget input, grid, output, spectrum;
    FramebufferHandle caller_fbo;  // blits: the caller's texture attached
    bool compute = false;          // GL 4.3: compute passes read and store the caller's textures
    SamplerHandle nearest;         // reads the caller's textures texel for texel
    GpuTimer call_timer;           // GpuTimes::call_ms
    Compile compile;
    std::optional<Kernel> waiting;           // Compile::Background: the kernel set, its spectrum not yet made
    std::vector<ProgramSpec> waiting_for;    // the programs that spectrum and apply() run

    Impl(int w, int h, const Kernel& kernel, const FftOptions& o, Boundary b, Compile c)
        : width(w), height(h), boundary(b), options(o), compile(c) {
        require_gl_backend(options);
        const std::string size = std::to_string(w) + "x" + std::to_string(h);
        if (w < 1 || h < 1 || std::max(w, h) > max_texture_side())
            throw Error(size + ": the width and height must be within 1 .. " + std::to_string(max_texture_side()) + " on this GL");
        lengths = fft_lengths(options);
        padded = !(b == Boundary::Wrap && lengths.allowed(w) && lengths.allowed(h));
        if (padded && !GLEW_VERSION_4_3)
            throw Error(size + " with " + boundary_name(b) + " needs padding, which needs compute shaders (GL 4.3); without, the size must be one the " +
                        lengths.name + " backend transforms (gpufft::filter_length) and the boundary wrap");
        input = RenderTarget(w, h);
        caller_fbo = new_framebuffer();
        compute = GLEW_VERSION_4_3;
        if (compute) {
            nearest = new_sampler();
            for (auto [name, value] : {std::pair<GLenum, GLint>{GL_TEXTURE_MIN_FILTER, GL_NEAREST}, {GL_TEXTURE_MAG_FILTER, GL_NEAREST},
                                       {GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE}, {GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE}})
                glSamplerParameteri(nearest.get(), name, value);
        }
        set_kernel(kernel);
    }

    /// The kernel's spectrum on the grid it needs: the transform, grid and output are made again
    /// where a padded filter's grid changes with the kernel's extent.
    void set_kernel(const Kernel& kernel) {
        if (kernel.weights.width < 1 || kernel.weights.height < 1 || kernel.weights.rgba.size() != kernel.weights.pixels() * 4)
            throw Error("kernel '" + kernel.name + "': its weights are not width x height RGBA floats");
        AxisTiling x, y;
        if (padded) {
            // Tiled as the frame is stored, bottom row first: the kernel's centre row mirrored.
            Kernel stored = kernel;
            stored.cy = kernel.weights.height - 1 - kernel.cy;
            LengthModel one_grid = lengths;  // never tiles where one grid covers the frame
            one_grid.tile_to = 0;
            std::tie(x, y) = tile_image(width, height, stored, boundary, TileCaps{gpu_max_fft(), gpu_max_fft()}, one_grid);
            if (x.tiles(width) > 1 || y.tiles(height) > 1)
                throw Error(std::to_string(width) + "x" + std::to_string(height) + " with kernel '" + kernel.name + "' needs a grid above " +
                            std::to_string(gpu_max_fft()) + ", which this GL cannot take: a TextureFilter filters one grid");
        } else {
            x.fft = width;
            y.fft = height;
        }
        if (!fft || x.fft != tx.fft || y.fft != ty.fft) {
            filter.reset();
            fft = make_fft(programs, x.fft, y.fft, options);
            output = RenderTarget(x.fft, y.fft);
            grid = padded ? RenderTarget(x.fft, y.fft) : RenderTarget();
        }
        tx = x;
        ty = y;
        if (compile == Compile::Now) return make_spectrum(kernel);
        waiting = kernel;
        waiting_for = fft->filter_programs(point_symmetric(kernel));
        programs.start(waiting_for);
    }

    /// The kernel's spectrum, which Filter makes (compiling what it needs that is not yet linked).
    void make_spectrum(const Kernel& kernel) {
        upload_impulse_response(kernel, fft->input(), true);  // mirrored for bottom-up frames
        if (filter) filter->set_impulse_response(fft->input(), point_symmetric(kernel));
        else filter = std::make_unique<Filter>(*fft, fft->input(), point_symmetric(kernel));
    }

    /// Compile::Background: the kernel's spectrum, once the programs are ready (ready() true) or
    /// now, waiting for them (apply() and the others).
    bool finish(bool wait) {
        if (!waiting) {
            if (!filter) throw Error("the filter has no kernel: its last set_kernel() failed");
            return true;
        }
        if (!wait && !programs.ready(waiting_for)) return false;
        make_spectrum(*waiting);   // a failure leaves it waiting: the next call tries again
        waiting.reset();
        return true;
    }

    void require_unpadded(const char* what) const {
        if (padded)
            throw Error(std::string(what) + " needs an unpadded filter (Boundary::Wrap at a size the " + lengths.name + " backend transforms); this one pads " +
                        std::to_string(width) + "x" + std::to_string(height) + " to " + std::to_string(tx.fft) + "x" + std::to_string(ty.fft));
    }

    /// A caller's texture as checked for one call, and how the passes may use it.
    struct CallerTexture {
        GLuint name = 0;
        GLenum target = 0, format = 0;
        std::string what;       ///< "the input texture 7", for errors
        bool readable = false;  ///< compute passes may read it: a format image_format_name() knows, base level 0
        bool storable = false;  ///< and store into it: also complete without a sampler object (a rectangle
                                ///< texture, a minifying filter without mipmaps, or immutable storage)
        bool ours = false;      ///< one of this filter's own textures (returned by apply(input) or forward())
    };

    /// Checks that `texture` is a width x height 2D or rectangle texture of the current context.
    CallerTexture inspect(TextureRef texture, const char* role) {
        CallerTexture c;
        c.name = texture.name;
        c.target = texture.target;
        c.what = std::string("the ") + role + " texture " + std::to_string(c.name);
        if (c.target != kTexture2D && c.target != kTextureRectangle) throw Error(c.what + ": the target must be GL_TEXTURE_2D or GL_TEXTURE_RECTANGLE");
        if (!c.name || !glIsTexture(c.name)) throw Error(c.what + " is not a texture of the current context");
        glActiveTexture(GL_TEXTURE0);
        glBindTexture(c.target, c.name);
        if (glGetError() != GL_NO_ERROR) throw Error(c.what + " is not a " + target_name(c.target) + " texture");
        GLint w = 0, h = 0, format = 0, base = 0, min_filter = 0, immutable = 0;
        glGetTexLevelParameteriv(c.target, 0, GL_TEXTURE_WIDTH, &w);
        glGetTexLevelParameteriv(c.target, 0, GL_TEXTURE_HEIGHT, &h);
        if (compute) {
            glGetTexLevelParameteriv(c.target, 0, GL_TEXTURE_INTERNAL_FORMAT, &format);
            glGetTexParameteriv(c.target, GL_TEXTURE_BASE_LEVEL, &base);
            glGetTexParameteriv(c.target, GL_TEXTURE_MIN_FILTER, &min_filter);
            glGetTexParameteriv(c.target, GL_TEXTURE_IMMUTABLE_FORMAT, &immutable);
        }
        glBindTexture(c.target, 0);
        if (w != width || h != height)
            throw Error(c.what + " is " + std::to_string(w) + "x" + std::to_string(h) + ", the filter's size is " + std::to_string(width) + "x" +
                        std::to_string(height));
        c.format = static_cast<GLenum>(format);
        c.readable = compute && image_format_name(c.format) && base == 0;
        c.storable = c.readable && (c.target == kTextureRectangle || min_filter == GL_NEAREST || min_filter == GL_LINEAR || immutable);
        for (const Texture* t : {&input.texture(), &grid.texture(), &output.texture(), &spectrum.texture()})
            c.ours = c.ours || (t->id() && t->id() == c.name);
        return c;
    }

    /// Attaches the caller's texture to caller_fbo as `binding` (GL_READ_FRAMEBUFFER or
    /// GL_DRAW_FRAMEBUFFER), for a blit.
    void attach(GLenum binding, const CallerTexture& c) {
        glBindFramebuffer(binding, caller_fbo.get());
        glFramebufferTexture2D(binding, GL_COLOR_ATTACHMENT0, c.target, c.name, 0);
        const GLenum status = glCheckFramebufferStatus(binding);
        if (status != GL_FRAMEBUFFER_COMPLETE) {
            detach(binding);
            throw Error(c.what + " cannot be attached to a framebuffer (status " + std::to_string(status) + "): not a colour-renderable format");
        }
    }
    void detach(GLenum binding) {
        glBindFramebuffer(binding, caller_fbo.get());
        glFramebufferTexture2D(binding, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, 0, 0);
    }

    /// What the transforms read for the caller's `in`: the texture itself where it is a rectangle
    /// texture of the filter's size and nothing is padded; else the frame copied or extended to
    /// the grid by a compute pass reading it, or by a framebuffer blit into `input` where none can.
    /// `borrowed` holds the caller's texture while the passes read it.
    const Texture& take_input(TextureRef in, const char* role, std::optional<BorrowedTexture>& borrowed) {
        const CallerTexture c = inspect(in, role);
        GLuint source = c.name;
        GLenum target = c.target;
        const bool in_input = c.name == input.texture().id();  // apply_image's upload, or apply(input)'s padded result
        if (!in_input && !c.readable) {
            attach(GL_READ_FRAMEBUFFER, c);
            glReadBuffer(GL_COLOR_ATTACHMENT0);
            glBindFramebuffer(GL_DRAW_FRAMEBUFFER, input.framebuffer());
            glBlitFramebuffer(0, 0, width, height, 0, 0, width, height, GL_COLOR_BUFFER_BIT, GL_NEAREST);
            detach(GL_READ_FRAMEBUFFER);
            check_gl("copying the input texture");
            source = input.texture().id();
            target = GL_TEXTURE_RECTANGLE;
        } else if (!in_input) {
            glBindSampler(0, nearest.get());  // texels as stored, whatever the caller's filtering (SavedGlState unbinds it)
        }
        if (padded) {
            extend_texture(programs, source, target, width, height, boundary, -tx.lead, -ty.lead, grid.texture());
            return grid.texture();
        }
        if (source == input.texture().id()) return input.texture();
        if (target == GL_TEXTURE_RECTANGLE && !c.ours) {
            borrowed.emplace(source, width, height);
            return borrowed->get();
        }
        extend_texture(programs, source, target, width, height, Boundary::Wrap, 0, 0, input.texture());
        return input.texture();
    }

    /// `from`'s width x height texels from (x0, y0) into the caller's texture: a compute pass
    /// storing in its format, or a framebuffer blit where none can.
    void store_output(const RenderTarget& from, TextureRef to, int x0 = 0, int y0 = 0) {
        const CallerTexture c = inspect(to, "output");
        if (c.storable) {
            crop_texture(programs, from.texture(), x0, y0, c.name, c.target, c.format, width, height);
            return;
        }
        attach(GL_DRAW_FRAMEBUFFER, c);
        const GLenum buffer = GL_COLOR_ATTACHMENT0;
        glDrawBuffers(1, &buffer);
        glBindFramebuffer(GL_READ_FRAMEBUFFER, from.framebuffer());
        glReadBuffer(GL_COLOR_ATTACHMENT0);
        glBindFramebuffer(GL_DRAW_FRAMEBUFFER, caller_fbo.get());
        glBlitFramebuffer(x0, y0, x0 + width, y0 + height, 0, 0, width, height, GL_COLOR_BUFFER_BIT, GL_NEAREST);
        detach(GL_DRAW_FRAMEBUFFER);
        check_gl("copying to the output texture");
    }

    /// Filters the caller's `in` into `output` (at (tx.lead, ty.lead) when padded).
    void run_filter(TextureRef in, GpuTimes* times) {
        std::optional<BorrowedTexture> borrowed;
        Profile profile;
        filter->apply(take_input(in, "input", borrowed), output, times ? &profile : nullptr);
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
    /// The frame's part of the grid, into the (now free) input target, which is returned.
    TextureRef crop_to_input() {
        const TextureRef frame(input.texture().id(), kTextureRectangle);
        store_output(output, frame, tx.lead, ty.lead);
        return frame;
    }

    /// Runs `f`, timing the whole call on the GPU into times->call_ms.
    template <class F>
    auto timed(GpuTimes* times, F&& f) {
        if (times) call_timer.begin();
        auto result = f();
        if (times) {
            call_timer.end();
            times->call_ms = call_timer.milliseconds();
        }
        return result;
    }
};

TextureFilter::TextureFilter(int width, int height, const Kernel& kernel, const FftOptions& options, Boundary boundary, Compile compile)
    : impl_(guarded([&] { return std::make_unique<Impl>(width, height, kernel, options, boundary, compile); })) {}

TextureFilter::TextureFilter(int width, int height, const std::string& kernel_spec, const FftOptions& options, Boundary boundary,
                             Compile compile)
    : TextureFilter(width, height, parse_kernel(kernel_spec), options, boundary, compile) {}

TextureFilter::TextureFilter(int width, int height, const Kernel& kernel, const FftOptions& options, Boundary boundary)
    : TextureFilter(width, height, kernel, options, boundary, Compile::Now) {}

TextureFilter::TextureFilter(int width, int height, const std::string& kernel_spec, const FftOptions& options, Boundary boundary)
    : TextureFilter(width, height, parse_kernel(kernel_spec), options, boundary, Compile::Now) {}

TextureFilter::~TextureFilter() { release(impl_); }
TextureFilter::TextureFilter(TextureFilter&&) noexcept = default;
TextureFilter& TextureFilter::operator=(TextureFilter&& other) noexcept {
    if (this != &other) {
        release(impl_);
        impl_ = std::move(other.impl_);
    }
    return *this;
}

int TextureFilter::width() const { return impl_->width; }
int TextureFilter::height() const { return impl_->height; }
int TextureFilter::grid_width() const { return impl_->tx.fft; }
int TextureFilter::grid_height() const { return impl_->ty.fft; }
std::string TextureFilter::backend() const { return impl_->fft->name(); }

void TextureFilter::set_kernel(const Kernel& kernel) {
    guarded([&] { impl_->set_kernel(kernel); });
}

bool TextureFilter::ready() {
    if (!impl_->waiting && impl_->filter) return true;   // asked every frame: no GL call once ready
    return guarded([&] { return impl_->finish(false); });
}

void TextureFilter::apply(TextureRef input, TextureRef output, GpuTimes* times) {
    guarded([&] {
        Impl& m = *impl_;
        m.finish(true);
        return m.timed(times, [&] {
            m.run_filter(input, times);
            m.store_output(m.output, output, m.tx.lead, m.ty.lead);
            return 0;
        });
    });
}

TextureRef TextureFilter::apply(TextureRef input, GpuTimes* times) {
    return guarded([&] {
        Impl& m = *impl_;
        m.finish(true);
        return m.timed(times, [&] {
            m.run_filter(input, times);
            return m.padded ? m.crop_to_input() : TextureRef(m.output.texture().id(), kTextureRectangle);
        });
    });
}

TextureRef TextureFilter::forward(TextureRef input) {
    return guarded([&] {
        Impl& m = *impl_;
        m.require_unpadded("forward()");
        if (!m.spectrum.framebuffer()) m.spectrum = RenderTarget(m.width, m.height);
        std::optional<BorrowedTexture> borrowed;
        m.fft->forward(m.take_input(input, "input", borrowed), m.spectrum);
        check_gl("the forward transform");
        return TextureRef(m.spectrum.texture().id(), kTextureRectangle);
    });
}

void TextureFilter::inverse(TextureRef spectrum, TextureRef output) {
    guarded([&] {
        Impl& m = *impl_;
        m.require_unpadded("inverse()");
        std::optional<BorrowedTexture> borrowed;
        m.fft->inverse(m.take_input(spectrum, "spectrum", borrowed), m.output);
        check_gl("the inverse transform");
        m.store_output(m.output, output);
    });
}

TextureRef TextureFilter::kernel_spectrum() const {
    return guarded([&] {
        impl_->finish(true);
        return TextureRef(impl_->filter->spectrum().texture().id(), kTextureRectangle);
    });
}

Image TextureFilter::apply_image(const Image& image) {
    return guarded([&] {
        Impl& m = *impl_;
        if (image.width != m.width || image.height != m.height || image.rgba.size() != image.pixels() * 4)
            throw Error("the image is " + std::to_string(image.width) + "x" + std::to_string(image.height) + ", the filter's size is " +
                        std::to_string(m.width) + "x" + std::to_string(m.height));
        m.finish(true);
        std::vector<float> flipped(image.rgba.size());
        mirror_rows(image.rgba.data(), flipped.data(), m.width, m.height);
        m.input.texture().upload(flipped.data());
        m.run_filter(TextureRef(m.input.texture().id(), kTextureRectangle), nullptr);
        if (m.padded) m.crop_to_input();
        (m.padded ? m.input : m.output).download(flipped.data());
        Image out(m.width, m.height);
        mirror_rows(flipped.data(), out.rgba.data(), m.width, m.height);
        return out;
    });
}

struct ImageFilter::Impl {
    ProgramCache programs;
    Boundary boundary;
    FftOptions options;
    std::unique_ptr<Convolver> convolver;
};

ImageFilter::ImageFilter(const Kernel& kernel, const FftOptions& options, Boundary boundary, int max_fft)
    : impl_(guarded([&] {
          auto m = std::make_unique<Impl>();
          m->boundary = boundary;
          m->options = options;
          ConvolveOptions co;
          co.boundary = boundary;
          co.max_fft = max_fft;
          co.fft = options;
          m->convolver = std::make_unique<Convolver>(m->programs, kernel, co);
          return m;
      })) {}

ImageFilter::~ImageFilter() { release(impl_); }
ImageFilter::ImageFilter(ImageFilter&&) noexcept = default;
ImageFilter& ImageFilter::operator=(ImageFilter&& other) noexcept {
    if (this != &other) {
        release(impl_);
        impl_ = std::move(other.impl_);
    }
    return *this;
}

Image ImageFilter::apply(const Image& image, TileCaps caps) {
    return guarded([&] { return impl_->convolver->apply(image, caps); });
}
void ImageFilter::submit(const Samples& in, const SampleConversion& conversion, TileCaps caps) {
    guarded([&] { impl_->convolver->submit(in, conversion, caps); });
}
void ImageFilter::submit(const Samples& in, const HostArea* from, const HostArea* to, const SampleConversion& conversion,
                         TileCaps caps) {
    guarded([&] {
        if (from && (!*from || from->capacity() < in.row_bytes() * static_cast<size_t>(in.height)))
            throw std::logic_error("ImageFilter::submit: the host area does not hold the image's samples");
        const size_t out = conversion.output_bytes(in.width, in.height);
        if (to && (!*to || to->capacity() < (out + 3) / 4 * 4))
            throw std::logic_error("ImageFilter::submit: the host area does not hold the output's samples");
        impl_->convolver->submit(in, conversion, caps, from, to);
    });
}
void ImageFilter::submit_strip(const std::vector<const unsigned char*>& rows, int origin, int first, int count, int width, int height,
                               const SampleConversion& conversion, TileCaps caps) {
    guarded([&] { impl_->convolver->submit_strip(rows, origin, first, count, width, height, conversion, caps); });
}
void ImageFilter::prepare(int width, int height, TileCaps caps) {
    guarded([&] { impl_->convolver->prepare(width, height, caps); });
}
Samples ImageFilter::collect(double* gpu_ms) {
    return guarded([&] { return impl_->convolver->collect(gpu_ms); });
}
Samples ImageFilter::collect(double* gpu_ms, std::vector<unsigned char>&& storage) {
    return guarded([&] { return impl_->convolver->collect(gpu_ms, std::move(storage)); });
}
Samples ImageFilter::collect(double* gpu_ms, std::vector<unsigned char>&& storage, DeflatedRows& deflated) {
    return guarded([&] { return impl_->convolver->collect(gpu_ms, std::move(storage), &deflated); });
}
size_t ImageFilter::pending() const { return impl_->convolver->pending(); }
std::pair<AxisTiling, AxisTiling> ImageFilter::tiling(int width, int height, TileCaps caps) const {
    return guarded([&] { return impl_->convolver->tiling(width, height, caps); });
}
void ImageFilter::share_lengths(const std::vector<std::array<int, 2>>& sizes) {
    guarded([&] { impl_->convolver->share_lengths(sizes); });
}
void ImageFilter::prepare_programs(const std::vector<std::array<int, 2>>& sizes) {
    guarded([&] { impl_->convolver->prepare_programs(sizes); });
}
const FilterStats& ImageFilter::last() const { return impl_->convolver->last(); }
SampleLimits ImageFilter::sample_limits() {
    return guarded([] { return SampleIo::limits(); });
}
Image ImageFilter::spectrum(const Image& image) {
    return guarded([&] { return spectrum_image(impl_->programs, image, impl_->boundary, impl_->options); });
}

// ---- Host areas: host buffers the GPU copies samples from and into (HostBuffer), handed between threads.

struct HostPool {
    struct Area {
        HostBuffer buffer;
        bool taken = false;
    };
    std::mutex mutex;
    std::vector<std::unique_ptr<Area>> areas;  // only ever appended, until the pool's HostAreas goes
    size_t bytes = 0;

    /// With `mutex` held: the index of the smallest free area whose size `fits`, else areas.size().
    template <class Fits>
    size_t smallest_free(Fits fits) const {
        size_t best = areas.size();
        for (size_t i = 0; i < areas.size(); ++i) {
            const size_t size = areas[i]->buffer.size();
            if (!areas[i]->taken && fits(size) && (best == areas.size() || size < areas[best]->buffer.size())) best = i;
        }
        return best;
    }
};

HostArea::HostArea(HostArea&& other) noexcept
    : pool_(std::move(other.pool_)), index_(other.index_), data_(std::exchange(other.data_, nullptr)),
      capacity_(std::exchange(other.capacity_, 0)), buffer_(std::exchange(other.buffer_, 0)) {}
HostArea& HostArea::operator=(HostArea&& other) noexcept {
    if (this != &other) {
        give_back();
        pool_ = std::move(other.pool_);
        index_ = other.index_;
        data_ = std::exchange(other.data_, nullptr);
        capacity_ = std::exchange(other.capacity_, 0);
        buffer_ = std::exchange(other.buffer_, 0);
    }
    return *this;
}
HostArea::~HostArea() { give_back(); }

void HostArea::give_back() {
    if (!pool_) return;
    {
        std::lock_guard<std::mutex> lock(pool_->mutex);
        if (index_ < pool_->areas.size()) pool_->areas[index_]->taken = false;
    }
    pool_.reset();
    data_ = nullptr;
    capacity_ = 0;
    buffer_ = 0;
}

HostAreas::HostAreas() : pool_(std::make_shared<HostPool>()) {}

HostAreas::~HostAreas() {
    std::vector<std::unique_ptr<HostPool::Area>> areas;
    {
        std::lock_guard<std::mutex> lock(pool_->mutex);
        areas.swap(pool_->areas);
        pool_->bytes = 0;
    }
    if (!areas.empty() && glGetString(GL_VERSION)) {
        SavedGlState saved;
        areas.clear();  // the buffers, unmapped as they go
    } else {
        for (auto& a : areas) a.release();  // no context: nothing can be freed (the process is ending)
    }
}

bool HostAreas::add(size_t bytes, size_t count, size_t limit) {
    bytes = (bytes + 3) / 4 * 4;
    {
        std::lock_guard<std::mutex> lock(pool_->mutex);
        if (pool_->areas.size() >= count || pool_->bytes + bytes > limit) return false;
    }
    auto area = std::make_unique<HostPool::Area>();
    if (!guarded([&] { return area->buffer.reserve(bytes); })) return false;
    std::lock_guard<std::mutex> lock(pool_->mutex);
    pool_->bytes += area->buffer.size();
    pool_->areas.push_back(std::move(area));
    return true;
}

bool HostAreas::grow(size_t bytes, size_t limit) {
    bytes = (bytes + 3) / 4 * 4;
    HostPool::Area* area = nullptr;
    {
        std::lock_guard<std::mutex> lock(pool_->mutex);
        const size_t i = pool_->smallest_free([&](size_t size) { return size < bytes; });
        if (i == pool_->areas.size()) return false;
        area = pool_->areas[i].get();
        if (pool_->bytes - area->buffer.size() + bytes > limit) return false;
        area->taken = true;  // no one takes it while it is remade
        pool_->bytes -= area->buffer.size();
    }
    HostBuffer larger;
    const bool made = guarded([&] { return larger.reserve(bytes); });
    std::lock_guard<std::mutex> lock(pool_->mutex);
    if (made) {
        guarded([&] { area->buffer = std::move(larger); });  // the old buffer unmapped and deleted
    }
    pool_->bytes += area->buffer.size();
    area->taken = false;
    return made;
}

HostArea HostAreas::take(size_t bytes) {
    HostArea out;
    std::lock_guard<std::mutex> lock(pool_->mutex);
    const size_t best = pool_->smallest_free([&](size_t size) { return size >= bytes; });
    if (best == pool_->areas.size()) return out;
    HostPool::Area& a = *pool_->areas[best];
    a.taken = true;
    out.pool_ = pool_;
    out.index_ = best;
    out.data_ = a.buffer.data();
    out.capacity_ = a.buffer.size();
    out.buffer_ = a.buffer.id();
    return out;
}

size_t HostAreas::count() const {
    std::lock_guard<std::mutex> lock(pool_->mutex);
    return pool_->areas.size();
}
size_t HostAreas::bytes() const {
    std::lock_guard<std::mutex> lock(pool_->mutex);
    return pool_->bytes;
}

Image synthesize(const SynthSpec& spec, const FftOptions& options) {
    return guarded([&] {
        ProgramCache programs;
        return synthesize(programs, spec, options);
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
