#include "fft/tuning.h"

namespace gpufft {

const ComputeTuning& compute_tuning(bool software_rasterizer) {
    static const ComputeTuning software = {
        // Mesa's llvmpipe and the like: a JIT for which big unrolled programs are slow to compile
        // (radix 16: 10-20 s; radix 4 with 2 components: about 1 s), while the CPU gains nothing
        // from fewer exchange rounds: at most 2 components.
        "software rasterizer", 4, 8, 1024, 4, 4, 2, 16, 2, 1024, 2, 2, 4096, true, 1024};
    static const ComputeTuning gpu = {
        // Measured on NVIDIA's H200 and H100 (src/README.md); the default for other GPUs too.
        // 1000 as 8 5 5 5 (200 threads) against the planner's 4 2 5 5 5: 0.0936-0.0943 against
        // 0.1002-0.1006 ms at 1000^2 in three races (H100, 2026-11-24).
        "GPU", 4, 8, 1024, 4, 4, 2, 16, 2, 1024, 4, 8, 4096, true, 1024, "1000:8x5x5x5"};
    return software_rasterizer ? software : gpu;
}

}  // namespace gpufft
