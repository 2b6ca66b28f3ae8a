// Impulse responses ("kernels") from a spec string: built-in filters or a PNG file.
#pragma once

#include "image/image.h"

namespace gpufft {

// Kernel, KernelOptions, parse_kernel() and kernel_help() are public (gpufft/gpufft.h).

/// The names of the built-in kernels with a default parameter, in table order (the teapot cycles
/// through these).
const char* const* builtin_kernel_examples();

}  // namespace gpufft
