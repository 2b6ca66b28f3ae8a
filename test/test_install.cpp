// make install / uninstall and the library from outside the tree (issue 18): the example
// test/example/bloom.cpp is built in a scratch directory against the installed copy with
// pkg-config alone, run headless, and its result checked against the installed fftfilter.
#include "check.h"
#include "tool.h"

#include "image/png_io.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <sstream>

using namespace gpufft;

static const check::Serial serial("both tests run make in the repository");

namespace {

/// The repository: the first directory above the test binary with a Makefile and src/gpufft.
std::string repo_root() {
    std::string dir = test::bin_dir();
    while (!dir.empty()) {
        struct stat st;
        if (stat((dir + "/Makefile").c_str(), &st) == 0 && stat((dir + "/src/gpufft/gpufft.h").c_str(), &st) == 0) return dir;
        dir = dir.substr(0, dir.find_last_of('/'));
    }
    return ".";
}

/// make in the repository, in the plain build whatever build runs this test (make passes
/// SANITIZE=1 and the like to sub-makes through MAKEFLAGS).
test::Result make(const std::string& args) {
    return test::run("env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u SANITIZE make -s -C '" + repo_root() + "' " + args);
}

bool exists(const std::string& path) {
    struct stat st;
    return lstat(path.c_str(), &st) == 0;
}

/// Every file (not directory) under `dir`, relative, sorted.
std::vector<std::string> files_under(const std::string& dir) {
    test::Result r = test::run("cd '" + dir + "' && find . ! -type d | sort");
    std::vector<std::string> out;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

const char* const kInstalled[] = {"bin/fftfilter", "bin/teapot", "bin/fftcompare", "lib/libgpufft.a", "lib/libgpufft.so." GPUFFT_VERSION,
                                  "lib/libgpufft.so.1", "lib/libgpufft.so", "include/gpufft/gpufft.h", "include/gpufft/error.h",
                                  "lib/pkgconfig/gpufft.pc", "share/man/man1/fftfilter.1", "share/man/man1/teapot.1",
                                  "share/man/man1/fftcompare.1"};

}  // namespace

TEST(example_builds_out_of_tree_and_matches_fftfilter) {
    test::TempDir tmp;
    const std::string prefix = tmp / "prefix";
    test::Result r = make("install PREFIX='" + prefix + "'");
    EXPECT(r.status == 0, "make install: ", r.err);
    for (const char* f : kInstalled) EXPECT(exists(prefix + "/" + f), "installed: ", f);
    const std::string man = test::read_bytes(prefix + "/share/man/man1/fftfilter.1");
    EXPECT(man.find(".TH FFTFILTER \"1\"") != std::string::npos && man.find("kernel") != std::string::npos, "the man page has a title and the options");

    // Out of tree: the example alone in a scratch directory, flags from pkg-config only, the
    // issue's command as written (Debian 12's g++ defaults to C++17, which the header needs).
    const std::string env = "PKG_CONFIG_PATH='" + prefix + "/lib/pkgconfig' ";
    r = test::run(env + "pkg-config --modversion gpufft");
    EXPECT(r.status == 0 && r.out == std::string(GPUFFT_VERSION) + "\n", "pkg-config --modversion: ", r.out, r.err);
    r = test::run("mkdir '" + (tmp / "src") + "' && cp '" + repo_root() + "/test/example/bloom.cpp' '" + (tmp / "src") + "/'");
    r = test::run("cd '" + (tmp / "src") + "' && " + env + "c++ bloom.cpp $(" + env + "pkg-config --cflags --libs gpufft) -o bloom");
    EXPECT(r.status == 0, "building the example: ", r.err);
    // Linked to the shared library (its soname), found in the prefix.
    r = test::run("LD_LIBRARY_PATH='" + prefix + "/lib' ldd '" + (tmp / "src/bloom") + "'");
    EXPECT(r.out.find("libgpufft.so.1 => " + prefix + "/lib/libgpufft.so.1") != std::string::npos, "ldd: ", r.out);
    // The kernel is asymmetric, so a row order or orientation slip shows.
    r = test::run("cd '" + (tmp / "src") + "' && LD_LIBRARY_PATH='" + prefix + "/lib' ./bloom . motion:15,30");
    EXPECT(r.status == 0 && r.out.find("bloom: 320x240") == 0, "running the example: ", r.out, r.err);
    r = test::run("'" + prefix + "/bin/fftfilter' -q -b wrap -k motion:15,30 -o '" + (tmp / "src/fftfilter.png") + "' '" + (tmp / "src/frame.png") + "'");
    EXPECT(r.status == 0, "fftfilter: ", r.err);
    if (!exists(tmp / "src/bloom.png") || !exists(tmp / "src/fftfilter.png")) return;
    PngSamples a = read_png_samples(tmp / "src/bloom.png"), b = read_png_samples(tmp / "src/fftfilter.png");
    EXPECT(a.samples.data.size() == b.samples.data.size() && a.format.bit_depth == 16 && b.format.bit_depth == 16, "both 16-bit, same size");
    if (a.samples.data.size() != b.samples.data.size()) return;
    // Both filter in float, the GL chain and FFTW, each within ~1e-6 of the exact result: the 16-bit
    // samples agree to one step (two results straddling a rounding boundary).
    long worst = 0, differing = 0;
    const size_t n = a.samples.data.size() / 2;
    for (size_t i = 0; i < n; ++i) {
        uint16_t x, y;  // 16-bit samples in native order
        std::memcpy(&x, &a.samples.data[2 * i], 2);
        std::memcpy(&y, &b.samples.data[2 * i], 2);
        const long d = std::labs(long(x) - long(y));
        worst = std::max(worst, d);
        differing += d != 0;
    }
    EXPECT(worst <= 1, "example against fftfilter: largest difference ", worst, " steps of 1/65535");
    EXPECT(differing < static_cast<long>(n / 100), differing, " of ", n, " samples differ");
    // The filter did something: the output is not the frame.
    PngSamples frame = read_png_samples(tmp / "src/frame.png");
    EXPECT(frame.samples.data != a.samples.data, "the bloom differs from the frame");
}

TEST(uninstall_removes_exactly_what_was_installed) {
    test::TempDir tmp;
    // A file of someone else's already there, and DESTDIR staging (as a package build does).
    const std::string stage = tmp / "stage", prefix = "/usr/local/gpufft-test";
    test::run("mkdir -p '" + stage + prefix + "/bin' && echo mine > '" + stage + prefix + "/bin/other'");
    test::Result r = make("install DESTDIR='" + stage + "' PREFIX=" + prefix);
    EXPECT(r.status == 0, "make install: ", r.err);
    EXPECT(!exists(prefix), "DESTDIR: nothing written outside it");
    std::vector<std::string> files = files_under(stage + prefix);
    EXPECT(files.size() == std::size(kInstalled) + 1, files.size(), " files after install");
    const std::string pc = test::read_bytes(stage + prefix + "/lib/pkgconfig/gpufft.pc");
    EXPECT(pc.find("prefix=" + prefix + "\n") == 0, "gpufft.pc names the prefix, not the staging directory: ", pc.substr(0, 60));
    r = make("uninstall DESTDIR='" + stage + "' PREFIX=" + prefix);
    EXPECT(r.status == 0, "make uninstall: ", r.err);
    files = files_under(stage + prefix);
    EXPECT(files == std::vector<std::string>{"./bin/other"}, "left after uninstall: ", files.size(), " files, first ",
           files.empty() ? "" : files[0]);
}
