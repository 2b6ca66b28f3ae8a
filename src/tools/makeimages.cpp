// makeimages: writes the bundled images (images/): test patterns, a rendered teapot frame, a
// texture from random phases, and kernels. Everything is generated; `make images` reruns it.
#include "app/cli.h"
#include "app/options.h"
#include "image/files.h"
#include "image/png_io.h"
#include "image/spectral.h"
#include "scene/frame.h"

#include <cmath>
#include <cstdio>
#include <functional>
#include <string>

using namespace gpufft;

namespace {

const char* kTool = "makeimages";

Image pattern(int w, int h, const std::function<void(int, int, float*)>& f) {
    Image img(w, h, 1.0f);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) f(x, y, img.at(x, y));
    return img;
}

void save(const std::string& path, const Image& img, int color_type, int depth, bool interlaced = false) {
    PngFormat f;
    f.color_type = color_type;
    f.bit_depth = depth;
    f.interlaced = interlaced;
    write_png(path, img, f, true);
    std::printf("  %s  %dx%d %s\n", path.c_str(), img.width, img.height, f.describe().c_str());
}

void grey(float* p, double v) { p[0] = p[1] = p[2] = static_cast<float>(v); }

const char* const kUsage = "Usage: makeimages [DIRECTORY]   (default images): writes the bundled images and kernels/ there\n";

}  // namespace

int main(int argc, char** argv) {
    // One optional operand, the directory, and -h/--help and --version parsed as every tool parses
    // its options (a directory named "--help" is never what was meant).
    std::string dir = "images";
    const int parsed = run_tool(kTool, [&] {
        const std::vector<std::string> operands =
            parse_command_line(argc, argv, help_and_version_specs(kTool, [] { std::printf("%s", kUsage); }));
        if (operands.size() > 1) throw UsageError("one directory at most, not also " + operands[1]);
        if (!operands.empty()) dir = operands.front();
        return kExitOk;
    });
    if (parsed != kExitOk) return parsed;
    try {
        make_directories(dir + "/kernels");
        std::printf("%s: writing %s/\n", kTool, dir.c_str());

        // A zone plate: cos(pi r^2 / N), the local frequency rising to Nyquist at the edge. Low-pass
        // filters cut its rings off at a radius; the spectrum shows the chirp.
        save(dir + "/zoneplate.png", pattern(512, 512, [](int x, int y, float* p) {
                 double dx = x - 256 + 0.5, dy = y - 256 + 0.5;
                 grey(p, 0.5 + 0.5 * std::cos(M_PI * (dx * dx + dy * dy) / 512.0));
             }), 0, 16);

        // A Siemens star: 48 spokes; blur and defocus eat its centre.
        save(dir + "/star.png", pattern(512, 512, [](int x, int y, float* p) {
                 double a = std::atan2(y - 255.5, x - 255.5), r = std::hypot(x - 255.5, y - 255.5);
                 double s = std::cos(24 * a) > 0 ? 1.0 : 0.0;
                 grey(p, r > 250 ? 0.5 : s);
             }), 0, 8);

        // Colour bars over a fine-line ramp, 640 x 480: not a power of two.
        save(dir + "/bars.png", pattern(640, 480, [](int x, int y, float* p) {
                 static const float bars[7][3] = {{.75f, .75f, .75f}, {.75f, .75f, 0}, {0, .75f, .75f}, {0, .75f, 0},
                                                  {.75f, 0, .75f}, {.75f, 0, 0}, {0, 0, .75f}};
                 if (y < 320) {
                     const float* b = bars[x * 7 / 640];
                     p[0] = b[0], p[1] = b[1], p[2] = b[2];
                 } else if (y < 400) {
                     grey(p, ((x / (1 + x / 160)) % 2) ? 1.0 : 0.0);  // lines 1, 2, 3, 4 pixels wide
                 } else {
                     grey(p, x / 639.0);
                 }
             }), 2, 8);

        // Transparency: a checkerboard with a soft round hole, RGBA, 300 x 200, interlaced.
        save(dir + "/checker-alpha.png", pattern(300, 200, [](int x, int y, float* p) {
                 bool dark = ((x / 20) + (y / 20)) % 2;
                 p[0] = dark ? 0.1f : 0.9f, p[1] = dark ? 0.3f : 0.7f, p[2] = dark ? 0.8f : 0.2f;
                 double r = std::hypot(x - 150.0, y - 100.0);
                 p[3] = static_cast<float>(std::min(1.0, std::max(0.0, (r - 40) / 30)));
             }), 6, 8, true);

        // Small and odd: 37 x 91, grey 4-bit.
        save(dir + "/odd-37x91.png", pattern(37, 91, [](int x, int y, float* p) { grey(p, ((x * y) % 16) / 15.0); }), 0, 4);

        // The paper's scene, unfiltered, and a texture from random phases (Figure 5): both on the GPU.
        HeadlessContext context;
        require_fragment_chain_support();
        ProgramCache programs;
        {
            TeapotScene scene(programs);
            TeapotFrame frame(programs, scene, 512, 512);
            const Texture& shown = frame.render(Camera{}, SceneLook{}, false, false);
            RenderTarget view(512, 512);
            view.bind_for_drawing();
            FrameDisplay(programs).draw(shown, 512, 512, Tonemap::Aces);
            std::vector<float> rows = view.download();
            Image img(512, 512);
            for (int y = 0; y < 512; ++y)
                std::copy(&rows[static_cast<size_t>(511 - y) * 512 * 4], &rows[static_cast<size_t>(512 - y) * 512 * 4], img.at(0, y));
            save(dir + "/teapot.png", img, 2, 8);
        }
        SynthSpec clouds;
        clouds.power = 1.8;
        clouds.seed = 7;
        clouds.colour = true;
        save(dir + "/clouds.png", synthesize(programs, clouds), 2, 8);

        // Kernels: a hexagonal aperture (bokeh), a four-point star (streaks on highlights), and a
        // per-channel kernel that shifts red and blue apart (chromatic aberration).
        save(dir + "/kernels/hexagon.png", pattern(31, 31, [](int x, int y, float* p) {
                 double dx = std::abs(x - 15.0), dy = std::abs(y - 15.0);
                 grey(p, (dy <= 13 && dx * 0.866 + dy * 0.5 <= 13 * 0.866) ? 1.0 : 0.0);
             }), 0, 8);
        save(dir + "/kernels/star-streak.png", pattern(61, 61, [](int x, int y, float* p) {
                 double dx = std::abs(x - 30.0), dy = std::abs(y - 30.0);
                 double v = std::exp(-dx / 6) * std::exp(-dy * dy * 2) + std::exp(-dy / 6) * std::exp(-dx * dx * 2);
                 grey(p, std::min(1.0, v + (dx + dy < 1 ? 1.0 : 0.0)));
             }), 0, 16);
        save(dir + "/kernels/chromatic.png", pattern(9, 9, [](int x, int y, float* p) {
                 p[0] = (x == 2 && y == 4) ? 1.0f : 0.0f;
                 p[1] = (x == 4 && y == 4) ? 1.0f : 0.0f;
                 p[2] = (x == 6 && y == 4) ? 1.0f : 0.0f;
             }), 2, 8);
        return kExitOk;
    } catch (const std::exception& e) {
        return report(kTool, e.what(), kExitFailed);
    }
}
