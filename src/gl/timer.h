// GPU time, measured the one way that works on every driver here: GL_TIMESTAMP queries between
// commands (llvmpipe's GL_TIME_ELAPSED reads 0 around compute dispatches; its timestamps do not;
// on NVIDIA both agree).
#pragma once

#include "gl/handle.h"

#include <vector>

namespace gpufft {

/// A series of timestamps: start() takes the first, mark() each next one after the commands
/// queued since; intervals_ms() reads them back (waiting for the GPU). Queries are kept and reused.
class GpuTimestamps {
public:
    void start();
    void mark();
    size_t marks() const { return used_; }
    /// Milliseconds from each mark to the next (marks() - 1 values).
    std::vector<double> intervals_ms();

private:
    std::vector<QueryHandle> queries_;
    size_t used_ = 0;
};

/// The GPU time of the commands between begin() and end().
class GpuTimer {
public:
    void begin() { stamps_.start(); }
    void end() { stamps_.mark(); }
    /// Waits for the result; 0 if end() was not called.
    double milliseconds();

private:
    GpuTimestamps stamps_;
};

}  // namespace gpufft
