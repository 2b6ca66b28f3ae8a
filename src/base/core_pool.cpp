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
