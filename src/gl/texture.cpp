#include "gl/texture.h"

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

namespace gpufft {

namespace {

GLenum internal_format(Storage storage) { return storage == Storage::Float16 ? GL_RGBA16F : GL_RGBA32F; }

void set_nearest_clamped() {
    glTexParameteri(GL_TEXTURE_RECTANGLE, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_RECTANGLE, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_RECTANGLE, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_RECTANGLE, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
}

}  // namespace

int max_texture_side() {
    GLint rect = 0, viewport[2] = {0, 0};
    glGetIntegerv(GL_MAX_RECTANGLE_TEXTURE_SIZE, &rect);
    glGetIntegerv(GL_MAX_VIEWPORT_DIMS, viewport);
    int limit = rect;
    if (viewport[0] > 0 && viewport[0] < limit) limit = viewport[0];
    if (viewport[1] > 0 && viewport[1] < limit) limit = viewport[1];
    return limit;
}

void check_texture_size(int width, int height) {
    int limit = max_texture_side();
    if (width < 1 || height < 1 || width > limit || height > limit)
        throw std::invalid_argument(std::to_string(width) + "x" + std::to_string(height) +
                                    " is outside this GPU's texture limit of " + std::to_string(limit) + "x" +
                                    std::to_string(limit));
}

namespace {

/// Test hooks, so the tests can see how the tools cope with a GPU out of memory (llvmpipe never
/// runs out): GPUFFT_TEST_FAIL_TEXTURE=N makes the Nth texture this process allocates fail as
/// GL_OUT_OF_MEMORY would, GPUFFT_TEST_MAX_TEXELS=N every texture of more than N texels.
bool injected_out_of_memory(int width, int height) {
    auto setting = [](const char* name) {
        const char* v = std::getenv(name);
        return v ? std::atoll(v) : 0LL;
    };
    static const long long fail_at = setting("GPUFFT_TEST_FAIL_TEXTURE"), max_texels = setting("GPUFFT_TEST_MAX_TEXELS");
    static long long allocated = 0;
    if (max_texels > 0 && static_cast<long long>(width) * height > max_texels) return true;
    return fail_at > 0 && ++allocated == fail_at;
}

}  // namespace

Texture::Texture(int width, int height, Storage storage) : width_(width), height_(height), storage_(storage) {
    check_texture_size(width, height);
    while (glGetError() != GL_NO_ERROR) {}
    TextureHandle id = new_texture();
    glBindTexture(GL_TEXTURE_RECTANGLE, id.get());
    set_nearest_clamped();
    glTexImage2D(GL_TEXTURE_RECTANGLE, 0, internal_format(storage), width, height, 0, GL_RGBA, GL_FLOAT, nullptr);
    if (injected_out_of_memory(width, height)) throw GlError("out of GPU memory (GL_OUT_OF_MEMORY) in allocating a texture");
    check_gl("allocating a texture");
    id_ = std::move(id);
}

void Texture::upload(const float* rgba) {
    glBindTexture(GL_TEXTURE_RECTANGLE, id_.get());
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
    glTexSubImage2D(GL_TEXTURE_RECTANGLE, 0, 0, 0, width_, height_, GL_RGBA, GL_FLOAT, rgba);
    check_gl("uploading a texture");
}

void Texture::upload_region(int x, int y, int w, int h, const float* rgba) {
    glBindTexture(GL_TEXTURE_RECTANGLE, id_.get());
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
    glTexSubImage2D(GL_TEXTURE_RECTANGLE, 0, x, y, w, h, GL_RGBA, GL_FLOAT, rgba);
    check_gl("uploading part of a texture");
}

void Texture::clear() {
    if (GLEW_VERSION_4_4 || GLEW_ARB_clear_texture) {
        const float zero[4] = {0, 0, 0, 0};
        glClearTexImage(id_.get(), 0, GL_RGBA, GL_FLOAT, zero);
    } else {
        std::vector<float> zeros(static_cast<size_t>(width_) * static_cast<size_t>(height_) * 4, 0.0f);
        upload(zeros.data());
    }
    check_gl("clearing a texture");
}

void copy_texture(const Texture& from, const Texture& to) {
    if (from.width() != to.width() || from.height() != to.height() || from.storage() != to.storage())
        throw GlError("copying a texture: " + std::to_string(from.width()) + "x" + std::to_string(from.height()) + " into " +
                      std::to_string(to.width()) + "x" + std::to_string(to.height()) + " of another size or storage");
    if (!GLEW_VERSION_4_3 && !GLEW_ARB_copy_image) throw GlError("copying a texture needs GL 4.3 or ARB_copy_image");
    glCopyImageSubData(from.id(), GL_TEXTURE_RECTANGLE, 0, 0, 0, 0, to.id(), GL_TEXTURE_RECTANGLE, 0, 0, 0, 0, from.width(), from.height(), 1);
    check_gl("copying a texture");
}

Texture Texture::table(int width, const float* rgba) {
    Texture t(width, 1, Storage::Float32);
    t.upload(rgba);
    return t;
}

RenderTarget::RenderTarget(int width, int height, Storage storage, bool depth)
    : texture_(width, height, storage), fbo_(new_framebuffer()) {
    glBindFramebuffer(GL_FRAMEBUFFER, fbo_.get());
    glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_RECTANGLE, texture_.id(), 0);
    if (depth) {
        depth_ = new_renderbuffer();
        glBindRenderbuffer(GL_RENDERBUFFER, depth_.get());
        glRenderbufferStorage(GL_RENDERBUFFER, GL_DEPTH_COMPONENT24, width, height);
        glBindRenderbuffer(GL_RENDERBUFFER, 0);
        glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, depth_.get());
    }
    GLenum status = glCheckFramebufferStatus(GL_FRAMEBUFFER);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    if (status != GL_FRAMEBUFFER_COMPLETE) {
        throw GlError("a " + std::to_string(width) + "x" + std::to_string(height) +
                      " float render target is not complete (status " + std::to_string(status) + ")");
    }
    check_gl("creating a render target");
}

