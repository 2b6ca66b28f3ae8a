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

template <typename F>
void each_colour(Image& image, F f) {
    for (size_t i = 0; i < image.pixels(); ++i)
        for (int c = 0; c < 3; ++c) {
            float& v = image.rgba[4 * i + static_cast<size_t>(c)];
            v = static_cast<float>(f(static_cast<double>(v)));
        }
}

}  // namespace

void to_linear(Image& image, const Transfer& t) {
    if (t.srgb) each_colour(image, srgb_to_linear);
    else each_colour(image, [&](double v) { return std::pow(std::max(v, 0.0), 1 / t.gamma); });
}

void from_linear(Image& image, const Transfer& t) {
    auto clamp01 = [](double v) { return std::min(std::max(v, 0.0), 1.0); };
    if (t.srgb) each_colour(image, [&](double v) { return linear_to_srgb(clamp01(v)); });
    else each_colour(image, [&](double v) { return std::pow(clamp01(v), t.gamma); });
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
