#include "scene/teapot.h"

#include "scene/teapot_data.h"

#include <cmath>

namespace gpufft {

namespace {

using Vec3 = std::array<double, 3>;

Vec3 sub(Vec3 a, Vec3 b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
Vec3 cross(Vec3 a, Vec3 b) { return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]}; }
double length(Vec3 a) { return std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]); }

/// Cubic Bernstein weights and their derivatives at t.
void bernstein(double t, double b[4], double d[4]) {
    double s = 1 - t;
    b[0] = s * s * s;
    b[1] = 3 * t * s * s;
    b[2] = 3 * t * t * s;
    b[3] = t * t * t;
    d[0] = -3 * s * s;
    d[1] = 3 * s * s - 6 * t * s;
    d[2] = 6 * t * s - 3 * t * t;
    d[3] = 3 * t * t;
}

struct Sample {
    Vec3 point, du, dv;
};

Sample evaluate(const teapot_data::Patch& patch, double sx, double sy, double u, double v) {
    double bu[4], du[4], bv[4], dv[4];
    bernstein(u, bu, du);
    bernstein(v, bv, dv);
    Sample s{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
    for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 4; ++c) {
            const float* p = patch.p[r][c];
            Vec3 q = {p[0] * sx, p[1] * sy, p[2]};
            for (int k = 0; k < 3; ++k) {
                s.point[k] += bv[r] * bu[c] * q[k];
                s.du[k] += bv[r] * du[c] * q[k];
                s.dv[k] += dv[r] * bu[c] * q[k];
            }
        }
    return s;
}

/// The surface normal; at a degenerate edge (a row of equal control points) the tangent vanishes,
/// so the normal is taken a little way inside the patch.
Vec3 normal_at(const teapot_data::Patch& patch, double sx, double sy, double u, double v) {
    for (double e : {0.0, 1e-3, 1e-2}) {
        double uu = u < 0.5 ? u + e : u - e, vv = v < 0.5 ? v + e : v - e;
        Sample s = evaluate(patch, sx, sy, uu, vv);
        Vec3 n = cross(s.du, s.dv);
        double len = length(n);
        if (len > 1e-9) return {n[0] / len, n[1] / len, n[2] / len};
    }
    return {0, 0, 1};
}

}  // namespace

Mesh teapot_mesh(int segments) {
    Mesh mesh;
    const double mirrors[4][2] = {{1, 1}, {-1, 1}, {-1, -1}, {1, -1}};
    for (int i = 0; i < teapot_data::kPatchCount; ++i) {
        const teapot_data::Patch& patch = teapot_data::kPatches[i];
        int copies = i < teapot_data::kQuadrantPatches ? 4 : 2;
        for (int m = 0; m < copies; ++m) {
            double sx = copies == 4 ? mirrors[m][0] : 1, sy = copies == 4 ? mirrors[m][1] : (m ? -1 : 1);
            std::vector<Vec3> points, normals;
            for (int r = 0; r <= segments; ++r)
                for (int c = 0; c <= segments; ++c) {
                    double u = double(c) / segments, v = double(r) / segments;
                    points.push_back(evaluate(patch, sx, sy, u, v).point);
                    normals.push_back(normal_at(patch, sx, sy, u, v));
                }
            auto at = [&](int r, int c) { return static_cast<size_t>(r * (segments + 1) + c); };
            auto emit = [&](size_t a, size_t b, size_t c) {
                if (length(cross(sub(points[b], points[a]), sub(points[c], points[a]))) < 1e-12) return;
                for (size_t k : {a, b, c})
                    for (int j = 0; j < 3; ++j) {
                        mesh.positions.push_back(static_cast<float>(points[k][j]));
                        mesh.normals.push_back(static_cast<float>(normals[k][j]));
                    }
            };
            for (int r = 0; r < segments; ++r)
                for (int c = 0; c < segments; ++c) {
                    emit(at(r, c), at(r, c + 1), at(r + 1, c + 1));
                    emit(at(r, c), at(r + 1, c + 1), at(r + 1, c));
                }
        }
    }
    return mesh;
}

namespace {

Mat4 multiply(const Mat4& a, const Mat4& b) {
    Mat4 out{};
    for (int c = 0; c < 4; ++c)
        for (int r = 0; r < 4; ++r)
            for (int k = 0; k < 4; ++k) out[c * 4 + r] += a[k * 4 + r] * b[c * 4 + k];
    return out;
}

Mat4 identity() { return {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}; }

Mat4 rotation(float degrees, int axis) {
    float a = degrees * 3.14159265358979f / 180.0f, c = std::cos(a), s = std::sin(a);
    Mat4 m = identity();
    int i = (axis + 1) % 3, j = (axis + 2) % 3;
    m[i * 4 + i] = c;
    m[j * 4 + j] = c;
    m[i * 4 + j] = s;
    m[j * 4 + i] = -s;
    return m;
}

Mat4 translation(float x, float y, float z) {
    Mat4 m = identity();
    m[12] = x;
    m[13] = y;
    m[14] = z;
    return m;
}

}  // namespace

