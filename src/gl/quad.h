// Quads for passes: a vertex buffer of rectangles with integer texel corners, each drawn as a
// 4-vertex triangle strip through quad.vert's a_position.
#pragma once

#include "gl/handle.h"

#include <map>
#include <tuple>
#include <vector>

namespace gpufft {

/// A rectangle of texels [x0, x1) x [y0, y1).
struct Region {
    int x0 = 0, y0 = 0, x1 = 0, y1 = 0;
    long long area() const { return static_cast<long long>(x1 - x0) * (y1 - y0); }
    bool empty() const { return x1 <= x0 || y1 <= y0; }
    bool operator<(const Region& o) const { return std::tie(x0, y0, x1, y1) < std::tie(o.x0, o.y0, o.x1, o.y1); }
};

/// Sets every piece of fixed-function state a pass depends on (no depth test, blending, culling,
/// scissor; no colour clamping), so passes run the same after any other drawing on the context.
void prepare_pass_state();

/// Distinct regions in one vertex buffer. Move-only.
class QuadBuffer {
public:
    QuadBuffer() = default;
    QuadBuffer(const QuadBuffer&) = delete;
    QuadBuffer& operator=(const QuadBuffer&) = delete;

    /// Adds regions not yet in the buffer (re-uploading it once).
    void add(const std::vector<Region>& regions);
    /// Binds the buffer to a_position; call before draw().
    void bind();
    /// Draws one region added earlier.
    void draw(const Region& r) const { glDrawArrays(GL_TRIANGLE_STRIP, first_.at(r), 4); }
    void unbind();

private:
    BufferHandle buffer_;
    std::map<Region, GLint> first_;
};

}  // namespace gpufft
