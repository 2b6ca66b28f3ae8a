// The fuzzers' inputs on every `make test` (with g++, and under ASan/UBSan with SANITIZE=1): the
// seed corpus (test/fuzz/corpus.h) is read or refused as each file says it should be, and every
// input kept in test/fuzz/regressions/ (what fuzzing found, see README "Reliability") replays
// through the fuzz targets without a crash, a sanitizer report or a malformed message.
#include "check.h"
#include "fuzz/corpus.h"
#include "fuzz/targets.h"
#include "tool.h"

#include <dirent.h>

#include <string>
#include <vector>

namespace {

/// The directory of this source file's tests (the suite runs from the repository root).
std::string regressions_dir() {
    std::string self = __FILE__;
    return self.substr(0, self.find_last_of('/') + 1) + "fuzz/regressions";
}

std::vector<std::string> files_in(const std::string& dir) {
    std::vector<std::string> out;
    if (DIR* d = opendir(dir.c_str())) {
        while (dirent* e = readdir(d))
            if (e->d_name[0] != '.') out.push_back(dir + "/" + e->d_name);
        closedir(d);
    }
    return out;
}

bool broken(const std::string& name) {
    for (const char* mark : {"-cut", "-crc", "-zlib", "huge", "zero-width", "bad-depth", "signature-only", "not-a-png"})
        if (name.find(mark) != std::string::npos) return true;
    return false;
}

}  // namespace

TEST(png_seeds_are_read_or_refused_in_one_line) {
    auto seeds = fuzz::png_seeds();
    EXPECT(seeds.size() > 60, seeds.size(), " seeds");
    for (const auto& [name, bytes] : seeds) {
        fuzz::png(bytes.data(), bytes.size());  // aborts on a finding
        std::string error;
        try {
            gpufft::PngImage p = gpufft::read_png_memory(bytes.data(), bytes.size(), name);
            EXPECT(p.image.width == 7 && p.image.height == 5, name, ": read as ", p.image.width, "x", p.image.height);
        } catch (const gpufft::Error& e) {
            error = e.what();
        }
        if (broken(name))
            EXPECT(error.rfind(name + ": ", 0) == 0 && error.find('\n') == std::string::npos, name, ": '", error, "'");
        else
            EXPECT(error.empty(), name, ": ", error);
    }
}

TEST(kernel_seeds_are_parsed_or_refused_in_one_line) {
    for (const auto& [name, bytes] : fuzz::kernel_seeds()) {
        fuzz::kernel_spec(bytes.data(), bytes.size());
        std::string spec(bytes.begin(), bytes.end());
        const bool valid = spec.find(':') == std::string::npos || (spec.back() != ':' && spec.find("0x0") == std::string::npos &&
                                                                  spec.find('-') == std::string::npos &&
                                                                  spec.find("nan") == std::string::npos &&
                                                                  spec.find("inf") == std::string::npos);
        std::string error;
        try {
            gpufft::parse_kernel(spec);
        } catch (const gpufft::Error& e) {
            error = e.what();
        }
        if (valid) EXPECT(error.empty(), spec, ": ", error);
        else EXPECT(!error.empty() && error.find('\n') == std::string::npos, spec, ": '", error, "'");
    }
}

TEST(kept_fuzz_inputs_replay_clean) {
    const std::string dir = regressions_dir();
    std::vector<std::string> png = files_in(dir + "/png"), kernel = files_in(dir + "/kernel");
    EXPECT(!png.empty() && !kernel.empty(), "no inputs under ", dir, " (run the suite from the repository root)");
    for (const std::string& f : png) {
        std::string b = test::read_bytes(f);
        fuzz::png(reinterpret_cast<const uint8_t*>(b.data()), b.size());
    }
    for (const std::string& f : kernel) {
        std::string b = test::read_bytes(f);
        fuzz::kernel_spec(reinterpret_cast<const uint8_t*>(b.data()), b.size());
    }
}
