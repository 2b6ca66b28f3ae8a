#include "app/resources.h"

#include "gl/gl.h"

#include <EGL/egl.h>
#include <GL/glx.h>
#include <unistd.h>

#include <cstdio>

namespace gpufft {

namespace {

bool context_current() { return eglGetCurrentContext() != EGL_NO_CONTEXT || glXGetCurrentContext() != nullptr; }

}  // namespace

std::string ResourceUse::describe() const {
    char buf[96];
    if (gl_objects >= 0) std::snprintf(buf, sizeof buf, "%.1f MiB resident, %d GL objects", resident_mib, gl_objects);
    else std::snprintf(buf, sizeof buf, "%.1f MiB resident", resident_mib);
    return buf;
}

ResourceUse measure_resources(unsigned max_name) {
    ResourceUse r;
    if (FILE* f = std::fopen("/proc/self/statm", "r")) {
        long size = 0, resident = 0;
        if (std::fscanf(f, "%ld %ld", &size, &resident) == 2)
            r.resident_mib = static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
        std::fclose(f);
    }
    if (!context_current()) return r;
    r.gl_objects = 0;
    for (GLuint name = 1; name <= max_name; ++name) {
        r.gl_objects += glIsTexture(name) + glIsBuffer(name) + glIsFramebuffer(name) + glIsRenderbuffer(name) +
                        glIsQuery(name) + glIsVertexArray(name);
        // Programs and shaders share one namespace.
        r.gl_objects += glIsProgram(name) || glIsShader(name);
    }
    return r;
}

void report_resources(const char* tool, const std::string& first_label, const ResourceUse& first,
                      const std::string& last_label, const ResourceUse& last) {
    std::fprintf(stderr, "%s: resources after %s: %s; after %s: %s\n", tool, first_label.c_str(), first.describe().c_str(),
                 last_label.c_str(), last.describe().c_str());
}

}  // namespace gpufft
