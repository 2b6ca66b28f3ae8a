// Reliability (issue "Reliability: fuzzed inputs, sanitizers, long runs, no leaks"): long runs leave
// resident memory and GL objects flat; a GPU allocation failing anywhere in a batch gives one line
// naming the file, no partial output, and the rest of the batch done; a batch killed with SIGKILL
// leaves every output under its final name whole, one stopped by SIGINT or SIGTERM no temporary
// file either; no usable GL is one line and exit 3.
#include "app/cli.h"
#include "check.h"
#include "image/files.h"
#include "image/png_io.h"
#include "png_fixture.h"
#include "tool.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>

#include <algorithm>
#include <chrono>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace gpufft;

namespace {

// Resident growth allowed over a long run. Under AddressSanitizer freed memory sits in its
// quarantine (256 MiB by default) before reuse, so resident memory grows by design there; leaks
// are LeakSanitizer's to find in that build.
#if defined(__SANITIZE_ADDRESS__)
constexpr double kSlackMiB = 320;
#else
constexpr double kSlackMiB = 0;
#endif

std::string fftfilter() { return test::bin_dir() + "/fftfilter"; }
std::string teapot() { return test::bin_dir() + "/teapot"; }

struct Use {
    double first_mib = -1, last_mib = -1;
    int first_objects = -1, last_objects = -1;
};

/// Parses "TOOL: resources after X: A MiB resident, B GL objects; after Y: C MiB resident, D GL objects".
Use parse_resources(const std::string& err) {
    std::smatch m;
    Use u;
    static const std::regex line(R"(resources after [^:]+: ([0-9.]+) MiB resident, ([0-9]+) GL objects; after [^:]+: ([0-9.]+) MiB resident, ([0-9]+) GL objects)");
    if (std::regex_search(err, m, line)) {
        u.first_mib = std::stod(m[1]);
        u.first_objects = std::stoi(m[2]);
        u.last_mib = std::stod(m[3]);
        u.last_objects = std::stoi(m[4]);
    }
    return u;
}

/// Writes `count` small PNGs of mixed formats and three sizes; returns their paths.
std::vector<std::string> make_batch(const test::TempDir& dir, int count, int side = 24) {
    const int types[][2] = {{0, 8}, {2, 8}, {6, 8}, {4, 16}, {3, 4}, {0, 1}, {6, 16}, {2, 16}};
    std::vector<std::string> paths;
    for (int i = 0; i < count; ++i) {
        const int* t = types[i % 8];
        int w = side + (i % 3) * 5, h = side - (i % 3) * 3;
        std::string path = dir / ("in" + std::to_string(1000 + i) + ".png");
        fixture::write_file(path, fixture::encode(fixture::random_png(w, h, t[0], t[1], i % 5 == 0, i % 7 == 0, 500 + i)));
        paths.push_back(path);
    }
    return paths;
}

}  // namespace

TEST(thousand_teapot_frames_leave_memory_and_gl_objects_flat) {
    test::TempDir dir;
    for (const char* backend : {"fragment", "compute"}) {
        test::Result r = test::run(teapot() + " --headless --size 64 --frames 1000 --report-resources --backend " + backend +
                                   " -o " + dir / "long.png");
        Use u = parse_resources(r.err);
        EXPECT(r.status == 0 && u.first_objects > 0, backend, ": exit ", r.status, ": ", r.err);
        EXPECT(u.last_objects == u.first_objects, backend, ": GL objects ", u.first_objects, " -> ", u.last_objects);
        // A leak of one 64x64 float target a frame would be 64 MiB here.
        EXPECT(u.last_mib - u.first_mib < 16 + kSlackMiB, backend, ": resident ", u.first_mib, " -> ", u.last_mib, " MiB");
        // The last of 1000 frames is the frame a single run renders: no state carried between frames.
        test::Result one = test::run(teapot() + " --headless --size 64 --backend " + backend + " -o " + dir / "one.png");
        EXPECT(one.status == 0 && test::read_bytes(dir / "one.png") == test::read_bytes(dir / "long.png"), backend,
               ": the 1000th frame differs from a single frame");
    }
}

