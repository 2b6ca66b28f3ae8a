#include "image/spectral.h"

#include "base/parse.h"
#include "fft/layout.h"
#include "fft/spectrum_view.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <random>

namespace gpufft {

namespace {

int next_power_of_two(int n) {
    int p = 2;
    while (p < n) p *= 2;
    return p;
}

}  // namespace

Image spectrum_image(ProgramCache& programs, const Image& image, Boundary boundary, const FftOptions& options) {
    const int m = next_power_of_two(image.width), n = next_power_of_two(image.height);
    std::unique_ptr<Fft2D> fft = make_fft(programs, m, n, options);
    std::vector<float> padded(static_cast<size_t>(m) * static_cast<size_t>(n) * 4);
    for (int y = 0; y < n; ++y)
        for (int x = 0; x < m; ++x) {
            long long sx = boundary_index(x, image.width, boundary), sy = boundary_index(y, image.height, boundary);
            float* dst = &padded[(static_cast<size_t>(y) * m + x) * 4];
            if (sx < 0 || sy < 0) std::fill(dst, dst + 4, 0.0f);
            else std::copy(image.at(static_cast<int>(sx), static_cast<int>(sy)), image.at(static_cast<int>(sx), static_cast<int>(sy)) + 4, dst);
        }
    fft->input().upload(padded.data());
    fft->forward(fft->input(), fft->output());
    RenderTarget view(m, n);
    SpectrumView(programs).draw(fft->output().texture().id(), view);
    Image out(m, n);
    view.download(out.rgba.data());
    return out;
}

SynthSpec parse_synth(const std::string& spec) {
    SynthSpec s;
    size_t colon = spec.find(':');
    parse_size(spec.substr(0, colon), "--synth size", s.width, s.height);
    while (colon != std::string::npos) {
        size_t next = spec.find(':', colon + 1);
        std::string item = spec.substr(colon + 1, next == std::string::npos ? std::string::npos : next - colon - 1);
        colon = next;
        if (item.rfind("power=", 0) == 0) s.power = parse_double(item.substr(6), "--synth power", 0, 8);
        else if (item.rfind("seed=", 0) == 0) s.seed = static_cast<unsigned>(parse_int(item.substr(5), "--synth seed", 0, 2147483647));
        else if (item == "colour" || item == "color") s.colour = true;
        else if (item == "grey" || item == "gray") s.colour = false;
        else throw UsageError("--synth: unknown item '" + item + "' (power=P, seed=S, colour)");
    }
    return s;
}

Image synthesize(ProgramCache& programs, const SynthSpec& spec, const FftOptions& options) {
    const int m = next_power_of_two(spec.width), n = next_power_of_two(spec.height);
    std::unique_ptr<Fft2D> fft = make_fft(programs, m, n, options);
    const int half = m / 2 + 1;
    std::vector<float> packed(static_cast<size_t>(m) * static_cast<size_t>(n) * 4);
    std::mt19937 rng(spec.seed);
    std::uniform_real_distribution<double> phase(0.0, 2 * M_PI);
    std::vector<std::complex<double>> f(static_cast<size_t>(half) * static_cast<size_t>(n));
    for (int c = 0; c < 4; ++c) {
        if (c == 0 || (spec.colour && c < 3)) {
            for (int v = 0; v < n; ++v)
                for (int u = 0; u < half; ++u) {
                    double fx = double(u) / m, fy = double(v <= n / 2 ? v : v - n) / n;
                    double r = std::hypot(fx, fy);
                    double magnitude = r > 0 ? std::pow(r, -spec.power) : 0.0;  // no DC: the scaling sets the mean
                    f[static_cast<size_t>(v) * half + u] = std::polar(magnitude, phase(rng));
                }
        }
        if (c < 3) pack_half(f.data(), m, n, c, packed.data());
    }
    fft->input().upload(packed.data());
    fft->inverse(fft->input(), fft->output());
    std::vector<float> full = fft->output().download();

    Image out(spec.width, spec.height, 1.0f);
    float lo = INFINITY, hi = -INFINITY;
    for (int y = 0; y < spec.height; ++y)
        for (int x = 0; x < spec.width; ++x)
            for (int c = 0; c < 3; ++c) {
                float v = full[(static_cast<size_t>(y) * m + x) * 4 + c];
                lo = std::min(lo, v);
                hi = std::max(hi, v);
            }
    const float scale = hi > lo ? 1.0f / (hi - lo) : 0.0f;
    for (int y = 0; y < spec.height; ++y)
        for (int x = 0; x < spec.width; ++x)
            for (int c = 0; c < 3; ++c) out.at(x, y)[c] = (full[(static_cast<size_t>(y) * m + x) * 4 + c] - lo) * scale;
    return out;
}

}  // namespace gpufft
