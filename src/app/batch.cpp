#include "app/batch.h"

#include "base/clock.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include <sys/resource.h>

namespace gpufft {

StageTimes& StageTimes::operator+=(const StageTimes& o) {
    decode += o.decode;
    cpu_filter += o.cpu_filter;
    upload += o.upload;
    gpu += o.gpu;
    download += o.download;
    encode += o.encode;
    setup += o.setup;
    stream_decode += o.stream_decode;
    stream_encode += o.stream_encode;
    worker_wait += o.worker_wait;
    gpu_thread_wait += o.gpu_thread_wait;
    gpu_thread_user += o.gpu_thread_user;
    gpu_thread_system += o.gpu_thread_system;
    gpu_thread_waits += o.gpu_thread_waits;
    gpu_thread_preempted += o.gpu_thread_preempted;
    return *this;
}

std::vector<unsigned char> SpareBuffers::take() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (spare_.empty()) return {};
    std::vector<unsigned char> buffer = std::move(spare_.back());
    spare_.pop_back();
    held_ -= buffer.capacity();
    return buffer;
}

void SpareBuffers::give(std::vector<unsigned char>&& buffer) {
    if (buffer.capacity() == 0) return;
    std::vector<unsigned char> given = std::move(buffer);  // the caller's is empty either way
    std::lock_guard<std::mutex> lock(mutex_);
    if (spare_.size() >= limit_ || held_ + given.capacity() > bytes_) return;  // freed as it goes
    held_ += given.capacity();
    spare_.push_back(std::move(given));
}

int hardware_threads() {
    unsigned n = std::thread::hardware_concurrency();
    return n ? static_cast<int>(n) : 1;
}

namespace {

/// Runs `f`, adding its wall time to `seconds`; an exception lands in `error`.
template <typename F>
void timed(double& seconds, std::exception_ptr& error, F f) {
    auto start = Clock::now();
    try {
        f();
    } catch (...) {
        error = std::current_exception();
    }
    seconds += seconds_since(start);
}

class Batch {
public:
    Batch(size_t count, const BatchStages& stages, const BatchOptions& options)
        : count_(count), stages_(stages), workers_(std::max(1, options.workers)),
          in_flight_max_(options.in_flight ? options.in_flight : 2 * static_cast<size_t>(workers_) + 2) {}

    StageTimes run() {
        std::vector<std::thread> threads;
        for (int i = 0; i < workers_; ++i) threads.emplace_back([this] { worker(); });
        gpu_thread();
        for (std::thread& t : threads) t.join();
        return totals_;
    }

private:
    void finish(size_t index, std::unique_ptr<FileWork> work, std::exception_ptr error) {
        {
            std::lock_guard<std::mutex> report(report_mutex_);
            stages_.finish(index, work.get(), error);
        }
        std::lock_guard<std::mutex> lock(mutex_);
        if (work) totals_ += work->times;
        --in_flight_;
        ++finished_;
        changed_.notify_all();
    }

    void write_and_finish(std::unique_ptr<FileWork> work) {
        if (!work->error) timed(work->times.encode, work->error, [&] { stages_.write(*work); });
        size_t index = work->index;
        std::exception_ptr error = work->error;
        finish(index, std::move(work), error);
    }