TEST(five_hundred_file_batch_leaves_memory_and_gl_objects_flat) {
    // The batch mixes three sizes, and the tool keeps transforms for three sizes: after the first
    // ten files everything it keeps is made. Ten files and 500 must end holding the same.
    test::TempDir dir;
    std::vector<std::string> inputs = make_batch(dir, 500);
    Use at[2];
    int k = 0;
    for (const char* head : {"head -n 10", "cat"}) {
        test::Result r = test::run("ls " + dir / "in*.png" + " | " + head + " | " + fftfilter() +
                                   " -q -f --backend fragment -k gaussian:1.5 --report-resources -o " + dir / "out -");
        at[k] = parse_resources(r.err);
        EXPECT(r.status == 0 && at[k].last_objects > 0, head, ": exit ", r.status, ": ", r.err.substr(0, 400));
        ++k;
    }
    EXPECT(at[1].last_objects == at[0].last_objects, "GL objects after 10 files ", at[0].last_objects, ", after 500 ",
           at[1].last_objects);
    EXPECT(at[1].last_mib - at[0].last_mib < 24 + kSlackMiB, "resident after 10 files ", at[0].last_mib, " MiB, after 500 ", at[1].last_mib);
    int written = 0;
    for (int i = 0; i < 500; ++i) written += file_exists(dir / ("out/in" + std::to_string(1000 + i) + ".png"));
    EXPECT(written == 500, written, " of 500 outputs");
}

TEST(gpu_allocation_failures_fail_one_file_cleanly) {
    // The Nth texture allocation fails as GL_OUT_OF_MEMORY would, for every N that falls inside a
    // three-file batch: each run exits non-zero with one line per failed file naming it, leaves no
    // output (or temporary) for a failed file, and filters the files after a failure.
    test::TempDir dir;
    std::vector<std::string> inputs = make_batch(dir, 3, 32);
    std::string args = " -q --backend fragment -k disk:2 -o " + dir / "out " + inputs[0] + " " + inputs[1] + " " + inputs[2];
    int failures_seen = 0, later_file_done = 0;
    for (int n = 1; n <= 60; ++n) {
        test::run("rm -rf " + dir / "out");
        test::Result r = test::run("GPUFFT_TEST_FAIL_TEXTURE=" + std::to_string(n) + " " + fftfilter() + args);
        if (r.status == 0) {
            EXPECT(test::count_lines(r.err) == 0, "N=", n, ": ", r.err);
            break;  // N is past the batch's last allocation
        }
        ++failures_seen;
        EXPECT(r.status == 1 || r.status == 3, "N=", n, ": exit ", r.status);
        EXPECT(test::count_lines(r.err) == 1 && r.err.rfind("fftfilter: ", 0) == 0 &&
                   r.err.find("out of GPU memory") != std::string::npos,
               "N=", n, ": ", r.err);
        for (size_t i = 0; i < inputs.size(); ++i) {
            std::string name = "in" + std::to_string(1000 + i) + ".png";
            std::string out = dir / ("out/" + name);
            bool failed_here = r.err.find(name) != std::string::npos;
            if (r.status == 1) EXPECT(file_exists(out) != failed_here, "N=", n, ": ", name, failed_here ? " failed but" : " not", " written");
            if (r.status == 1 && failed_here && i + 1 < inputs.size())
                later_file_done += file_exists(dir / ("out/in" + std::to_string(1001 + i) + ".png"));
        }
        test::Result hidden = test::run("ls -A " + dir / "out" + " 2>/dev/null | grep '^\\.' || true");
        EXPECT(hidden.out.empty(), "N=", n, ": temporary files left: ", hidden.out);
    }
    EXPECT(failures_seen >= 3, "only ", failures_seen, " allocations in a three-file batch?");
    EXPECT(later_file_done > 0, "no run went on after a failed file");
}

TEST(sigkill_mid_batch_leaves_only_whole_outputs) {
    test::TempDir dir;
    std::vector<std::string> inputs = make_batch(dir, 120, 200);
    test::run("mkdir " + dir / "out");
    pid_t pid = fork();
    if (pid == 0) {
        std::string list = "ls " + dir / "in*.png" + " | exec " + fftfilter() + " -q -k gaussian:3 -o " + dir / "out -";
        execl("/bin/sh", "sh", "-c", list.c_str(), static_cast<char*>(nullptr));
        _exit(127);
    }
    // Kill it once a few outputs are done, in the middle of the batch.
    auto start = std::chrono::steady_clock::now();
    while (test::count_lines(test::run("ls " + dir / "out").out) < 5 &&
           std::chrono::steady_clock::now() - start < std::chrono::seconds(60))
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    test::run("pkill -KILL -f 'fftfilter -q -k gaussian:3 -o " + dir / "out'");
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    std::vector<std::string> names;
    std::istringstream ls(test::run("ls " + dir / "out").out);
    for (std::string name; std::getline(ls, name);) names.push_back(name);
    EXPECT(names.size() >= 5 && names.size() < inputs.size(), names.size(), " outputs: the kill did not land mid-batch");
    for (const std::string& name : names) {
        try {
            PngImage p = read_png(dir / ("out/" + name));
            EXPECT(p.image.width >= 200, name, ": ", p.image.width, " wide");
        } catch (const std::exception& e) {
            EXPECT(false, "an output under its final name is not whole: ", e.what());
        }
    }
}

