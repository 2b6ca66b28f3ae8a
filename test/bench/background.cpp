// background: what a renderer sees of a TextureFilter's first compile, made at once or in the
// background (gpufft::Compile). One filter in a fresh process (run it with the program caches off
// for a cold compile: GPUFFT_PROGRAM_CACHE=off, and NVIDIA's __GL_SHADER_DISK_CACHE=0); prints the
// constructor's time, then, in the background, the frames of FRAME_MS it drew (a clear and a
// finish each) until ready() said true and the longest ready() calls, the first apply()'s
// time (glFinish after it) and the filter's destruction. Usage:
//   background now|background [WxH] [KERNEL] [FRAME_MS] [BACKEND]     defaults: 1920x1080 gaussian:8 16 auto
#include "app/cli.h"
#include "base/clock.h"
#include "base/parse.h"
#include "gl/context.h"
#include "gl/gl.h"
#include "gl/program.h"

#include <gpufft/gpufft.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <cstdio>
#include <string>
#include <thread>

using namespace gpufft;

namespace {

int run(int argc, char** argv) {
    if (argc < 2 || (std::string(argv[1]) != "now" && std::string(argv[1]) != "background"))
        throw UsageError("usage: background now|background [WxH] [KERNEL] [FRAME_MS] [BACKEND]");
    const bool background = std::string(argv[1]) == "background";
    int w = 0, h = 0;
    parse_size(argc > 2 ? argv[2] : "1920x1080", "WxH", w, h);
    const std::string kernel = argc > 3 ? argv[3] : "gaussian:8";
    const double frame_ms = argc > 4 ? parse_double(argv[4], "FRAME_MS", 0, 1000) : 16.0;
    FftOptions options;
    if (argc > 5) options.backend = parse_backend(argv[5]);
    HeadlessContext context;
    GLuint textures[2];
    glGenTextures(2, textures);
    for (GLuint t : textures) {
        glBindTexture(GL_TEXTURE_RECTANGLE, t);
        glTexImage2D(GL_TEXTURE_RECTANGLE, 0, GL_RGBA32F, w, h, 0, GL_RGBA, GL_FLOAT, nullptr);
    }
    glBindTexture(GL_TEXTURE_RECTANGLE, 0);

    const auto start = Clock::now();
    std::optional<TextureFilter> made;
    made.emplace(w, h, kernel, options, Boundary::Wrap, background ? Compile::Background : Compile::Now);
    TextureFilter& filter = *made;
    const double construct = seconds_since(start);
    int frames = 0;
    double longest_waiting = 0, last = 0, last_compiling = 0;   // ready() calls: false, the true one
    while (true) {
        const auto asked = Clock::now();
        const double compiled = ProgramCache::seconds();
        const bool ready = filter.ready();
        if (ready) {
            last = seconds_since(asked);
            last_compiling = ProgramCache::seconds() - compiled;
            break;
        }
        longest_waiting = std::max(longest_waiting, seconds_since(asked));
        const auto frame = Clock::now();
        glClearColor(0.1f, 0.2f, 0.3f, 1.0f);
        glClear(GL_COLOR_BUFFER_BIT);
        glFinish();
        ++frames;
        const double left = frame_ms * 1e-3 - seconds_since(frame);
        if (left > 0) std::this_thread::sleep_for(std::chrono::duration<double>(left));
    }
    const double to_ready = seconds_since(start);
    const auto applied = Clock::now();
    filter.apply({textures[0], kTextureRectangle}, {textures[1], kTextureRectangle});
    glFinish();
    const double first_apply = seconds_since(applied);
    std::printf("%s %dx%d %s: constructor %.3f s, %d frames drawn until ready (ready() false: at most %.1f ms; true: %.1f ms, %.1f of "
                "them taking and compiling programs), ready after %.3f s, first apply %.1f ms, %s backend\n",
                background ? "background" : "now", w, h, kernel.c_str(), construct, frames, longest_waiting * 1e3, last * 1e3,
                last_compiling * 1e3, to_ready, first_apply * 1e3, filter.backend().c_str());
    glDeleteTextures(2, textures);
    const auto gone = Clock::now();
    made.reset();
    glFinish();
    std::printf("destroying the filter: %.1f ms\n", seconds_since(gone) * 1e3);
    return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
    return run_tool("background", [&] { return run(argc, argv); });
}
