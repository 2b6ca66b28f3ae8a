// glthreads: whether GL threads of their own add up on this GPU, before a batch is built around
// them. N threads, each with a headless context, a Convolver and host areas of its own, run the
// batch's route on one image (three in flight, the samples through host areas, the outputs
// deflated on the GPU: what fftfilter's GL thread does a file), while LOAD threads copy memory as
// a batch's decoders load the host. Prints, for each N, the images a second of all the threads
// together and the median submit and collect of one. Usage:
//   glthreads [WxH] [KERNEL] [IMAGES] [LOAD] [N...]     defaults: 2048x2048 gaussian:8 60 14 1 2 3
// (IMAGES: each thread's; the threads start together after each has filtered one image)
#include "app/cli.h"
#include "base/parse.h"
#include "gl/context.h"
#include "image/convolve.h"
#include "image/kernels.h"
#include "probes.h"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace gpufft;

namespace {

double now_ms() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// Threads waiting for one another: each arrives, the last one releases them all.
class Gate {
public:
    explicit Gate(int count) : count_(count) {}
    void arrive_and_wait() {
        std::unique_lock<std::mutex> lock(mutex_);
        if (--count_ == 0) {
            opened_ = now_ms();
            changed_.notify_all();
        }
        changed_.wait(lock, [&] { return count_ == 0; });
    }
    double opened() const { return opened_; }

private:
    std::mutex mutex_;
    std::condition_variable changed_;
    int count_;
    double opened_ = 0;
};

struct ThreadResult {
    double end = 0;
    std::vector<double> submit_ms, collect_ms;
    std::string error;
};

std::mutex contexts;  // contexts are made (and GLEW loaded) one at a time

/// One GL thread: its context, filter and areas; one image filtered before `start`, then `images`.
void gl_thread(const Samples& in, const Kernel& kernel, int images, Gate& created, Gate& start, Gate& done, ThreadResult& r) {
    std::optional<HeadlessContext> context;
    bool was_created = false, started = false;  // the gates passed (a failed thread still passes the rest)
    try {
        {
            std::lock_guard<std::mutex> lock(contexts);
            context.emplace();
        }
        // Every context is made before any thread calls GL: each one's making runs glewInit(),
        // which rewrites the entry points the others call through (a first run crashed so).
        was_created = true;
        created.arrive_and_wait();
        ProgramCache programs;
        ConvolveOptions options;
        options.fft.backend = Backend::Compute;
        std::optional<Convolver> convolver(std::in_place, programs, kernel, options);
        SampleConversion c;
        c.in_channels = c.out_channels = in.channels;
        c.deflate = true;
        HostAreas areas;
        for (int i = 0; i < 6; ++i) areas.add(in.data.size(), 6, size_t(1) << 34);
        std::deque<std::pair<HostArea, HostArea>> held;
        std::vector<unsigned char> storage;
        DeflatedRows deflated;
        auto submit = [&] {
            HostArea from = areas.take(in.data.size()), to = areas.take(in.data.size());
            std::memcpy(from.data(), in.data.data(), in.data.size());  // (a worker's decode: not timed)
            const double a = now_ms();
            convolver->submit(in, c, {}, &from, &to);
            held.emplace_back(std::move(from), std::move(to));
            return now_ms() - a;
        };
        auto collect = [&] {
            const double a = now_ms();
            Samples out = convolver->collect(nullptr, std::move(storage), &deflated);
            const double t = now_ms() - a;
            storage = std::move(out.data);
            held.pop_front();
            return t;
        };
        submit();
        collect();
        glFinish();
        started = true;
        start.arrive_and_wait();
        for (int i = 0; i < images + 3; ++i) {
            if (i < images) r.submit_ms.push_back(submit());
            if (convolver->pending() == 3 || (i >= images && convolver->pending() > 0)) r.collect_ms.push_back(collect());
        }
        r.end = now_ms();
        convolver.reset();
        held.clear();
    } catch (const std::exception& e) {
        r.error = e.what();
        r.end = now_ms();
        if (!was_created) created.arrive_and_wait();
        if (!started) start.arrive_and_wait();
    }
    done.arrive_and_wait();
}

}  // namespace

int main(int argc, char** argv) {
    try {
        int width = 2048, height = 2048;
        if (argc > 1) parse_size(argv[1], "size", width, height);
        const Kernel kernel = parse_kernel(argc > 2 ? argv[2] : "gaussian:8");
        const int images = argc > 3 ? parse_int(argv[3], "images", 1, 100000) : 60;
        const int load = argc > 4 ? parse_int(argv[4], "load threads", 0, 1024) : 14;
        std::vector<int> counts;
        for (int i = 5; i < argc; ++i) counts.push_back(parse_int(argv[i], "GL threads", 1, 64));
        if (counts.empty()) counts = {1, 2, 3};

        Samples in;
        in.resize(width, height, 3, 8);
        // A smooth image, as a filter's inputs are (noise would make the GPU's coder decline).
        std::mt19937 rng(1);
        for (int y = 0; y < height; ++y)
            for (int x = 0; x < width * 3; ++x) in.row(y)[x] = static_cast<unsigned char>((x / 3 + y) / 8 + (rng() & 3));

        const bench::MemoryLoad loading(load);
        std::printf("glthreads: %dx%d RGB 8-bit, %s, %d images a thread, %d loading threads\n", width, height,
                    argc > 2 ? argv[2] : "gaussian:8", images, load);
        for (int n : counts) {
            Gate created(n), start(n), done(n);
            std::vector<ThreadResult> results(static_cast<size_t>(n));
            std::vector<std::thread> threads;
            for (int t = 0; t < n; ++t)
                threads.emplace_back(gl_thread, std::cref(in), std::cref(kernel), images, std::ref(created), std::ref(start), std::ref(done),
                                     std::ref(results[static_cast<size_t>(t)]));
            for (std::thread& t : threads) t.join();
            double end = 0;
            std::vector<double> submit, collect;
            for (const ThreadResult& r : results) {
                if (!r.error.empty()) throw std::runtime_error(r.error);
                end = std::max(end, r.end);
                submit.insert(submit.end(), r.submit_ms.begin(), r.submit_ms.end());
                collect.insert(collect.end(), r.collect_ms.begin(), r.collect_ms.end());
            }
            const double seconds = (end - start.opened()) * 1e-3;
            std::printf("  %d GL thread%s: %7.1f images/s (%7.1f MP/s), submit %6.3f ms, collect %6.3f ms (medians)\n", n,
                        n == 1 ? " " : "s", n * images / seconds, n * images * double(width) * height / seconds * 1e-6,
                        median(submit), median(collect));
        }
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "glthreads: %s\n", e.what());
        return 1;
    }
}
