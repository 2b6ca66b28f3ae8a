#include "image/colour.h"

#include <algorithm>
#include <cmath>

namespace gpufft {

Transfer transfer_of(const PngFormat& format) {
    Transfer t;
    if (!format.srgb && format.gamma > 0) {
        t.srgb = false;
        t.gamma = format.gamma;
    }
    return t;
}

namespace {

// IEC 61966-2-1, in double so that 8- and 16-bit samples survive the round trip exactly.
double srgb_to_linear(double v) { return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); }
double linear_to_srgb(double v) { return v <= 0.0031308 ? v * 12.92 : 1.055 * std::pow(v, 1 / 2.4) - 0.055; }

}  // namespace

float to_linear(float v, const Transfer& t) {
    const double d = v;
    return static_cast<float>(t.srgb ? srgb_to_linear(d) : std::pow(std::max(d, 0.0), 1 / t.gamma));
}

float from_linear(float v, const Transfer& t) {
    const double d = std::min(std::max(static_cast<double>(v), 0.0), 1.0);
    return static_cast<float>(t.srgb ? linear_to_srgb(d) : std::pow(d, t.gamma));
}

namespace {

template <typename F>
void each_colour(Image& image, F f) {
    for (size_t i = 0; i < image.pixels(); ++i)
        for (int c = 0; c < 3; ++c) {
            float& v = image.rgba[4 * i + static_cast<size_t>(c)];
            v = f(v);
        }
}

}  // namespace

void to_linear(Image& image, const Transfer& t) {
    each_colour(image, [&](float v) { return to_linear(v, t); });
}

void from_linear(Image& image, const Transfer& t) {
    each_colour(image, [&](float v) { return from_linear(v, t); });
}

void premultiply(Image& image) {
    for (size_t i = 0; i < image.pixels(); ++i) {
        float* p = &image.rgba[4 * i];
        for (int c = 0; c < 3; ++c) p[c] *= p[3];
    }
}

void unpremultiply(Image& image) {
    for (size_t i = 0; i < image.pixels(); ++i) {
        float* p = &image.rgba[4 * i];
        float a = p[3];
        for (int c = 0; c < 3; ++c) p[c] = a > 0 ? p[c] / a : 0.0f;
    }
}

}  // namespace gpufft
