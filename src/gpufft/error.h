// gpufft/error.h: the one exception type the library throws. Every failure (a bad kernel spec or
// size, a GL the filter cannot run on, GPU memory exhausted) is a gpufft::Error whose what() is one
// printable line saying what went wrong.
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

/// Every failure of the library: what() is one line.
class Error : public std::runtime_error {
public:
    explicit Error(const std::string& what) : std::runtime_error(one_line(what)) {}
};

}  // namespace gpufft