namespace {

/// Starts fftfilter with `args` (no shell between), its standard error into `err`; SIGINT ignored
/// from the start where `ignore_sigint` (as a shell starts a background job).
pid_t start_fftfilter(const std::vector<std::string>& args, const std::string& err, bool ignore_sigint) {
    std::vector<std::string> all = {fftfilter()};
    all.insert(all.end(), args.begin(), args.end());
    pid_t pid = fork();
    if (pid == 0) {
        if (!std::freopen(err.c_str(), "w", stderr)) _exit(126);
        std::signal(SIGINT, ignore_sigint ? SIG_IGN : SIG_DFL);
        std::vector<char*> argv;
        for (std::string& a : all) argv.push_back(a.data());
        argv.push_back(nullptr);
        execv(argv[0], argv.data());
        _exit(127);
    }
    return pid;
}

/// Waits up to a minute for `ready` to hold, checking every 10 ms.
template <typename Ready>
bool wait_until(Ready ready) {
    const auto start = std::chrono::steady_clock::now();
    while (!ready()) {
        if (std::chrono::steady_clock::now() - start > std::chrono::seconds(60)) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
}

/// The names in `dir`, hidden ones included.
std::vector<std::string> entries(const std::string& dir) {
    std::vector<std::string> names;
    std::istringstream ls(test::run("ls -A '" + dir + "'").out);
    for (std::string name; std::getline(ls, name);) names.push_back(name);
    return names;
}

bool has_temporary(const std::vector<std::string>& names) {
    for (const std::string& n : names)
        if (n.find(".tmp-") != std::string::npos) return true;
    return false;
}

}  // namespace

TEST(stop_signals_remove_unfinished_outputs) {
    // SIGINT (Ctrl-C), SIGTERM and SIGHUP end a tool by that signal after removing the temporary
    // files of the outputs it had not finished; finished outputs stay, whole; a signal ignored at
    // start (a shell's background job and SIGINT) stays ignored.
    test::TempDir dir;
    // A file alone, streamed and slow to finish: FFTW, one thread, a wide disk, level 9.
    fixture::write_file(dir / "big.png", fixture::encode(fixture::random_png(1200, 900, 2, 8, false, false, 77)));
    const std::string input = test::read_bytes(dir / "big.png");
    test::run("mkdir " + dir / "one " + dir / "many");
    const std::vector<std::string> slow = {"-q", "--backend", "fftw", "-j", "1", "--stream", "always", "--max-memory", "16M",
                                           "--compression", "9", "-k", "disk:40", "-o", dir / "one/big.png", dir / "big.png"};
    for (bool ignored : {false, true}) {
        const std::string what = ignored ? "SIGINT ignored at start" : "SIGINT";
        pid_t pid = start_fftfilter(slow, dir / "err", ignored);
        const bool begun = wait_until([&] { return has_temporary(entries(dir / "one")); });
        EXPECT(begun, what, ": no temporary output appeared");
        kill(pid, SIGINT);
        int status = 0;
        if (ignored) {  // still at work a quarter of a second later; then SIGTERM ends it
            std::this_thread::sleep_for(std::chrono::milliseconds(250));
            EXPECT(waitpid(pid, &status, WNOHANG) == 0, what, ": the tool ended (status ", status, ")");
            kill(pid, SIGTERM);
        }
        waitpid(pid, &status, 0);
        const int expected = ignored ? SIGTERM : SIGINT;
        const std::string err = test::read_bytes(dir / "err");
        EXPECT(WIFSIGNALED(status) && WTERMSIG(status) == expected, what, ": status ", status, ": ", err);
        const std::string line = std::string("fftfilter: stopped by ") + (ignored ? "SIGTERM" : "SIGINT") +
                                 "; 1 unfinished output removed, finished ones kept\n";
        EXPECT(err == line, what, ": said '", err, "'");
        const std::vector<std::string> left = entries(dir / "one");
        EXPECT(left.empty(), what, ": left ", left.empty() ? "" : left[0]);
        EXPECT(test::read_bytes(dir / "big.png") == input, what, ": the input changed");
    }
    // A GL batch: the GL driver's threads and the workers were started with the signals blocked,
    // so SIGTERM reaches the thread that removes the temporary files.
    std::vector<std::string> inputs = make_batch(dir, 120, 200);
    std::vector<std::string> args = {"-q", "-k", "gaussian:3", "-o", dir / "many"};
    args.insert(args.end(), inputs.begin(), inputs.end());
    pid_t pid = start_fftfilter(args, dir / "err", false);
    auto finished = [&] {  // outputs in place (their temporary files go when the signal lands)
        std::vector<std::string> names = entries(dir / "many");
        return std::count_if(names.begin(), names.end(), [](const std::string& n) { return n.find(".tmp-") == std::string::npos; });
    };
    EXPECT(wait_until([&] { return finished() >= 5; }), "the batch wrote nothing");
    kill(pid, SIGTERM);
    int status = 0;
    waitpid(pid, &status, 0);
    const std::string err = test::read_bytes(dir / "err");
    EXPECT(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM && err.find("fftfilter: stopped by SIGTERM; ") == 0 &&
               test::count_lines(err) == 1,
           "batch: status ", status, ": ", err);
    const std::vector<std::string> names = entries(dir / "many");
    EXPECT(!has_temporary(names), "batch: a temporary file left");
    EXPECT(names.size() >= 5 && names.size() < inputs.size(), names.size(), " outputs: the signal did not land mid-batch");
    for (const std::string& name : names) {
        try {
            read_png(dir / ("many/" + name));
        } catch (const std::exception& e) {
            EXPECT(false, "batch: an output under its final name is not whole: ", e.what());
        }
    }
    // run_program() (fftcompare's gnuplot) starts a program with the signals unblocked, where the
    // tool's own threads have them blocked: here SIGINT and SIGTERM blocked in this thread, and the
    // mask bash (which keeps the mask it is given) sees read from /proc; the same command by
    // fork and exec shows the check can tell.
    sigset_t stop, before;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, &before);
    const int spawned = run_program({"bash", "-c", "grep SigBlk /proc/self/status > " + dir / "mask"});
    const pid_t child = fork();
    if (child == 0) {
        execlp("bash", "bash", "-c", ("grep SigBlk /proc/self/status > " + dir / "inherited").c_str(), static_cast<char*>(nullptr));
        _exit(127);
    }
    int inherited_status = 0;
    waitpid(child, &inherited_status, 0);
    pthread_sigmask(SIG_SETMASK, &before, nullptr);
    auto blocked = [](const std::string& line) {  // "SigBlk:\t0000000000004002\n": bit s - 1 for signal s
        const unsigned long long mask = std::strtoull(line.c_str() + line.find(':') + 1, nullptr, 16);
        return (mask >> (SIGINT - 1) & 1) + (mask >> (SIGTERM - 1) & 1);
    };
    const std::string mask = test::read_bytes(dir / "mask"), inherited = test::read_bytes(dir / "inherited");
    EXPECT(spawned == 0 && mask.find("SigBlk:") == 0 && blocked(mask) == 0, "run_program: ", spawned, " ", mask);
    EXPECT(inherited_status == 0 && blocked(inherited) == 2, "fork and exec: ", inherited);
}

