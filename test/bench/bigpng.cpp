// bigpng: writes a PNG of any size row by row (PngWriter), for the streaming benchmark
// (test/bench_stream.sh): smooth gradients, rings and a little noise, so that a filter has
// something to do and the file compresses like a photograph or a map, not like noise. (Separable
// waves: the file is written at zlib speed.)
//
//   bin/bench/bigpng WIDTHxHEIGHT rgb8|rgba16 OUT.png [zlib level, default 1]
//   bin/bench/bigpng read IN.png [rows a call, default 64 | whole | parts]
//       decodes a PNG by rows (PngReader::read_rows, as a streamed image is read), or whole
//       (read_image(), as a batch's worker reads a file; parts: as a file read alone) and prints
//       the decoder, the seconds it took and the samples' CRC-32 (files written differently that
//       hold the same samples print the same)
#include "base/error.h"
#include "base/parse.h"
#include "image/png_io.h"

#include <libdeflate.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

namespace {

int read(const char* path, int rows_a_call) {
    const auto start = std::chrono::steady_clock::now();
    gpufft::PngReader in(path, gpufft::PngLimits{0});
    if (rows_a_call <= 0) {  // whole: 0 one way, -1 in parts
        const gpufft::PngSamples image = in.read_image(rows_a_call < 0);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::printf("%s: %dx%d read whole (%s) in %.3f s, samples' CRC-32 %08x\n", path, in.width(), in.height(), in.decoder(),
                    seconds, libdeflate_crc32(0, image.samples.data.data(), image.samples.data.size()));
        return image.samples.data.empty();
    }
    std::vector<unsigned char> rows(in.row_bytes() * static_cast<size_t>(rows_a_call));
    uint32_t crc = 0;
    for (int y = 0; y < in.height(); y += rows_a_call) {
        const int n = std::min(rows_a_call, in.height() - y);
        in.read_rows(rows.data(), n);
        crc = libdeflate_crc32(crc, rows.data(), in.row_bytes() * static_cast<size_t>(n));
    }
    std::printf("%s: %dx%d read by rows (%d a call, %s) in %.3f s, samples' CRC-32 %08x\n", path, in.width(), in.height(),
                rows_a_call, in.decoder(), std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), crc);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const bool reading = argc >= 3 && std::string(argv[1]) == "read";
    if (argc < (reading ? 3 : 4)) {
        std::fprintf(stderr, "usage: bigpng WIDTHxHEIGHT rgb8|rgba16 OUT.png [level]\n       bigpng read IN.png [rows a call | whole | parts]\n");
        return 2;
    }
    try {
        if (reading) {
            const std::string how = argc > 3 ? argv[3] : "64";
            return read(argv[2], how == "whole" ? 0 : how == "parts" ? -1 : gpufft::parse_int(how, "rows a call", 1, 1 << 20));
        }
        int width = 0, height = 0;
        gpufft::parse_size(argv[1], "size", width, height);
        const std::string kind = argv[2];
        if (kind != "rgb8" && kind != "rgba16") throw gpufft::UsageError("kind: rgb8 or rgba16");
        const bool wide = kind == "rgba16";
        gpufft::PngFormat f;
        f.color_type = wide ? 6 : 2;
        f.bit_depth = wide ? 16 : 8;
        gpufft::PngWriter out(argv[3], width, height, f, true, argc > 4 ? gpufft::parse_int(argv[4], "level", 0, 9) : 1);
        const int channels = wide ? 4 : 3;
        const double max = wide ? 65535.0 : 255.0;
        std::vector<unsigned char> row(out.row_bytes());
        std::vector<double> wave(static_cast<size_t>(width));
        for (int x = 0; x < width; ++x) wave[static_cast<size_t>(x)] = std::cos(40.0 * x / width);
        uint32_t noise = 12345;
        for (int y = 0; y < height; ++y) {
            const double v = static_cast<double>(y) / height, wave_y = std::cos(31.0 * v);
            for (int x = 0; x < width; ++x) {
                const double u = static_cast<double>(x) / width;
                const double ring = 0.5 + 0.5 * wave[static_cast<size_t>(x)] * wave_y;
                noise = noise * 1664525u + 1013904223u;
                const double n = static_cast<double>(noise >> 24) / 255.0 - 0.5;
                const double value[4] = {u, v, ring, 1.0 - 0.5 * u * v};
                for (int c = 0; c < channels; ++c) {
                    const double s = 0.8 * value[c] + 0.1 + 0.04 * n;  // within [0.08, 0.92]
                    const unsigned q = static_cast<unsigned>(s * max + 0.5);
                    if (wide) reinterpret_cast<uint16_t*>(row.data())[channels * x + c] = static_cast<uint16_t>(q);
                    else row[static_cast<size_t>(channels * x + c)] = static_cast<unsigned char>(q);
                }
            }
            out.write_rows(row.data(), 1);
        }
        out.commit();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bigpng: %s\n", e.what());
        return 1;
    }
    return 0;
}
