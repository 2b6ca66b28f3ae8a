// cufft_filter: the peer on the same GPU (issue "A compute-shader backend ..."). The same work as
// bin/fftcompare: four 32-bit channels (a batch of four planes: cuFFT's best layout), R2C 2D,
// complex multiply by an impulse response's spectrum made once, C2R, timed with CUDA events
// (median of repeated runs), and its accuracy against FFTW in double precision.
//
// Built by `make cufft` where nvcc exists (never by `make` or in CI): bin/cufft_filter [N|WxH...]
#include <cuda_runtime.h>
#include <cufft.h>
#include <fftw3.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

constexpr int kQueue = 200;  // filters queued back to back for the throughput figure

void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) {
        std::fprintf(stderr, "cufft_filter: %s: %s\n", what, cudaGetErrorString(e));
        std::exit(1);
    }
}

void check(cufftResult r, const char* what) {
    if (r != CUFFT_SUCCESS) {
        std::fprintf(stderr, "cufft_filter: %s: cuFFT error %d\n", what, static_cast<int>(r));
        std::exit(1);
    }
}

// out = in * kernel * scale, elementwise over complex values (the kernel's spectrum and the
// 1/(MN) of an unnormalised round trip folded in by the host: scale = 1).
__global__ void multiply(cufftComplex* data, const cufftComplex* kernel, size_t count) {
    size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= count) return;
    cufftComplex a = data[i], b = kernel[i];
    data[i] = make_cuFloatComplex(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

/// Relative RMS of got against ref.
double rel_rms(const std::vector<double>& ref, const std::vector<double>& got) {
    double d = 0, r = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
        d += (got[i] - ref[i]) * (got[i] - ref[i]);
        r += ref[i] * ref[i];
    }
    return std::sqrt(d / r);
}

/// FFTW double: circular convolution of one plane with one kernel plane.
std::vector<double> reference(const float* image, const float* kernel, int m, int n) {
    size_t count = static_cast<size_t>(m) * n, half = static_cast<size_t>(m / 2 + 1) * n;
    std::vector<double> a(image, image + count), b(kernel, kernel + count), out(count);
    std::vector<std::complex<double>> fa(half), fb(half);
    fftw_plan pa = fftw_plan_dft_r2c_2d(n, m, a.data(), reinterpret_cast<fftw_complex*>(fa.data()), FFTW_ESTIMATE);
    fftw_plan pb = fftw_plan_dft_r2c_2d(n, m, b.data(), reinterpret_cast<fftw_complex*>(fb.data()), FFTW_ESTIMATE);
    fftw_execute(pa);
    fftw_execute(pb);
    for (size_t i = 0; i < half; ++i) fa[i] *= fb[i] / (static_cast<double>(m) * n);
    fftw_plan pc = fftw_plan_dft_c2r_2d(n, m, reinterpret_cast<fftw_complex*>(fa.data()), out.data(), FFTW_ESTIMATE);
    fftw_execute(pc);
    fftw_destroy_plan(pa);
    fftw_destroy_plan(pb);
    fftw_destroy_plan(pc);
    return out;
}