TEST(no_usable_gl_is_one_line) {
    test::TempDir dir;
    std::vector<std::string> inputs = make_batch(dir, 1);
    // No EGL vendor library: no context can be created.
    const std::string no_gl = "__EGL_VENDOR_LIBRARY_FILENAMES=/nonexistent.json ";
    for (const std::string& command : {no_gl + fftfilter() + " --backend fragment -o " + dir / "o.png " + inputs[0],
                                       no_gl + teapot() + " --headless -o " + dir / "t.png"}) {
        test::Result r = test::run(command);
        EXPECT(r.status == 3 && test::count_lines(r.err) == 1 && r.err.find("OpenGL") != std::string::npos, command,
               ": exit ", r.status, ": ", r.err);
    }
    EXPECT(!file_exists(dir / "o.png") && !file_exists(dir / "t.png"), "output written without GL");
    // --backend auto (the default) filters through FFTW instead, and says why with -v.
    test::Result fallback = test::run(no_gl + fftfilter() + " -v -o " + dir / "a.png " + inputs[0]);
    EXPECT(fallback.status == 0 && file_exists(dir / "a.png") && fallback.err.find("backend fftw (no usable OpenGL") != std::string::npos,
           "auto without GL: exit ", fallback.status, ": ", fallback.err);
    // Sizes beyond the GPU's texture limit.
    test::Result big = test::run(test::bin_dir() + "/fftcompare --no-speed -q --sizes 65536x2");
    EXPECT(big.status != 0 && big.err.find("texture limit") != std::string::npos, "exit ", big.status, ": ", big.err);
}

