// Float RGBA images on the CPU.
#pragma once

#include <cstddef>
#include <vector>

namespace gpufft {

/// width x height RGBA floats, row 0 first (the top row of a PNG), nominal range [0, 1].
struct Image {
    int width = 0, height = 0;
    std::vector<float> rgba;

    Image() = default;
    Image(int w, int h, float fill = 0.0f)
        : width(w), height(h), rgba(static_cast<size_t>(w) * static_cast<size_t>(h) * 4, fill) {}
    size_t index(int x, int y) const { return (static_cast<size_t>(y) * static_cast<size_t>(width) + static_cast<size_t>(x)) * 4; }
    float* at(int x, int y) { return &rgba[index(x, y)]; }
    const float* at(int x, int y) const { return &rgba[index(x, y)]; }
    size_t pixels() const { return static_cast<size_t>(width) * static_cast<size_t>(height); }
};

}  // namespace gpufft
