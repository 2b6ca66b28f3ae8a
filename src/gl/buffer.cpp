#include "gl/buffer.h"

#include <string>
#include <utility>

namespace gpufft {

StorageBuffer::StorageBuffer(const void* data, std::size_t bytes) : size_(bytes) {
    while (glGetError() != GL_NO_ERROR) {}
    BufferHandle id = new_buffer();
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, id.get());
    glBufferData(GL_SHADER_STORAGE_BUFFER, static_cast<GLsizeiptr>(bytes), data, GL_STATIC_DRAW);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
    check_gl("allocating a storage buffer");
    id_ = std::move(id);
}

void StorageBuffer::bind(GLuint index) const { glBindBufferBase(GL_SHADER_STORAGE_BUFFER, index, id_.get()); }

void StorageBuffer::unbind(GLuint index) { glBindBufferBase(GL_SHADER_STORAGE_BUFFER, index, 0); }

void StorageBuffer::reserve(std::size_t bytes, const char* what) {
    if (id_ && bytes <= size_) return;
    while (glGetError() != GL_NO_ERROR) {}
    if (!id_) id_ = new_buffer();
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, id_.get());
    // Measured on an H100: glBufferSubData into and glGetBufferSubData out of such a buffer move a
    // 2048x2048 RGB image in 1-2 ms; a mapped GL_STREAM_READ pixel buffer took 900 ms to copy from.
    glBufferData(GL_SHADER_STORAGE_BUFFER, static_cast<GLsizeiptr>(bytes), nullptr, GL_DYNAMIC_COPY);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
    const GLenum e = glGetError();
    if (e != GL_NO_ERROR) {
        size_ = 0;
        throw GlError(std::string(e == GL_OUT_OF_MEMORY ? "out of GPU memory" : gl_error_name(e)) + " in allocating " +
                      what + " (" + std::to_string(bytes) + " bytes)");
    }
    size_ = bytes;
}

void StorageBuffer::write_at(std::size_t offset, const void* data, std::size_t bytes) {
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, id_.get());
    glBufferSubData(GL_SHADER_STORAGE_BUFFER, static_cast<GLintptr>(offset), static_cast<GLsizeiptr>(bytes), data);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
}

void StorageBuffer::read_at(std::size_t offset, void* data, std::size_t bytes) const {
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, id_.get());
    glGetBufferSubData(GL_SHADER_STORAGE_BUFFER, static_cast<GLintptr>(offset), static_cast<GLsizeiptr>(bytes), data);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
}

bool HostBuffer::reserve(std::size_t bytes) {
    if (data_ && bytes <= size_) return true;
    if (!(GLEW_VERSION_4_4 || GLEW_ARB_buffer_storage)) return false;
    while (glGetError() != GL_NO_ERROR) {}
    id_ = new_buffer();  // buffer storage is immutable: a larger one is a new buffer (the old one unmapped as it goes)
    data_ = nullptr;
    size_ = 0;
    // Coherent: the GPU's writes are seen once a fence after them has signalled, with no barrier
    // of the client's own (the copy's barrier is given anyway: copy_from()), and the CPU's writes
    // by a copy queued after them.
    const GLbitfield flags = GL_MAP_READ_BIT | GL_MAP_WRITE_BIT | GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT;
    glBindBuffer(GL_COPY_WRITE_BUFFER, id_.get());
    glBufferStorage(GL_COPY_WRITE_BUFFER, static_cast<GLsizeiptr>(bytes), nullptr, flags | GL_CLIENT_STORAGE_BIT);
    if (glGetError() == GL_NO_ERROR)
        data_ = static_cast<unsigned char*>(glMapBufferRange(GL_COPY_WRITE_BUFFER, 0, static_cast<GLsizeiptr>(bytes), flags));
    glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
    if (!data_) {
        while (glGetError() != GL_NO_ERROR) {}
        id_ = BufferHandle();
        return false;
    }
    size_ = bytes;
    return true;
}

void copy_buffer_range(GLuint from, std::size_t from_offset, GLuint to, std::size_t to_offset, std::size_t bytes) {
    glBindBuffer(GL_COPY_READ_BUFFER, from);
    glBindBuffer(GL_COPY_WRITE_BUFFER, to);
    glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, static_cast<GLintptr>(from_offset),
                        static_cast<GLintptr>(to_offset), static_cast<GLsizeiptr>(bytes));
    glBindBuffer(GL_COPY_READ_BUFFER, 0);
    glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
}

void copy_buffer(GLuint from, GLuint to, std::size_t bytes) { copy_buffer_range(from, 0, to, 0, bytes); }

void copy_to_mapped(GLuint from, GLuint to, std::size_t bytes) {
    copy_buffer(from, to, bytes);
    glMemoryBarrier(GL_CLIENT_MAPPED_BUFFER_BARRIER_BIT);
}

void HostBuffer::copy_from(const StorageBuffer& source, std::size_t bytes) { copy_to_mapped(source.id(), id_.get(), bytes); }

}  // namespace gpufft
