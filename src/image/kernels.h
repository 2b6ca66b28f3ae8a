// Impulse responses ("kernels") from a spec string: built-in filters or a PNG file.
#pragma once

#include "image/image.h"

#include <string>

namespace gpufft {

/// A spatial impulse response: width x height RGBA weights (one kernel per channel), applied with
/// its centre (cx, cy) on the output pixel: out(x, y) = sum_ij k(i, j) in(x + cx - i, y + cy - j).
struct Kernel {
    Image weights;
    int cx = 0, cy = 0;
    std::string name;  ///< the spec it came from
    /// True when the four channels' weights differ (an RGB(A) kernel PNG).
    bool per_channel = false;
};

struct KernelOptions {
    bool normalize = true;   ///< PNG kernels: scale each channel to sum 1
    int max_side = 8192;     ///< larger kernels are refused
};

/// Parses a kernel spec: FILE.png, gaussian:SIGMA, box:W[xH], disk:R, motion:LEN[,ANGLE],
/// laplacian, sharpen:AMOUNT, lowpass:CUTOFF, highpass:CUTOFF, identity. Throws gpufft::Error with
/// one line for an unknown spec, a bad parameter, an unreadable PNG or a kernel above max_side.
Kernel parse_kernel(const std::string& spec, const KernelOptions& options = {});

/// The kernel table for --help and the README: one "  spec  description" line per kernel.
std::string kernel_help();

/// The names of the built-in kernels with a default parameter, in table order (the teapot cycles
/// through these).
const char* const* builtin_kernel_examples();

}  // namespace gpufft
