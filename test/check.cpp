#include "check.h"

#include <poll.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

namespace check {

namespace {

struct Test {
    const char* name;
    void (*fn)();
};

std::vector<Test>& registry() {
    static std::vector<Test> tests;
    return tests;
}

std::vector<std::string> failures;
bool big_tier = false;
const char* serial_reason = nullptr;

}  // namespace

Registrar::Registrar(const char* name, void (*fn)()) { registry().push_back({name, fn}); }

void fail(const std::string& message) { failures.push_back(message); }

bool big() { return big_tier; }

Serial::Serial(const char* why) { serial_reason = why; }

namespace {

// Runs registered test `index`, prints its "ok" or "FAIL" lines; true if it passed.
bool run_one(size_t index) {
    const Test& t = registry()[index];
    failures.clear();
    auto start = std::chrono::steady_clock::now();
    // A test hook: the named test's process aborts, as a crash would end it.
    if (const char* crash = std::getenv("GPUFFT_TEST_ABORT"); crash && std::strcmp(crash, t.name) == 0) std::abort();
    try {
        t.fn();
    } catch (const std::exception& e) {
        fail(std::string("exception: ") + e.what());
    } catch (...) {
        fail("unknown exception");
    }
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const bool ok = failures.empty();
    if (ok) {
        std::printf("ok   %-44s %7.2f s\n", t.name, seconds);
    } else {
        std::printf("FAIL %-44s %7.2f s\n", t.name, seconds);
        for (size_t i = 0; i < failures.size() && i < 10; ++i) std::printf("     %s\n", failures[i].c_str());
        if (failures.size() > 10) std::printf("     ... %zu more\n", failures.size() - 10);
    }
    std::fflush(stdout);
    return ok;
}

// The worker's markers around each test's lines on its pipe (a byte no test prints first).
constexpr char kMark = '\x01';

// A worker process: takes test indices from `tasks` until none are left, each test's lines
// between a start and a done marker on standard output (the pipe to the parent). Its exit
// status is the process's (static destructors and leak checks run as after a serial run).
int worker(int tasks) {
    uint32_t index = 0;
    while (read(tasks, &index, sizeof index) == static_cast<ssize_t>(sizeof index)) {
        std::printf("%cstart %u\n", kMark, index);
        std::fflush(stdout);
        const bool ok = run_one(index);
        std::printf("%cdone %u %d\n", kMark, index, ok ? 1 : 0);
        std::fflush(stdout);
    }
    close(tasks);
    return 0;
}

// Runs `selected` in `jobs` worker processes, each with a GL context of its own (made by its
// first test), which take the next test when they finish one: tests whose programs differ
// compile them side by side (a software rasterizer compiles a program on one core, at its first
// use). Prints each test's lines as it finishes; a worker that dies fails its test.
void run_parallel(const std::vector<size_t>& selected, int jobs, int& passed, int& failed) {
    int tasks[2];
    if (pipe(tasks) != 0) throw std::runtime_error("pipe failed");
    for (size_t i : selected) {   // the whole queue, before any worker reads (a pipe holds 16384 of them)
        const uint32_t index = static_cast<uint32_t>(i);
        if (write(tasks[1], &index, sizeof index) != static_cast<ssize_t>(sizeof index)) throw std::runtime_error("pipe write failed");
    }
    close(tasks[1]);   // the queue is whole: a worker reading past its end finds no more
    struct Worker {
        pid_t pid;
        int out;
        std::string buffer, block;
        long current = -1;
    };
    std::vector<Worker> workers;
    std::vector<bool> started(registry().size(), false);
    auto spawn = [&] {
        int out[2];
        if (pipe(out) != 0) throw std::runtime_error("pipe failed");
        std::fflush(stdout);
        const pid_t pid = fork();
        if (pid < 0) throw std::runtime_error("fork failed");
        if (pid == 0) {
            close(out[0]);
            for (const Worker& other : workers)
                if (other.out >= 0) close(other.out);
            dup2(out[1], 1);
            close(out[1]);
            std::exit(worker(tasks[0]));
        }
        close(out[1]);
        workers.push_back({pid, out[0], {}, {}, -1});
    };
    for (int w = 0; w < jobs; ++w) spawn();
    auto name_of = [](long index) { return registry()[static_cast<size_t>(index)].name; };
    for (;;) {
        std::vector<pollfd> fds;
        std::vector<Worker*> of;
        for (Worker& w : workers)
            if (w.out >= 0) fds.push_back({w.out, POLLIN, 0}), of.push_back(&w);
        if (fds.empty()) break;
        if (poll(fds.data(), fds.size(), -1) < 0) {
            if (errno == EINTR) continue;
            throw std::runtime_error(std::string("poll failed: ") + std::strerror(errno));   // not a spin on the same error
        }
        for (size_t k = 0; k < fds.size(); ++k) {
            if (!fds[k].revents) continue;
            Worker& w = *of[k];
            char chunk[4096];
            const ssize_t n = read(w.out, chunk, sizeof chunk);
            if (n > 0) {
                w.buffer.append(chunk, static_cast<size_t>(n));
                for (size_t end; (end = w.buffer.find('\n')) != std::string::npos;) {
                    const std::string line = w.buffer.substr(0, end + 1);
                    w.buffer.erase(0, end + 1);
                    long index = 0;
                    int ok = 0;
                    if (line[0] == kMark && std::sscanf(line.c_str() + 1, "start %ld", &index) == 1) {
                        w.current = index;
                        started[static_cast<size_t>(index)] = true;
                        w.block.clear();
                    } else if (line[0] == kMark && std::sscanf(line.c_str() + 1, "done %ld %d", &index, &ok) == 2) {
                        std::fputs(w.block.c_str(), stdout);
                        std::fflush(stdout);
                        (ok ? passed : failed) += 1;
                        w.current = -1;
                        w.block.clear();
                    } else {
                        w.block += line;
                    }
                }
                continue;
            }
            if (n < 0 && errno == EINTR) continue;
            // The worker has closed its output: it ended.
            close(w.out);
            w.out = -1;
            int status = 0;
            waitpid(w.pid, &status, 0);
            const std::string how = WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                                                        : "exit status " + std::to_string(WEXITSTATUS(status));
            if (w.current >= 0) {
                std::printf("%s%sFAIL %-44s (its process ended: %s)\n", w.block.c_str(), w.buffer.c_str(), name_of(w.current), how.c_str());
                ++failed;
            } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                std::printf("%sFAIL a test process ended with %s after its tests\n", w.buffer.c_str(), how.c_str());
                ++failed;
            }
            std::fflush(stdout);
            // Tests still queued: a new worker takes this one's place.
            int queued = 0;
            if (ioctl(tasks[0], FIONREAD, &queued) == 0 && queued > 0) spawn();
            break;   // `workers` may have grown: poll again
        }
    }
    close(tasks[0]);
    for (size_t i : selected)
        if (!started[i]) {
            std::printf("FAIL %-44s (not run: every test process had ended)\n", name_of(static_cast<long>(i)));
            ++failed;
        }
}

}  // namespace

}  // namespace check

