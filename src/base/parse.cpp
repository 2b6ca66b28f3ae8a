#include "base/parse.h"

#include "base/error.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace gpufft {

double parse_double(const std::string& text, const std::string& what, double lo, double hi) {
    char* end = nullptr;
    errno = 0;
    double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || errno != 0 || !std::isfinite(v)) throw UsageError(what + " '" + text + "' is not a number");
    if (v < lo || v > hi) {
        char range[96];
        std::snprintf(range, sizeof range, " must be in [%g, %g]", lo, hi);
        throw UsageError(what + " " + text + range);
    }
    return v;
}

int parse_int(const std::string& text, const std::string& what, int lo, int hi) {
    double v = parse_double(text, what, lo, hi);
    if (v != std::floor(v)) throw UsageError(what + " " + text + " must be a whole number");
    return static_cast<int>(v);
}

long long parse_bytes(const std::string& text, const std::string& what) {
    std::string number = text;
    double unit = 1;
    for (const char* suffix : {"iB", "B"})
        if (number.size() > std::string(suffix).size() &&
            number.compare(number.size() - std::string(suffix).size(), std::string::npos, suffix) == 0) {
            number.resize(number.size() - std::string(suffix).size());
            break;
        }
    const std::string units = "KMGT";
    const size_t u = number.empty() ? std::string::npos : units.find(static_cast<char>(std::toupper(static_cast<unsigned char>(number.back()))));
    if (u != std::string::npos) {
        unit = std::ldexp(1.0, 10 * static_cast<int>(u + 1));
        number.pop_back();
    }
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(number.c_str(), &end);
    if (number.empty() || *end != '\0' || errno != 0 || !std::isfinite(v) || v <= 0)
        throw UsageError(what + " '" + text + "' is not a size in bytes (e.g. 512M, 2G)");
    const double bytes = v * unit;
    if (bytes < 1 || bytes > 9e18) throw UsageError(what + " " + text + " is out of range");
    return static_cast<long long>(bytes);
}

void parse_size(const std::string& text, const std::string& what, int& width, int& height) {
    size_t x = text.find('x');
    width = parse_int(text.substr(0, x), what + " width", 1, 1 << 20);
    height = x == std::string::npos ? width : parse_int(text.substr(x + 1), what + " height", 1, 1 << 20);
}

std::vector<std::string> split_list(const std::string& text, char sep) {
    std::vector<std::string> items;
    size_t start = 0;
    for (;;) {
        const size_t at = text.find(sep, start);
        items.push_back(text.substr(start, at == std::string::npos ? std::string::npos : at - start));
        if (at == std::string::npos) return items;
        start = at + 1;
    }
}

std::vector<std::pair<int, int>> parse_size_list(const std::string& list, const std::string& what) {
    std::vector<std::pair<int, int>> sizes;
    for (const std::string& item : split_list(list, ',')) {
        std::pair<int, int> s;
        parse_size(item, what, s.first, s.second);
        sizes.push_back(s);
    }
    return sizes;
}

bool ends_with(const std::string& name, const std::string& suffix, bool any_case) {
    if (name.size() < suffix.size()) return false;
    const size_t at = name.size() - suffix.size();
    for (size_t i = 0; i < suffix.size(); ++i) {
        const auto c = static_cast<unsigned char>(name[at + i]);
        if ((any_case ? static_cast<char>(std::tolower(c)) : name[at + i]) != suffix[i]) return false;
    }
    return true;
}

}  // namespace gpufft
