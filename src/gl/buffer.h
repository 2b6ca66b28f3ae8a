// Storage buffer objects (GL 4.3): the compute backend's second copy of its twiddle tables.
#pragma once

#include "gl/gl.h"

#include <cstddef>

namespace gpufft {

/// A GL_SHADER_STORAGE_BUFFER holding immutable data. Move-only.
class StorageBuffer {
public:
    StorageBuffer() = default;
    /// Copies `bytes` bytes from `data`; throws GlError on failure (GL_OUT_OF_MEMORY included).
    StorageBuffer(const void* data, std::size_t bytes);
    ~StorageBuffer();
    StorageBuffer(StorageBuffer&& other) noexcept;
    StorageBuffer& operator=(StorageBuffer&& other) noexcept;
    StorageBuffer(const StorageBuffer&) = delete;
    StorageBuffer& operator=(const StorageBuffer&) = delete;

    /// Binds the buffer to storage-buffer binding `index`.
    void bind(GLuint index) const;
    /// Leaves storage-buffer binding `index` empty.
    static void unbind(GLuint index);

private:
    GLuint id_ = 0;
};

}  // namespace gpufft
