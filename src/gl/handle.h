// GL object names that delete themselves: one move-only template for every kind of GL object the
// project owns (textures, framebuffers, renderbuffers, buffers, programs, queries, samplers).
#pragma once

#include "gl/gl.h"

#include <utility>

namespace gpufft {

inline void delete_texture(GLuint id) { glDeleteTextures(1, &id); }
inline void delete_framebuffer(GLuint id) { glDeleteFramebuffers(1, &id); }
inline void delete_renderbuffer(GLuint id) { glDeleteRenderbuffers(1, &id); }
inline void delete_buffer(GLuint id) { glDeleteBuffers(1, &id); }
inline void delete_program(GLuint id) { glDeleteProgram(id); }
inline void delete_query(GLuint id) { glDeleteQueries(1, &id); }
inline void delete_sampler(GLuint id) { glDeleteSamplers(1, &id); }

/// Owns one GL object name (0: none) and deletes it with `Delete`. Move-only.
template <void (*Delete)(GLuint)>
class GlHandle {
public:
    GlHandle() = default;
    explicit GlHandle(GLuint id) : id_(id) {}
    ~GlHandle() { reset(); }
    GlHandle(GlHandle&& other) noexcept : id_(std::exchange(other.id_, 0)) {}
    GlHandle& operator=(GlHandle&& other) noexcept {
        if (this != &other) reset(std::exchange(other.id_, 0));
        return *this;
    }
    GlHandle(const GlHandle&) = delete;
    GlHandle& operator=(const GlHandle&) = delete;

    GLuint get() const { return id_; }
    explicit operator bool() const { return id_ != 0; }
    /// Gives up the name without deleting it (an object someone else owns).
    GLuint release() { return std::exchange(id_, 0); }
    /// Deletes the object held and holds `id` instead.
    void reset(GLuint id = 0) {
        if (id_) Delete(id_);
        id_ = id;
    }

private:
    GLuint id_ = 0;
};

using TextureHandle = GlHandle<delete_texture>;
using FramebufferHandle = GlHandle<delete_framebuffer>;
using RenderbufferHandle = GlHandle<delete_renderbuffer>;
using BufferHandle = GlHandle<delete_buffer>;
using ProgramHandle = GlHandle<delete_program>;
using QueryHandle = GlHandle<delete_query>;
using SamplerHandle = GlHandle<delete_sampler>;

/// New names, one call each: glGen* filled into a handle.
inline TextureHandle new_texture() { GLuint id = 0; glGenTextures(1, &id); return TextureHandle(id); }
inline FramebufferHandle new_framebuffer() { GLuint id = 0; glGenFramebuffers(1, &id); return FramebufferHandle(id); }
inline RenderbufferHandle new_renderbuffer() { GLuint id = 0; glGenRenderbuffers(1, &id); return RenderbufferHandle(id); }
inline BufferHandle new_buffer() { GLuint id = 0; glGenBuffers(1, &id); return BufferHandle(id); }
inline QueryHandle new_query() { GLuint id = 0; glGenQueries(1, &id); return QueryHandle(id); }
inline SamplerHandle new_sampler() { GLuint id = 0; glGenSamplers(1, &id); return SamplerHandle(id); }

}  // namespace gpufft
