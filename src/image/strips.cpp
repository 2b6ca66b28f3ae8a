#include "image/strips.h"

#include "base/clock.h"
#include "base/error.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

namespace gpufft {

namespace {

// What a strip may hold at most, whatever --max-memory allows: at 65-tap kernels a 512-row strip
// already spends under 15% on overlap, and larger strips buy little more, so a 65536-pixel-wide
// RGB image streams in well under 1 GiB.
constexpr long long kStripBudget = 512LL << 20;
// Bytes a tile's pixel takes in the filter's buffers: the float RGBA tile, FFTW's real plane and
// half spectrum, the float RGBA block it gives back (an upper bound; the GPU keeps its own).
constexpr long long kTileBytesPerPixel = 48;

long long strip_bytes(const AxisTiling& x, const AxisTiling& y, int width, int in_bytes, int out_bytes) {
    const long long in_row = static_cast<long long>(width) * in_bytes, out_row = static_cast<long long>(width) * out_bytes;
    // Rows a strip reads plus a strip's worth decoded ahead; the strip's output and the one being
    // encoded; one tile (FFTW's threads hold one each: a few MiB more, kept out of the plan so that
    // the tiling, and with it the output, does not depend on --jobs; as the encoder's parts in
    // flight, about 2 MiB a core: png_io.cpp, StreamDeflate; and the decoder's four blocks of rows
    // inflated ahead, about 1 MiB: StreamInflate).
    return (static_cast<long long>(y.fft) + y.block) * in_row + 2LL * y.block * out_row +
           static_cast<long long>(x.fft) * y.fft * kTileBytesPerPixel;
}

}  // namespace

std::string format_bytes(long long bytes) {
    char buf[32];
    const double b = static_cast<double>(bytes);
    if (bytes >= (1LL << 30)) std::snprintf(buf, sizeof buf, "%.1f GiB", b / (1LL << 30));
    else if (bytes >= (1LL << 20)) std::snprintf(buf, sizeof buf, "%.0f MiB", b / (1LL << 20));
    else std::snprintf(buf, sizeof buf, "%.0f KiB", b / (1LL << 10));
    return buf;
}

long long default_max_memory() {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page <= 0) return 4LL << 30;
    return static_cast<long long>(pages) * page / 4;
}

MemoryPlan plan_memory(int width, int height, int in_bytes, int out_bytes, const Kernel& kernel, Boundary b,
                       const LengthModel& lengths, const MemoryLimits& limits) {
    MemoryPlan p;
    const long long pixels = static_cast<long long>(width) * height;
    // Samples in, floats, samples out, and the encoder's filtered rows and compressed stream (png_io.cpp).
    p.whole_bytes = pixels * (in_bytes + 3 * out_bytes + 16);
    p.max_fft_x = p.max_fft_y = limits.max_fft;
    if (p.whole_bytes <= limits.max_memory && (limits.max_pixels <= 0 || pixels <= limits.max_pixels)) return p;

    p.strips = true;
    const long long budget = std::min(limits.max_memory, kStripBudget);
    const int top = std::max(2, std::min(limits.max_fft, limits.max_tile));
    const Image& w = kernel.weights;
    const AxisTiling x = tile_axis(width, w.width, kernel.cx, b, top, lengths, 0);
    long long least = 0;
    for (int cap = top; cap > w.height; cap /= 2) {
        AxisTiling y;
        try {
            y = tile_axis(height, w.height, kernel.cy, b, cap, lengths, 1);
        } catch (const Error&) {
            break;  // the kernel leaves no room in a shorter FFT
        }
        const long long bytes = strip_bytes(x, y, width, in_bytes, out_bytes);
        least = bytes;
        if (bytes <= budget) {
            p.max_fft_x = top;
            p.max_fft_y = cap;
            p.strip_bytes = bytes;
            p.y = y;
            return p;
        }
    }
    throw Error(std::to_string(width) + "x" + std::to_string(height) + " needs " + format_bytes(p.whole_bytes) +
                " whole and " + (least ? "at least " + format_bytes(least) : std::string("more")) +
                " in strips, above --max-memory " + format_bytes(limits.max_memory));
}

