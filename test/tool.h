// Running the project's command-line tools from tests, in a scratch directory.
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace test {

/// The directory holding the tools: the parent of this test binary's directory (bin/).
inline std::string bin_dir() {
    char buf[4096];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    std::string self(buf, n > 0 ? static_cast<size_t>(n) : 0);
    std::string dir = self.substr(0, self.find_last_of('/'));
    return dir.substr(0, dir.find_last_of('/'));
}

struct Result {
    int status = -1;       ///< exit status, or 128 + signal
    std::string err, out;  ///< standard error and output
};

/// Runs a shell command line (tools named by bin_dir()), capturing both streams.
inline Result run(const std::string& command) {
    char tmpl[] = "/tmp/gpufft-run-XXXXXX";
    std::string dir = mkdtemp(tmpl);
    std::string cmd = "(" + command + ") >" + dir + "/out 2>" + dir + "/err";
    int raw = std::system(cmd.c_str());
    Result r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + (WIFSIGNALED(raw) ? WTERMSIG(raw) : 0);
    auto slurp = [](const std::string& path) {
        std::ifstream in(path);
        std::stringstream ss;
        ss << in.rdbuf();
        return ss.str();
    };
    r.out = slurp(dir + "/out");
    r.err = slurp(dir + "/err");
    std::system(("rm -rf " + dir).c_str());
    return r;
}

/// A scratch directory removed with the object.
class TempDir {
public:
    TempDir() {
        char tmpl[] = "/tmp/gpufft-test-XXXXXX";
        path_ = mkdtemp(tmpl);
    }
    ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
    const std::string& path() const { return path_; }
    std::string operator/(const std::string& name) const { return path_ + "/" + name; }
    /// Names of the entries, hidden ones included, sorted.
    std::vector<std::string> list() const { return list_of(path_); }
    /// The same for any directory.
    static std::vector<std::string> list_of(const std::string& path) {
        Result r = run("ls -A '" + path + "' | sort");
        std::vector<std::string> names;
        std::istringstream in(r.out);
        for (std::string line; std::getline(in, line);) names.push_back(line);
        return names;
    }

private:
    std::string path_;
};

inline std::string read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

inline int count_lines(const std::string& s) {
    int n = 0;
    for (char c : s) n += c == '\n';
    return n;
}

/// This process's peak resident memory so far, KiB.
inline long peak_rss_kib() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss;
}

}  // namespace test