    void worker() {
        for (;;) {
            std::unique_lock<std::mutex> lock(mutex_);
            auto start = Clock::now();
            changed_.wait(lock, [&] {
                return !to_write_.empty() || (next_read_ < count_ && in_flight_ < in_flight_max_) || finished_ == count_;
            });
            totals_.worker_wait += seconds_since(start);
            if (!to_write_.empty()) {
                std::unique_ptr<FileWork> work = std::move(to_write_.front());
                to_write_.pop_front();
                lock.unlock();
                write_and_finish(std::move(work));
                continue;
            }
            if (next_read_ >= count_) return;  // every file finished
            const size_t index = next_read_++;
            ++in_flight_;
            ++reading_;
            lock.unlock();

            std::unique_ptr<FileWork> work;
            std::exception_ptr error;
            double decode = 0;
            timed(decode, error, [&] { work = stages_.read(index); });
            if (work) {
                work->index = index;
                work->times.decode += decode;
                if (!work->error && !work->on_gpu)
                    timed(work->times.cpu_filter, work->error, [&] { stages_.cpu_filter(*work); });
            }
            lock.lock();
            --reading_;
            if (work && work->on_gpu && !work->error) {
                to_gpu_.push_back(std::move(work));
                changed_.notify_all();
                continue;
            }
            changed_.notify_all();  // the GPU thread may be waiting for the last read
            lock.unlock();
            if (!work) finish(index, nullptr, error);
            else write_and_finish(std::move(work));
        }
    }

    /// What the calling thread has taken of a CPU so far.
    static rusage thread_usage() {
        rusage u{};
        getrusage(RUSAGE_THREAD, &u);
        return u;
    }

    /// Adds what the GPU thread took of a CPU since `start` to the totals.
    void count_gpu_thread_usage(const rusage& start) {
        const rusage end = thread_usage();
        auto seconds = [](const timeval& a, const timeval& b) {
            return static_cast<double>(b.tv_sec - a.tv_sec) + 1e-6 * static_cast<double>(b.tv_usec - a.tv_usec);
        };
        std::lock_guard<std::mutex> lock(mutex_);
        totals_.gpu_thread_user += seconds(start.ru_utime, end.ru_utime);
        totals_.gpu_thread_system += seconds(start.ru_stime, end.ru_stime);
        totals_.gpu_thread_waits += end.ru_nvcsw - start.ru_nvcsw;
        totals_.gpu_thread_preempted += end.ru_nivcsw - start.ru_nivcsw;
    }

    void gpu_thread() {
        const rusage start = thread_usage();
        gpu_stages();
        count_gpu_thread_usage(start);
    }

    void gpu_stages() {
        if (stages_.gpu_prepare) {
            std::exception_ptr ignored;
            double seconds = 0;
            timed(seconds, ignored, [&] { stages_.gpu_prepare(); });
            std::lock_guard<std::mutex> lock(mutex_);
            totals_.setup += seconds;
        }
        std::vector<std::unique_ptr<FileWork>> done;
        bool queued = false;  // GPU work submitted and not yet collected
        for (;;) {
            std::unique_ptr<FileWork> work;
            {
                std::unique_lock<std::mutex> lock(mutex_);
                if (to_gpu_.empty() && queued) {
                    // Nothing new to overlap with: complete what the GPU has now.
                    lock.unlock();
                    stages_.gpu_flush(done);
                    queued = false;
                } else {
                    auto start = Clock::now();
                    changed_.wait(lock, [&] { return !to_gpu_.empty() || (next_read_ >= count_ && reading_ == 0); });
                    totals_.gpu_thread_wait += seconds_since(start);
                    if (to_gpu_.empty()) return;
                    work = std::move(to_gpu_.front());
                    to_gpu_.pop_front();
                }
            }
            if (work) {
                stages_.gpu_submit(std::move(work), done);
                queued = true;
            }
            if (done.empty()) continue;
            std::lock_guard<std::mutex> lock(mutex_);
            for (auto& d : done) to_write_.push_back(std::move(d));
            done.clear();
            changed_.notify_all();
        }
    }

    const size_t count_;
    const BatchStages& stages_;
    const int workers_;
    const size_t in_flight_max_;
    std::mutex mutex_, report_mutex_;
    std::condition_variable changed_;
    size_t next_read_ = 0, in_flight_ = 0, reading_ = 0, finished_ = 0;
    std::deque<std::unique_ptr<FileWork>> to_gpu_, to_write_;
    StageTimes totals_;
};

}  // namespace

StageTimes run_batch(size_t count, const BatchStages& stages, const BatchOptions& options) {
    return Batch(count, stages, options).run();
}

}  // namespace gpufft