/// A size argument: "N" (N x N) or "WxH" (W columns, H rows), each 2 to 65536 (the GPU's memory
/// bounds it further). False for anything else: atoi would read 1920x1080 as 1920.
bool parse_size(const char* text, int& m, int& n) {
    auto number = [](const char*& p, int& out) {
        char* end = nullptr;
        const long v = std::strtol(p, &end, 10);
        if (end == p || !std::isdigit(static_cast<unsigned char>(*p)) || v < 2 || v > 65536) return false;
        out = static_cast<int>(v);
        p = end;
        return true;
    };
    const char* p = text;
    if (!number(p, m)) return false;
    n = m;
    if (*p == 'x' && !number(++p, n)) return false;
    return *p == '\0';
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::pair<int, int>> sizes;  // (M columns, N rows)
    for (int i = 1; i < argc; ++i) {
        int m = 0, n = 0;
        if (!parse_size(argv[i], m, n)) {
            std::fprintf(stderr, "cufft_filter: size \"%s\": expected N or WxH, each 2 to 65536\n", argv[i]);
            return 2;
        }
        sizes.emplace_back(m, n);
    }
    if (sizes.empty())
        for (int s : {128, 256, 512, 1024, 2048, 4096}) sizes.emplace_back(s, s);
    cudaDeviceProp prop;
    check(cudaGetDeviceProperties(&prop, 0), "device");
    int version = 0;
    cufftGetVersion(&version);
    std::printf("cufft_filter on %s, cuFFT %d: 4 channels (batch of 4 planes), R2C 2D + multiply + C2R; GPU ms: median of\n"
                "CUDA-event timings of one filter; queued ms: %d filters back to back, events around the queue, per filter\n",
                prop.name, version, kQueue);
    std::printf("%-10s %10s %12s %10s %14s\n", "size", "GPU ms", "runs", "queued ms", "filter rel RMS");
    for (const auto& size : sizes) {
        const int m = size.first, n = size.second, channels = 4;
        const size_t count = static_cast<size_t>(m) * n, half = static_cast<size_t>(m / 2 + 1) * n;
        std::mt19937 rng(static_cast<unsigned>(1000 + m + 7 * (n - m)));  // N x N: as before
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        std::vector<float> image(count * channels), kernel(count * channels);
        for (float& v : image) v = u(rng);
        for (float& v : kernel) v = u(rng);

        float *d_real = nullptr, *d_kernel_real = nullptr;
        cufftComplex *d_spectrum = nullptr, *d_kernel = nullptr;
        check(cudaMalloc(&d_real, count * channels * sizeof(float)), "malloc");
        check(cudaMalloc(&d_kernel_real, count * channels * sizeof(float)), "malloc");
        check(cudaMalloc(&d_spectrum, half * channels * sizeof(cufftComplex)), "malloc");
        check(cudaMalloc(&d_kernel, half * channels * sizeof(cufftComplex)), "malloc");
        int dims[2] = {n, m};
        cufftHandle forward, inverse;
        check(cufftPlanMany(&forward, 2, dims, nullptr, 1, static_cast<int>(count), nullptr, 1, static_cast<int>(half), CUFFT_R2C, channels), "plan");
        check(cufftPlanMany(&inverse, 2, dims, nullptr, 1, static_cast<int>(half), nullptr, 1, static_cast<int>(count), CUFFT_C2R, channels), "plan");

        // The kernel's spectrum, made once (not timed), with the round trip's 1/(MN) folded in.
        std::vector<float> scaled(kernel);
        for (float& v : scaled) v /= static_cast<float>(count);  // exact where MN is a power of two
        check(cudaMemcpy(d_kernel_real, scaled.data(), count * channels * sizeof(float), cudaMemcpyHostToDevice), "copy");
        check(cufftExecR2C(forward, d_kernel_real, d_kernel), "kernel spectrum");

        auto run = [&] {
            check(cufftExecR2C(forward, d_real, d_spectrum), "forward");
            size_t total = half * channels;
            multiply<<<static_cast<unsigned>((total + 255) / 256), 256>>>(d_spectrum, d_kernel, total);
            check(cudaGetLastError(), "multiply");
            check(cufftExecC2R(inverse, d_spectrum, d_real), "inverse");
        };
        // Accuracy: one run on the image.
        check(cudaMemcpy(d_real, image.data(), count * channels * sizeof(float), cudaMemcpyHostToDevice), "copy");
        run();
        std::vector<float> out(count * channels);
        check(cudaMemcpy(out.data(), d_real, count * channels * sizeof(float), cudaMemcpyDeviceToHost), "copy back");
        double worst = 0;
        for (int c = 0; c < channels; ++c) {
            std::vector<double> ref = reference(&image[c * count], &kernel[c * count], m, n);
            std::vector<double> got(out.begin() + static_cast<long>(c * count), out.begin() + static_cast<long>((c + 1) * count));
            worst = std::max(worst, rel_rms(ref, got));
        }
        // Speed: warm-up, then timed runs (the data keeps being filtered; its values do not matter
        // to the FFT's speed, and a renormalising kernel keeps them finite: |K| is random).
        cudaEvent_t start, stop;
        cudaEventCreate(&start);
        cudaEventCreate(&stop);
        run();
        std::vector<double> ms;
        for (int r = 0; r < 50; ++r) {
            check(cudaMemcpy(d_real, image.data(), count * channels * sizeof(float), cudaMemcpyHostToDevice), "copy");
            cudaEventRecord(start);
            run();
            cudaEventRecord(stop);
            check(cudaEventSynchronize(stop), "sync");
            float t = 0;
            cudaEventElapsedTime(&t, start, stop);
            ms.push_back(t);
        }
        // Back to back, as the peers in ../shared/peers and fftcompare's queued figure: 10 warm-up
        // filters, then kQueue with one wait.
        for (int r = 0; r < 10; ++r) run();
        cudaEventRecord(start);
        for (int r = 0; r < kQueue; ++r) run();
        cudaEventRecord(stop);
        check(cudaEventSynchronize(stop), "sync");
        float queued = 0;
        cudaEventElapsedTime(&queued, start, stop);
        std::printf("%-10s %10.4f %12zu %10.4f %14.3e\n", (std::to_string(m) + "x" + std::to_string(n)).c_str(), median(ms), ms.size(),
                    queued / kQueue, worst);
        cufftDestroy(forward);
        cufftDestroy(inverse);
        cudaFree(d_real);
        cudaFree(d_kernel_real);
        cudaFree(d_spectrum);
        cudaFree(d_kernel);
        cudaEventDestroy(start);
        cudaEventDestroy(stop);
    }
    return 0;
}