int main(int argc, char** argv) {
    std::vector<const char*> filters;
    const char* env = std::getenv("GPUFFT_BIG");
    check::big_tier = env && *env && std::strcmp(env, "0") != 0;
    const char* jobs_env = std::getenv("GPUFFT_TEST_JOBS");
    int jobs = jobs_env ? std::atoi(jobs_env) : 1;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--big") == 0) check::big_tier = true;
        else if (std::strcmp(argv[i], "--jobs") == 0 && i + 1 < argc) jobs = std::atoi(argv[++i]);
        else filters.push_back(argv[i]);
    }
    std::vector<size_t> selected;
    for (size_t i = 0; i < check::registry().size(); ++i) {
        bool chosen = filters.empty();
        for (const char* f : filters) chosen |= std::strstr(check::registry()[i].name, f) != nullptr;
        if (chosen) selected.push_back(i);
    }
    if (check::serial_reason && jobs > 1 && selected.size() > 1) {
        std::printf("(one test at a time, not %d: %s)\n", jobs, check::serial_reason);
        jobs = 1;
    }
    jobs = std::max(1, std::min(jobs, static_cast<int>(selected.size())));
    int passed = 0, failed = 0;
    if (jobs > 1) {
        check::run_parallel(selected, jobs, passed, failed);
    } else {
        for (size_t i : selected) (check::run_one(i) ? passed : failed) += 1;
    }
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
