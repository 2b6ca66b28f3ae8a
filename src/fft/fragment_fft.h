// The paper's backend: the plans of plan.h run as fragment programs on full-screen quads that
// ping-pong between two float render targets.
#pragma once

#include "fft/fft2d.h"

#include "gl/quad.h"

namespace gpufft {

class FragmentFft : public Fft2D {
public:
    FragmentFft(ProgramCache& programs, int width, int height, Storage storage = Storage::Float32);
    ~FragmentFft() override;

    void forward(const Texture& image, RenderTarget& spectrum, Profile* profile = nullptr) override;
    void inverse(const Texture& spectrum, RenderTarget& image, Profile* profile = nullptr) override;
    void filter(const Texture& image, const Texture& kernel_spectrum, RenderTarget& out,
                Profile* profile = nullptr) override;
    const Plan* filter_plan() const override { return &filter_; }
    std::string name() const override { return "fragment"; }
    using Fft2D::forward;
    using Fft2D::inverse;

    const Plan& forward_plan() const { return forward_; }
    const Plan& inverse_plan() const { return inverse_; }

    /// Runs `plan` reading `src` and writing `dst`. Intermediate passes ping-pong between the two
    /// render targets; the first one is picked from the parity of the pass count so that, where
    /// `dst` is one of them, the last pass lands in it with no extra copy.
    void run(const Plan& plan, const Texture& src, RenderTarget& dst, const Texture* kernel = nullptr,
             Profile* profile = nullptr);
    RenderTarget& ping_pong(int i) { return ping_pong_[i]; }

private:
    void add_regions(const Plan& plan);
    void set_state();

    ProgramCache& programs_;
    Plan forward_, inverse_, filter_;
    RenderTarget ping_pong_[2];
    Texture twiddles_;            // W_T^k for T = max(M, N)
    QuadBuffer quads_;
    std::vector<GLuint> timestamps_;
};

}  // namespace gpufft
