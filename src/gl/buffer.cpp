#include "gl/buffer.h"

#include <utility>

namespace gpufft {

StorageBuffer::StorageBuffer(const void* data, std::size_t bytes) {
    while (glGetError() != GL_NO_ERROR) {}
    glGenBuffers(1, &id_);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, id_);
    glBufferData(GL_SHADER_STORAGE_BUFFER, static_cast<GLsizeiptr>(bytes), data, GL_STATIC_DRAW);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
    try {
        check_gl("allocating a storage buffer");
    } catch (...) {
        glDeleteBuffers(1, &id_);
        id_ = 0;
        throw;
    }
}

StorageBuffer::~StorageBuffer() {
    if (id_) glDeleteBuffers(1, &id_);
}

StorageBuffer::StorageBuffer(StorageBuffer&& other) noexcept : id_(std::exchange(other.id_, 0)) {}

StorageBuffer& StorageBuffer::operator=(StorageBuffer&& other) noexcept {
    if (this != &other) {
        if (id_) glDeleteBuffers(1, &id_);
        id_ = std::exchange(other.id_, 0);
    }
    return *this;
}

void StorageBuffer::bind(GLuint index) const { glBindBufferBase(GL_SHADER_STORAGE_BUFFER, index, id_); }

void StorageBuffer::unbind(GLuint index) { glBindBufferBase(GL_SHADER_STORAGE_BUFFER, index, 0); }

}  // namespace gpufft
