// Colour encodings around filtering: gamma-encoded samples to linear light and back, and
// premultiplied alpha. Alpha is always linear.
#pragma once

#include "image/image.h"
#include "image/png_io.h"

namespace gpufft {

// Transfer (a transfer curve) is public: gpufft/gpufft.h.

/// The transfer curve a PNG states: sRGB (an sRGB chunk, or no colour information at all), or a
/// power law from gAMA. An iCCP profile without sRGB or gAMA is taken as sRGB.
Transfer transfer_of(const PngFormat& format);

/// One value from encoded to linear light, and back (clamped to [0, 1]): what the Image versions
/// below do to each of R, G, B.
float to_linear(float v, const Transfer& t);
float from_linear(float v, const Transfer& t);

/// R, G, B from encoded samples to linear light, in place.
void to_linear(Image& image, const Transfer& t);
/// R, G, B from linear light to encoded samples, in place (values outside [0, 1] are clamped).
void from_linear(Image& image, const Transfer& t);

/// R, G, B times alpha; and back (transparent pixels come back black).
void premultiply(Image& image);
void unpremultiply(Image& image);

}  // namespace gpufft
