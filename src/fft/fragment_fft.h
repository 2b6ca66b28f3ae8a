// The paper's backend: plans (plan.h) run as fragment programs on full-screen quads. The radix-2
// chain ping-pongs between two float render targets, as the paper does; the fast chain between
// two sets of planes per axis (array textures written as eight render targets, four along an axis
// of 2 mod 4).
#pragma once

#include "fft/fft2d.h"
#include "fft/sizes.h"
#include "gl/quad.h"

#include <map>

namespace gpufft {

class FragmentFft : public Fft2D {
public:
    FragmentFft(ProgramCache& programs, int width, int height, const FftOptions& options = {});

    void forward(const Texture& image, RenderTarget& spectrum, Profile* profile = nullptr) override;
    void inverse(const Texture& spectrum, RenderTarget& image, Profile* profile = nullptr) override;
    void filter(const Texture& image, const Texture& kernel_spectrum, bool real_kernel, RenderTarget& out,
                Profile* profile = nullptr) override;
    const Plan* filter_plan() const override { return &filter_; }
    std::string name() const override;
    using Fft2D::forward;
    using Fft2D::inverse;

    /// True when the plans are the fast chain's (radix 16, eight render targets).
    bool fast() const { return fast_; }

    /// Runs `plan` reading `src` (Surface::Input) and writing `dst` (Surface::Output). Passes on
    /// Surface::Pair alternate between the two render targets, the first one picked from the parity
    /// of their count so that, where `dst` is one of them, the last pass lands in it with no copy.
    void run(const Plan& plan, const Texture& src, RenderTarget& dst, const Texture* kernel = nullptr,
             Profile* profile = nullptr);

    /// Whether the fast chain can run on this context at this size.
    static bool fast_supported(int width, int height);
    /// The lengths this backend takes with `options` on this context (the fast chain's fast sizes
    /// from 4 up, or the radix-2 chain's powers of two) and their cost: one full-screen pass per stage,
    /// each a write of the whole array plus its fetches (src/README.md, "Any FFT size").
    static LengthModel lengths(const FftOptions& options);

private:
    const Texture& twiddles(const Pass& pass);

    ProgramCache& programs_;
    FftOptions options_;
    bool fast_ = false;
    Plan forward_, inverse_, filter_;
    RenderTarget ping_pong_[2];
    PlaneTarget row_planes_[2], column_planes_[2];
    Texture twiddles_;                          // radix-2: W_T^k for T = max(M, N)
    std::map<int, Texture> radix_twiddles_;     // fast chain: per axis length L, (L/4 or L) x 8 or more texels
    QuadBuffer quads_;
    GpuTimestamps timestamps_;
};

}  // namespace gpufft
