#include "image/kernels.h"

#include "base/parse.h"
#include "reference/reference.h"
#include "base/error.h"
#include "image/png_io.h"

#include <cmath>
#include <complex>
#include <functional>
#include <vector>

namespace gpufft {

namespace {

[[noreturn]] void bad(const std::string& spec, const std::string& why) {
    throw Error("kernel '" + spec + "': " + why);
}

double number(const std::string& spec, const std::string& text, const char* what, double lo, double hi) {
    return parse_double(text, "kernel '" + spec + "': " + what, lo, hi);
}

int integer(const std::string& spec, const std::string& text, const char* what, int lo, int hi) {
    return parse_int(text, "kernel '" + spec + "': " + what, lo, hi);
}

/// A grey (all channels equal) kernel of odd size 2r+1 centred at (r, r), from a weight function.
Kernel centred(int r, const std::function<double(int, int)>& weight) {
    Kernel k;
    int side = 2 * r + 1;
    k.weights = Image(side, side);
    k.cx = k.cy = r;
    for (int y = 0; y < side; ++y)
        for (int x = 0; x < side; ++x) {
            float w = static_cast<float>(weight(x - r, y - r));
            for (int c = 0; c < 4; ++c) k.weights.at(x, y)[c] = w;
        }
    return k;
}

void normalise(Kernel& k, const std::string& spec) {
    for (int c = 0; c < 4; ++c) {
        double sum = 0;
        for (size_t i = 0; i < k.weights.pixels(); ++i) sum += k.weights.rgba[4 * i + static_cast<size_t>(c)];
        if (std::abs(sum) < 1e-12) bad(spec, "channel " + std::to_string(c) + " sums to zero; use --no-normalize");
        for (size_t i = 0; i < k.weights.pixels(); ++i)
            k.weights.rgba[4 * i + static_cast<size_t>(c)] = static_cast<float>(k.weights.rgba[4 * i + static_cast<size_t>(c)] / sum);
    }
}

void check_side(const Kernel& k, const std::string& spec, int max_side) {
    if (k.weights.width > max_side || k.weights.height > max_side)
        bad(spec, std::to_string(k.weights.width) + "x" + std::to_string(k.weights.height) +
                      " is bigger than the " + std::to_string(max_side) + "x" + std::to_string(max_side) + " allowed");
}

/// Radius (pixels) a size parameter needs; refuses before allocating anything absurd.
int radius_for(double extent, const std::string& spec, int max_side) {
    double r = std::ceil(extent);
    if (2 * r + 1 > max_side)
        bad(spec, "needs a " + std::to_string(static_cast<long long>(2 * r + 1)) + "-pixel kernel, bigger than the " +
                      std::to_string(max_side) + " allowed");
    return static_cast<int>(r);
}

Kernel gaussian(double sigma, const std::string& spec, int max_side) {
    int r = radius_for(4 * sigma, spec, max_side);  // weights beyond 4 sigma are below 3.4e-4 of the peak
    Kernel k = centred(r, [&](int x, int y) { return std::exp(-(x * x + y * y) / (2 * sigma * sigma)); });
    normalise(k, spec);
    return k;
}

/// An ideal circular low-pass at `cutoff` times the Nyquist frequency, designed by frequency
/// sampling on an S x S grid (S a power of two >= 16 / cutoff): its response is exactly 1 inside
/// and 0 outside at those S^2 frequencies; h is their inverse DFT, centred at (S/2, S/2).
Kernel lowpass(double cutoff, int max_side) {
    int s = 16;
    while (s < 16.0 / cutoff && s < 2048) s *= 2;
    if (s > max_side) s = max_side & ~1;
    const int half = s / 2 + 1;
    std::vector<std::complex<double>> mask(static_cast<size_t>(half) * s);
    for (int v = 0; v < s; ++v)
        for (int u = 0; u < half; ++u) {
            double fx = double(u) / s, fy = double(v < s / 2 ? v : v - s) / s;  // cycles per pixel
            mask[static_cast<size_t>(v) * half + u] = std::hypot(fx, fy) <= 0.5 * cutoff ? 1.0 : 0.0;
        }
    std::vector<double> h = real_inverse_dft(mask, s, s);
    Kernel k;
    k.weights = Image(s, s);
    k.cx = k.cy = s / 2;
    for (int y = 0; y < s; ++y)
        for (int x = 0; x < s; ++x) {
            float w = static_cast<float>(h[static_cast<size_t>((y + s / 2) % s) * s + (x + s / 2) % s] / (double(s) * s));
            for (int c = 0; c < 4; ++c) k.weights.at(x, y)[c] = w;
        }
    return k;
}

/// delta - k: the complement of a normalised kernel.
Kernel complement(Kernel k) {
    for (size_t i = 0; i < k.weights.rgba.size(); ++i) k.weights.rgba[i] = -k.weights.rgba[i];
    for (int c = 0; c < 4; ++c) k.weights.at(k.cx, k.cy)[c] += 1.0f;
    return k;
}

struct Builtin {
    const char* name;
    const char* syntax;
    const char* help;
    const char* example;
    std::function<Kernel(const std::string& spec, const std::string& args, int max_side)> make;
};

const std::vector<Builtin>& builtins() {
    static const std::vector<Builtin> table = {
        {"gaussian", "gaussian:SIGMA", "Gaussian blur, standard deviation SIGMA pixels (radius 4 SIGMA)", "gaussian:4",
         [](const std::string& spec, const std::string& a, int max_side) {
             return gaussian(number(spec, a, "SIGMA", 0.1, 2000), spec, max_side);
         }},
        {"box", "box:W[xH]", "box (mean) filter W pixels wide, H high (default H = W)", "box:9",
         [](const std::string& spec, const std::string& a, int max_side) {
             size_t x = a.find('x');
             int w = integer(spec, a.substr(0, x), "W", 1, max_side);
             int h = x == std::string::npos ? w : integer(spec, a.substr(x + 1), "H", 1, max_side);
             Kernel k;
             k.weights = Image(w, h, 1.0f / (float(w) * float(h)));
             k.cx = w / 2;
             k.cy = h / 2;
             return k;
         }},
        {"disk", "disk:R", "defocus: a uniform disk of radius R pixels (edge pixels by coverage)", "disk:6",
         [](const std::string& spec, const std::string& a, int max_side) {
             double radius = number(spec, a, "R", 0.5, 4000);
             int r = radius_for(radius, spec, max_side);
             Kernel k = centred(r, [&](int x, int y) {  // area of the pixel inside the disk, 8 x 8 samples
                 int inside = 0;
                 for (int j = 0; j < 8; ++j)
                     for (int i = 0; i < 8; ++i) inside += std::hypot(x + (i + 0.5) / 8 - 0.5, y + (j + 0.5) / 8 - 0.5) <= radius;
                 return inside / 64.0;
             });
             normalise(k, spec);
             return k;
         }},
        {"motion", "motion:LEN[,ANGLE]", "motion blur along a LEN-pixel line at ANGLE degrees (0 = horizontal, counter-clockwise)",
         "motion:21,30",
         [](const std::string& spec, const std::string& a, int max_side) {
             size_t comma = a.find(',');
             double len = number(spec, a.substr(0, comma), "LEN", 1, 8000);
             double angle = comma == std::string::npos ? 0 : number(spec, a.substr(comma + 1), "ANGLE", -360, 360);
             int r = radius_for(len / 2 + 1, spec, max_side);
             Kernel k = centred(r, [](int, int) { return 0.0; });
             // Splat points every 1/16 pixel along the segment bilinearly (y points down in images).
             double c = std::cos(angle * M_PI / 180), s = -std::sin(angle * M_PI / 180);
             int steps = static_cast<int>(std::ceil(len * 16));
             for (int i = 0; i <= steps; ++i) {
                 double t = len * (double(i) / steps - 0.5);
                 double px = r + t * c, py = r + t * s;
                 int x0 = static_cast<int>(std::floor(px)), y0 = static_cast<int>(std::floor(py));
                 double fx = px - x0, fy = py - y0;
                 for (int dy = 0; dy < 2; ++dy)
                     for (int dx = 0; dx < 2; ++dx) {
                         int x = x0 + dx, y = y0 + dy;
                         if (x < 0 || y < 0 || x > 2 * r || y > 2 * r) continue;
                         float w = static_cast<float>((dx ? fx : 1 - fx) * (dy ? fy : 1 - fy));
                         for (int ch = 0; ch < 4; ++ch) k.weights.at(x, y)[ch] += w;
                     }
             }
             normalise(k, spec);
             return k;
         }},
        {"laplacian", "laplacian", "edges: the 3x3 Laplacian [0 1 0; 1 -4 1; 0 1 0] (sums to 0; negative values clip)",
         "laplacian",
         [](const std::string&, const std::string&, int) {
             return centred(1, [](int x, int y) { return x == 0 && y == 0 ? -4.0 : (x == 0 || y == 0) ? 1.0 : 0.0; });
         }},
        {"sharpen", "sharpen:AMOUNT", "unsharp mask: delta + AMOUNT (delta - gaussian:1)", "sharpen:1.5",
         [](const std::string& spec, const std::string& a, int max_side) {
             double amount = number(spec, a, "AMOUNT", 0, 100);
             Kernel k = gaussian(1.0, spec, max_side);
             for (float& w : k.weights.rgba) w = static_cast<float>(-amount * w);
             for (int c = 0; c < 4; ++c) k.weights.at(k.cx, k.cy)[c] += static_cast<float>(1 + amount);
             return k;
         }},
        {"lowpass", "lowpass:CUTOFF", "ideal low-pass: keeps frequencies below CUTOFF x Nyquist (0 < CUTOFF <= 1)", "lowpass:0.1",
         [](const std::string& spec, const std::string& a, int max_side) {
             return lowpass(number(spec, a, "CUTOFF", 0.005, 1), max_side);
         }},
        {"highpass", "highpass:CUTOFF", "ideal high-pass: removes frequencies below CUTOFF x Nyquist", "highpass:0.05",
         [](const std::string& spec, const std::string& a, int max_side) {
             return complement(lowpass(number(spec, a, "CUTOFF", 0.005, 1), max_side));
         }},
        {"identity", "identity", "the unit impulse: output = input", "identity",
         [](const std::string&, const std::string&, int) { return centred(0, [](int, int) { return 1.0; }); }},
    };
    return table;
}

Kernel png_kernel(const std::string& spec, const KernelOptions& options) {
    PngLimits limits;
    limits.max_pixels = static_cast<long long>(options.max_side) * options.max_side;
    PngImage png = read_png(spec, limits);
    Kernel k;
    k.weights = std::move(png.image);
    k.name = spec;
    check_side(k, spec, options.max_side);
    k.cx = k.weights.width / 2;
    k.cy = k.weights.height / 2;
    // Channels: grey for all four; grey+alpha grey for colour, alpha for alpha; RGB per colour
    // channel with their mean for alpha; RGBA per channel.
    const PngFormat& f = png.format;
    for (size_t i = 0; i < k.weights.pixels(); ++i) {
        float* p = &k.weights.rgba[4 * i];
        if (!f.has_alpha()) p[3] = f.is_grey() ? p[0] : (p[0] + p[1] + p[2]) / 3.0f;
    }
    for (size_t i = 0; i < k.weights.pixels() && !k.per_channel; ++i) {
        const float* p = &k.weights.rgba[4 * i];
        k.per_channel = p[0] != p[1] || p[0] != p[2] || p[0] != p[3];
    }
    if (options.normalize) normalise(k, spec);
    return k;
}

}  // namespace

Kernel parse_kernel(const std::string& spec, const KernelOptions& options) {
    if (spec.empty()) throw Error("empty kernel spec");
    if (ends_with(spec, ".png", true)) return png_kernel(spec, options);
    size_t colon = spec.find(':');
    std::string name = spec.substr(0, colon), args = colon == std::string::npos ? "" : spec.substr(colon + 1);
    for (const Builtin& b : builtins()) {
        if (name != b.name) continue;
        bool wants_args = std::string(b.syntax).find(':') != std::string::npos;
        if (wants_args && args.empty()) bad(spec, std::string("expected ") + b.syntax);
        if (!wants_args && colon != std::string::npos) bad(spec, std::string(b.name) + " takes no parameters");
        Kernel k = b.make(spec, args, options.max_side);
        k.name = spec;
        check_side(k, spec, options.max_side);
        return k;
    }
    throw Error("unknown kernel '" + spec + "' (a .png file or one of: gaussian, box, disk, motion, laplacian, sharpen, "
                "lowpass, highpass, identity)");
}

std::string kernel_help() {
    std::string out;
    for (const Builtin& b : builtins()) {
        char line[256];
        std::snprintf(line, sizeof line, "  %-20s %s\n", b.syntax, b.help);
        out += line;
    }
    out += "  FILE.png             impulse response from a PNG, centred at (floor(w/2), floor(h/2)); grey: all\n"
           "                       channels, RGB(A): one per channel; each channel scaled to sum 1\n";
    return out;
}

const char* const* builtin_kernel_examples() {
    static std::vector<const char*> examples;
    if (examples.empty()) {
        for (const Builtin& b : builtins()) examples.push_back(b.example);
        examples.push_back(nullptr);
    }
    return examples.data();
}

}  // namespace gpufft
