// The one header through which the project includes OpenGL: GLEW's entry points, GlError, and the
// GL error checks.
#pragma once

#include "base/error.h"

#include <GL/glew.h>

#include <string>

namespace gpufft {

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
