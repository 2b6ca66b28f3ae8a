// PNG image data deflated by runs and Huffman codes alone (RFC 1951): the "run coder" of the fast
// levels (png_io.cpp). Filtered rows of photographs and of the smooth images a filter makes are
// mostly small residuals and runs of one byte: a dynamic Huffman code of the bytes, and each run
// as matches at distance 1, codes them smaller than libdeflate's level 4 does (whose matches of a
// few bytes anywhere in the window cost more bits than the literals they replace) in a fifth of
// its time. Drawings, text and repeated patterns are the opposite: there LZ77's matches pay, so
// png_io.cpp asks runs_pay() on a sample of the rows first and keeps libdeflate where they lose.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

struct libdeflate_compressor;

namespace gpufft {

/// The run coder's block: bytes a dynamic Huffman code serves (deflate_runs(), RunCoder).
constexpr size_t kRunBlock = size_t(128) << 10;

/// This thread's libdeflate compressor at `level` (1-12), made on first use and kept.
libdeflate_compressor* level_compressor(int level);

/// `length` bytes as raw deflate into `out` (deflate_runs_bound() bytes), its size returned:
/// blocks of `block` bytes (0: kRunBlock) each coded by a dynamic Huffman code of its
/// literals and its runs (a byte then at least m repeats of it, as matches at distance 1; m chosen
/// per block by the bits it costs), or stored where coding would not pay. `last`: its last block
/// ends the stream (then padded to a byte); otherwise the part ends with an empty stored block (a
/// sync flush) so that another may follow on the next byte. Nothing refers to bytes before
/// `data`: parts need no dictionary.
size_t deflate_runs(const unsigned char* data, size_t length, bool last, unsigned char* out, size_t block = 0);
/// The most deflate_runs() may write for `length` bytes (with some slack it needs).
size_t deflate_runs_bound(size_t length, size_t block = 0);

/// The run coder a piece at a time into one stream: the pieces' bytes one after another make the
/// stream deflate_runs() makes of them at once, where every piece but the last is a whole number
/// of blocks. `out` holds deflate_runs_bound() of all the bytes to be given (the same block).
class RunCoder {
public:
    explicit RunCoder(unsigned char* out, size_t block = 0);
    /// `length` more bytes, as blocks; `last`: their last block ends the stream.
    void code(const unsigned char* data, size_t length, bool last);
    /// The stream's end (`last`: nothing more to add where code() ended it, else an empty final
    /// block) or a sync flush, up to the next byte; the bytes written in all.
    size_t finish(bool last);

private:
    unsigned char* start_;
    unsigned char* out_;
    uint64_t bits_ = 0;   // bits not yet stored, fewer than 8
    unsigned count_ = 0;
    size_t block_;
    bool ended_ = false;  // a final block written
};

/// What the run coder counts in a block of bytes to choose its code (the layout the GPU's
/// programs/run_coder.comp (COUNT) writes, a 32-bit word each): runs are a byte and then 8 or more
/// repeats of it, the longest such in the block.
struct RunCounts {
    uint32_t heads[256];          // each byte value's bytes, less the repeats of its runs
    uint32_t short_runs[8][256];  // runs of 8 .. 15 repeats: [repeats - 8][byte]
    uint32_t long_symbols[29];    // runs of 16 or more, as matches of 258 while 3 would be left: each length symbol's matches
    uint32_t long_extra;          // those matches' extra bits
    uint32_t long_matches;        // and their number
};
/// The counts of `n` bytes as the CPU's coder takes them.
RunCounts run_counts(const unsigned char* data, size_t n);

/// Whether the coder stores a block of `n` bytes with these counts (coding it would take no fewer
/// bits): the one block programs/run_coder.comp leaves to the CPU, and the tests' check of it.
bool run_block_stored(const RunCounts& counts, size_t n);

/// Where runs_pay() looks in `length` bytes: (first byte, bytes) of bands of 32 KiB spread over
/// them (one a MiB, `fewest` to 8, each in the middle of its share), or all of them where they are
/// 128 KiB or less. A whole image's writer takes at least 4: of the 54 outputs of `make demo` that
/// the fast writer codes, two then take the coder that makes over 2% more bytes than the other
/// (eight did with 2 bands at the first and last rows, which saw a render's background and not
/// the object between). A streamed part of 1-2 MiB takes 2 (more would cost its coding a quarter
/// more).
std::vector<std::pair<size_t, size_t>> runs_sample(size_t length, size_t fewest = 2);
/// Whether the run coder codes these bands (runs_sample()'s, of the filtered rows) no larger in
/// all than libdeflate's `level` does, each band coded alone both ways. Where there is one band and
/// `smaller` is given, the smaller of its two raw deflate streams is kept there (the run coder's
/// on a tie): a band that is all the rows (128 KiB or less) need not be coded a second time.
bool runs_pay(const std::vector<std::pair<const unsigned char*, size_t>>& bands, int level,
              std::vector<unsigned char>* smaller = nullptr);
/// The same over runs_sample(length) of `data`.
bool runs_pay(const unsigned char* data, size_t length, int level);

}  // namespace gpufft
