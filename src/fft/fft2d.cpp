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
