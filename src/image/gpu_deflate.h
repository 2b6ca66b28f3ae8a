// PNG image data deflated on the GPU by the run coder (deflate.h): the output's rows filtered
// (png_filter.comp), each block's runs counted, its code chosen from the counts as the CPU's coder
// chooses it, and the stream coded (run_coder.comp: COUNT, PLAN, CODE), all queued behind the
// filter with nothing back to the CPU between: the bits deflate_runs() makes of the same rows, so
// that a batch's workers, for which encoding was half the work, only write the file. The stream
// comes back through a mapped buffer where the context has one. Needs GL 4.3 compute shaders.
#pragma once

#include "gl/buffer.h"
#include "gl/program.h"
#include "gl/timer.h"
#include "gpufft/gpufft.h"

#include <cstdint>
#include <vector>

namespace gpufft {

class GpuRunCoder {
public:
    /// The rows' bytes (with their filter bytes) must be fewer: the programs index them in 32 bits.
    static constexpr size_t kMaxLength = size_t(1) << 31;

    explicit GpuRunCoder(ProgramCache& programs) : programs_(programs) {}
    ~GpuRunCoder();
    GpuRunCoder(const GpuRunCoder&) = delete;
    GpuRunCoder& operator=(const GpuRunCoder&) = delete;

    /// Queues filtering `rows` (bound as serialize.comp leaves them: `height` rows of `row_bytes`,
    /// pixels of `bpp` bytes, 16-bit samples in the machine's order where `wide`) and deflating
    /// them; with `bands`, the filtered rows' sample bands (runs_sample(rows, 4)) come back too,
    /// where the stream comes back mapped (bands_back()).
    void deflate(const StorageBuffer& rows, size_t row_bytes, int height, int bpp, bool wide, bool bands = false);
    /// The same for a stream of bytes already filtered (tests: any bytes), uploaded.
    void deflate(const std::vector<unsigned char>& stream);
    /// Waits for the work: the stream (raw deflate, the last block final, padded to a byte) and
    /// the Adler-32 of the filtered rows into `out`; false (`out` not coded) where the CPU's coder
    /// would store a block, or the stream would take over half the rows' bytes (such
    /// streams are then the CPU's to make).
    bool collect(DeflatedRows& out);
    /// Whether the last deflate() brings the sample bands back (collect() puts them in `bands`).
    bool bands_back() const { return bands_; }
    /// Benchmarks: a timestamp after each step of the next deflate() (filter, clear, COUNT, PLAN,
    /// CODE, copies back) into `stamps` (null: none).
    void profile(GpuTimestamps* stamps) { stamps_ = stamps; }

private:
    void queue();

    ProgramCache& programs_;
    StorageBuffer filtered_, counts_, chunks_, codes_, summary_, stream_;
    HostBuffer summary_back_, stream_back_;  // where mapped (else read from summary_, stream_)
    HostBuffer bands_back_;                  // the sample bands of the filtered rows, where asked
    bool mapped_ = false, bands_ = false;
    size_t length_ = 0, blocks_ = 0, room_ = 0;
    size_t band_bytes_ = 0;  // the sample bands' bytes (runs_sample(length_, 4))
    GLsync fence_ = nullptr;
    GpuTimestamps* stamps_ = nullptr;
};

}  // namespace gpufft
