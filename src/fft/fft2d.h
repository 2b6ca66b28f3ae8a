// The 2D FFT of float RGBA textures, the interface every backend implements. All four channels are
// transformed at once; spectra are in the compressed layout of Eq. 10 (layout.h), scaled 1/(MN).
#pragma once

#include "fft/plan.h"
#include "fft/sizes.h"
#include "gl/program.h"
#include "gl/timer.h"
#include "gl/texture.h"

#include <array>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace gpufft {

// Backend and FftOptions are public: gpufft/gpufft.h.

/// A GL implementation to run or compare, by name.
struct Implementation {
    std::string name;
    FftOptions options;
};
/// Every GL implementation the current context runs, each `base` with its backend and radix set:
/// the paper's radix-2 chain, the fast fragment chain and, where compute shaders exist, the
/// compute backend. What teapot --bench, fftcompare and the tests compare.
std::vector<Implementation> gl_implementations(const FftOptions& base = {});

/// GPU time of one run per program (timer queries, milliseconds), filled when asked for.
struct Profile {
    std::array<double, kProgramCount> program_ms{};
    std::vector<double> pass_ms;  ///< one entry per pass (fragment) or dispatch (compute)
    std::vector<std::string> pass_labels;
    /// Compute backend: the bytes each dispatch reads and writes in global memory (every texel it
    /// loads or stores once: images, intermediates and the kernel's spectrum; not the twiddles).
    std::vector<double> pass_bytes;
    double total_ms = 0;
};

class Fft2D {
public:
    virtual ~Fft2D() = default;
    int width() const { return width_; }
    int height() const { return height_; }

    /// The real M x N RGBA image in `image` to its spectrum in `spectrum` (Eq. 10 layout, 1/(MN)).
    virtual void forward(const Texture& image, RenderTarget& spectrum, Profile* profile = nullptr) = 0;
    /// A spectrum back to the image (no scaling: the forward transform carries 1/(MN)).
    virtual void inverse(const Texture& spectrum, RenderTarget& image, Profile* profile = nullptr) = 0;
    /// Circular convolution: forward, multiply by `kernel_spectrum` (a forward() result, or where
    /// reorders_kernel(), reorder_kernel() of one), inverse. `real_kernel`: the spectrum is real
    /// (a point-symmetric impulse response, Filter::real_spectrum()), and a backend may skip its
    /// imaginary half (the compute backend's multiply does; the fragment chains read it all).
    virtual void filter(const Texture& image, const Texture& kernel_spectrum, bool real_kernel, RenderTarget& out,
                        Profile* profile = nullptr) = 0;
    /// filter() of several images by one kernel: images[i] into *outs[i] (as many of each, the
    /// outputs distinct). The compute backend runs each dispatch of the filter for every image
    /// before its barrier, so the images' workgroups share the GPU's rounds (a last round that one
    /// image leaves sparse, another fills); the others filter one image after the other. The
    /// profile's dispatches are the batch's.
    virtual void filter_batch(const std::vector<const Texture*>& images, const Texture& kernel_spectrum, bool real_kernel,
                              const std::vector<RenderTarget*>& outs, Profile* profile = nullptr);
    /// Compiles now, side by side, what filter() with `real_kernel` and the forward() that makes
    /// the kernel's spectrum will run (Filter calls it when its kernel is set). The compute
    /// backend compiles each use's programs on first use otherwise; the fragment chains compile
    /// everything with the transform.
    virtual void prepare_filter(bool real_kernel) { (void)real_kernel; }
    /// The programs prepare_filter() would compile and has not, compiling none: a batch of many
    /// grids compiles all of theirs side by side in one ProgramCache::prepare (Convolver::
    /// prepare_programs). None where the transform compiles with its construction.
    virtual std::vector<ProgramSpec> filter_programs(bool real_kernel) {
        (void)real_kernel;
        return {};
    }
    /// Whether filter() reads the kernel's spectrum in an order of its own, made by
    /// reorder_kernel() from a forward() result (the compute backend's long columns, ComputeFft).
    virtual bool reorders_kernel() const { return false; }
    /// Whether reorder_kernel() reads the forward() of the impulse response; where it does not (it
    /// makes the kernel from the impulse response alone: ComputeFft's transposed filters), a
    /// Filter makes that spectrum only when asked for it.
    virtual bool kernel_reads_spectrum() const { return true; }
    /// `spectrum` (the forward() of `impulse`; null where kernel_reads_spectrum() is false) into
    /// `kernel` (kernel_size()) in the order filter() reads it; where reorders_kernel() is false,
    /// nothing to do.
    virtual void reorder_kernel(const Texture& impulse, const Texture* spectrum, RenderTarget& kernel) {
        (void)impulse;
        (void)spectrum;
        (void)kernel;
    }
    /// The width and height of reorder_kernel()'s result.
    virtual std::array<int, 2> kernel_size() const { return {width_, height_}; }
    /// The filter as a fragment-pass plan, for accounting (Table 1); null where the backend has none.
    virtual const Plan* filter_plan() const { return nullptr; }
    virtual std::string name() const = 0;

    // CPU conveniences for tools and tests: width*height RGBA floats in and out, row 0 first.
    std::vector<float> forward(const std::vector<float>& image);
    std::vector<float> inverse(const std::vector<float>& spectrum);

    /// A scratch input texture of the transform's size (for uploads).
    Texture& input();
    /// A render target of the transform's size for results the caller reads back.
    RenderTarget& output();

protected:
    Fft2D(int width, int height, Storage storage) : width_(width), height_(height), storage_(storage) {}
    int width_, height_;
    Storage storage_;

private:
    Texture input_;
    RenderTarget output_;
};

/// Throws std::invalid_argument unless `images` and `outs` are a filter batch of M x N: as many
/// of each (at least one), none missing, the outputs distinct (Fft2D::filter_batch).
void check_batch(const std::vector<const Texture*>& images, const std::vector<RenderTarget*>& outs, int width, int height);

/// True where the current context's renderer is a software rasterizer (llvmpipe, softpipe, swrast).
bool software_renderer();
/// The GL backend that Auto means on the current context, from the measurements in the README:
/// compute on a hardware GPU with GL 4.3 (12-60x the fragment chain on an H100/H200), the fast
/// fragment chain on software rasterizers (llvmpipe runs it 1.3-1.7x faster than compute), wherever
/// compute shaders are missing, and for the paper's radix-2 chain. Any other backend is returned as it is.
Backend resolve_gl_backend(const FftOptions& options);

/// The FFT lengths make_fft(options) takes on the current context and what each costs (the
/// backend's model: ComputeFft::lengths, FragmentFft::lengths), for choosing grids.
LengthModel fft_lengths(const FftOptions& options);

/// A transform of M x N on the current context (Auto resolved by resolve_gl_backend); throws std::invalid_argument for sizes that are
/// not powers of two >= 2 or exceed the GPU's limit.
std::unique_ptr<Fft2D> make_fft(ProgramCache& programs, int width, int height, const FftOptions& options = {});

}  // namespace gpufft
