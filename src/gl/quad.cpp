#include "gl/quad.h"

#include "gl/program.h"  // kPositionAttribute

namespace gpufft {

void prepare_pass_state() {
    glDisable(GL_DEPTH_TEST);
    glDisable(GL_STENCIL_TEST);
    glDisable(GL_SCISSOR_TEST);
    glDisable(GL_BLEND);
    glDisable(GL_CULL_FACE);
    glDisable(GL_DITHER);
    glColorMask(GL_TRUE, GL_TRUE, GL_TRUE, GL_TRUE);
    glPolygonMode(GL_FRONT_AND_BACK, GL_FILL);
    if (GLEW_VERSION_3_0) {
        glClampColor(GL_CLAMP_FRAGMENT_COLOR, GL_FALSE);
        glClampColor(GL_CLAMP_READ_COLOR, GL_FALSE);
    }
}

void QuadBuffer::add(const std::vector<Region>& regions) {
    size_t before = first_.size();
    for (const Region& r : regions) first_.emplace(r, 0);
    if (first_.size() == before && buffer_) return;
    std::vector<float> corners;
    GLint vertex = 0;
    for (auto& [r, first] : first_) {
        first = vertex;
        const float x0 = static_cast<float>(r.x0), y0 = static_cast<float>(r.y0);
        const float x1 = static_cast<float>(r.x1), y1 = static_cast<float>(r.y1);
        corners.insert(corners.end(), {x0, y0, x1, y0, x0, y1, x1, y1});
        vertex += 4;
    }
    if (!buffer_) buffer_ = new_buffer();
    glBindBuffer(GL_ARRAY_BUFFER, buffer_.get());
    glBufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(corners.size() * sizeof(float)), corners.data(), GL_STATIC_DRAW);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
}

void QuadBuffer::bind() {
    if (GLEW_VERSION_3_0) glBindVertexArray(0);
    glBindBuffer(GL_ARRAY_BUFFER, buffer_.get());
    glEnableVertexAttribArray(kPositionAttribute);
    glVertexAttribPointer(kPositionAttribute, 2, GL_FLOAT, GL_FALSE, 0, nullptr);
}

void QuadBuffer::unbind() {
    glDisableVertexAttribArray(kPositionAttribute);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
}

}  // namespace gpufft