void FftwStrips::submit(const std::vector<const unsigned char*>& rows, int origin, int first, int count) {
    Samples strip;
    strip.resize(width_, count, c_.out_channels, c_.out_depth);
    const int parts = static_cast<int>(workspaces_.size());
    auto part = [&](int p) {
        convolver_.apply_strip(rows, origin, first, count, width_, height_, c_, channels_, workspaces_[static_cast<size_t>(p)], caps_,
                               strip, p, parts);
    };
    std::vector<std::thread> helpers;
    std::vector<std::exception_ptr> errors(workspaces_.size());
    for (int p = 1; p < parts; ++p)
        helpers.emplace_back([&, p] {
            try {
                part(p);
            } catch (...) {
                errors[static_cast<size_t>(p)] = std::current_exception();
            }
        });
    try {
        part(0);
    } catch (...) {
        errors[0] = std::current_exception();
    }
    for (std::thread& t : helpers) t.join();
    for (const std::exception_ptr& e : errors)
        if (e) std::rethrow_exception(e);
    done_.push_back(std::move(strip));
}

PngRowSource::PngRowSource(const std::string& path, const PngLimits& limits)
    : path_(path), limits_(limits), reader_(std::make_unique<PngReader>(path, limits)) {}

void PngRowSource::restart() {
    reader_.reset();
    reader_ = std::make_unique<PngReader>(path_, limits_);
}

void SamplesRowSource::read(unsigned char* dst, int count) {
    if (count < 0 || next_ + count > s_.height) throw std::logic_error("SamplesRowSource: past the last row");
    std::memcpy(dst, s_.row(next_), s_.row_bytes() * static_cast<size_t>(count));
    next_ += count;
}

namespace {

using Row = std::unique_ptr<unsigned char[]>;

/// The rows between the decoding thread and the strips: a bounded queue, and row buffers reused.
class RowQueue {
public:
    RowQueue(size_t row_bytes, size_t capacity) : row_bytes_(row_bytes), capacity_(capacity) {}

    Row buffer() {
        std::lock_guard<std::mutex> lock(mutex_);
        if (free_.empty()) return Row(new unsigned char[row_bytes_]);
        Row r = std::move(free_.back());
        free_.pop_back();
        return r;
    }
    void recycle(Row r) {
        std::lock_guard<std::mutex> lock(mutex_);
        free_.push_back(std::move(r));
    }
    /// Decoder: false once the strips stopped.
    bool push(int index, Row r) {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return stopped_ || rows_.size() < capacity_; });
        if (stopped_) return false;
        rows_.emplace_back(index, std::move(r));
        changed_.notify_all();
        return true;
    }
    /// Strips: the next row; rethrows the decoder's error.
    std::pair<int, Row> pop() {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return !rows_.empty() || error_ || finished_; });
        if (rows_.empty()) {
            if (error_) std::rethrow_exception(error_);
            throw std::logic_error("run_strips: a row the strips need was never decoded");
        }
        auto r = std::move(rows_.front());
        rows_.pop_front();
        changed_.notify_all();
        return r;
    }
    void fail(std::exception_ptr e) {
        std::lock_guard<std::mutex> lock(mutex_);
        error_ = e;
        changed_.notify_all();
    }
    void finish() {
        std::lock_guard<std::mutex> lock(mutex_);
        finished_ = true;
        changed_.notify_all();
    }
    void stop() {
        std::lock_guard<std::mutex> lock(mutex_);
        stopped_ = true;
        changed_.notify_all();
    }

private:
    const size_t row_bytes_, capacity_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<std::pair<int, Row>> rows_;
    std::vector<Row> free_;
    std::exception_ptr error_;
    bool finished_ = false, stopped_ = false;
};

/// The strips' output on its way to the encoding thread: at most one waits while one is encoded.
class OutputQueue {
public:
    /// Strips: rethrows the encoder's error.
    void push(Samples s) {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return error_ || strips_.empty(); });
        if (error_) std::rethrow_exception(error_);
        strips_.push_back(std::move(s));
        changed_.notify_all();
    }
    /// Encoder: false when no strip will come.
    bool pop(Samples& s) {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return !strips_.empty() || closed_; });
        if (strips_.empty()) return false;
        s = std::move(strips_.front());
        strips_.pop_front();
        changed_.notify_all();
        return true;
    }
    void close() {
        std::lock_guard<std::mutex> lock(mutex_);
        closed_ = true;
        changed_.notify_all();
    }
    void fail(std::exception_ptr e) {
        std::lock_guard<std::mutex> lock(mutex_);
        error_ = e;
        closed_ = true;
        strips_.clear();
        changed_.notify_all();
    }
    /// Strips, at the end: waits for the encoder to finish; rethrows its error.
    void drain(std::thread& encoder) {
        close();
        encoder.join();
        if (error_) std::rethrow_exception(error_);
    }

private:
    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<Samples> strips_;
    std::exception_ptr error_;
    bool closed_ = false;
};

}  // namespace

