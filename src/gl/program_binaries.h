// Linked programs kept on disk as the driver's own binaries (GL 4.1, ARB_get_program_binary), so
// that a process that has run a program before links it from its binary instead of compiling it.
// The compute FFT's programs are specialised per size and unrolled: NVIDIA's own shader cache
// still took 0.23-0.25 s to give back the ten of a 1920x1080 filter on the H200, about half of
// fftfilter's run on one such file; from these binaries 0.07-0.10 s (src/README.md, "Programs from
// their binaries").
//
// Where: $GPUFFT_PROGRAM_CACHE if set ("off" or empty: no cache), else $XDG_CACHE_HOME/gpufft,
// else $HOME/.cache/gpufft. A binary is named by a hash of everything its program is made of (the
// GL's vendor, renderer and version strings, each stage's source text with its defines) and holds
// a second hash of the same and the binary's CRC-32, both checked before the driver sees it; the driver refuses binaries of
// another driver version itself (the program then does not link and is compiled from source). The
// cache is a convenience: a directory that cannot be made or written, or a file that cannot be
// read, changes nothing but the time. It is kept under max_bytes (256 MiB), the least recently
// linked binaries removed first.
#pragma once

#include "gl/gl.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace gpufft {

/// Each stage of a program and its source strings, in order (what glShaderSource is given).
using StageSources = std::vector<std::pair<GLenum, std::vector<std::string>>>;

class ProgramBinaries {
public:
    /// The cache of the current context, or one that does nothing (no directory, or a GL that
    /// offers no binary formats).
    static ProgramBinaries current();
    bool on() const { return !directory_.empty(); }
    const std::string& directory() const { return directory_; }

    /// What names a program's binary: hashes of the GL's strings and of `sources`.
    struct Key {
        uint64_t name = 0, check = 0;
    };
    static Key key_of(const StageSources& sources);
    /// Links `program` from the binary of `key`, if there is one the driver takes.
    bool load(GLuint program, const Key& key) const;
    /// Before linking a program from source that store() will be given.
    static void retrievable(GLuint program);
    /// Keeps the binary of `program` (linked, retrievable()) as `key`'s.
    void store(GLuint program, const Key& key) const;

    /// Binaries given to the driver, programs linked from them, and binaries written, by this
    /// process (for tests and -v).
    static long offered();
    static long loaded();
    static long stored();
    /// The directory's binaries are kept under this many bytes (default 256 MiB: a grid size's
    /// programs take 1-2 MB): past it, after a store, the least recently used go until it holds
    /// three quarters. Tests set it.
    static std::uintmax_t max_bytes;

private:
    std::string directory_;
    std::string path_of(const Key& k) const;
    void prune() const;
};

}  // namespace gpufft