void RenderTarget::bind_for_drawing() const {
    glBindFramebuffer(GL_FRAMEBUFFER, fbo_.get());
    glViewport(0, 0, width(), height());
}

void RenderTarget::download(float* rgba) const {
    // Through a pixel-pack buffer (a GPU-side copy), then glGetBufferSubData: on NVIDIA, glReadPixels
    // straight into client memory took 0.7 s for 1024^2 RGBA32F after compute-shader stores, and
    // reading a mapped GL_STREAM_READ buffer can crawl (0.9 s for 16 MB, measured on an H100).
    const GLsizeiptr bytes = static_cast<GLsizeiptr>(width()) * height() * 4 * static_cast<GLsizeiptr>(sizeof(float));
    BufferHandle buffer = new_buffer();
    glBindBuffer(GL_PIXEL_PACK_BUFFER, buffer.get());
    glBufferData(GL_PIXEL_PACK_BUFFER, bytes, nullptr, GL_STREAM_COPY);
    glPixelStorei(GL_PACK_ALIGNMENT, 4);
    glPixelStorei(GL_PACK_ROW_LENGTH, 0);
    glBindTexture(GL_TEXTURE_RECTANGLE, texture_.id());
    glGetTexImage(GL_TEXTURE_RECTANGLE, 0, GL_RGBA, GL_FLOAT, nullptr);
    glGetBufferSubData(GL_PIXEL_PACK_BUFFER, 0, bytes, rgba);
    glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
    check_gl("reading a render target back");
}

std::vector<float> RenderTarget::download() const {
    std::vector<float> out(static_cast<size_t>(width()) * static_cast<size_t>(height()) * 4);
    download(out.data());
    return out;
}

PlaneTarget::PlaneTarget(int width, int height, int layers, Storage storage)
    : width_(width), height_(height), layers_(layers) {
    check_texture_size(width, height);
    while (glGetError() != GL_NO_ERROR) {}
    texture_ = new_texture();
    glBindTexture(GL_TEXTURE_2D_ARRAY, texture_.get());
    glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_MAX_LEVEL, 0);
    glTexImage3D(GL_TEXTURE_2D_ARRAY, 0, storage == Storage::Float16 ? GL_RGBA16F : GL_RGBA32F, width, height, layers, 0,
                 GL_RGBA, GL_FLOAT, nullptr);
    check_gl("allocating planes");
    fbo_ = new_framebuffer();
    glBindFramebuffer(GL_FRAMEBUFFER, fbo_.get());
    for (int i = 0; i < layers; ++i)
        glFramebufferTextureLayer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0 + static_cast<GLenum>(i), texture_.get(), 0, i);
    GLenum status = glCheckFramebufferStatus(GL_FRAMEBUFFER);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    if (status != GL_FRAMEBUFFER_COMPLETE)
        throw GlError("a " + std::to_string(layers) + "-layer float plane target is not complete (status " +
                      std::to_string(status) + ")");
    check_gl("creating planes");
}

void PlaneTarget::bind_for_drawing() const {
    static const GLenum buffers[8] = {GL_COLOR_ATTACHMENT0, GL_COLOR_ATTACHMENT1, GL_COLOR_ATTACHMENT2, GL_COLOR_ATTACHMENT3,
                                      GL_COLOR_ATTACHMENT4, GL_COLOR_ATTACHMENT5, GL_COLOR_ATTACHMENT6, GL_COLOR_ATTACHMENT7};
    glBindFramebuffer(GL_FRAMEBUFFER, fbo_.get());
    glDrawBuffers(layers_, buffers);
    glViewport(0, 0, width_, height_);
}

}  // namespace gpufft
