#include "gl/context.h"

#include "gl/handle.h"

#include <EGL/egl.h>
#include <EGL/eglext.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace gpufft {

const char* gl_error_name(GLenum code) {
    switch (code) {
        case GL_NO_ERROR: return "GL_NO_ERROR";
        case GL_INVALID_ENUM: return "GL_INVALID_ENUM";
        case GL_INVALID_VALUE: return "GL_INVALID_VALUE";
        case GL_INVALID_OPERATION: return "GL_INVALID_OPERATION";
        case GL_INVALID_FRAMEBUFFER_OPERATION: return "GL_INVALID_FRAMEBUFFER_OPERATION";
        case GL_OUT_OF_MEMORY: return "GL_OUT_OF_MEMORY";
        case GL_STACK_OVERFLOW: return "GL_STACK_OVERFLOW";
        case GL_STACK_UNDERFLOW: return "GL_STACK_UNDERFLOW";
        default: return "unknown GL error";
    }
}

void check_gl(const char* where) {
    GLenum code = glGetError();
    if (code == GL_NO_ERROR) return;
    // Drain the queue so one failure is reported once.
    for (int i = 0; i < 16 && glGetError() != GL_NO_ERROR; ++i) {}
    if (code == GL_OUT_OF_MEMORY)
        throw GlError(std::string("out of GPU memory (GL_OUT_OF_MEMORY) in ") + where);
    throw GlError(std::string(gl_error_name(code)) + " in " + where);
}

