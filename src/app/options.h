// Command-line options as data: each option is written once (names, value, help, what it does),
// and the parser, the getopt tables and the --help lines come from that one table. The options
// every GL tool shares (FFT backend and variants, GL device) are one table added by each tool.
#pragma once

#include "fft/fft2d.h"
#include "gl/context.h"

#include <functional>
#include <string>
#include <vector>

namespace gpufft {

struct OptionSpec {
    std::string name;         ///< the long name, without "--"
    char short_name = 0;      ///< 'k' for -k; 0: none
    std::string value;        ///< the value's placeholder in --help ("SPEC", "N"); empty: a flag
    std::string help;         ///< the --help text; '\n' starts a continuation line; empty: not listed
    std::function<void(const std::string& value)> apply;  ///< throws UsageError on a bad value
    /// The --help line's left column where one line describes several options ("--csv, --json");
    /// empty: made from the names and value.
    std::string display = {};
};

/// The action of a flag: sets `b` to `value`.
inline std::function<void(const std::string&)> set_flag(bool& b, bool value = true) {
    return [&b, value](const std::string&) { b = value; };
}

/// Runs each option's apply() in command-line order (getopt_long: long names may be abbreviated,
/// options and operands may mix, "--" ends the options); returns the operands. Throws UsageError
/// for an unknown option or a missing value.
std::vector<std::string> parse_command_line(int argc, char** argv, const std::vector<OptionSpec>& specs);

/// The --help lines of `specs`: "  -k, --kernel SPEC     help...", the help at column 24.
std::string options_help(const std::vector<OptionSpec>& specs);

/// The FFT options every GL tool takes (--backend, --radix, --twiddles, --half, --compute-radix,
/// --compute-lines, --compute-max-line), applied to `fft`; `chosen`, if given, is set when any is.
std::vector<OptionSpec> fft_option_specs(FftOptions& fft, bool* chosen = nullptr);
/// --gl-device N.
OptionSpec gl_device_spec(ContextOptions& gl, const char* help = "EGL device index (default 0, or $GPUFFT_EGL_DEVICE)");
/// -h/--help (prints `help()` and exits 0) and --version (prints "TOOL (gpufft) VERSION", exits 0).
std::vector<OptionSpec> help_and_version_specs(const char* tool, const std::function<void()>& help,
                                               const char* help_text = "this text");

/// `a` followed by `b`.
std::vector<OptionSpec> operator+(std::vector<OptionSpec> a, const std::vector<OptionSpec>& b);

}  // namespace gpufft
