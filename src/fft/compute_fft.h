// The compute backend (programs/fft_line.comp): one workgroup per line, the whole line in shared
// memory and registers, so an axis is one dispatch and a filter three: rows, columns (forward,
// multiply, inverse), rows. Same textures in and out, same compressed layout (Eq. 10) as the
// fragment chain.
#pragma once

#include "fft/fft2d.h"

#include <map>
#include <vector>

namespace gpufft {

class ComputeFft : public Fft2D {
public:
    ComputeFft(ProgramCache& programs, int width, int height, const FftOptions& options = {});
    ~ComputeFft() override;

    void forward(const Texture& image, RenderTarget& spectrum, Profile* profile = nullptr) override;
    void inverse(const Texture& spectrum, RenderTarget& image, Profile* profile = nullptr) override;
    void filter(const Texture& image, const Texture& kernel_spectrum, RenderTarget& out,
                Profile* profile = nullptr) override;
    std::string name() const override { return "compute"; }
    using Fft2D::forward;
    using Fft2D::inverse;

    /// Whether this context runs compute shaders with image load/store, and a line of `length`
    /// (a power of two) fits the shared memory of one workgroup.
    static bool supported(int length);
    /// The stage radices of a line of `length`, none above `max_radix` (4, 8 or 16): as many of the
    /// largest as fit, then the rest (2 only where nothing else divides); largest first.
    static std::vector<int> line_radices(int length, int max_radix);
    /// The largest radix used on this context for an option value (0: auto).
    static int radix_for(int option);

private:
    /// One dispatch: `variant` (ROWS_FORWARD, ...) over `groups` lines.
    struct Step {
        const char* variant;
        bool rows;
        const Texture* source;
        const Texture* target;
        float scale, gain;
        bool half_target = false;  ///< the target is an RGBA16F intermediate
        bool pair0 = false;        ///< columns: the dispatch for columns 0 and M/2 (else pairs 1 .. M/2 - 1)
    };
    /// Column steps become two dispatches: pairs 1 .. M/2 - 1, and pair 0.
    std::vector<Step> dispatches(std::vector<Step> steps) const;
    void run(const std::vector<Step>& steps, const Texture* kernel, Profile* profile);
    ProgramSpec spec(const Step& step) const;

    ProgramCache& programs_;
    FftOptions options_;
    int max_radix_;
    RenderTarget rows_out_, columns_out_;   // H (tangled row transforms), and the row pairs for the inverse
    std::map<int, Texture> twiddles_;      // W_L^k, k < L, per line length
    std::vector<GLuint> timestamps_;
};

}  // namespace gpufft
