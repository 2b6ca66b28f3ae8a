// Float RGBA textures and the render targets (texture + framebuffer object) the passes ping-pong
// between. Rectangle textures: texel (x, y) is sampled at unnormalised (x + 0.5, y + 0.5) with
// GL_NEAREST, exactly, whatever the size.
#pragma once

#include "gl/handle.h"

#include <gpufft/gpufft.h>

#include <vector>

namespace gpufft {

// Storage (of the chain's textures) is public: gpufft/gpufft.h.

/// A GL_TEXTURE_RECTANGLE of RGBA floats; row 0 is the first row in memory. Move-only.
class Texture {
public:
    Texture() = default;
    /// Allocates width x height; throws GlError on a size above the GL limit or GL_OUT_OF_MEMORY.
    Texture(int width, int height, Storage storage = Storage::Float32);

    GLuint id() const { return id_.get(); }
    int width() const { return width_; }
    int height() const { return height_; }
    Storage storage() const { return storage_; }

    /// Uploads width*height RGBA floats, row 0 first.
    void upload(const float* rgba);
    /// Uploads w*h RGBA floats into the texels from (x, y), row y first.
    void upload_region(int x, int y, int w, int h, const float* rgba);
    /// Sets every texel to 0.
    void clear();
    /// A 1-row table (the twiddles): width RG or RGBA floats.
    static Texture table(int width, const float* rgba);

private:
    friend class BorrowedTexture;
    TextureHandle id_;
    int width_ = 0, height_ = 0;
    Storage storage_ = Storage::Float32;
};

/// Copies every texel of `from` into `to`, the same size and storage, on the GPU (GL 4.3's
/// glCopyImageSubData); throws GlError where they differ or the GL lacks it.
void copy_texture(const Texture& from, const Texture& to);

/// Someone else's GL_TEXTURE_RECTANGLE (a caller's, through the public API) seen as a Texture the
/// passes can read; never deleted here. Neither copied nor moved.
class BorrowedTexture {
public:
    BorrowedTexture(GLuint id, int width, int height) {
        texture_.id_ = TextureHandle(id);
        texture_.width_ = width;
        texture_.height_ = height;
    }
    ~BorrowedTexture() { texture_.id_.release(); }
    BorrowedTexture(const BorrowedTexture&) = delete;
    BorrowedTexture& operator=(const BorrowedTexture&) = delete;

    const Texture& get() const { return texture_; }

private:
    Texture texture_;
};

/// A texture with a framebuffer object drawing into it. Move-only.
class RenderTarget {
public:
    RenderTarget() = default;
    /// With `depth`, a 24-bit depth renderbuffer is attached too (for drawing a scene).
    RenderTarget(int width, int height, Storage storage = Storage::Float32, bool depth = false);

    const Texture& texture() const { return texture_; }
    Texture& texture() { return texture_; }
    GLuint framebuffer() const { return fbo_.get(); }
    int width() const { return texture_.width(); }
    int height() const { return texture_.height(); }

    /// Binds the framebuffer for drawing and sets the viewport to the whole target.
    void bind_for_drawing() const;
    /// Reads the whole target back: width*height RGBA floats, row 0 first.
    std::vector<float> download() const;
    void download(float* rgba) const;

private:
    Texture texture_;
    FramebufferHandle fbo_;
    RenderbufferHandle depth_;
};

/// The largest side of a texture that can also be drawn into: min(rectangle-texture limit, viewport).
int max_texture_side();

/// The fast chain's planes: an array texture of `layers` RGBA float layers and one framebuffer
/// drawing into all of them at once (multiple render targets). Move-only.
class PlaneTarget {
public:
    PlaneTarget() = default;
    PlaneTarget(int width, int height, int layers = 8, Storage storage = Storage::Float32);

    GLuint texture() const { return texture_.get(); }
    int width() const { return width_; }
    int height() const { return height_; }
    /// Binds the framebuffer with every layer as a draw buffer and sets the viewport.
    void bind_for_drawing() const;

private:
    TextureHandle texture_;
    FramebufferHandle fbo_;
    int width_ = 0, height_ = 0, layers_ = 0;
};

/// Throws std::invalid_argument unless 1 <= width, height <= the GL rectangle-texture limit.
void check_texture_size(int width, int height);

}  // namespace gpufft
