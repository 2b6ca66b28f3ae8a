#include "app/cli.h"

#include "fft/sizes.h"
#include "image/files.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <mutex>
#include <new>
#include <pthread.h>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace gpufft {

namespace {

// The signals that stop a tool from outside: Ctrl-C, kill's default, a closed terminal.
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};

const char* signal_name(int sig) {
    return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "a signal";
}

// Those of kStopSignals that the process was started with at their default action (a shell
// starts background jobs with SIGINT ignored, nohup SIGHUP: they stay ignored).
sigset_t stop_signals_taken() {
    sigset_t set;
    sigemptyset(&set);
    for (int sig : kStopSignals) {
        struct sigaction now;
        if (sigaction(sig, nullptr, &now) == 0 && now.sa_handler == SIG_DFL) sigaddset(&set, sig);
    }
    return set;
}

// Whether SIGXFSZ was at its default action at start: the tool then ignores it, so that a write
// past the file-size limit (`ulimit -f`) fails with EFBIG and only its file fails (one line, its
// temporary removed) instead of the signal ending the process with temporaries left; programs the
// tool starts get it back at its default.
bool file_size_signal_taken() {
    struct sigaction now;
    return sigaction(SIGXFSZ, nullptr, &now) == 0 && now.sa_handler == SIG_DFL;
}
const bool kFileSizeSignalTaken = file_size_signal_taken();

// Blocks the stop signals in the calling thread, before it starts any other (they inherit the
// mask: the workers, the GL driver's and FFTW's threads), and leaves them to a thread of their
// own: it removes the temporary files of the outputs not yet finished (the finished ones are in
// place, and the list stays locked so that no thread finishes another), says so in one line, and
// ends the process by the same signal, as if it had not been caught.
void stop_on_signals(const char* tool) {
    if (kFileSizeSignalTaken) std::signal(SIGXFSZ, SIG_IGN);
    const sigset_t set = stop_signals_taken();
    if (pthread_sigmask(SIG_BLOCK, &set, nullptr) != 0) return;
    std::thread([set, tool] {
        int sig = 0;
        while (sigwait(&set, &sig) != 0) {
        }
        const int removed = remove_temporary_files_for_exit();
        std::fprintf(stderr, "%s: stopped by %s; %d unfinished output%s removed, finished ones kept\n", tool,
                     signal_name(sig), removed, removed == 1 ? "" : "s");
        std::signal(sig, SIG_DFL);
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, sig);
        pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
        raise(sig);
        _exit(128 + sig);
    }).detach();
}

}  // namespace

int run_program(const std::vector<std::string>& argv, bool errors_to_output) {
    // The program starts with the stop signals as the tool was started: not blocked, at their
    // default action where they were (std::system would pass on the mask stop_on_signals() set,
    // which bash keeps; dash, Debian's /bin/sh, happens to clear it).
    sigset_t set = stop_signals_taken();
    if (kFileSizeSignalTaken) sigaddset(&set, SIGXFSZ);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &set);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (errors_to_output) posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid;
    const int rc = argv.empty() ? EINVAL : posix_spawnp(&pid, args[0], &actions, &attr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) return -1;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    return status;
}

Backend parse_backend(const std::string& name) {
    for (Backend b : {Backend::Auto, Backend::Fragment, Backend::Compute, Backend::Fftw})
        if (name == backend_name(b)) return b;
    throw UsageError("unknown backend '" + name + "' (auto, fragment, compute or fftw)");
}

const char* backend_name(Backend b) {
    switch (b) {
        case Backend::Auto: return "auto";
        case Backend::Fragment: return "fragment";
        case Backend::Compute: return "compute";
        case Backend::Fftw: return "fftw";
    }
    return "?";
}

int report(const char* tool, const std::string& message, int status) {
    std::string line = message;
    for (char& c : line)
        if (c == '\n') c = ' ';
    while (!line.empty() && line.back() == ' ') line.pop_back();
    std::fprintf(stderr, "%s: %s\n", tool, line.c_str());
    return status;
}

int run_tool(const char* tool, const std::function<int()>& body) {
    // Line by line even into a pipe: a tool stopped by a time limit keeps what it measured.
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    static std::once_flag signals;
    std::call_once(signals, stop_on_signals, tool);
    try {
        return body();
    } catch (const UsageError& e) {
        return report(tool, std::string(e.what()) + " (see --help)", kExitUsage);
    } catch (const GlError& e) {
        return report(tool, std::string("no usable OpenGL: ") + e.what(), kExitNoGl);
    } catch (const std::bad_alloc&) {
        return report(tool, "out of memory", kExitFailed);
    } catch (const std::exception& e) {
        return report(tool, e.what(), kExitFailed);
    }
}

void throw_option_error(int code, char** argv, int optind) {
    if (code == ':') throw UsageError(std::string("option ") + argv[optind - 1] + " needs a value");
    throw UsageError(std::string("unknown option ") + argv[optind - 1]);
}

void warm_up(double seconds, const std::function<void()>& work) {
    auto start = std::chrono::steady_clock::now();
    do work();
    while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds);
}

void saturating_warm_up(double seconds, const std::function<void()>& run, int batch) {
    warm_up(seconds, [&] {
        for (int k = 0; k < batch; ++k) run();
        glFinish();
    });
}

double median(std::vector<double> values) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

void require_fast_size(int width, int height, const std::string& what) {
    if (is_fast_size(width) && is_fast_size(height)) return;
    const bool square = width == height;
    const std::string name = square ? std::to_string(width) : std::to_string(width) + "x" + std::to_string(height);
    throw UsageError(what + " " + name + " is not " + (square ? "an even size" : "two even sizes") +
                     " with prime factors 2, 3, 5 and 7 only (e.g. 512, 1920x1080)");
}

std::vector<std::pair<int, int>> parse_fast_size_list(const std::string& list, const std::string& what) {
    std::vector<std::pair<int, int>> sizes = parse_size_list(list, what);
    for (auto [w, h] : sizes) require_fast_size(w, h, what + ":");
    return sizes;
}

std::string tool_version(const char* tool) { return std::string(tool) + " (gpufft) " + kVersion; }

}  // namespace gpufft
