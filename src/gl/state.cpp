#include "gl/state.h"

#include "gl/quad.h"

#include <utility>

namespace gpufft {

namespace {

const GLenum kTargets[3] = {GL_TEXTURE_2D, GL_TEXTURE_RECTANGLE, GL_TEXTURE_2D_ARRAY};
const GLenum kBindings[3] = {GL_TEXTURE_BINDING_2D, GL_TEXTURE_BINDING_RECTANGLE, GL_TEXTURE_BINDING_2D_ARRAY};

GLint integer(GLenum name) {
    GLint v = 0;
    glGetIntegerv(name, &v);
    return v;
}

}  // namespace

SavedGlState::SavedGlState() {
    gl30_ = GLEW_VERSION_3_0;
    samplers_used_ = GLEW_VERSION_3_3 || GLEW_ARB_sampler_objects;
    compute_ = GLEW_VERSION_4_3 != 0;
    program_ = integer(GL_CURRENT_PROGRAM);
    draw_framebuffer_ = integer(GL_DRAW_FRAMEBUFFER_BINDING);
    read_framebuffer_ = integer(GL_READ_FRAMEBUFFER_BINDING);
    glGetIntegerv(GL_VIEWPORT, viewport_.data());
    active_texture_ = integer(GL_ACTIVE_TEXTURE);
    for (int u = 0; u < kUnits; ++u) {
        glActiveTexture(GL_TEXTURE0 + static_cast<GLenum>(u));
        for (int t = 0; t < 3; ++t) textures_[u][t] = integer(kBindings[t]);
        if (samplers_used_) {
            samplers_[u] = integer(GL_SAMPLER_BINDING);
            glBindSampler(static_cast<GLuint>(u), 0);
        }
    }
    std::vector<GLenum> caps = {GL_DEPTH_TEST, GL_STENCIL_TEST, GL_SCISSOR_TEST, GL_BLEND, GL_CULL_FACE, GL_DITHER};
    if (gl30_) caps.push_back(GL_FRAMEBUFFER_SRGB);
    for (GLenum c : caps) enables_.emplace_back(c, glIsEnabled(c));
    glGetBooleanv(GL_COLOR_WRITEMASK, color_mask_.data());
    glGetIntegerv(GL_POLYGON_MODE, polygon_mode_.data());
    glGetFloatv(GL_COLOR_CLEAR_VALUE, clear_color_.data());
    if (gl30_) {
        clamp_fragment_ = integer(GL_CLAMP_FRAGMENT_COLOR);
        clamp_read_ = integer(GL_CLAMP_READ_COLOR);
        vertex_array_ = integer(GL_VERTEX_ARRAY_BINDING);
        glBindVertexArray(0);  // the passes' quads use vertex array 0: its attributes are saved below
    }
    array_buffer_ = integer(GL_ARRAY_BUFFER_BINDING);
    for (GLuint i = 0; i < attributes_.size(); ++i) {
        Attribute& a = attributes_[i];
        for (auto [name, value] : {std::pair<GLenum, GLint*>{GL_VERTEX_ATTRIB_ARRAY_ENABLED, &a.enabled},
                                   {GL_VERTEX_ATTRIB_ARRAY_BUFFER_BINDING, &a.buffer}, {GL_VERTEX_ATTRIB_ARRAY_SIZE, &a.size},
                                   {GL_VERTEX_ATTRIB_ARRAY_TYPE, &a.type}, {GL_VERTEX_ATTRIB_ARRAY_NORMALIZED, &a.normalized},
                                   {GL_VERTEX_ATTRIB_ARRAY_STRIDE, &a.stride}})
            glGetVertexAttribiv(i, name, value);
        if (gl30_) glGetVertexAttribiv(i, GL_VERTEX_ATTRIB_ARRAY_INTEGER, &a.integer);
        glGetVertexAttribPointerv(i, GL_VERTEX_ATTRIB_ARRAY_POINTER, &a.pointer);
    }
    if (compute_) {
        storage_buffer_ = integer(GL_SHADER_STORAGE_BUFFER_BINDING);
        for (GLuint i = 0; i < kIndexed; ++i) {
            ImageUnit& m = images_[i];
            for (auto [name, value] : {std::pair<GLenum, GLint*>{GL_IMAGE_BINDING_NAME, &m.name}, {GL_IMAGE_BINDING_LEVEL, &m.level},
                                       {GL_IMAGE_BINDING_LAYERED, &m.layered}, {GL_IMAGE_BINDING_LAYER, &m.layer},
                                       {GL_IMAGE_BINDING_ACCESS, &m.access}, {GL_IMAGE_BINDING_FORMAT, &m.format}})
                glGetIntegeri_v(name, i, value);
            BufferRange& b = storage_[i];
            glGetIntegeri_v(GL_SHADER_STORAGE_BUFFER_BINDING, i, &b.name);
            glGetInteger64i_v(GL_SHADER_STORAGE_BUFFER_START, i, &b.start);
            glGetInteger64i_v(GL_SHADER_STORAGE_BUFFER_SIZE, i, &b.size);
        }
    }
    pack_alignment_ = integer(GL_PACK_ALIGNMENT);
    unpack_alignment_ = integer(GL_UNPACK_ALIGNMENT);
    pack_row_length_ = integer(GL_PACK_ROW_LENGTH);
    unpack_row_length_ = integer(GL_UNPACK_ROW_LENGTH);
    prepare_pass_state();
}

SavedGlState::~SavedGlState() {
    glPixelStorei(GL_PACK_ALIGNMENT, pack_alignment_);
    glPixelStorei(GL_UNPACK_ALIGNMENT, unpack_alignment_);
    glPixelStorei(GL_PACK_ROW_LENGTH, pack_row_length_);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, unpack_row_length_);
    if (compute_) {
        for (GLuint i = 0; i < kIndexed; ++i) {
            const ImageUnit& m = images_[i];
            glBindImageTexture(i, static_cast<GLuint>(m.name), m.level, static_cast<GLboolean>(m.layered), m.layer,
                               static_cast<GLenum>(m.access), static_cast<GLenum>(m.format));
            const BufferRange& b = storage_[i];
            if (b.name && b.size > 0)
                glBindBufferRange(GL_SHADER_STORAGE_BUFFER, i, static_cast<GLuint>(b.name), static_cast<GLintptr>(b.start),
                                  static_cast<GLsizeiptr>(b.size));
            else
                glBindBufferBase(GL_SHADER_STORAGE_BUFFER, i, static_cast<GLuint>(b.name));
        }
        glBindBuffer(GL_SHADER_STORAGE_BUFFER, static_cast<GLuint>(storage_buffer_));
    }
    // Vertex array 0's attributes, then the caller's vertex array and array buffer.
    if (gl30_) glBindVertexArray(0);
    for (GLuint i = 0; i < attributes_.size(); ++i) {
        const Attribute& a = attributes_[i];
        glBindBuffer(GL_ARRAY_BUFFER, static_cast<GLuint>(a.buffer));
        if (a.integer)
            glVertexAttribIPointer(i, a.size, static_cast<GLenum>(a.type), a.stride, a.pointer);
        else
            glVertexAttribPointer(i, a.size, static_cast<GLenum>(a.type), static_cast<GLboolean>(a.normalized), a.stride, a.pointer);
        if (a.enabled) glEnableVertexAttribArray(i);
        else glDisableVertexAttribArray(i);
    }
    if (gl30_) glBindVertexArray(static_cast<GLuint>(vertex_array_));
    glBindBuffer(GL_ARRAY_BUFFER, static_cast<GLuint>(array_buffer_));
    if (gl30_) {
        glClampColor(GL_CLAMP_FRAGMENT_COLOR, static_cast<GLenum>(clamp_fragment_));
        glClampColor(GL_CLAMP_READ_COLOR, static_cast<GLenum>(clamp_read_));
    }
    glClearColor(clear_color_[0], clear_color_[1], clear_color_[2], clear_color_[3]);
    glPolygonMode(GL_FRONT, static_cast<GLenum>(polygon_mode_[0]));
    glPolygonMode(GL_BACK, static_cast<GLenum>(polygon_mode_[1]));
    glColorMask(color_mask_[0], color_mask_[1], color_mask_[2], color_mask_[3]);
    for (auto [cap, on] : enables_) {
        if (on) glEnable(cap);
        else glDisable(cap);
    }
    for (int u = 0; u < kUnits; ++u) {
        glActiveTexture(GL_TEXTURE0 + static_cast<GLenum>(u));
        for (int t = 0; t < 3; ++t) glBindTexture(kTargets[t], static_cast<GLuint>(textures_[u][t]));
        if (samplers_used_) glBindSampler(static_cast<GLuint>(u), static_cast<GLuint>(samplers_[u]));
    }
    glActiveTexture(static_cast<GLenum>(active_texture_));
    glViewport(viewport_[0], viewport_[1], viewport_[2], viewport_[3]);
    glBindFramebuffer(GL_DRAW_FRAMEBUFFER, static_cast<GLuint>(draw_framebuffer_));
    glBindFramebuffer(GL_READ_FRAMEBUFFER, static_cast<GLuint>(read_framebuffer_));
    glUseProgram(static_cast<GLuint>(program_));
}

}  // namespace gpufft
