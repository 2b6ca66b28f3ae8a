// The project's errors: every failure a tool reports is one line, "tool: <what>". Below every
// other layer: the PNG reader and the kernel parser need no GL to report.
#pragma once

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

/// A request that cannot be done as written (a bad option value, kernel spec or size): the tools
/// exit with their usage status.
class UsageError : public Error {
public:
    using Error::Error;
};

}  // namespace gpufft
