#include "fft/fft2d.h"

#include "fft/fragment_fft.h"

#include <stdexcept>

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
    switch (options.backend) {
        case Backend::Fragment: return std::make_unique<FragmentFft>(programs, width, height, options);
        case Backend::Compute: break;
    }
    throw std::invalid_argument("the compute backend is not built yet");
}

GpuTimer::GpuTimer() { glGenQueries(1, &query_); }
GpuTimer::~GpuTimer() { glDeleteQueries(1, &query_); }
void GpuTimer::begin() { glBeginQuery(GL_TIME_ELAPSED, query_); }
void GpuTimer::end() { glEndQuery(GL_TIME_ELAPSED); }
double GpuTimer::milliseconds() {
    GLuint64 ns = 0;
    glGetQueryObjectui64v(query_, GL_QUERY_RESULT, &ns);
    return static_cast<double>(ns) * 1e-6;
}

}  // namespace gpufft
