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

/// Test hook: GPUFFT_TEST_FAIL_TEXTURE=N makes the Nth texture this process allocates fail as
/// GL_OUT_OF_MEMORY would (llvmpipe never runs out), so the tests can see how the tools cope.
bool injected_out_of_memory() {
    static const long fail_at = [] {
        const char* v = std::getenv("GPUFFT_TEST_FAIL_TEXTURE");
        return v ? std::atol(v) : 0L;
    }();
    static long allocated = 0;
    return fail_at > 0 && ++allocated == fail_at;
}

}  // namespace

Texture::Texture(int width, int height, Storage storage) : width_(width), height_(height), storage_(storage) {
    check_texture_size(width, height);
    while (glGetError() != GL_NO_ERROR) {}
    glGenTextures(1, &id_);
    glBindTexture(GL_TEXTURE_RECTANGLE, id_);
    set_nearest_clamped();
    glTexImage2D(GL_TEXTURE_RECTANGLE, 0, internal_format(storage), width, height, 0, GL_RGBA, GL_FLOAT, nullptr);
    try {
        if (injected_out_of_memory()) throw GlError("out of GPU memory (GL_OUT_OF_MEMORY) in allocating a texture");
        check_gl("allocating a texture");
    } catch (...) {
        glDeleteTextures(1, &id_);
        id_ = 0;
        throw;
    }
}

Texture::~Texture() {
    if (id_) glDeleteTextures(1, &id_);
}

Texture::Texture(Texture&& other) noexcept
    : id_(std::exchange(other.id_, 0)), width_(other.width_), height_(other.height_), storage_(other.storage_) {}

Texture& Texture::operator=(Texture&& other) noexcept {
    if (this != &other) {
        if (id_) glDeleteTextures(1, &id_);
        id_ = std::exchange(other.id_, 0);
        width_ = other.width_;
        height_ = other.height_;
        storage_ = other.storage_;
    }
    return *this;
}

void Texture::upload(const float* rgba) {
    glBindTexture(GL_TEXTURE_RECTANGLE, id_);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
    glTexSubImage2D(GL_TEXTURE_RECTANGLE, 0, 0, 0, width_, height_, GL_RGBA, GL_FLOAT, rgba);
    check_gl("uploading a texture");
}

Texture Texture::table(int width, const float* rgba) {
    Texture t(width, 1, Storage::Float32);
    t.upload(rgba);
    return t;
}

RenderTarget::RenderTarget(int width, int height, Storage storage, bool depth) : texture_(width, height, storage) {
    glGenFramebuffers(1, &fbo_);
    glBindFramebuffer(GL_FRAMEBUFFER, fbo_);
    glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_RECTANGLE, texture_.id(), 0);
    if (depth) {
        glGenRenderbuffers(1, &depth_);
        glBindRenderbuffer(GL_RENDERBUFFER, depth_);
        glRenderbufferStorage(GL_RENDERBUFFER, GL_DEPTH_COMPONENT24, width, height);
        glBindRenderbuffer(GL_RENDERBUFFER, 0);
        glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, depth_);
    }
    GLenum status = glCheckFramebufferStatus(GL_FRAMEBUFFER);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    if (status != GL_FRAMEBUFFER_COMPLETE) {
        glDeleteFramebuffers(1, &fbo_);
        if (depth_) glDeleteRenderbuffers(1, &depth_);
        fbo_ = depth_ = 0;
        throw GlError("a " + std::to_string(width) + "x" + std::to_string(height) +
                      " float render target is not complete (status " + std::to_string(status) + ")");
    }
    check_gl("creating a render target");
}

RenderTarget::~RenderTarget() {
    if (fbo_) glDeleteFramebuffers(1, &fbo_);
    if (depth_) glDeleteRenderbuffers(1, &depth_);
}

RenderTarget::RenderTarget(RenderTarget&& other) noexcept
    : texture_(std::move(other.texture_)), fbo_(std::exchange(other.fbo_, 0)), depth_(std::exchange(other.depth_, 0)) {}

RenderTarget& RenderTarget::operator=(RenderTarget&& other) noexcept {
    if (this != &other) {
        if (fbo_) glDeleteFramebuffers(1, &fbo_);
        if (depth_) glDeleteRenderbuffers(1, &depth_);
        texture_ = std::move(other.texture_);
        fbo_ = std::exchange(other.fbo_, 0);
        depth_ = std::exchange(other.depth_, 0);
    }
    return *this;
}

void RenderTarget::bind_for_drawing() const {
    glBindFramebuffer(GL_FRAMEBUFFER, fbo_);
    glViewport(0, 0, width(), height());
}

