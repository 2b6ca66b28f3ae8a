// The paper's test scene (Section 6): a lit Utah teapot rendered into a float RGBA target.
#pragma once

#include "gl/program.h"
#include "gl/texture.h"

#include <array>
#include <vector>

namespace gpufft {

/// Triangles of the teapot: positions and unit normals (xyz each), three vertices a triangle.
struct Mesh {
    std::vector<float> positions, normals;
    size_t vertices() const { return positions.size() / 3; }
};

/// Tessellates the Bezier patches into segments x segments quads each; degenerate triangles (at
/// the lid's knob and the bottom's centre) are dropped.
Mesh teapot_mesh(int segments = 14);

using Mat4 = std::array<float, 16>;  // column-major

/// An orbit camera around the teapot.
struct Camera {
    float yaw = -35.0f;     ///< degrees about the vertical axis
    float pitch = 20.0f;    ///< degrees above the horizon
    float distance = 4.2f;  ///< in teapot heights
    Mat4 model_view() const;
    Mat4 projection(float aspect) const;
};

struct SceneLook {
    float highlight = 6.0f;  ///< specular intensity: above 1, so a wide kernel blooms
    bool ldr = false;        ///< clamp the frame to [0, 1] (for comparisons with 8/16-bit files)
};

/// Renders the scene. Background: dark blue, alpha 0; teapot: alpha 1.
class TeapotScene {
public:
    explicit TeapotScene(ProgramCache& programs, int segments = 14);
    TeapotScene(const TeapotScene&) = delete;
    TeapotScene& operator=(const TeapotScene&) = delete;

    /// Draws into `target`, which must have a depth buffer.
    void render(RenderTarget& target, const Camera& camera, const SceneLook& look = {});
    size_t triangles() const { return vertices_ / 3; }

private:
    ProgramCache& programs_;
    BufferHandle positions_, normals_;
    GLsizei vertices_ = 0;
};

}  // namespace gpufft
