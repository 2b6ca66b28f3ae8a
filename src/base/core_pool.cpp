#include "base/core_pool.h"

#include <algorithm>

namespace gpufft {

CorePool& CorePool::get() {
    static CorePool pool;
    return pool;
}

CorePool::CorePool() {
    const unsigned n = std::max(1u, std::thread::hardware_concurrency());
    for (unsigned i = 0; i < n; ++i) threads_.emplace_back([this] { work(); });
}

CorePool::~CorePool() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    ready_.notify_all();
    for (std::thread& t : threads_) t.join();
}

std::future<void> CorePool::run(std::function<void()> job) {
    std::packaged_task<void()> task(std::move(job));
    std::future<void> done = task.get_future();
    {
        std::lock_guard<std::mutex> lock(mutex_);
        jobs_.push_back(std::move(task));
    }
    ready_.notify_one();
    return done;
}

void CorePool::for_each(size_t n, const std::function<void(size_t)>& each) {
    const size_t jobs = std::min<size_t>(n, size());
    std::vector<std::future<void>> done;
    for (size_t j = 0; j < jobs; ++j)
        done.push_back(run([&, j] {
            for (size_t i = n * j / jobs; i < n * (j + 1) / jobs; ++i) each(i);
        }));
    for (auto& d : done) d.wait();  // every job ended before `each` may go
    for (auto& d : done) d.get();
}

void CorePool::work() {
    for (;;) {
        std::packaged_task<void()> task;
        {
            std::unique_lock<std::mutex> lock(mutex_);
            ready_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
            if (jobs_.empty()) return;
            task = std::move(jobs_.front());
            jobs_.pop_front();
        }
        task();
    }
}

}  // namespace gpufft
