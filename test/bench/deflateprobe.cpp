// deflateprobe: where the GPU time of deflating one PNG's rows goes (GpuRunCoder, gpu_deflate.h):
// the PNG's samples uploaded as serialize.comp leaves them, then deflated RUNS times on the GPU,
// each step timed by timestamps (png_filter.comp; the stream cleared; run_coder.comp's COUNT, PLAN
// and CODE; the copies back), medians printed; the stream checked against deflate_runs() of the
// same rows on the CPU, whose time is printed beside. Usage:
//   deflateprobe IN.png [RUNS]     (RUNS default 9; a filter's output is the case that matters)
#include "base/parse.h"
#include "gl/context.h"
#include "image/deflate.h"
#include "image/gpu_deflate.h"
#include "image/png_io.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

using namespace gpufft;

namespace {

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    try {
        if (argc < 2) throw UsageError("usage: deflateprobe IN.png [RUNS]");
        const int runs = argc > 2 ? parse_int(argv[2], "runs", 1, 1000) : 9;
        HeadlessContext context;
        ProgramCache programs;
        const PngSamples png = read_png_samples(argv[1]);
        const Samples& s = png.samples;
        if (s.depth != 8 && s.depth != 16) throw Error(std::string(argv[1]) + ": 8- or 16-bit samples only");
        std::printf("deflateprobe: %s\n%s: %dx%d, %d channels, %d-bit; median of %d\n", describe_gl().c_str(), argv[1], s.width,
                    s.height, s.channels, s.depth, runs);
        std::vector<unsigned char> words((s.data.size() + 3) / 4 * 4, 0);
        std::copy(s.data.begin(), s.data.end(), words.begin());
        StorageBuffer rows(words.data(), words.size());
        GpuRunCoder gpu(programs);
        GpuTimestamps stamps;
        const char* steps[] = {"filter (png_filter.comp)", "clear the stream", "COUNT", "PLAN", "CODE", "copies back"};
        std::vector<std::vector<double>> ms(6);
        std::vector<double> wall;
        DeflatedRows out;
        bool declined = false;
        for (int r = 0; r < runs + 1; ++r) {  // the first run links the programs: left out
            gpu.profile(&stamps);
            const auto t0 = std::chrono::steady_clock::now();
            gpu.deflate(rows, s.row_bytes(), s.height, static_cast<int>(s.channels * s.bytes_per_sample()), s.depth == 16);
            const bool coded = gpu.collect(out);
            const double w = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            const std::vector<double> intervals = stamps.intervals_ms();
            declined = declined || !coded;
            if (r == 0) continue;
            wall.push_back(w);
            for (size_t i = 0; i < intervals.size() && i < ms.size(); ++i) ms[i].push_back(intervals[i]);
        }
        double total = 0;
        for (size_t i = 0; i < ms.size(); ++i) {
            std::printf("  %-28s %9.3f ms\n", steps[i], median(ms[i]));
            total += median(ms[i]);
        }
        std::printf("  %-28s %9.3f ms (deflate() to collect(): %.3f ms)\n", "all", total, median(wall));
        if (declined) throw Error(std::string(argv[1]) + ": a block would be stored: not deflated on the GPU");
        // The same rows on the CPU: filtered as the writer does, then deflate_runs().
        const std::vector<unsigned char> filtered = filtered_rows(s);
        std::vector<unsigned char> raw(deflate_runs_bound(filtered.size()));
        const auto t0 = std::chrono::steady_clock::now();
        raw.resize(deflate_runs(filtered.data(), filtered.size(), true, raw.data()));
        const double cpu = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        std::printf("  the CPU's deflate_runs(), one core: %.3f ms; %zu bytes, %s\n", cpu, raw.size(),
                    raw == out.data ? "the GPU's stream the same" : "THE GPU'S STREAM DIFFERS");
        return raw == out.data ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "deflateprobe: %s\n", e.what());
        return 1;
    }
}
