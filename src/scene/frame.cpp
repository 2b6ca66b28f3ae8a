#include "scene/frame.h"

#include "image/kernels.h"

#include <algorithm>
#include <chrono>

namespace gpufft {

Tonemap parse_tonemap(const std::string& name) {
    if (name == "aces") return Tonemap::Aces;
    if (name == "clamp") return Tonemap::Clamp;
    throw Error("unknown tone map '" + name + "' (aces or clamp)");
}

void FrameDisplay::draw(const Texture& frame, int width, int height, Tonemap tonemap, float exposure) {
    // The largest centred rectangle of the frame's aspect in whole pixels.
    double scale = std::min(double(width) / frame.width(), double(height) / frame.height());
    int w = std::max(1, static_cast<int>(frame.width() * scale)), h = std::max(1, static_cast<int>(frame.height() * scale));
    Region r{(width - w) / 2, (height - h) / 2, (width - w) / 2 + w, (height - h) / 2 + h};
    quads_.add({r});
    prepare_pass_state();
    glViewport(0, 0, width, height);
    glClearColor(0.0f, 0.0f, 0.0f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    const GlProgram& program =
        programs_.get({"quad.vert", "display.frag", {tonemap == Tonemap::Aces ? "TONEMAP_ACES" : "TONEMAP_CLAMP"}, false});
    program.use();
    program.set(Uniform::TargetSize, static_cast<float>(width), static_cast<float>(height));
    const float view[4] = {static_cast<float>(r.x0), static_cast<float>(r.y0), float(frame.width()) / float(w),
                           float(frame.height()) / float(h)};
    program.set_vec4(Uniform::ViewScale, view);
    program.set(Uniform::Exposure, exposure);
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(GL_TEXTURE_RECTANGLE, frame.id());
    quads_.bind();
    quads_.draw(r);
    quads_.unbind();
    glUseProgram(0);
    check_gl("displaying a frame");
}

TeapotFrame::TeapotFrame(ProgramCache& programs, TeapotScene& scene, int width, int height, const FftOptions& options, const Kernel& kernel,
                         Compile compile)
    : programs_(programs),
      scene_(scene),
      width_(width),
      height_(height),
      filter_(width, height, kernel, options, Boundary::Wrap, compile),
      scene_target_(width, height, Storage::Float32, true),
      filtered_(width, height),
      view_(width, height),
      spectrum_view_(programs) {}

const Texture& TeapotFrame::render(const Camera& camera, const SceneLook& look, bool filter, bool spectrum,
                                   double* fft_ms, GpuTimes* times) {
    scene_.render(scene_target_, camera, look);
    const Texture* shown = &scene_target_.texture();
    if (filter) {
        timer_.begin();
        const auto start = std::chrono::steady_clock::now();
        filter_.apply({shown->id(), kTextureRectangle}, {filtered_.texture().id(), kTextureRectangle}, times);
        filter_cpu_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        timer_.end();
        shown = &filtered_.texture();
    }
    if (spectrum) {
        spectrum_view_.draw(filter_.forward({shown->id(), kTextureRectangle}).name, view_, true);
        shown = &view_.texture();
    }
    if (fft_ms) *fft_ms = filter ? timer_.milliseconds() : 0.0;
    return *shown;
}

}  // namespace gpufft
