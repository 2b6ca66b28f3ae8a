// Threads, one a core, for the whole process: they inflate a file's parts and compress
// StreamDeflate's (png_io.cpp). Jobs run in the order given; their futures carry what they threw.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace gpufft {

class CorePool {
public:
    static CorePool& get();
    unsigned size() const { return static_cast<unsigned>(threads_.size()); }
    std::future<void> run(std::function<void()> job);
    ~CorePool();

private:
    CorePool();
    void work();
    std::mutex mutex_;
    std::condition_variable ready_;
    std::deque<std::packaged_task<void()>> jobs_;
    std::vector<std::thread> threads_;
    bool stop_ = false;
};

}  // namespace gpufft
