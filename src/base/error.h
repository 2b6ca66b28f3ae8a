// The project's errors: every failure a tool reports is one line, "tool: <what>". Below every
// other layer: the PNG reader and the kernel parser need no GL to report. gpufft::Error itself is
// public (gpufft/error.h).
#pragma once

#include <gpufft/error.h>

namespace gpufft {

/// A request that cannot be done as written (a bad option value, kernel spec or size): the tools
/// exit with their usage status.
class UsageError : public Error {
public:
    using Error::Error;
};

}  // namespace gpufft
