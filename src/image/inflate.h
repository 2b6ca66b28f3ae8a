// A zlib stream (RFC 1950 around RFC 1951's deflate) inflated a piece at a time, for PNG rows read
// by the streamed path (png_io.cpp's StreamInflate), and a whole one inflated in parts on several
// threads (inflate_in_parts, for a whole image). zlib's inflate() is the reference and the
// fallback: this decoder is table-driven with a 64-bit bit buffer and word copies (about 2x
// zlib's speed on PNG image data, src/README.md, "Our own inflater"), and it is never more
// lenient than zlib: every stream zlib refuses it refuses (at the same place or earlier), and
// where both accept one they give the same bytes, as deflate's output is fixed by its input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <vector>

namespace gpufft {

/// A zlib header as PNG's decoders take it: deflate, a window of 32 KiB (byte 0x78: zlib inflates
/// with the window a header declares, so a smaller one must be read by zlib), the check bits, no
/// preset dictionary.
bool zlib_header_ok(const unsigned char head[2]);

/// The decoder, its output of `T`: bytes (`Inflater`), or 16-bit values for a part of a stream
/// read from a block's start without the bytes before it (inflate_in_parts: values 256 + i stand
/// for the i-th of the 32 KiB before the part, until the parts before it are read).
template <class T>
class BasicInflater {
public:
    /// `source(buffer, capacity)`: up to `capacity` more bytes of the stream into `buffer`;
    /// 0 at the stream's end, negative on a failure of its own (the inflater then fails).
    using Source = std::function<long(unsigned char* buffer, size_t capacity)>;
    /// A zlib stream.
    explicit BasicInflater(Source source);
    /// Raw deflate from the block that starts `skip` bits into the source (a part of a stream):
    /// with `unknown_history`, distances may reach 32 KiB before it (as the values above); it ends
    /// after the first block that ends `stop` bits or more into the source, or after the final
    /// block.
    struct Part {
        unsigned skip = 0;
        bool unknown_history = false;
        uint64_t stop = UINT64_MAX;
    };
    BasicInflater(Source source, const Part& part);
    /// `from` goes on as this one: its output all read, and the last 32 KiB of it bytes.
    template <class U>
    explicit BasicInflater(BasicInflater<U>&& from);

    /// The next `size` values of output into `out` (the header checked first); false if the stream
    /// is not plainly right before they are all made, or ends first (the source's failure is its
    /// end). The bytes before the place it went wrong are all given by earlier calls; after a
    /// false every call returns false.
    bool read(T* out, size_t size);
    /// Up to `capacity` values of output, 0 where none is left (the end, or a failure: failed()).
    size_t read_some(T* out, size_t capacity);
    /// After the output's last byte: the stream ends here (no more output), its Adler-32 matches,
    /// and the source has nothing after it and did not fail.
    bool finish();

    bool failed() const { return dead_; }
    bool final_block() const { return final_ && state_ == State::Done; }  // the stream's last block read
    uint64_t position() const;  // bits of the source taken (a part's end, once read_some() gives 0)

private:
    template <class>
    friend class BasicInflater;
    void begin();  // the header read, once
    bool header();
    bool produce();  // more output into the window: false where none was made
    void take_output(T* out, size_t n);
    struct Bits;
    bool block_header();
    bool dynamic_tables();
    bool stored();
    bool huffman();
    void refill();
    void pull();
    unsigned next_bits(unsigned n);  // the next n bits of the stream, taken (n <= nbits_)
    void to_byte_edge();
    bool bits_real() const { return nbits_ >= 8 * phantom_; }

    Source source_;
    Part part_;
    bool zlib_ = true;
    std::vector<unsigned char> in_;
    size_t ip_ = 0, iend_ = 0;
    uint64_t pulled_ = 0;  // bytes the source gave
    bool eof_ = false, source_failed_ = false, started_ = false, dead_ = false;
    uint64_t bits_ = 0;
    unsigned nbits_ = 0, phantom_ = 0;  // phantom_: zero bytes added past the source's end,
    size_t phantom_pos_ = 0;            // the first at window_[phantom_pos_]

    std::vector<T> window_;  // 32 KiB of history, then the output not yet read
    size_t pos_ = 0, rd_ = 0;
    uint64_t origin_ = 0;  // output before window_[0] (distances may not reach past the first byte)
    uint32_t adler_ = 1;

    enum class State { Header, Stored, Huffman, Done } state_ = State::Header;
    bool final_ = false;
    size_t stored_left_ = 0;
    std::vector<uint32_t> lit_, dist_, lengths_;  // decoding tables (build() in inflate.cpp)
};

using Inflater = BasicInflater<unsigned char>;

/// Runs a job on another thread; its future is ready when the job has run.
using JobRunner = std::function<std::future<void>(std::function<void()>)>;

/// A whole zlib stream `z` of `z_size` bytes inflated to exactly `size` bytes into `out`, in up to
/// `parts` parts of at least `min_part` bytes of the stream decoded at once through `run`: each
/// part from the first block that starts in it (found by its header), its references to the bytes
/// before it resolved once the parts before it are read, and kept only where the part before it
/// ends exactly at that block. True where the stream is plainly right (its blocks, the final one
/// ending at its Adler-32, which matches, and nothing after); false leaves `out` undefined, for
/// the caller to read the stream again one way (where a part's start was not a block's, or the
/// stream is wrong).
bool inflate_in_parts(const unsigned char* z, size_t z_size, unsigned char* out, size_t size, unsigned parts,
                      const JobRunner& run, size_t min_part = size_t(4) << 20);

}  // namespace gpufft
