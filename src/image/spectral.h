// The two frequency-domain pictures of the paper beyond filtering: an image's spectrum (Figure 4b)
// and textures synthesised from random phases (Figure 5).
#pragma once

#include "fft/fft2d.h"
#include "image/convolve.h"
#include "image/image.h"

#include <string>

namespace gpufft {

/// The centred log-magnitude spectrum of `image` (spectrum.frag), computed at the next power-of-two
/// size, the image extended by `boundary` to fill it. The result has that size.
Image spectrum_image(ProgramCache& programs, const Image& image, Boundary boundary, const FftOptions& options = {});

// SynthSpec is public: gpufft/gpufft.h.

/// "WxH[:power=P][:seed=S][:colour]"; throws UsageError.
SynthSpec parse_synth(const std::string& spec);

/// A texture from known magnitudes and uniformly random phases, inverse-transformed on the GPU at
/// the next power-of-two size (tileable when width and height are powers of two), cropped, and
/// scaled to span [0, 1]. Alpha is 1.
Image synthesize(ProgramCache& programs, const SynthSpec& spec, const FftOptions& options = {});

}  // namespace gpufft
