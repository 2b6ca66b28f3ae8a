// What the probe programs of test/bench share: their GLSL, embedded at build time
// (bench_programs.inc, from test/bench/*.frag and *.comp), and GPU timing by timer queries.
#pragma once

#include "app/cli.h"
#include "gl/program.h"
#include "gl/timer.h"

#include <vector>

namespace gpufft::bench {

/// Makes the embedded probe programs loadable by name (ProgramCache).
inline void add_probe_programs() {
    struct ProbeSource {
        const char* name;
        const char* text;
    };
    static const ProbeSource probes[] = {
#include "bench_programs.inc"
    };
    for (const ProbeSource& p : probes) add_program_source(p.name, p.text);
}

/// Median microseconds of `draw` (GPU time of `batch` repetitions, divided), after one untimed run.
template <typename F>
double time_us(F draw, int batch = 10, int runs = 7) {
    GpuTimer timer;
    draw();
    std::vector<double> us;
    for (int r = 0; r < runs; ++r) {
        timer.begin();
        for (int i = 0; i < batch; ++i) draw();
        timer.end();
        us.push_back(timer.milliseconds() * 1e3 / batch);
    }
    return median(us);
}

}  // namespace gpufft::bench
