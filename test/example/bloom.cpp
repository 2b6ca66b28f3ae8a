// bloom: gpufft from your own program. Renders a frame of bright shapes into a float texture of
// its own headless GL context, spreads their light with a kernel through gpufft::TextureFilter
// (the convolution step of a bloom, done in the frequency domain) and saves both as 16-bit PNGs.
//
//   c++ -std=c++17 bloom.cpp $(pkg-config --cflags --libs gpufft) -o bloom
//   ./bloom OUT_DIR [KERNEL]        writes OUT_DIR/frame.png and OUT_DIR/bloom.png
//
// The filter is circular (the paper's), so `fftfilter -b wrap -k KERNEL frame.png` gives the same
// image: test/test_install.cpp checks that.
#include <gpufft/gpufft.h>

#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/glew.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace {

const int kWidth = 320, kHeight = 240;  // any size the backend transforms (gpufft::filter_length)

/// A compatibility-profile context with no window: Mesa's surfaceless platform, else the default display.
bool make_context() {
    auto get_platform_display = reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(eglGetProcAddress("eglGetPlatformDisplayEXT"));
    EGLDisplay display = get_platform_display ? get_platform_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr) : EGL_NO_DISPLAY;
    if (display == EGL_NO_DISPLAY || !eglInitialize(display, nullptr, nullptr)) {
        display = eglGetDisplay(EGL_DEFAULT_DISPLAY);
        if (display == EGL_NO_DISPLAY || !eglInitialize(display, nullptr, nullptr)) return false;
    }
    const EGLint config_attributes[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_NONE};
    EGLConfig config;
    EGLint count = 0;
    if (!eglBindAPI(EGL_OPENGL_API) || !eglChooseConfig(display, config_attributes, &config, 1, &count)) return false;
    const EGLint context_attributes[] = {EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_COMPATIBILITY_PROFILE_BIT, EGL_NONE};
    EGLContext context = eglCreateContext(display, count ? config : EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, context_attributes);
    if (context == EGL_NO_CONTEXT || !eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, context)) return false;
    glewExperimental = GL_TRUE;
    const GLenum status = glewInit();  // under EGL, Debian's GLEW says "no GLX display" after loading everything
    return status == GLEW_OK || status == GLEW_ERROR_NO_GLX_DISPLAY;
}

GLuint float_texture(GLenum format) {
    GLuint texture = 0;
    glGenTextures(1, &texture);
    glBindTexture(GL_TEXTURE_2D, texture);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexImage2D(GL_TEXTURE_2D, 0, static_cast<GLint>(format), kWidth, kHeight, 0, GL_RGBA, GL_FLOAT, nullptr);
    return texture;
}

/// The scene: a dark background and a few bright rectangles, drawn by scissored clears.
void render(GLuint frame) {
    GLuint framebuffer = 0;
    glGenFramebuffers(1, &framebuffer);
    glBindFramebuffer(GL_FRAMEBUFFER, framebuffer);
    glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, frame, 0);
    glViewport(0, 0, kWidth, kHeight);
    glClearColor(10 / 255.0f, 12 / 255.0f, 30 / 255.0f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    glEnable(GL_SCISSOR_TEST);
    const struct { int x, y, w, h; float r, g, b; } lights[] = {
        {40, 150, 12, 12, 1.0f, 0.9f, 0.6f}, {200, 60, 30, 4, 0.5f, 1.0f, 1.0f}, {250, 170, 6, 40, 1.0f, 0.4f, 0.2f}};
    for (const auto& l : lights) {
        glScissor(l.x, l.y, l.w, l.h);
        glClearColor(l.r, l.g, l.b, 1.0f);
        glClear(GL_COLOR_BUFFER_BIT);
    }
    glDisable(GL_SCISSOR_TEST);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glDeleteFramebuffers(1, &framebuffer);
}

/// A texture read back as an image, top row first (GL's row 0 is the bottom).
gpufft::Image read_back(GLuint texture) {
    std::vector<float> rows(static_cast<size_t>(kWidth) * kHeight * 4);
    glBindTexture(GL_TEXTURE_2D, texture);
    glGetTexImage(GL_TEXTURE_2D, 0, GL_RGBA, GL_FLOAT, rows.data());
    gpufft::Image image(kWidth, kHeight);
    for (int y = 0; y < kHeight; ++y)
        std::copy_n(&rows[static_cast<size_t>(kHeight - 1 - y) * kWidth * 4], kWidth * 4, image.at(0, y));
    return image;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: bloom OUT_DIR [KERNEL]   (KERNEL: a gpufft kernel spec or PNG, default gaussian:6)\n");
        return 2;
    }
    const std::string dir = argv[1], kernel = argc > 2 ? argv[2] : "gaussian:6";
    if (!make_context()) {
        std::fprintf(stderr, "bloom: no headless OpenGL context (EGL)\n");
        return 1;
    }
    try {
        const GLuint frame = float_texture(GL_RGBA32F), bloom = float_texture(GL_RGBA32F);
        render(frame);
        gpufft::TextureFilter filter(kWidth, kHeight, kernel);  // once: the kernel's spectrum
        filter.apply(frame, bloom);                              // every frame
        gpufft::save_png(dir + "/frame.png", read_back(frame), 16);
        gpufft::save_png(dir + "/bloom.png", read_back(bloom), 16);
        std::printf("bloom: %dx%d, kernel %s, backend %s, gpufft %s\n", kWidth, kHeight, kernel.c_str(), filter.backend().c_str(),
                    gpufft::version());
    } catch (const gpufft::Error& e) {
        std::fprintf(stderr, "bloom: %s\n", e.what());
        return 1;
    }
    return 0;
}
