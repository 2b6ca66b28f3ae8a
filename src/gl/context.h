// OpenGL contexts: headless through EGL (device platform, then Mesa's surfaceless platform), and the
// checks every tool runs on whichever context is current (freeglut's too).
#pragma once

#include "gl/gl.h"

#include <string>

namespace gpufft {

struct ContextOptions {
    /// EGL device index for EGL_EXT_platform_device; -1 reads GPUFFT_EGL_DEVICE, else 0.
    int device = -1;
    /// "auto" (device platform, then surfaceless), "device" or "surfaceless";
    /// empty reads GPUFFT_EGL_PLATFORM, else "auto".
    std::string platform;
};

/// A compatibility-profile OpenGL context with no window, current on the calling thread for its
/// lifetime. Throws GlError with one line saying what is missing.
class HeadlessContext {
public:
    explicit HeadlessContext(ContextOptions options = {});
    ~HeadlessContext();
    HeadlessContext(const HeadlessContext&) = delete;
    HeadlessContext& operator=(const HeadlessContext&) = delete;

    /// "EGL device 0 (EGL_EXT_platform_device)" or "EGL surfaceless (Mesa)".
    const std::string& platform() const { return platform_; }

private:
    void release();
    void* display_ = nullptr;
    void* context_ = nullptr;
    void* surface_ = nullptr;
    std::string platform_;
};

/// Loads GL entry points with GLEW for the current context. Under EGL Debian's glewInit() returns
/// GLEW_ERROR_NO_GLX_DISPLAY after loading every GL entry point; that code counts as success.
void load_gl_entry_points();

struct GlInfo {
    std::string vendor, renderer, version;
    int major = 0, minor = 0;
    int max_texture_size = 0;      ///< GL_MAX_RECTANGLE_TEXTURE_SIZE: the largest FFT side
    int max_viewport[2] = {0, 0};
    int max_draw_buffers = 0;
    bool compute = false;          ///< GL 4.3 compute shaders
};

/// Queries the current context.
GlInfo query_gl_info();

/// Throws GlError naming the first missing feature the fragment chain needs: GL 2.0 programs,
/// framebuffer objects, rectangle textures, float textures that can be rendered to.
void require_fragment_chain_support();

/// "llvmpipe (LLVM 15.0.6, 256 bits), OpenGL 4.5 (Compatibility Profile) Mesa 22.3.6".
std::string describe_gl();

}  // namespace gpufft
