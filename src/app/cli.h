// What the three tools share on their command lines: GL and backend options,
// the version, and the one-line error convention "tool: problem".
#pragma once

#include "base/error.h"
#include "base/parse.h"
#include "fft/fft2d.h"
#include "gl/context.h"

#include <functional>
#include <string>
#include <vector>

namespace gpufft {

constexpr const char* kVersion = GPUFFT_VERSION;  // gpufft/gpufft.h
/// "fftfilter (gpufft) 1.1.0": what --version prints, and the Software text of fftfilter's outputs.
std::string tool_version(const char* tool);

Backend parse_backend(const std::string& name);
const char* backend_name(Backend b);

/// Throws UsageError unless width and height are fast sizes (sizes.h), what --sizes, --size and
/// --bench-sizes take: "WHAT 22 is not an even size with prime factors 2, 3, 5 and 7 only (...)".
void require_fast_size(int width, int height, const std::string& what);
/// parse_size_list() with every size checked by require_fast_size() (as "WHAT:").
std::vector<std::pair<int, int>> parse_fast_size_list(const std::string& list, const std::string& what);

/// Exit statuses shared by the tools.
enum ExitStatus { kExitOk = 0, kExitFailed = 1, kExitUsage = 2, kExitNoGl = 3 };

/// Prints "tool: message" on stderr, one line (embedded newlines folded), and returns `status`.
int report(const char* tool, const std::string& message, int status);

/// A tool's main(): runs `body` (which returns the exit status); a UsageError, a GlError or any
/// other exception becomes one line on stderr and its exit status. Called first in main(), before
/// any thread starts: SIGINT, SIGTERM and SIGHUP (where not ignored at start) then remove the
/// temporary files of unfinished outputs (image/files.h) and end the tool by that signal, with
/// one line "tool: stopped by SIGINT; N unfinished outputs removed, finished ones kept".
int run_tool(const char* tool, const std::function<int()>& body);

/// Runs a program (argv[0] looked up on PATH, no shell) and waits for it: for a tool under
/// run_tool(), which has the stop signals blocked, the program starts with them as the tool was
/// started. `errors_to_output`: its standard error goes to standard output (a tool's own errors
/// stay one line). Returns the wait status, or -1 where it could not be started.
int run_program(const std::vector<std::string>& argv, bool errors_to_output = false);

/// Runs an option parser, turning every gpufft::Error it throws (a bad kernel spec, boundary or
/// tone map name) into a UsageError.
template <typename Parse>
auto parse_or_usage(Parse parse) -> decltype(parse()) {
    try {
        return parse();
    } catch (const UsageError&) {
        throw;
    } catch (const Error& e) {
        throw UsageError(e.what());
    }
}

/// The UsageError for getopt_long's ':' (missing value) and '?' (unknown option) returns.
[[noreturn]] void throw_option_error(int code, char** argv, int optind);

/// Runs `work` at least once and until `seconds` have passed: a GPU clocks up from idle only after
/// a few hundred milliseconds of load, and timings taken before then read several times too slow.
void warm_up(double seconds, const std::function<void()>& work);
/// warm_up() with `batch` runs queued back to back, then a wait (glFinish), which keeps the GPU
/// busy: measured on the H200, a warm-up of single runs each waited for (the GPU idle most of the
/// time) left short compute filters running 3x slower and erratically (1024^2: 0.18-0.27 ms
/// against 0.068). GL context current.
void saturating_warm_up(double seconds, const std::function<void()>& run, int batch = 4);

/// The median (the upper one of an even count's middle pair); 0 for none.
double median(std::vector<double> values);

}  // namespace gpufft
