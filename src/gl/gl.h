// The one header through which the project includes OpenGL: GLEW's entry points, the project's
// error type, and GL_CHECK.
#pragma once

#include <GL/glew.h>

#include <stdexcept>
#include <string>

namespace gpufft {

/// `text` with control characters (a newline or escape in a file name or a kernel spec) written
/// as \xNN, so that a message quoting what a user gave stays one printable line.
inline std::string one_line(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    for (unsigned char c : text) {
        if (c >= 0x20 && c != 0x7f) {
            out += static_cast<char>(c);
        } else {
            const char* hex = "0123456789abcdef";
            out += {'\\', 'x', hex[c >> 4], hex[c & 15]};
        }
    }
    return out;
}

/// Any failure the tools report as one line: "tool: <what>".
class Error : public std::runtime_error {
public:
    explicit Error(const std::string& what) : std::runtime_error(one_line(what)) {}
};

/// A GL or driver limitation (no context, no float targets, out of memory...).
class GlError : public Error {
public:
    using Error::Error;
};

/// Name of a GL error code (GL_OUT_OF_MEMORY, ...).
const char* gl_error_name(GLenum code);

/// Throws GlError naming `where` if glGetError() reports anything; always compiled in. Used after
/// allocations and after each plan, where a failure must become a clear message, not a wrong image.
void check_gl(const char* where);

}  // namespace gpufft

// Per-call checking for development builds (DEBUG=1); compiles away under NDEBUG.
#ifdef NDEBUG
#define GL_CHECK(where) ((void)0)
#else
#define GL_CHECK(where) ::gpufft::check_gl(where)
#endif