StripStats run_strips(RowSource& source, StripFilter& filter, PngWriter& out, const AxisTiling& y, Boundary b,
                      const std::function<void(int done, int strips)>& on_strip) {
    const int height = source.height(), strips = y.tiles(height);
    auto origin = [&](int k) { return k * y.block - y.lead; };
    // Which strips read each row: the last one (when the row can go), and rows a strip reads
    // beyond the rows decoded by then (wrap's last rows, read by the first strip), which a first
    // pass collects.
    std::vector<int> last_use(static_cast<size_t>(height), -1);
    std::vector<char> early(static_cast<size_t>(height), 0);
    bool two_passes = false;
    for (int k = 0; k < strips; ++k) {
        const long long frontier = std::min<long long>(origin(k) + y.fft - 1, height - 1);
        for (int i = 0; i < y.fft; ++i) {
            const long long r = boundary_index(origin(k) + i, height, b);
            if (r < 0) continue;
            last_use[static_cast<size_t>(r)] = k;
            if (r > frontier && !early[static_cast<size_t>(r)]) early[static_cast<size_t>(r)] = two_passes = true;
        }
    }

    StripStats stats;
    stats.strips = strips;
    stats.passes = two_passes ? 2 : 1;
    const size_t row_bytes = source.row_bytes();
    RowQueue rows(row_bytes, static_cast<size_t>(std::max(1, y.block)));
    OutputQueue output;

    std::thread decoder([&] {
        auto read = [&](unsigned char* dst) {
            const auto start = Clock::now();
            source.read(dst, 1);
            stats.decode += seconds_since(start);
        };
        try {
            Row scratch(new unsigned char[row_bytes]);
            if (two_passes) {
                for (int r = 0; r < height; ++r) {
                    read(scratch.get());
                    if (!early[static_cast<size_t>(r)]) continue;
                    Row copy = rows.buffer();
                    std::memcpy(copy.get(), scratch.get(), row_bytes);
                    if (!rows.push(r, std::move(copy))) return;
                }
                source.restart();
            }
            for (int r = 0; r < height; ++r) {
                if (early[static_cast<size_t>(r)] || last_use[static_cast<size_t>(r)] < 0) {
                    read(scratch.get());
                    continue;
                }
                Row row = rows.buffer();
                read(row.get());
                if (!rows.push(r, std::move(row))) return;
            }
            rows.finish();
        } catch (...) {
            rows.fail(std::current_exception());
        }
    });
    std::thread encoder([&] {
        try {
            Samples s;
            while (output.pop(s)) {
                const auto start = Clock::now();
                out.write_rows(s.data.data(), s.height);
                stats.encode += seconds_since(start);
            }
        } catch (...) {
            output.fail(std::current_exception());
        }
    });

    try {
        std::vector<Row> held(static_cast<size_t>(height));
        std::vector<const unsigned char*> strip(static_cast<size_t>(y.fft));
        std::vector<long long> index(static_cast<size_t>(y.fft));  // the image row each strip row reads
        int in_hand = 0, handed_on = 0;
        auto hand_on = [&] {
            const auto start = Clock::now();
            Samples s = filter.collect();
            stats.filter += seconds_since(start);
            output.push(std::move(s));
            if (on_strip) on_strip(++handed_on, strips);
        };
        for (int k = 0; k < strips; ++k) {
            for (int i = 0; i < y.fft; ++i) {
                const long long r = index[static_cast<size_t>(i)] = boundary_index(origin(k) + i, height, b);
                while (r >= 0 && !held[static_cast<size_t>(r)]) {
                    auto [index, row] = rows.pop();
                    held[static_cast<size_t>(index)] = std::move(row);
                    stats.rows_held = std::max(stats.rows_held, ++in_hand);
                }
                strip[static_cast<size_t>(i)] = r < 0 ? nullptr : held[static_cast<size_t>(r)].get();
            }
            const auto start = Clock::now();
            const int first = k * y.block;
            filter.submit(strip, origin(k), first, std::min(y.block, height - first));
            stats.filter += seconds_since(start);
            for (const long long r : index)
                if (r >= 0 && last_use[static_cast<size_t>(r)] == k && held[static_cast<size_t>(r)]) {
                    rows.recycle(std::move(held[static_cast<size_t>(r)]));
                    --in_hand;
                }
            while (filter.pending() > 1) hand_on();
        }
        while (filter.pending() > 0) hand_on();
        decoder.join();
        output.drain(encoder);
    } catch (...) {
        rows.stop();
        output.fail(std::current_exception());
        if (decoder.joinable()) decoder.join();
        if (encoder.joinable()) encoder.join();
        throw;
    }
    return stats;
}

}  // namespace gpufft
