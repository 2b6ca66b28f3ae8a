#include "gl/program_binaries.h"

#include <libdeflate.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace gpufft {

namespace {

std::atomic<long> offered_count{0}, loaded_count{0}, stored_count{0}, temp_count{0};

// The file: this magic, the check hash, the binary's format, length and CRC-32, then the binary
// (a binary damaged on disk is never given to a driver, which may not check it).
constexpr char kMagic[8] = {'g', 'p', 'u', 'f', 'f', 't', 'p', '2'};
constexpr size_t kHeader = sizeof kMagic + 8 + 4 + 4 + 4;

// The cache's directory ("" when off), made if missing; read from the environment each time (a
// program compile's worth of work is far more).
std::string cache_directory() {
    std::string d;
    if (const char* set = std::getenv("GPUFFT_PROGRAM_CACHE")) {
        d = set;
        if (d == "off") d.clear();
    } else if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
        d = std::string(xdg) + "/gpufft";
    } else if (const char* home = std::getenv("HOME"); home && *home) {
        d = std::string(home) + "/.cache/gpufft";
    }
    std::error_code e;
    if (!d.empty()) std::filesystem::create_directories(d, e);
    return e ? std::string() : d;
}

// FNV-1a, 64 bits, from `basis`; each string ends with a byte no text holds, so that ("ab", "c")
// and ("a", "bc") differ.
struct Fnv {
    uint64_t h;
    void add(const void* data, size_t n) {
        const auto* p = static_cast<const unsigned char*>(data);
        for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
    }
    void add(const std::string& text) {
        add(text.data(), text.size());
        h = (h ^ 0xffu) * 1099511628211ull;
    }
};

std::string gl_string(GLenum name) {
    const GLubyte* s = glGetString(name);
    return s ? reinterpret_cast<const char*>(s) : "";
}

}  // namespace

ProgramBinaries ProgramBinaries::current() {
    ProgramBinaries b;
    GLint formats = 0;
    if (GLEW_VERSION_4_1 || GLEW_ARB_get_program_binary) glGetIntegerv(GL_NUM_PROGRAM_BINARY_FORMATS, &formats);
    if (formats > 0) b.directory_ = cache_directory();
    return b;
}

ProgramBinaries::Key ProgramBinaries::key_of(const StageSources& sources) {
    Fnv name{14695981039346656037ull}, check{0x6a09e667f3bcc909ull};
    for (Fnv* f : {&name, &check}) {
        f->add(std::string("gpufft program binaries 1"));
        for (GLenum e : {GL_VENDOR, GL_RENDERER, GL_VERSION, GL_SHADING_LANGUAGE_VERSION}) f->add(gl_string(e));
        for (const auto& [stage, parts] : sources) {
            f->add(std::to_string(stage));
            for (const std::string& p : parts) f->add(p);
        }
    }
    return {name.h, check.h};
}

std::string ProgramBinaries::path_of(const Key& k) const {
    char name[24];
    std::snprintf(name, sizeof name, "%016llx", static_cast<unsigned long long>(k.name));
    return directory_ + "/" + name + ".bin";
}

bool ProgramBinaries::load(GLuint program, const Key& k) const {
    if (!on()) return false;
    const std::string path = path_of(k);
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    const std::vector<char> file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (file.size() <= kHeader || std::memcmp(file.data(), kMagic, sizeof kMagic) != 0) return false;
    uint64_t check = 0;
    uint32_t format = 0, length = 0, crc = 0;
    std::memcpy(&check, file.data() + 8, 8);
    std::memcpy(&format, file.data() + 16, 4);
    std::memcpy(&length, file.data() + 20, 4);
    std::memcpy(&crc, file.data() + 24, 4);
    if (check != k.check || length != file.size() - kHeader || libdeflate_crc32(0, file.data() + kHeader, length) != crc)
        return false;
    while (glGetError() != GL_NO_ERROR) {}
    ++offered_count;
    glProgramBinary(program, format, file.data() + kHeader, static_cast<GLsizei>(length));
    GLint ok = 0;
    glGetProgramiv(program, GL_LINK_STATUS, &ok);
    while (glGetError() != GL_NO_ERROR) {}  // a format the driver no longer takes: compiled instead
    if (!ok) return false;
    ++loaded_count;
    std::error_code e;  // used now: the last to go when the directory is pruned
    std::filesystem::last_write_time(path, std::filesystem::file_time_type::clock::now(), e);
    return true;
}

void ProgramBinaries::retrievable(GLuint program) { glProgramParameteri(program, GL_PROGRAM_BINARY_RETRIEVABLE_HINT, GL_TRUE); }

void ProgramBinaries::store(GLuint program, const Key& k) const {
    if (!on()) return;
    GLint length = 0;
    glGetProgramiv(program, GL_PROGRAM_BINARY_LENGTH, &length);
    std::vector<char> file(kHeader + static_cast<size_t>(std::max(length, 0)));
    GLsizei got = 0;
    GLenum format = 0;
    if (length > 0) glGetProgramBinary(program, length, &got, &format, file.data() + kHeader);
    while (glGetError() != GL_NO_ERROR) {}
    if (got <= 0) return;
    const uint32_t format32 = format, length32 = static_cast<uint32_t>(got);
    const uint32_t crc = libdeflate_crc32(0, file.data() + kHeader, length32);
    std::memcpy(file.data(), kMagic, sizeof kMagic);
    std::memcpy(file.data() + 8, &k.check, 8);
    std::memcpy(file.data() + 16, &format32, 4);
    std::memcpy(file.data() + 20, &length32, 4);
    std::memcpy(file.data() + 24, &crc, 4);
    // Whole or not at all, whichever process writes it last: a file of this process's own, renamed.
    const std::string path = path_of(k);
    const std::string temp = path + "." + std::to_string(getpid()) + "." + std::to_string(temp_count++) + ".tmp";
    {
        std::ofstream out(temp, std::ios::binary);
        out.write(file.data(), static_cast<std::streamsize>(kHeader + length32));
        if (!out.flush()) {
            out.close();
            std::remove(temp.c_str());
            return;
        }
    }
    if (std::rename(temp.c_str(), path.c_str()) != 0) {
        std::remove(temp.c_str());
        return;
    }
    ++stored_count;
    prune();
}

std::uintmax_t ProgramBinaries::max_bytes = std::uintmax_t(256) << 20;

void ProgramBinaries::prune() const {
    namespace fs = std::filesystem;
    struct Entry {
        fs::file_time_type used;
        std::uintmax_t bytes;
        fs::path path;
    };
    std::vector<Entry> entries;
    std::uintmax_t total = 0;
    std::error_code e;
    for (fs::directory_iterator it(directory_, e), end; !e && it != end; it.increment(e)) {
        if (it->path().extension() != ".bin") continue;
        std::error_code f;
        const std::uintmax_t bytes = it->file_size(f);
        const fs::file_time_type used = it->last_write_time(f);
        if (f) continue;
        entries.push_back({used, bytes, it->path()});
        total += bytes;
    }
    if (total <= max_bytes) return;
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
    for (const Entry& x : entries) {
        if (total <= max_bytes / 4 * 3) break;
        std::error_code f;
        if (fs::remove(x.path, f)) total -= x.bytes;
    }
}

long ProgramBinaries::offered() { return offered_count.load(); }
long ProgramBinaries::loaded() { return loaded_count.load(); }
long ProgramBinaries::stored() { return stored_count.load(); }

}  // namespace gpufft
