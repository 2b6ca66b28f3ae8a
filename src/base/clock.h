#pragma once
// Wall time on the monotonic clock, for the stage times that -v and the benchmarks print.
#include <chrono>

namespace gpufft {

using Clock = std::chrono::steady_clock;

/// Seconds from `t` to now.
inline double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace gpufft
