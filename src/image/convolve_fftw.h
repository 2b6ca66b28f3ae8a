// The same convolution as Convolver (boundary rules, kernel placement, cropping), on the CPU through
// FFTW: the batch backend where the GL renderer is a software rasterizer. FFTW transforms any length,
// so each axis is padded to the next fast length (sizes.h), not the next power of two, and a wrapped
// axis is transformed whole at its own length.
#pragma once

#include "image/convolve.h"

#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace gpufft {

class FftwConvolver {
public:
    explicit FftwConvolver(Kernel kernel, Boundary boundary);
    ~FftwConvolver();
    FftwConvolver(const FftwConvolver&) = delete;
    FftwConvolver& operator=(const FftwConvolver&) = delete;

    /// One thread's buffers, reused from image to image (grown to the largest grid, never shrunk).
    class Workspace {
    public:
        Workspace() = default;
        ~Workspace();
        Workspace(const Workspace&) = delete;
        Workspace& operator=(const Workspace&) = delete;

    private:
        friend class FftwConvolver;
        void reserve(size_t reals, size_t complexes);
        float* real_ = nullptr;
        void* spectrum_ = nullptr;
        size_t reals_ = 0, complexes_ = 0;
    };

    struct Stats {
        int fft_width = 0, fft_height = 0, channels = 0;
    };

    /// Filters the channels of `image` whose bits are set in `channels` (bit c: channel c), in
    /// place; the others are left as they are. Safe to call from several threads at once, each
    /// with its own workspace.
    Stats apply(Image& image, unsigned channels, Workspace& workspace);
    /// The grid an image of this size is filtered on.
    std::pair<AxisTiling, AxisTiling> tiling(int width, int height) const;
    const Kernel& kernel() const { return kernel_; }

private:
    struct Size;  // plans and kernel spectra of one grid
    const Size& size(int width, int height);

    Kernel kernel_;
    Boundary boundary_;
    std::mutex mutex_;  // FFTW's planner is not thread-safe; plans are executed concurrently
    std::map<std::pair<int, int>, std::unique_ptr<Size>> sizes_;
};

}  // namespace gpufft
