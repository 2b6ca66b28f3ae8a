// The fuzz targets' bodies, shared by the libFuzzer programs (fuzz_png.cpp, fuzz_kernel.cpp, built
// by `make fuzz` with clang) and by the regression test (test/test_fuzz_inputs.cpp), which replays
// the seed corpus and every input kept in test/fuzz/regressions/ on every `make test`.
//
// A target passes an input when the reader or parser either succeeds with a sane result or throws
// gpufft::Error with one line naming the input; anything else (a crash, a sanitizer report, another
// exception, a multi-line message) is a finding.
#pragma once

#include "base/error.h"
#include "base/parse.h"
#include "image/kernels.h"
#include "image/png_io.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <string>

#include <unistd.h>

namespace fuzz {

/// True when `m` is one printable line (no control characters).
inline bool one_line(const std::string& m) {
    for (unsigned char c : m)
        if (c < 0x20 || c == 0x7f) return false;
    return !m.empty();
}

/// The reader's own sanity: a failure must be one printable line starting with the input's name.
inline void check_message(const gpufft::Error& e, const std::string& name) {
    std::string m = e.what();
    if (m.rfind(name + ": ", 0) != 0 || !one_line(m) || m.size() <= name.size() + 2) {
        std::fprintf(stderr, "fuzz: bad error message: '%s'\n", m.c_str());
        std::abort();
    }
}

/// The image read whole (read_image: libdeflate where it can), by rows as the reader chooses (zlib
/// where it can) and by rows through libpng alone: the same samples, or the same error.
inline void whole_as_rows(const uint8_t* data, size_t size, const std::string& name, const gpufft::PngLimits& limits) {
    std::string error[3];
    gpufft::Samples samples[3];
    for (int way = 0; way < 3; ++way) {
        try {
            gpufft::PngReader r(data, size, name, limits);
            if (r.format().interlaced) return;  // read whole only
            if (way == 0) {
                samples[way] = r.read_image().samples;
                continue;
            }
            if (way == 2) r.use_libpng();
            gpufft::Samples& s = samples[way];
            s.resize(r.width(), r.height(), r.channels(), r.depth());
            for (int y = 0; y < r.height(); y += 3) r.read_rows(s.row(y), std::min(3, r.height() - y));
        } catch (const gpufft::Error& e) {
            error[way] = e.what();
        }
    }
    for (int way = 0; way < 2; ++way)
        if (error[way] != error[2] || (error[2].empty() && samples[way].data != samples[2].data)) {
            std::fprintf(stderr, "fuzz: %s and libpng's rows differ: '%s' against '%s'\n", way ? "rows" : "the whole image",
                         error[way].c_str(), error[2].c_str());
            std::abort();
        }
}

/// PNG bytes: read with a pixel limit small enough that libFuzzer's memory limit is never the
/// finding (a 4 MiB-pixel image is 64 MiB of float RGBA).
inline int png(const uint8_t* data, size_t size) {
    const std::string name = "fuzz.png";
    gpufft::PngLimits limits;
    limits.max_pixels = 1 << 22;
    try {
        gpufft::PngImage p = gpufft::read_png_memory(data, size, name, limits);
        const gpufft::Image& im = p.image;
        if (im.width < 1 || im.height < 1 || static_cast<long long>(im.width) * im.height > limits.max_pixels)
            std::abort();
        for (int y = 0; y < im.height; ++y)
            for (int x = 0; x < im.width; ++x)
                for (int c = 0; c < 4; ++c) {
                    float v = im.at(x, y)[c];
                    if (!(v >= 0.0f && v <= 1.0f)) std::abort();  // samples / (2^depth - 1)
                }
        // What was read can be written: an output keeps the input's metadata (text, eXIf, cHRM,
        // safe-to-copy chunks...), and libpng refuses to write some that it reads.
        const gpufft::PngFormat out = gpufft::output_format(p.format, false);
        (void)out.describe();
        static const std::string written = "/tmp/gpufft-fuzz-" + std::to_string(getpid()) + ".png";
        try {
            gpufft::write_png(written, im, out, true);
        } catch (const gpufft::Error& e) {
            std::fprintf(stderr, "fuzz: what was read cannot be written: %s\n", e.what());
            std::abort();
        }
        std::remove(written.c_str());
    } catch (const gpufft::Error& e) {
        check_message(e, name);
    }
    whole_as_rows(data, size, name, limits);
    return 0;
}


/// A kernel spec (the bytes as text). Specs naming files are skipped: the target parses, it does
/// not roam the file system. Kernels are limited to 257 pixels a side.
inline int kernel_spec(const uint8_t* data, size_t size) {
    std::string spec(reinterpret_cast<const char*>(data), size);
    // (parse_kernel() reads a spec ending in .png, in any case, as a file.)
    if (spec.find('/') != std::string::npos || gpufft::ends_with(spec, ".png", true)) return 0;
    gpufft::KernelOptions options;
    options.max_side = 257;
    try {
        gpufft::Kernel k = gpufft::parse_kernel(spec, options);
        const gpufft::Image& w = k.weights;
        if (w.width < 1 || w.height < 1 || w.width > options.max_side || w.height > options.max_side ||
            k.cx < 0 || k.cx >= w.width || k.cy < 0 || k.cy >= w.height)
            std::abort();
        for (int y = 0; y < w.height; ++y)
            for (int x = 0; x < w.width; ++x)
                for (int c = 0; c < 4; ++c)
                    if (!std::isfinite(w.at(x, y)[c])) std::abort();
    } catch (const gpufft::Error& e) {
        std::string m = e.what();
        if (!one_line(m)) {
            std::fprintf(stderr, "fuzz: bad error message: '%s'\n", m.c_str());
            std::abort();
        }
    }
    return 0;
}

}  // namespace fuzz
