// A batch of files through a pipeline: reading (decoding) and writing (encoding) on worker threads,
// the GPU stage on the calling thread (the one whose GL context is current), bounded so that
// memory stays flat: at most `in_flight` files between the start of their read and the end of
// their write. Files that need no GPU are filtered on the worker that read them.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace gpufft {

/// Wall-clock seconds per stage, summed over files (or per file).
struct StageTimes {
    double decode = 0, cpu_filter = 0, upload = 0, gpu = 0, download = 0, encode = 0;
    double setup = 0;  ///< GL thread: transforms, programs and kernel spectra made on first use
    /// Of decode and encode, what streamed files spent on their own decoding and encoding threads
    /// (one each, one such file at a time), not on the workers.
    double stream_decode = 0, stream_encode = 0;
    double worker_wait = 0, gpu_thread_wait = 0;  ///< batch totals only: idle time per side
    /// Batch totals only: the GPU thread's time on a CPU (user and system, its setup included),
    /// and how often it gave its core up (a lock, a fence, the next file) or had it taken.
    double gpu_thread_user = 0, gpu_thread_system = 0;
    long gpu_thread_waits = 0, gpu_thread_preempted = 0;
    StageTimes& operator+=(const StageTimes& o);
};

/// One file's work; the tool derives its own with what it carries between stages.
struct FileWork {
    size_t index = 0;
    bool on_gpu = false;         ///< set by read: the GPU stage filters it
    std::exception_ptr error;    ///< set by whichever stage failed; later stages are skipped
    StageTimes times;
    virtual ~FileWork() = default;
};

struct BatchStages {
    /// Worker: decodes file `index` into a new item (throws: the file failed).
    std::function<std::unique_ptr<FileWork>(size_t index)> read;
    /// Worker: filters an item that is not on_gpu.
    std::function<void(FileWork&)> cpu_filter;
    /// GPU thread, once, as the workers start reading (optional): work that the first files will
    /// need and that may overlap their reading, such as making the transform of the first file's
    /// size. Its exceptions are ignored (the file's own GPU stage meets the problem again); its
    /// wall time counts as setup.
    std::function<void()> gpu_prepare;
    /// GPU thread: queues an item's GPU work; appends the items whose GPU work is complete, in order.
    /// An item that fails here gets its `error` and is appended too.
    std::function<void(std::unique_ptr<FileWork>, std::vector<std::unique_ptr<FileWork>>& done)> gpu_submit;
    /// GPU thread: completes every queued item (appends them).
    std::function<void(std::vector<std::unique_ptr<FileWork>>& done)> gpu_flush;
    /// Worker: encodes and writes an item without error.
    std::function<void(FileWork&)> write;
    /// Any thread, one call at a time: the file is done (its error set if it failed). `index` is
    /// the file's; `work` is null when its read failed before an item existed.
    std::function<void(size_t index, FileWork* work, std::exception_ptr error)> finish;
};

struct BatchOptions {
    int workers = 1;       ///< threads reading and writing (and filtering on the CPU)
    size_t in_flight = 0;  ///< files between read and write at once; 0: 2 per worker + 2
};

/// Sample memory passed from the stage done with it to the next that needs some (any thread): a
/// batch's images are mostly of one size, and memory that fresh is zero-filled and faulted in a
/// page at a time (a 2048x2048 RGB image's 12.6 MB: as long as copying it), where memory given
/// back is used as it is. At most `limit` buffers and `bytes` of capacity wait; more are freed.
class SpareBuffers {
public:
    SpareBuffers(size_t limit, size_t bytes) : limit_(limit), bytes_(bytes) {}
    /// The last buffer given back (its size and capacity as they were), or an empty one.
    std::vector<unsigned char> take();
    void give(std::vector<unsigned char>&& buffer);

private:
    std::mutex mutex_;
    std::vector<std::vector<unsigned char>> spare_;
    size_t held_ = 0;  // their capacity
    const size_t limit_, bytes_;
};

/// Runs the batch of `count` files; returns the summed stage times (waits included).
StageTimes run_batch(size_t count, const BatchStages& stages, const BatchOptions& options);

/// The number of threads the machine runs at once (at least 1).
int hardware_threads();

}  // namespace gpufft