namespace {

const char* egl_error_name(EGLint code) {
    switch (code) {
        case EGL_SUCCESS: return "EGL_SUCCESS";
        case EGL_NOT_INITIALIZED: return "EGL_NOT_INITIALIZED";
        case EGL_BAD_ACCESS: return "EGL_BAD_ACCESS";
        case EGL_BAD_ALLOC: return "EGL_BAD_ALLOC";
        case EGL_BAD_ATTRIBUTE: return "EGL_BAD_ATTRIBUTE";
        case EGL_BAD_CONFIG: return "EGL_BAD_CONFIG";
        case EGL_BAD_CONTEXT: return "EGL_BAD_CONTEXT";
        case EGL_BAD_DISPLAY: return "EGL_BAD_DISPLAY";
        case EGL_BAD_MATCH: return "EGL_BAD_MATCH";
        case EGL_BAD_PARAMETER: return "EGL_BAD_PARAMETER";
        case EGL_BAD_SURFACE: return "EGL_BAD_SURFACE";
        default: return "EGL error";
    }
}

bool has_extension(const char* list, const char* name) {
    if (!list) return false;
    size_t len = std::strlen(name);
    for (const char* p = list; (p = std::strstr(p, name)) != nullptr; p += len)
        if ((p == list || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0')) return true;
    return false;
}

template <typename Fn>
Fn egl_proc(const char* name) {
    return reinterpret_cast<Fn>(eglGetProcAddress(name));
}

int env_int(const char* name, int fallback) {
    const char* s = std::getenv(name);
    if (!s || !*s) return fallback;
    char* end = nullptr;
    long v = std::strtol(s, &end, 10);
    if (*end != '\0' || v < 0 || v > 1024) throw GlError(std::string(name) + "=" + s + " is not a device index");
    return static_cast<int>(v);
}

/// An initialised EGL display on the device platform, device `index`; nullptr (with `why`) if that
/// platform is not there.
EGLDisplay device_display(int index, std::string& why) {
    const char* client = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    if (!has_extension(client, "EGL_EXT_platform_device") || !has_extension(client, "EGL_EXT_device_enumeration")) {
        why = "EGL_EXT_platform_device is not available";
        return EGL_NO_DISPLAY;
    }
    auto query_devices = egl_proc<PFNEGLQUERYDEVICESEXTPROC>("eglQueryDevicesEXT");
    auto platform_display = egl_proc<PFNEGLGETPLATFORMDISPLAYEXTPROC>("eglGetPlatformDisplayEXT");
    if (!query_devices || !platform_display) {
        why = "eglQueryDevicesEXT is missing";
        return EGL_NO_DISPLAY;
    }
    EGLint count = 0;
    if (!query_devices(0, nullptr, &count) || count <= 0) {
        why = "EGL lists no devices";
        return EGL_NO_DISPLAY;
    }
    std::vector<EGLDeviceEXT> devices(static_cast<size_t>(count));
    query_devices(count, devices.data(), &count);
    if (index >= count) {
        why = "EGL device " + std::to_string(index) + " does not exist (" + std::to_string(count) + " found)";
        return EGL_NO_DISPLAY;
    }
    EGLDisplay dpy = platform_display(EGL_PLATFORM_DEVICE_EXT, devices[static_cast<size_t>(index)], nullptr);
    if (dpy == EGL_NO_DISPLAY || !eglInitialize(dpy, nullptr, nullptr)) {
        why = std::string("cannot initialise EGL device ") + std::to_string(index) + " (" +
              egl_error_name(eglGetError()) + ")";
        return EGL_NO_DISPLAY;
    }
    return dpy;
}

EGLDisplay surfaceless_display(std::string& why) {
    const char* client = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    if (!has_extension(client, "EGL_MESA_platform_surfaceless")) {
        why = "EGL_MESA_platform_surfaceless is not available";
        return EGL_NO_DISPLAY;
    }
    auto platform_display = egl_proc<PFNEGLGETPLATFORMDISPLAYEXTPROC>("eglGetPlatformDisplayEXT");
    EGLDisplay dpy = platform_display ? platform_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr)
                                      : EGL_NO_DISPLAY;
    if (dpy == EGL_NO_DISPLAY || !eglInitialize(dpy, nullptr, nullptr)) {
        why = std::string("cannot initialise the surfaceless platform (") + egl_error_name(eglGetError()) + ")";
        return EGL_NO_DISPLAY;
    }
    return dpy;
}

}  // namespace

HeadlessContext::HeadlessContext(ContextOptions options) {
    int device = options.device >= 0 ? options.device : env_int("GPUFFT_EGL_DEVICE", 0);
    std::string platform = options.platform;
    if (platform.empty()) {
        const char* env = std::getenv("GPUFFT_EGL_PLATFORM");
        platform = env && *env ? env : "auto";
    }
    if (platform != "auto" && platform != "device" && platform != "surfaceless")
        throw GlError("unknown EGL platform '" + platform + "' (auto, device or surfaceless)");

    std::string why_device, why_surfaceless;
    EGLDisplay dpy = EGL_NO_DISPLAY;
    if (platform != "surfaceless") {
        dpy = device_display(device, why_device);
        if (dpy != EGL_NO_DISPLAY) platform_ = "EGL device " + std::to_string(device);
    }
    if (dpy == EGL_NO_DISPLAY && platform != "device") {
        dpy = surfaceless_display(why_surfaceless);
        if (dpy != EGL_NO_DISPLAY) platform_ = "EGL surfaceless";
    }
    if (dpy == EGL_NO_DISPLAY) {
        std::string why = why_device.empty() ? why_surfaceless
                          : why_surfaceless.empty() ? why_device
                                                    : why_device + "; " + why_surfaceless;
        throw GlError("no headless OpenGL: " + why);
    }
    display_ = dpy;

    if (!eglBindAPI(EGL_OPENGL_API)) {
        release();
        throw GlError("no headless OpenGL: the EGL driver has no desktop OpenGL API");
    }
    // Render targets are our own framebuffer objects, so any config (or none) will do.
    const char* display_extensions = eglQueryString(dpy, EGL_EXTENSIONS);
    const EGLint config_attribs[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_NONE};
    EGLConfig config = nullptr;
    EGLint n = 0;
    if (!eglChooseConfig(dpy, config_attribs, &config, 1, &n) || n < 1) {
        if (!has_extension(display_extensions, "EGL_KHR_no_config_context")) {
            release();
            throw GlError("no headless OpenGL: no EGL config supports desktop OpenGL");
        }
        config = EGL_NO_CONFIG_KHR;
    }
    const EGLint context_attribs[] = {EGL_CONTEXT_OPENGL_PROFILE_MASK,
                                      EGL_CONTEXT_OPENGL_COMPATIBILITY_PROFILE_BIT, EGL_NONE};
    EGLContext ctx = eglCreateContext(dpy, config, EGL_NO_CONTEXT, context_attribs);
    if (ctx == EGL_NO_CONTEXT) {
        EGLint err = eglGetError();
        release();
        throw GlError(std::string("cannot create a compatibility-profile OpenGL context (") + egl_error_name(err) + ")");
    }
    context_ = ctx;

    // No surface is needed either; a 1x1 pbuffer serves drivers without EGL_KHR_surfaceless_context.
    EGLSurface surface = EGL_NO_SURFACE;
    if (!has_extension(display_extensions, "EGL_KHR_surfaceless_context") && config != EGL_NO_CONFIG_KHR) {
        const EGLint pbuffer_attribs[] = {EGL_WIDTH, 1, EGL_HEIGHT, 1, EGL_NONE};
        surface = eglCreatePbufferSurface(dpy, config, pbuffer_attribs);
        surface_ = surface;
    }
    if (!eglMakeCurrent(dpy, surface, surface, ctx)) {
        EGLint err = eglGetError();
        release();
        throw GlError(std::string("cannot make the OpenGL context current (") + egl_error_name(err) + ")");
    }
    load_gl_entry_points();
}

HeadlessContext::~HeadlessContext() { release(); }

void HeadlessContext::release() {
    if (!display_) return;
    EGLDisplay dpy = static_cast<EGLDisplay>(display_);
    eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    if (surface_) eglDestroySurface(dpy, static_cast<EGLSurface>(surface_));
    if (context_) eglDestroyContext(dpy, static_cast<EGLContext>(context_));
#ifndef GPUFFT_SANITIZE
    eglTerminate(dpy);
#endif
    // (Under the sanitizers the display stays initialised, so Mesa's driver stays loaded: its
    // allocations held for the process's life then stay reachable or at least named for
    // test/lsan.supp, instead of leaks in an unloaded "<unknown module>".)
    eglReleaseThread();
    display_ = context_ = surface_ = nullptr;
}

namespace {

#ifndef NDEBUG
void GLAPIENTRY print_gl_error(GLenum, GLenum type, GLuint, GLenum severity, GLsizei, const GLchar* message, const void*) {
    if (type == GL_DEBUG_TYPE_ERROR || severity == GL_DEBUG_SEVERITY_HIGH) std::fprintf(stderr, "GL error: %s\n", message);
}

/// Development builds (DEBUG=1): every GL error is printed as the call that makes it returns (GL
/// debug output, synchronous), so that a debugger's breakpoint on print_gl_error stops at the
/// call. Errors the code expects (GL_OUT_OF_MEMORY, probing limits) print too and are handled as
/// in release builds, by check_gl().
void report_gl_errors_as_they_happen() {
    if (!GLEW_VERSION_4_3 && !GLEW_KHR_debug) return;
    glEnable(GL_DEBUG_OUTPUT);
    glEnable(GL_DEBUG_OUTPUT_SYNCHRONOUS);
    glDebugMessageCallback(print_gl_error, nullptr);
}
#endif

}  // namespace

void load_gl_entry_points() {
    glewExperimental = GL_TRUE;
    GLenum status = glewInit();
    if (status != GLEW_OK && status != GLEW_ERROR_NO_GLX_DISPLAY)
        throw GlError(std::string("cannot load OpenGL entry points: ") +
                      reinterpret_cast<const char*>(glewGetErrorString(status)));
    if (!glGetString(GL_VERSION)) throw GlError("cannot load OpenGL entry points: no current context");
    // GLEW probes with calls that may leave an error behind; start clean.
    while (glGetError() != GL_NO_ERROR) {}
#ifndef NDEBUG
    report_gl_errors_as_they_happen();
#endif
}

GlInfo query_gl_info() {
    GlInfo info;
    auto str = [](GLenum name) {
        const GLubyte* s = glGetString(name);
        return s ? std::string(reinterpret_cast<const char*>(s)) : std::string();
    };
    info.vendor = str(GL_VENDOR);
    info.renderer = str(GL_RENDERER);
    info.version = str(GL_VERSION);
    std::sscanf(info.version.c_str(), "%d.%d", &info.major, &info.minor);
    if (GLEW_ARB_texture_rectangle || GLEW_VERSION_3_1) glGetIntegerv(GL_MAX_RECTANGLE_TEXTURE_SIZE, &info.max_texture_size);
    glGetIntegerv(GL_MAX_VIEWPORT_DIMS, info.max_viewport);
    glGetIntegerv(GL_MAX_DRAW_BUFFERS, &info.max_draw_buffers);
    info.compute = GLEW_VERSION_4_3 || GLEW_ARB_compute_shader;
    while (glGetError() != GL_NO_ERROR) {}
    return info;
}

std::string describe_gl() {
    GlInfo info = query_gl_info();
    return info.renderer + ", OpenGL " + info.version;
}

void require_fragment_chain_support() {
    GlInfo info = query_gl_info();
    std::string gl = " (" + info.renderer + ", OpenGL " + info.version + ")";
    if (!GLEW_VERSION_2_0) throw GlError("OpenGL 2.0 programs are missing" + gl);
    if (!GLEW_VERSION_3_0 && !GLEW_ARB_framebuffer_object) throw GlError("framebuffer objects are missing" + gl);
    if (!GLEW_VERSION_3_1 && !GLEW_ARB_texture_rectangle) throw GlError("rectangle textures are missing" + gl);
    if (!GLEW_VERSION_3_0 && !GLEW_ARB_texture_float) throw GlError("float textures (RGBA32F) are missing" + gl);

    // The float target must really be renderable: some drivers list the format but refuse it.
    GLenum status = 0;
    {
        TextureHandle tex = new_texture();
        glBindTexture(GL_TEXTURE_RECTANGLE, tex.get());
        glTexImage2D(GL_TEXTURE_RECTANGLE, 0, GL_RGBA32F, 2, 2, 0, GL_RGBA, GL_FLOAT, nullptr);
        FramebufferHandle fbo = new_framebuffer();
        glBindFramebuffer(GL_FRAMEBUFFER, fbo.get());
        glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_RECTANGLE, tex.get(), 0);
        status = glCheckFramebufferStatus(GL_FRAMEBUFFER);
        glBindFramebuffer(GL_FRAMEBUFFER, 0);
    }
    while (glGetError() != GL_NO_ERROR) {}
    if (status != GL_FRAMEBUFFER_COMPLETE) throw GlError("float render targets (RGBA32F framebuffer objects) are missing" + gl);
}

}  // namespace gpufft
