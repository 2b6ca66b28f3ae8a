#include "fft/fft2d.h"

#include "fft/compute_fft.h"
#include "fft/fragment_fft.h"

#include <stdexcept>
#include <string>

namespace gpufft {

Texture& Fft2D::input() {
    if (!input_.id()) input_ = Texture(width_, height_, Storage::Float32);
    return input_;
}

RenderTarget& Fft2D::output() {
    if (!output_.framebuffer()) output_ = RenderTarget(width_, height_, Storage::Float32);
    return output_;
}

namespace {
void check_length(const std::vector<float>& v, int width, int height) {
    if (v.size() != static_cast<size_t>(width) * static_cast<size_t>(height) * 4)
        throw std::invalid_argument("expected " + std::to_string(width) + "x" + std::to_string(height) + " RGBA floats");
}
}  // namespace

void check_batch(const std::vector<const Texture*>& images, const std::vector<RenderTarget*>& outs, int width, int height) {
    if (images.empty() || images.size() != outs.size())
        throw std::invalid_argument("a filter batch needs as many outputs as images, at least one");
    for (size_t i = 0; i < images.size(); ++i) {
        if (!images[i] || !outs[i]) throw std::invalid_argument("a filter batch's image or output is missing");
        const Texture& out = outs[i]->texture();
        if (images[i]->width() != width || images[i]->height() != height || out.width() != width || out.height() != height)
            throw std::invalid_argument("a filter batch's images and outputs must have the transform's size");
        for (size_t j = 0; j < i; ++j)
            if (outs[j] == outs[i] || outs[j]->texture().id() == out.id()) throw std::invalid_argument("a filter batch's outputs must be distinct");
    }
}

void Fft2D::filter_batch(const std::vector<const Texture*>& images, const Texture& kernel_spectrum, bool real_kernel,
                         const std::vector<RenderTarget*>& outs, Profile* profile) {
    check_batch(images, outs, width_, height_);
    Profile one, sum;
    for (size_t i = 0; i < images.size(); ++i) {
        filter(*images[i], kernel_spectrum, real_kernel, *outs[i], profile ? &one : nullptr);
        if (!profile) continue;
        if (i == 0) {
            sum = one;
            continue;
        }
        for (size_t k = 0; k < sum.program_ms.size(); ++k) sum.program_ms[k] += one.program_ms[k];
        for (size_t k = 0; k < sum.pass_ms.size() && k < one.pass_ms.size(); ++k) {
            sum.pass_ms[k] += one.pass_ms[k];
            if (k < sum.pass_bytes.size() && k < one.pass_bytes.size()) sum.pass_bytes[k] += one.pass_bytes[k];
        }
        sum.total_ms += one.total_ms;
    }
    if (profile) *profile = sum;
}

std::vector<float> Fft2D::forward(const std::vector<float>& image) {
    check_length(image, width_, height_);
    input().upload(image.data());
    forward(input(), output());
    return output().download();
}

std::vector<float> Fft2D::inverse(const std::vector<float>& spectrum) {
    check_length(spectrum, width_, height_);
    input().upload(spectrum.data());
    inverse(input(), output());
    return output().download();
}

std::unique_ptr<Fft2D> make_fft(ProgramCache& programs, int width, int height, const FftOptions& options) {
    check_fft_size(width, height);
    switch (resolve_gl_backend(options)) {
        case Backend::Fragment: return std::make_unique<FragmentFft>(programs, width, height, options);
        case Backend::Compute: return std::make_unique<ComputeFft>(programs, width, height, options);
        case Backend::Fftw: throw std::invalid_argument("the fftw backend filters on the CPU: no GL transform");
        case Backend::Auto: break;
    }
    throw std::invalid_argument("unknown backend");
}

LengthModel fft_lengths(const FftOptions& options) {
    switch (resolve_gl_backend(options)) {
        case Backend::Compute: return ComputeFft::lengths(options);
        case Backend::Fftw: return fftw_lengths();
        default: return FragmentFft::lengths(options);
    }
}

bool software_renderer() {
    const char* r = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
    std::string name = r ? r : "";
    for (const char* soft : {"llvmpipe", "softpipe", "swrast", "Software Rasterizer"})
        if (name.find(soft) != std::string::npos) return true;
    return false;
}

std::vector<Implementation> gl_implementations(const FftOptions& base) {
    FftOptions radix2 = base, fast = base, compute = base;
    radix2.radix = 2;
    radix2.backend = Backend::Fragment;
    fast.radix = 0;
    fast.backend = Backend::Fragment;
    compute.radix = 0;
    compute.backend = Backend::Compute;
    std::vector<Implementation> all = {{"radix-2", radix2}, {"fast", fast}};
    if (ComputeFft::supported()) all.push_back({"compute", compute});
    return all;
}

Backend resolve_gl_backend(const FftOptions& options) {
    if (options.backend != Backend::Auto) return options.backend;
    const bool compute = ComputeFft::supported() && !software_renderer() && options.radix != 2;
    return compute ? Backend::Compute : Backend::Fragment;
}

}  // namespace gpufft
