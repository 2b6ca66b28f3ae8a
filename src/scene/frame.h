// One frame of the teapot application: scene -> FFT filter -> (spectrum view) -> display. The frame
// never leaves the GPU; the windowed viewer, the headless renderer and the benchmark share this.
#pragma once

#include "fft/spectrum_view.h"
#include "gl/timer.h"
#include "gl/quad.h"
#include "image/kernels.h"
#include "scene/teapot.h"

#include <memory>
#include <string>

namespace gpufft {

enum class Tonemap { Aces, Clamp };
Tonemap parse_tonemap(const std::string& name);  ///< "aces" or "clamp"; throws Error

/// Draws a float frame into the bound framebuffer's [0, width) x [0, height), scaled to fit and
/// centred (letterboxed); 1:1 when the sizes agree.
class FrameDisplay {
public:
    explicit FrameDisplay(ProgramCache& programs) : programs_(programs) {}
    void draw(const Texture& frame, int width, int height, Tonemap tonemap, float exposure = 1.0f);

private:
    ProgramCache& programs_;
    QuadBuffer quads_;
};

/// The GPU resources of one frame size. The filtering goes through the public API
/// (gpufft::TextureFilter), as a renderer using the library would.
class TeapotFrame {
public:
    /// With Compile::Background the filter's programs compile while the caller draws other frames:
    /// ready() says when this one filters without waiting for them (TextureFilter::ready()).
    TeapotFrame(ProgramCache& programs, TeapotScene& scene, int width, int height, const FftOptions& options = {},
                const Kernel& kernel = parse_kernel("identity"), Compile compile = Compile::Now);

    int width() const { return width_; }
    int height() const { return height_; }
    void set_kernel(const Kernel& kernel) { filter_.set_kernel(kernel); }
    bool ready() { return filter_.ready(); }
    /// Renders the teapot, filters it if asked, and returns the frame to display: the float frame,
    /// or its spectrum view (already in [0, 1]). `fft_ms` gets the GPU time of the filter,
    /// `times` its passes.
    const Texture& render(const Camera& camera, const SceneLook& look, bool filter, bool spectrum,
                          double* fft_ms = nullptr, GpuTimes* times = nullptr);
    /// The CPU time of the last frame's TextureFilter::apply() call (queuing its passes).
    double filter_cpu_ms() const { return filter_cpu_ms_; }
    TextureFilter& filter() { return filter_; }
    RenderTarget& scene_target() { return scene_target_; }

private:
    ProgramCache& programs_;
    TeapotScene& scene_;
    int width_, height_;
    TextureFilter filter_;
    RenderTarget scene_target_, filtered_, view_;
    SpectrumView spectrum_view_;
    GpuTimer timer_;
    double filter_cpu_ms_ = 0;
};

}  // namespace gpufft