void RenderTarget::download(float* rgba) const {
    // Through a pixel-pack buffer (a GPU-side copy, then one mapped read): glReadPixels straight
    // into client memory took 0.7 s for 1024^2 RGBA32F on the H200 after compute-shader stores
    // (1.3 ms after drawing).
    const GLsizeiptr bytes = static_cast<GLsizeiptr>(width()) * height() * 4 * static_cast<GLsizeiptr>(sizeof(float));
    GLuint buffer = 0;
    glGenBuffers(1, &buffer);
    glBindBuffer(GL_PIXEL_PACK_BUFFER, buffer);
    glBufferData(GL_PIXEL_PACK_BUFFER, bytes, nullptr, GL_STREAM_READ);
    glPixelStorei(GL_PACK_ALIGNMENT, 4);
    glPixelStorei(GL_PACK_ROW_LENGTH, 0);
    glBindTexture(GL_TEXTURE_RECTANGLE, texture_.id());
    glGetTexImage(GL_TEXTURE_RECTANGLE, 0, GL_RGBA, GL_FLOAT, nullptr);
    const void* mapped = glMapBufferRange(GL_PIXEL_PACK_BUFFER, 0, bytes, GL_MAP_READ_BIT);
    if (mapped) std::memcpy(rgba, mapped, static_cast<size_t>(bytes));
    glUnmapBuffer(GL_PIXEL_PACK_BUFFER);
    glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
    glDeleteBuffers(1, &buffer);
    check_gl("reading a render target back");
    if (!mapped) throw GlError("cannot map the read-back buffer");
}

void RenderTarget::download_read_pixels(float* rgba) const {
    glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo_);
    glReadBuffer(GL_COLOR_ATTACHMENT0);
    glPixelStorei(GL_PACK_ALIGNMENT, 4);
    glPixelStorei(GL_PACK_ROW_LENGTH, 0);
    glReadPixels(0, 0, width(), height(), GL_RGBA, GL_FLOAT, rgba);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
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
    glGenTextures(1, &texture_);
    glBindTexture(GL_TEXTURE_2D_ARRAY, texture_);
    glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_MAX_LEVEL, 0);
    glTexImage3D(GL_TEXTURE_2D_ARRAY, 0, storage == Storage::Float16 ? GL_RGBA16F : GL_RGBA32F, width, height, layers, 0,
                 GL_RGBA, GL_FLOAT, nullptr);
    try {
        check_gl("allocating planes");
        glGenFramebuffers(1, &fbo_);
        glBindFramebuffer(GL_FRAMEBUFFER, fbo_);
        for (int i = 0; i < layers; ++i)
            glFramebufferTextureLayer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0 + static_cast<GLenum>(i), texture_, 0, i);
        GLenum status = glCheckFramebufferStatus(GL_FRAMEBUFFER);
        glBindFramebuffer(GL_FRAMEBUFFER, 0);
        if (status != GL_FRAMEBUFFER_COMPLETE)
            throw GlError("a " + std::to_string(layers) + "-layer float plane target is not complete (status " +
                          std::to_string(status) + ")");
        check_gl("creating planes");
    } catch (...) {
        release();
        throw;
    }
}

void PlaneTarget::release() {
    if (fbo_) glDeleteFramebuffers(1, &fbo_);
    if (texture_) glDeleteTextures(1, &texture_);
    fbo_ = texture_ = 0;
}

PlaneTarget::~PlaneTarget() { release(); }

PlaneTarget::PlaneTarget(PlaneTarget&& other) noexcept
    : texture_(std::exchange(other.texture_, 0)),
      fbo_(std::exchange(other.fbo_, 0)),
      width_(other.width_),
      height_(other.height_),
      layers_(other.layers_) {}

PlaneTarget& PlaneTarget::operator=(PlaneTarget&& other) noexcept {
    if (this != &other) {
        release();
        texture_ = std::exchange(other.texture_, 0);
        fbo_ = std::exchange(other.fbo_, 0);
        width_ = other.width_;
        height_ = other.height_;
        layers_ = other.layers_;
    }
    return *this;
}

void PlaneTarget::bind_for_drawing() const {
    static const GLenum buffers[8] = {GL_COLOR_ATTACHMENT0, GL_COLOR_ATTACHMENT1, GL_COLOR_ATTACHMENT2, GL_COLOR_ATTACHMENT3,
                                      GL_COLOR_ATTACHMENT4, GL_COLOR_ATTACHMENT5, GL_COLOR_ATTACHMENT6, GL_COLOR_ATTACHMENT7};
    glBindFramebuffer(GL_FRAMEBUFFER, fbo_);
    glDrawBuffers(layers_, buffers);
    glViewport(0, 0, width_, height_);
}

}  // namespace gpufft
