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
        "GPU", 4, 8, 1024, 4, 4, 2, 16, 2, 1024, 4, 8, 4096, true, 1024};
    return software_rasterizer ? software : gpu;
}

}  // namespace gpufft
