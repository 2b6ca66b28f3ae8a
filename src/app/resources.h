// What a long run holds: resident memory and live GL objects, measured at the start and the end of
// a batch or a frame loop (--report-resources) so the tests can assert both stay flat.
#pragma once

#include <string>

namespace gpufft {

struct ResourceUse {
    double resident_mib = 0;  ///< the process's resident set (/proc/self/statm)
    int gl_objects = -1;      ///< live textures, buffers, framebuffers, renderbuffers, programs, shaders,
                              ///< queries and vertex arrays in the current context; -1 without one
    /// "41.2 MiB resident, 37 GL objects"
    std::string describe() const;
};

/// Measures now. GL objects are found by asking glIs* of every name up to `max_name` (names are
/// handed out small and dense by the drivers we run on).
ResourceUse measure_resources(unsigned max_name = 1u << 14);

/// "TOOL: resources after WHAT_FIRST: ...; after WHAT_LAST: ..." on stderr.
void report_resources(const char* tool, const std::string& first_label, const ResourceUse& first,
                      const std::string& last_label, const ResourceUse& last);

}  // namespace gpufft
