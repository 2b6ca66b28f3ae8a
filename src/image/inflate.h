// A zlib stream (RFC 1950 around RFC 1951's deflate) inflated a piece at a time, for PNG rows read
// by the streamed path (png_io.cpp's StreamInflate). zlib's inflate() is the reference and the
// fallback: this decoder is table-driven with a 64-bit bit buffer and word copies (about 2x
// zlib's speed on PNG image data, src/README.md, "Our own inflater"), and it is never more
// lenient than zlib: every stream zlib refuses it refuses (at the same place or earlier), and
// where both accept one they give the same bytes, as deflate's output is fixed by its input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace gpufft {

/// A zlib header as PNG's decoders take it: deflate, a window of 32 KiB (byte 0x78: zlib inflates
/// with the window a header declares, so a smaller one must be read by zlib), the check bits, no
/// preset dictionary.
bool zlib_header_ok(const unsigned char head[2]);

class Inflater {
public:
    /// `source(buffer, capacity)`: up to `capacity` more bytes of the zlib stream into `buffer`;
    /// 0 at the stream's end, negative on a failure of its own (the inflater then fails).
    using Source = std::function<long(unsigned char* buffer, size_t capacity)>;
    explicit Inflater(Source source);

    /// The next `size` bytes of output into `out` (the header checked first); false if the stream
    /// is not plainly right before they are all made, or ends first (the source's failure is its
    /// end). The bytes before the place it went wrong are all given by earlier calls; after a
    /// false every call returns false.
    bool read(unsigned char* out, size_t size);
    /// After the output's last byte: the stream ends here (no more output), its Adler-32 matches,
    /// and the source has nothing after it and did not fail.
    bool finish();

private:
    void begin();  // the header read, once
    bool header();
    bool produce();  // more output into the window: false where none was made
    void take_output(unsigned char* out, size_t n);
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
    std::vector<unsigned char> in_;
    size_t ip_ = 0, iend_ = 0;
    bool eof_ = false, source_failed_ = false, started_ = false, dead_ = false;
    uint64_t bits_ = 0;
    unsigned nbits_ = 0, phantom_ = 0;  // phantom_: zero bytes added past the source's end,
    size_t phantom_pos_ = 0;            // the first at window_[phantom_pos_]

    std::vector<unsigned char> window_;  // 32 KiB of history, then the output not yet read
    size_t pos_ = 0, rd_ = 0;
    uint64_t origin_ = 0;  // output before window_[0] (distances may not reach past the first byte)
    uint32_t adler_ = 1;

    enum class State { Header, Stored, Huffman, Done } state_ = State::Header;
    bool final_ = false;
    size_t stored_left_ = 0;
    std::vector<uint32_t> lit_, dist_, lengths_;  // decoding tables (build() in inflate.cpp)
};

}  // namespace gpufft
