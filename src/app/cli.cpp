#include "app/cli.h"

#include "fft/sizes.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <algorithm>
#include <chrono>
#include <cstdlib>

namespace gpufft {

Backend parse_backend(const std::string& name) {
    for (Backend b : {Backend::Auto, Backend::Fragment, Backend::Compute, Backend::Fftw})
        if (name == backend_name(b)) return b;
    throw UsageError("unknown backend '" + name + "' (auto, fragment, compute or fftw)");
}

const char* backend_name(Backend b) {
    switch (b) {
        case Backend::Auto: return "auto";
        case Backend::Fragment: return "fragment";
        case Backend::Compute: return "compute";
        case Backend::Fftw: return "fftw";
    }
    return "?";
}

int report(const char* tool, const std::string& message, int status) {
    std::string line = message;
    for (char& c : line)
        if (c == '\n') c = ' ';
    while (!line.empty() && line.back() == ' ') line.pop_back();
    std::fprintf(stderr, "%s: %s\n", tool, line.c_str());
    return status;
}

int run_tool(const char* tool, const std::function<int()>& body) {
    // Line by line even into a pipe: a tool stopped by a time limit keeps what it measured.
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    try {
        return body();
    } catch (const UsageError& e) {
        return report(tool, std::string(e.what()) + " (see --help)", kExitUsage);
    } catch (const GlError& e) {
        return report(tool, std::string("no usable OpenGL: ") + e.what(), kExitNoGl);
    } catch (const std::exception& e) {
        return report(tool, e.what(), kExitFailed);
    }
}

void throw_option_error(int code, char** argv, int optind) {
    if (code == ':') throw UsageError(std::string("option ") + argv[optind - 1] + " needs a value");
    throw UsageError(std::string("unknown option ") + argv[optind - 1]);
}

void warm_up(double seconds, const std::function<void()>& work) {
    auto start = std::chrono::steady_clock::now();
    do work();
    while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds);
}

void saturating_warm_up(double seconds, const std::function<void()>& run, int batch) {
    warm_up(seconds, [&] {
        for (int k = 0; k < batch; ++k) run();
        glFinish();
    });
}

double median(std::vector<double> values) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

void require_fast_size(int width, int height, const std::string& what) {
    if (is_fast_size(width) && is_fast_size(height)) return;
    const bool square = width == height;
    const std::string name = square ? std::to_string(width) : std::to_string(width) + "x" + std::to_string(height);
    throw UsageError(what + " " + name + " is not " + (square ? "an even size" : "two even sizes") +
                     " with prime factors 2, 3, 5 and 7 only (e.g. 512, 1920x1080)");
}

std::vector<std::pair<int, int>> parse_fast_size_list(const std::string& list, const std::string& what) {
    std::vector<std::pair<int, int>> sizes = parse_size_list(list, what);
    for (auto [w, h] : sizes) require_fast_size(w, h, what + ":");
    return sizes;
}

}  // namespace gpufft
