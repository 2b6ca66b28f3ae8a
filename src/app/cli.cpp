#include "app/cli.h"

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

bool parse_fft_option(const std::string& option, const char* value, FftOptions& fft) {
    if (option == "backend") {
        fft.backend = parse_backend(value);
    } else if (option == "radix") {
        std::string v = value;
        if (v == "2") fft.radix = 2;
        else if (v == "auto" || v == "16") fft.radix = 0;
        else throw UsageError("--radix " + v + ": 2 (the paper's chain) or auto");
    } else if (option == "twiddles") {
        std::string v = value;
        if (v != "table" && v != "computed") throw UsageError("--twiddles " + v + ": table or computed");
        fft.computed_twiddles = v == "computed";
    } else if (option == "compute-radix") {
        fft.compute_radix = parse_int(value, "--compute-radix", 4, 16);
        if (fft.compute_radix != 4 && fft.compute_radix != 8 && fft.compute_radix != 16)
            throw UsageError("--compute-radix must be 4, 8 or 16");
    } else if (option == "compute-lines") {
        fft.compute_lines = parse_int(value, "--compute-lines", 1, 16);
        if (fft.compute_lines & (fft.compute_lines - 1)) throw UsageError("--compute-lines must be 1, 2, 4, 8 or 16");
    } else if (option == "compute-max-line") {
        fft.compute_max_line = parse_int(value, "--compute-max-line", 4, 1 << 16);
        if (fft.compute_max_line & (fft.compute_max_line - 1)) throw UsageError("--compute-max-line must be a power of two");
    } else if (option == "half") {
        fft.storage = Storage::Float16;
    } else {
        return false;
    }
    return true;
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

double median(std::vector<double> values) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

}  // namespace gpufft
