// Storage buffer objects (GL 4.3): the compute backend's second copy of its twiddle tables.
#pragma once

#include "gl/handle.h"

#include <cstddef>

namespace gpufft {

/// A GL_SHADER_STORAGE_BUFFER: immutable data (a table), or data that changes (samples going up
/// and coming back), sized by reserve(). Move-only.
class StorageBuffer {
public:
    StorageBuffer() = default;
    /// Copies `bytes` bytes from `data`; throws GlError on failure (GL_OUT_OF_MEMORY included).
    StorageBuffer(const void* data, std::size_t bytes);

    /// Binds the buffer to storage-buffer binding `index`.
    void bind(GLuint index) const;
    /// Leaves storage-buffer binding `index` empty.
    static void unbind(GLuint index);

    /// Grows the buffer to at least `bytes` (contents not kept); throws GlError naming `what`.
    void reserve(std::size_t bytes, const char* what);
    std::size_t size() const { return size_; }
    /// Copies `bytes` from `data` to the buffer's start (the driver orders it after earlier reads).
    void write(const void* data, std::size_t bytes) { write_at(0, data, bytes); }
    /// Copies `bytes` from `data` to the buffer from byte `offset` on.
    void write_at(std::size_t offset, const void* data, std::size_t bytes);
    /// Copies the buffer's first `bytes` to `data`, waiting for the GPU's writes to it.
    void read(void* data, std::size_t bytes) const;

private:
    BufferHandle id_;
    std::size_t size_ = 0;
};

}  // namespace gpufft
