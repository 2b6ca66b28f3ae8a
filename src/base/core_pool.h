// Threads, one a core, for the whole process: they inflate a file's parts and compress
// StreamDeflate's (png_io.cpp), and choose the codes of an image's blocks deflated on the GPU
// (gpu_deflate.cpp). Jobs run in the order given; their futures carry what they threw.
#pragma once

#include <condition_variable>
#include <cstddef>
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
    /// `each(i)` for i in [0, n), in up to size() jobs of neighbouring i; returns when all are
    /// done, throwing what the first job that threw threw.
    void for_each(size_t n, const std::function<void(size_t)>& each);
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
