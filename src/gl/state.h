// The caller's GL state, saved and put back: what the public API (gpufft/gpufft.h) promises, that
// a call leaves the context's state as it found it, whatever the passes and dispatches bind.
#pragma once

#include "gl/gl.h"

#include <array>
#include <vector>

namespace gpufft {

/// Saves, on construction, every piece of context state the library's passes change (program,
/// framebuffers, viewport, texture units 0-7 and their sampler objects, image and storage-buffer bindings 0-1, the array
/// buffer, vertex array and attributes 0-1, the enables and masks of prepare_pass_state(),
/// clear colour, pixel-store alignment) and restores it on destruction, also during unwinding.
/// Then sets the state the passes assume (prepare_pass_state(), no sampler objects: textures are
/// sampled by their own parameters).
class SavedGlState {
public:
    SavedGlState();
    ~SavedGlState();
    SavedGlState(const SavedGlState&) = delete;
    SavedGlState& operator=(const SavedGlState&) = delete;

private:
    struct Attribute {
        GLint enabled = 0, buffer = 0, size = 4, type = GL_FLOAT, normalized = 0, stride = 0, integer = 0;
        void* pointer = nullptr;
    };
    struct ImageUnit {
        GLint name = 0, level = 0, layered = 0, layer = 0, access = GL_READ_ONLY, format = GL_R8;
    };
    struct BufferRange {
        GLint name = 0;
        GLint64 start = 0, size = 0;
    };
    static constexpr int kUnits = 8, kIndexed = 2;

    GLint program_ = 0, draw_framebuffer_ = 0, read_framebuffer_ = 0, active_texture_ = 0;
    std::array<GLint, 4> viewport_{};
    std::array<std::array<GLint, 3>, kUnits> textures_{};  // 2D, rectangle, 2D array per unit
    std::array<GLint, kUnits> samplers_{};
    std::vector<std::pair<GLenum, GLboolean>> enables_;
    std::array<GLboolean, 4> color_mask_{};
    std::array<GLint, 2> polygon_mode_{};
    std::array<GLfloat, 4> clear_color_{};
    GLint clamp_fragment_ = GL_FIXED_ONLY, clamp_read_ = GL_FIXED_ONLY;
    GLint array_buffer_ = 0, vertex_array_ = 0, storage_buffer_ = 0;
    std::array<Attribute, 2> attributes_{};
    std::array<ImageUnit, kIndexed> images_{};
    std::array<BufferRange, kIndexed> storage_{};
    GLint pack_alignment_ = 4, unpack_alignment_ = 4, pack_row_length_ = 0, unpack_row_length_ = 0;
    bool gl30_ = false, samplers_used_ = false, compute_ = false;
};

}  // namespace gpufft
