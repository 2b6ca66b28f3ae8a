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
    void read(void* data, std::size_t bytes) const { read_at(0, data, bytes); }
    /// Copies `bytes` from byte `offset` on to `data`, waiting for the GPU's writes to them.
    void read_at(std::size_t offset, void* data, std::size_t bytes) const;
    GLuint id() const { return id_.get(); }

private:
    BufferHandle id_;
    std::size_t size_ = 0;
};

/// Queues a copy of buffer `from`'s first `bytes` into buffer `to` (GL names), ordered after the
/// GL commands before it.
void copy_buffer(GLuint from, GLuint to, std::size_t bytes);
/// The same into a buffer the CPU has mapped (HostBuffer's), which it reads once a fence issued
/// after the copy has signalled; the GPU's writes to `from` before must be ordered by a
/// glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT).
void copy_to_mapped(GLuint from, GLuint to, std::size_t bytes);
/// copy_buffer() of `bytes` from `from_offset` of `from` to `to_offset` of `to`.
void copy_buffer_range(GLuint from, std::size_t from_offset, GLuint to, std::size_t to_offset, std::size_t bytes);

/// A buffer in the host's memory (client storage) mapped for reading and writing once and kept
/// mapped (GL 4.4's buffer storage), which the GPU copies into and out of itself. Results come
/// back through it: the GPU copies into it (copy_from()); once a fence issued after the copy has
/// signalled, the CPU reads the bytes where they lie (data()). glGetBufferSubData of a buffer in
/// the GPU's memory stages the bytes and copies them on the calling thread (H200: 2048x2048 RGB
/// samples, 12.6 MB, the GL thread's collect 5.4 ms; this way a 0.33 ms copy on the GPU and a 1.1 ms
/// memcpy). Samples go up through it: any thread writes them into data(), then the GL thread
/// queues the GPU's copy (copy_buffer(): 0.34 ms on the GPU, microseconds of the calling thread, where
/// glBufferSubData copies 12.6 MB on it in 1.7 ms, 3-5 ms on a busy host). The mapping is cached:
/// a decoder's pass over its own rows there ran as fast as in a vector (H200 host). Move-only.
class HostBuffer {
public:
    /// Grows the buffer to at least `bytes` (contents not kept); false where it cannot be had
    /// (no buffer storage, out of memory, no mapping): the caller then copies its way.
    bool reserve(std::size_t bytes);
    /// Queues a copy of `source`'s first `bytes` into the buffer, after the GPU's writes to it
    /// that a glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT) before has ordered.
    void copy_from(const StorageBuffer& source, std::size_t bytes);
    /// The mapping: what the last copy wrote, once a fence after it has signalled; what the next
    /// copy_buffer() from it takes.
    unsigned char* data() const { return data_; }
    std::size_t size() const { return size_; }
    GLuint id() const { return id_.get(); }

private:
    BufferHandle id_;
    std::size_t size_ = 0;
    unsigned char* data_ = nullptr;
};

}  // namespace gpufft