// makeimages takes one directory and options as options: --help once wrote the bundled images
// into a directory named "--help" at the top of the repository.
TEST(makeimages_takes_options_not_directories) {
    test::TempDir dir;
    const std::string makeimages = test::bin_dir() + "/makeimages";
    test::Result help = test::run("cd '" + dir.path() + "' && " + makeimages + " --help");
    EXPECT(help.status == 0 && help.out.find("Usage: makeimages") != std::string::npos && dir.list().empty(), "--help: exit ",
           help.status, ", entries ", dir.list().size(), ": ", help.out, help.err);
    for (const char* args : {" --bogus", " -x", " a b"}) {
        test::Result r = test::run("cd '" + dir.path() + "' && " + makeimages + args);
        EXPECT(r.status == 2 && test::count_lines(r.err) == 1 && r.err.rfind("makeimages: ", 0) == 0 && dir.list().empty(), "'", args,
               "': exit ", r.status, ": ", r.err);
    }
}

// The repository's top level is src/, programs/, images/, test/, Makefile, README.md and .ci/ (and
// git's own files), as the project's layout says; checked where the tests run from a git checkout.
TEST(top_level_holds_only_the_projects_entries) {
    test::Result r = test::run("cd '" + test::bin_dir() + "' && cd \"$(git rev-parse --show-toplevel 2>/dev/null)\" && git ls-files | cut -d/ -f1 | sort -u");
    if (r.status != 0 || r.out.empty()) return;  // not a git checkout (an unpacked tarball): nothing to compare
    std::set<std::string> allowed = {".ci", ".gitignore", "Makefile", "README.md", "images", "programs", "src", "test"};
    std::istringstream in(r.out);
    for (std::string entry; std::getline(in, entry);) EXPECT(allowed.count(entry), "unexpected top-level entry \"", entry, "\"");
}

// The harness's test processes side by side (check.cpp, GPUFFT_TEST_JOBS): each test runs once
// and is counted once, and a test whose process dies fails alone while the rest still run.
TEST(tests_side_by_side_run_each_once) {
    const std::string binary = test::bin_dir() + "/test/test_fuzz_inputs";
    const char* names[] = {"png_seeds_are_read_or_refused_in_one_line", "kernel_seeds_are_parsed_or_refused_in_one_line",
                           "kept_fuzz_inputs_replay_clean"};
    auto lines_of = [](const std::string& out, const std::string& name, const char* verdict) {
        int n = 0;
        std::istringstream in(out);
        for (std::string line; std::getline(in, line);) n += line.rfind(verdict, 0) == 0 && line.find(" " + name + " ") != std::string::npos;
        return n;
    };
    test::Result r = test::run("GPUFFT_TEST_JOBS=1 '" + binary + "' --jobs 3");
    EXPECT(r.status == 0 && r.out.find("\n3 passed, 0 failed\n") != std::string::npos, "three at once: exit ", r.status, ": ", r.out, r.err);
    for (const char* name : names) EXPECT(lines_of(r.out, name, "ok") == 1, name, " not reported once: ", r.out);
    r = test::run("GPUFFT_TEST_ABORT=kernel_seeds_are_parsed_or_refused_in_one_line GPUFFT_TEST_JOBS=2 '" + binary + "'");
    EXPECT(r.status == 1 && r.out.find("\n2 passed, 1 failed\n") != std::string::npos, "one crashing: exit ", r.status, ": ", r.out, r.err);
    EXPECT(lines_of(r.out, names[1], "FAIL") == 1 && r.out.find("(its process ended: signal 6)") != std::string::npos, "the crash: ", r.out);
    EXPECT(lines_of(r.out, names[0], "ok") == 1 && lines_of(r.out, names[2], "ok") == 1, "the others: ", r.out);
}
