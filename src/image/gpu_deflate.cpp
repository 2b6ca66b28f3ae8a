#include "image/gpu_deflate.h"

#include "image/deflate.h"

#include <algorithm>
#include <string>
#include <stdexcept>

namespace gpufft {

namespace {

// A block's chunks (run_coder.comp's RUN_CHUNKS): COUNT's and CODE's invocations a workgroup, each
// walking a chunk. H200, deflateprobe on a filtered 1024x1024 RGB output, 256 / 512 / 1024 chunks:
// COUNT 0.36 / 0.22 / 0.17 ms, CODE 0.78 / 0.45 / 0.31 ms; one block a workgroup, so fewer bytes
// an invocation (128) and more warps an SM to hide the walk's latency (src/README.md, "What the
// GPU's coding waits on").
constexpr size_t kChunks = 1024;
// run_coder.comp (COUNT): a block's RunCounts word by word, then its Adler-32 sums; (PLAN) a
// block's code in kCodeWords words; its summary: bits, stored or not, the Adler-32 sums.
constexpr size_t kCountBytes = sizeof(RunCounts) + 8, kCodeWords = 940;
static_assert(sizeof(RunCounts) == (256 + 8 * 256 + 29 + 2) * 4, "run_coder.comp's counts");
struct Summary {
    uint32_t bits, stored, adler_a, adler_b;
};
constexpr uint32_t kAdlerBase = 65521;

}  // namespace

GpuRunCoder::~GpuRunCoder() {
    if (fence_) glDeleteSync(fence_);
}

void GpuRunCoder::deflate(const StorageBuffer& rows, size_t row_bytes, int height, int bpp, bool wide, bool bands) {
    length_ = (row_bytes + 1) * static_cast<size_t>(height);
    bands_ = bands;
    const size_t words = (length_ + 3) / 4;
    filtered_.reserve(words * 4, "the filtered rows");
    if (stamps_) stamps_->start();
    const GlProgram& filter = programs_.get({"", "png_filter.comp", {}, false});
    filter.use();
    rows.bind(2);
    filtered_.bind(3);
    glUniform4i(filter.location(Uniform::RowShape), static_cast<GLint>(row_bytes), height, bpp, wide ? 1 : 0);
    const size_t groups = (words + 255) / 256, x = std::min<size_t>(groups, 65535);
    glDispatchCompute(static_cast<GLuint>(x), static_cast<GLuint>((groups + x - 1) / x), 1);
    glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
    StorageBuffer::unbind(2);
    if (stamps_) stamps_->mark();
    queue();
}

void GpuRunCoder::deflate(const std::vector<unsigned char>& stream) {
    length_ = stream.size();
    bands_ = false;
    std::vector<unsigned char> words((length_ + 3) / 4 * 4, 0);
    std::copy(stream.begin(), stream.end(), words.begin());
    filtered_.reserve(std::max<size_t>(words.size(), 4), "the filtered rows");
    filtered_.write(words.data(), words.size());
    queue();
}

void GpuRunCoder::queue() {
    blocks_ = (length_ + kRunBlock - 1) / kRunBlock;
    if (length_ == 0 || length_ >= kMaxLength) throw std::invalid_argument("GpuRunCoder: 1 byte to 2 GiB of rows");
    // The stream's room: half the rows (a filtered 8-bit photograph takes an eighth, a 16-bit one
    // a third); a longer stream (CODE writes none past it) is the CPU's to make, as a stored
    // block's is. The whole bound would cost the GPU 0.4 ms more a 2048x2048 RGB image to clear.
    const size_t room = (length_ / 2 + 4096) / 4 * 4;
    counts_.reserve(blocks_ * kCountBytes, "the run counts");
    chunks_.reserve(blocks_ * kChunks * 16, "the run chunks");
    codes_.reserve(blocks_ * kCodeWords * 4, "the blocks' codes");
    summary_.reserve(blocks_ * sizeof(Summary), "the blocks' sizes");
    stream_.reserve(room, "the deflated rows");
    const uint32_t zero = 0;
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, stream_.id());
    glClearBufferSubData(GL_SHADER_STORAGE_BUFFER, GL_R32UI, 0, static_cast<GLsizeiptr>(room), GL_RED_INTEGER, GL_UNSIGNED_INT, &zero);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
    if (stamps_) stamps_->mark();
    filtered_.bind(3);
    counts_.bind(4);
    chunks_.bind(5);
    codes_.bind(6);
    stream_.bind(7);
    summary_.bind(8);
    for (const char* step : {"COUNT", "PLAN", "CODE"}) {
        const GlProgram& p = programs_.get({"", "run_coder.comp", {step, "RUN_CHUNKS " + std::to_string(kChunks)}, false});
        p.use();
        glUniform3ui(p.location(Uniform::Blocks), static_cast<GLuint>(length_), static_cast<GLuint>(kRunBlock),
                     static_cast<GLuint>(kRunBlock / kChunks));
        glDispatchCompute(static_cast<GLuint>(blocks_), 1, 1);
        glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT | GL_BUFFER_UPDATE_BARRIER_BIT);
        if (stamps_) stamps_->mark();
    }
    for (GLuint b = 3; b <= 8; ++b) StorageBuffer::unbind(b);
    glUseProgram(0);
    // Back through mapped buffers: the summaries and the stream's room.
    room_ = room;
    mapped_ = summary_back_.reserve(blocks_ * sizeof(Summary)) && stream_back_.reserve(room);
    if (mapped_) {
        summary_back_.copy_from(summary_, blocks_ * sizeof(Summary));
        stream_back_.copy_from(stream_, room);
    }
    // Made wherever the stream comes back mapped, asked for or not, so that a coder holds the same
    // GL objects whichever of its images came with an output area (a batch's count of GL objects
    // must not depend on timing: test_reliability).
    const std::vector<std::pair<size_t, size_t>> sample = runs_sample(length_, 4);
    band_bytes_ = 0;
    for (const auto& band : sample) band_bytes_ += band.second;
    const bool banded = mapped_ && bands_back_.reserve((band_bytes_ + 3) / 4 * 4);
    bands_ = bands_ && banded;
    if (bands_) {  // a writer's choice reads them (write_deflated()), where the samples stay on the GPU
        size_t at = 0;
        for (const auto& [first, size] : sample) {
            copy_buffer_range(filtered_.id(), first, bands_back_.id(), at, size);
            at += size;
        }
        glMemoryBarrier(GL_CLIENT_MAPPED_BUFFER_BARRIER_BIT);
    }
    if (stamps_) stamps_->mark();
    if (fence_) glDeleteSync(fence_);
    fence_ = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
    check_gl("deflating the output's rows");
}

