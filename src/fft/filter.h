// Filtering by an impulse response in the frequency domain (the paper's Section 5, last step).
#pragma once

#include "fft/fft2d.h"

#include <optional>
#include <vector>

namespace gpufft {

/// An impulse response turned once into its spectrum (compressed layout) and kept on the GPU;
/// apply() then filters any frame of the same size: forward, multiply, inverse.
///
/// Normalisation: the forward transform scales by 1/(MN), so the spectra of image and impulse
/// response each carry 1/(MN) while the spectrum of their circular convolution carries it once.
/// The multiply pass restores the factor MN (a power of two, so exactly).
///
/// A point-symmetric impulse response (k(-x, -y) = k(x, y), indices modulo M and N: the built-in
/// kernels, point_symmetric()) has a real spectrum. Its filters then multiply by the real part
/// alone where the backend can (the compute backend reads half the kernel's texels).
class Filter {
public:
    /// `impulse_response`: M x N RGBA floats, origin at texel (0, 0), circular (index -1 is M - 1).
    /// Whether it is point symmetric is read from its values.
    Filter(Fft2D& fft, const std::vector<float>& impulse_response);
    /// The same from an M x N texture holding the impulse response (e.g. fft.input()).
    /// `point_symmetric`: the caller's word that it is (point_symmetric() of the Kernel it came
    /// from). Given for one that is not, the compute backend filters by its even part.
    Filter(Fft2D& fft, const Texture& impulse_response, bool point_symmetric = false);

    void set_impulse_response(const std::vector<float>& impulse_response);
    void set_impulse_response(const Texture& impulse_response, bool point_symmetric = false);
    /// Whether apply() multiplies by a real spectrum (the impulse response point symmetric).
    bool real_spectrum() const { return real_; }
    /// Filters `frame` (M x N) into `out`.
    void apply(const Texture& frame, RenderTarget& out, Profile* profile = nullptr);
    /// Filters frames[i] into *outs[i], all at once (Fft2D::filter_batch).
    void apply(const std::vector<const Texture*>& frames, const std::vector<RenderTarget*>& outs, Profile* profile = nullptr);
    /// CPU convenience: uploads, filters, reads back.
    std::vector<float> apply(const std::vector<float>& image);
    /// The impulse response's spectrum (Eq. 10's compressed layout). Where the transform makes its
    /// kernel from the impulse response alone (Fft2D::kernel_reads_spectrum() false: filters run
    /// transposed), made on the first call, from a copy of the impulse response kept till then: a
    /// filter that is only applied never compiles that forward nor holds its intermediates.
    const RenderTarget& spectrum();
    /// What apply() multiplies by: the spectrum, or where the transform reads it in an order of its
    /// own (Fft2D::reorders_kernel), the spectrum so reordered.
    const Texture& kernel() const { return reordered_ ? reordered_->texture() : spectrum_->texture(); }

private:
    void reorder(const Texture& impulse_response);

    Fft2D& fft_;
    std::optional<RenderTarget> spectrum_;
    std::optional<RenderTarget> impulse_;  ///< the impulse response till spectrum() is asked for, where the kernel does not need it
    std::optional<RenderTarget> reordered_;
    bool real_ = false;
};

/// Whether M x N RGBA floats (origin at texel (0, 0), circular) are point symmetric: every value
/// equals the one at (-x mod M, -y mod N), exactly.
bool point_symmetric(const std::vector<float>& rgba, int width, int height);

}  // namespace gpufft