Mat4 Camera::model_view() const {
    // The data: z up, 3.15 high, x from -3 to 3.5. Centre it, scale its height to 1, make y up.
    Mat4 model = {1, 0, 0, 0, 0, 0, -1, 0, 0, 1, 0, 0, 0, 0, 0, 1};  // z up -> y up
    const float s = 1.0f / 3.15f;
    Mat4 scale = {s, 0, 0, 0, 0, s, 0, 0, 0, 0, s, 0, 0, 0, 0, 1};
    model = multiply(scale, multiply(model, translation(-0.26f, 0.0f, -1.575f)));
    Mat4 view = multiply(translation(0, 0, -distance), multiply(rotation(pitch, 0), rotation(yaw, 1)));
    return multiply(view, model);
}

Mat4 Camera::projection(float aspect) const {
    const float fovy = 32.0f * 3.14159265358979f / 180.0f, f = 1.0f / std::tan(fovy / 2);
    const float n = 0.1f, far = 50.0f;
    return {f / aspect, 0, 0, 0, 0, f, 0, 0, 0, 0, (far + n) / (n - far), -1, 0, 0, 2 * far * n / (n - far), 0};
}

TeapotScene::TeapotScene(ProgramCache& programs, int segments) : programs_(programs) {
    Mesh mesh = teapot_mesh(segments);
    vertices_ = static_cast<GLsizei>(mesh.vertices());
    positions_ = new_buffer();
    glBindBuffer(GL_ARRAY_BUFFER, positions_.get());
    glBufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(mesh.positions.size() * sizeof(float)), mesh.positions.data(), GL_STATIC_DRAW);
    normals_ = new_buffer();
    glBindBuffer(GL_ARRAY_BUFFER, normals_.get());
    glBufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(mesh.normals.size() * sizeof(float)), mesh.normals.data(), GL_STATIC_DRAW);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    check_gl("uploading the teapot");
}

void TeapotScene::render(RenderTarget& target, const Camera& camera, const SceneLook& look) {
    target.bind_for_drawing();
    glDisable(GL_BLEND);
    glDisable(GL_SCISSOR_TEST);
    glDisable(GL_CULL_FACE);  // the lid gap and spout show both sides
    glEnable(GL_DEPTH_TEST);
    glDepthFunc(GL_LESS);
    glDepthMask(GL_TRUE);
    glClearColor(0.02f, 0.025f, 0.045f, 0.0f);
    glClearDepth(1.0);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);

    const GlProgram& program = programs_.get({"teapot.vert", "teapot.frag", look.ldr ? std::vector<std::string>{"LDR"} : std::vector<std::string>{}, false});
    program.use();
    Mat4 mv = camera.model_view(), proj = camera.projection(static_cast<float>(target.width()) / static_cast<float>(target.height()));
    program.set_mat4(Uniform::ModelView, mv.data());
    program.set_mat4(Uniform::Projection, proj.data());
    // Rotation and uniform scale only: the normal matrix is the upper 3x3, renormalised in the shader.
    const float normal_matrix[9] = {mv[0], mv[1], mv[2], mv[4], mv[5], mv[6], mv[8], mv[9], mv[10]};
    program.set_mat3(Uniform::NormalMatrix, normal_matrix);
    const float light[3] = {0.48f, 0.64f, 0.6f};  // eye space, toward the light (unit length)
    program.set_vec3(Uniform::LightDir, light);
    program.set(Uniform::Exposure, look.highlight);

    if (GLEW_VERSION_3_0) glBindVertexArray(0);
    glBindBuffer(GL_ARRAY_BUFFER, positions_.get());
    glEnableVertexAttribArray(kPositionAttribute);
    glVertexAttribPointer(kPositionAttribute, 3, GL_FLOAT, GL_FALSE, 0, nullptr);
    glBindBuffer(GL_ARRAY_BUFFER, normals_.get());
    glEnableVertexAttribArray(kNormalAttribute);
    glVertexAttribPointer(kNormalAttribute, 3, GL_FLOAT, GL_FALSE, 0, nullptr);
    glDrawArrays(GL_TRIANGLES, 0, vertices_);
    glDisableVertexAttribArray(kNormalAttribute);
    glDisableVertexAttribArray(kPositionAttribute);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    glUseProgram(0);
    glDisable(GL_DEPTH_TEST);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    check_gl("rendering the teapot");
}

}  // namespace gpufft