bool GpuRunCoder::collect(DeflatedRows& out) {
    if (!fence_) throw std::logic_error("GpuRunCoder::collect: nothing queued");
    glClientWaitSync(fence_, GL_SYNC_FLUSH_COMMANDS_BIT, GLuint64(60) * 1000000000);
    glDeleteSync(fence_);
    fence_ = nullptr;
    out.coded = false;
    out.data.clear();
    out.adler = 1;
    out.bands.clear();
    if (bands_) out.bands.assign(bands_back_.data(), bands_back_.data() + band_bytes_);
    std::vector<Summary> read;
    const Summary* summary = reinterpret_cast<const Summary*>(summary_back_.data());
    if (!mapped_) {
        read.resize(blocks_);
        summary_.read(read.data(), blocks_ * sizeof(Summary));
        summary = read.data();
    }
    uint64_t bits = 0, a = 1, b = 0;
    for (size_t i = 0; i < blocks_; ++i) {
        if (summary[i].stored) return false;
        bits += summary[i].bits;
        // Adler-32 a block at a time, as run_coder.comp combines its chunks.
        const size_t n = std::min(kRunBlock, length_ - i * kRunBlock);
        b = (b + n % kAdlerBase * a + summary[i].adler_b) % kAdlerBase;
        a = (a + summary[i].adler_a) % kAdlerBase;
    }
    const size_t bytes = static_cast<size_t>((bits + 7) / 8);
    if (bytes + 4 > room_) return false;
    if (mapped_) {
        out.data.assign(stream_back_.data(), stream_back_.data() + bytes);  // into the memory given, not zero filled first
    } else {
        out.data.resize(bytes);
        stream_.read(out.data.data(), bytes);
    }
    out.adler = static_cast<uint32_t>(b << 16 | a);
    out.coded = true;
    check_gl("reading the deflated rows back");
    return true;
}

}  // namespace gpufft
