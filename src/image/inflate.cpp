#include "image/inflate.h"

#include <libdeflate.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>

namespace gpufft {

namespace {

constexpr size_t kHistory = size_t(1) << 15;  // deflate's window
constexpr size_t kBatch = size_t(1) << 18;    // output made a call of produce()
constexpr size_t kSlack = 258 + 32;           // one match past the batch, and word copies' overrun
constexpr size_t kInput = size_t(1) << 16;
constexpr unsigned kLitRoot = 11, kDistRoot = 8, kLengthsRoot = 7;

// A table entry: the bits its code and extra bits take together (5), the code's bits (4), what it
// is (a flag each), its value (16: a literal, a length's or distance's base, a subtable's
// offset). A link's two counts are the root's bits and its subtable's.
constexpr uint32_t kLink = 1u << 12, kEnd = 1u << 13, kInvalid = 1u << 14, kLiteral = 1u << 15;
constexpr uint32_t entry(uint32_t flags, uint32_t code, uint32_t extra, uint32_t value) {
    return (code + extra) | code << 8 | flags | value << 16;
}
inline unsigned total_bits(uint32_t e) { return e & 31; }
inline unsigned code_bits(uint32_t e) { return (e >> 8) & 15; }
inline unsigned value_of(uint32_t e) { return e >> 16; }
inline uint64_t low(uint64_t bits, unsigned n) { return bits & ((uint64_t(1) << n) - 1); }
// An entry's value plus its extra bits, the next in `bits` after its code.
inline size_t based(uint32_t e, uint64_t bits) { return value_of(e) + (low(bits, total_bits(e)) >> code_bits(e)); }

// RFC 1951, 3.2.5: lengths 257..285 and distances 0..29, base and extra bits.
constexpr unsigned short kLengthBase[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                            31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
constexpr unsigned char kLengthExtra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                            2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
constexpr unsigned short kDistanceBase[30] = {1,    2,    3,    4,    5,    7,     9,     13,    17,  25,
                                              33,   49,   65,   97,   129,  193,   257,   385,   513, 769,
                                              1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
constexpr unsigned char kDistanceExtra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                              6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
// Bytes with their bits reversed (deflate sends codes from their first bit).
struct Reversed {
    unsigned char r[256];
    constexpr Reversed() : r() {
        for (unsigned i = 0; i < 256; ++i)
            for (unsigned b = 0; b < 8; ++b) r[i] |= static_cast<unsigned char>(((i >> b) & 1) << (7 - b));
    }
    constexpr unsigned operator[](unsigned i) const { return r[i]; }
};
constexpr Reversed kReversed;
// The order of the code lengths' code lengths (3.2.7).
constexpr unsigned char kLengthsOrder[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};

uint32_t literal_length(unsigned symbol, unsigned bits) {
    if (symbol < 256) return entry(kLiteral, bits, 0, symbol);
    if (symbol == 256) return entry(kEnd, bits, 0, 0);
    if (symbol < 286) return entry(0, bits, kLengthExtra[symbol - 257], kLengthBase[symbol - 257]);
    return entry(kInvalid, bits, 0, 0);  // 286 and 287: codes of the fixed table, never valid
}
uint32_t distance(unsigned symbol, unsigned bits) {
    return symbol < 30 ? entry(0, bits, kDistanceExtra[symbol], kDistanceBase[symbol]) : entry(kInvalid, bits, 0, 0);
}
uint32_t code_length(unsigned symbol, unsigned bits) { return entry(kLiteral, bits, 0, symbol); }

// The decoding table of a canonical Huffman code (`lengths` of `n` symbols), indexed by the next
// `root` bits of the stream (deflate sends codes from their first bit, so indices are reversed
// codes); longer codes through subtables. zlib's rules (inftrees.c): an over-subscribed set is
// refused; an incomplete one only where it is a single code of one bit (not for the code
// lengths' code), its other bit invalid; no codes at all gives a table of invalid entries (only
// distances may be so: the literals' code holds end-of-block, and zlib refuses the code lengths'
// code in the end).
template <uint32_t (*make)(unsigned symbol, unsigned bits)>
bool build(const unsigned char* lengths, unsigned n, unsigned root, bool lengths_code, std::vector<uint32_t>& table) {
    unsigned count[16] = {};
    for (unsigned s = 0; s < n; ++s) ++count[lengths[s]];
    count[0] = 0;
    int left = 1;
    unsigned max = 0;
    for (unsigned len = 1; len <= 15; ++len) {
        left = 2 * left - static_cast<int>(count[len]);
        if (left < 0) return false;
        if (count[len]) max = len;
    }
    if (left > 0 && (lengths_code || max > 1)) return false;
    // The table keeps its size from block to block: a complete code writes every entry it reads
    // below; an incomplete one (a single code of one bit, or none) has its root made invalid first.
    if (table.size() < (size_t(1) << root)) table.resize(size_t(1) << root, entry(kInvalid, 0, 0, 0));
    if (left > 0) std::fill(table.begin(), table.begin() + (ptrdiff_t(1) << root), entry(kInvalid, 0, 0, 0));
    if (max == 0) return true;

    unsigned next[16] = {};
    for (unsigned len = 1, code = 0; len <= 15; ++len) {
        code = (code + count[len - 1]) << 1;
        next[len] = code;
    }
    unsigned codes[288], roots[288], nroots = 0;  // roots: the root indices of codes above root
    unsigned char longest[1u << kLitRoot];        // their longest code
    for (unsigned s = 0; s < n; ++s) {
        const unsigned len = lengths[s];
        if (!len) continue;
        const unsigned code = next[len]++;
        codes[s] = (kReversed[code & 0xff] << 8 | kReversed[code >> 8]) >> (16 - len);
        if (len > root) {
            const unsigned r = codes[s] & ((1u << root) - 1);
            bool seen = false;
            for (unsigned k = 0; k < nroots && !seen; ++k) seen = roots[k] == r;
            if (!seen) roots[nroots++] = r, longest[r] = 0;
            longest[r] = static_cast<unsigned char>(std::max<unsigned>(longest[r], len));
        }
    }
    size_t size = size_t(1) << root;
    for (unsigned k = 0; k < nroots; ++k) {
        const unsigned sub = longest[roots[k]] - root;
        table[roots[k]] = entry(kLink, sub, root - sub, static_cast<uint32_t>(size));
        size += size_t(1) << sub;
    }
    if (table.size() < size) table.resize(size, entry(kInvalid, 0, 0, 0));
    for (unsigned s = 0; s < n; ++s) {
        const unsigned len = lengths[s];
        if (!len) continue;
        if (len <= root) {
            const uint32_t e = make(s, len);
            for (unsigned i = codes[s]; i < (1u << root); i += 1u << len) table[i] = e;
        } else {
            const uint32_t link = table[codes[s] & ((1u << root) - 1)], e = make(s, len - root);
            for (unsigned i = codes[s] >> root; i < (1u << code_bits(link)); i += 1u << (len - root))
                table[value_of(link) + i] = e;
        }
    }
    return true;
}

// A dynamic block's code lengths (3.2.7), read from just after its type: `nlit` literal/length
// and `ndist` distance lengths into `lengths`, by the code lengths' code (its table in `table`).
// `Bits`: take(n) the next n bits, peek() 16 bits at least, not taken.
template <class Bits>
bool dynamic_lengths(Bits& bits, std::vector<uint32_t>& table, unsigned char (&lengths)[320], unsigned& nlit,
                     unsigned& ndist) {
    nlit = bits.take(5) + 257;
    ndist = bits.take(5) + 1;
    const unsigned nlengths = bits.take(4) + 4;
    if (nlit > 286 || ndist > 30) return false;  // zlib: "too many length or distance symbols"
    std::fill(lengths, lengths + 320, 0);
    for (unsigned i = 0; i < nlengths; ++i) lengths[kLengthsOrder[i]] = static_cast<unsigned char>(bits.take(3));
    if (!build<code_length>(lengths, 19, kLengthsRoot, true, table)) return false;
    std::fill(lengths, lengths + 19, 0);
    for (unsigned i = 0; i < nlit + ndist;) {
        const uint32_t e = table[low(bits.peek(), kLengthsRoot)];
        if (!(e & kLiteral)) return false;
        bits.take(total_bits(e));
        const unsigned symbol = value_of(e);
        if (symbol < 16) {
            lengths[i++] = static_cast<unsigned char>(symbol);
            continue;
        }
        unsigned repeat, value = 0;
        if (symbol == 16) {
            if (i == 0) return false;  // zlib: "invalid bit length repeat"
            value = lengths[i - 1];
            repeat = 3 + bits.take(2);
        } else {
            repeat = symbol == 17 ? 3 + bits.take(3) : 11 + bits.take(7);
        }
        if (i + repeat > nlit + ndist) return false;
        std::fill(lengths + i, lengths + i + repeat, static_cast<unsigned char>(value));
        i += repeat;
    }
    return lengths[256] != 0;  // zlib: "invalid code -- missing end-of-block"
}

// A dynamic block's codes, read from just after its type and built into `lit` and `dist` (the
// code lengths' code into `lengths_table`): false where zlib refuses them.
template <class Bits>
bool dynamic_code(Bits& bits, std::vector<uint32_t>& lengths_table, std::vector<uint32_t>& lit, std::vector<uint32_t>& dist) {
    unsigned char lengths[320];
    unsigned nlit, ndist;
    return dynamic_lengths(bits, lengths_table, lengths, nlit, ndist) &&
           build<literal_length>(lengths, nlit, kLitRoot, false, lit) &&
           build<distance>(lengths + nlit, ndist, kDistRoot, false, dist);
}

// A match of `length` bytes from `back` bytes before `to`, `Step` bytes a step (at most `back`, so
// that a step reads no byte it writes), up to Step - 1 bytes past its end (kSlack).
template <size_t Step>
inline void copy_match(unsigned char* to, size_t back, size_t length) {
    const unsigned char* from = to - back;
    unsigned char* const end = to + length;
    do {
        std::memcpy(to, from, Step);
        to += Step;
        from += Step;
    } while (to < end);
}

// A match of `length` values from `back` values before `to`, in words (bytes or 16-bit values
// alike; up to 15 bytes past its end).
template <class T>
inline void copy_back(T* to, size_t back, size_t length) {
    constexpr size_t kWord = 8 / sizeof(T);  // values in 8 bytes
    unsigned char* const bytes = reinterpret_cast<unsigned char*>(to);
    if (back >= 2 * kWord) {
        copy_match<16>(bytes, back * sizeof(T), length * sizeof(T));
    } else if (back >= kWord) {
        copy_match<8>(bytes, back * sizeof(T), length * sizeof(T));
    } else if (back == 1) {
        std::fill_n(to, length, to[-1]);
    } else {  // a period under a word: its first values one by one, then words from a multiple of it
        size_t step = back;
        while (step < kWord) step += back;
        const T* from = to - back;
        size_t i = 0;
        for (; i < step && i < length; ++i) to[i] = from[i];
        for (; i < length; i += kWord) std::memcpy(to + i, to + i - step, 8);
    }
}

}  // namespace

bool zlib_header_ok(const unsigned char head[2]) {
    return head[0] == 0x78 && (head[0] * 256u + head[1]) % 31 == 0 && (head[1] & 0x20) == 0;
}

template <class T>
BasicInflater<T>::BasicInflater(Source source)
    : source_(std::move(source)), in_(kInput + 8), window_(kHistory + kBatch + kSlack) {}

template <class T>
BasicInflater<T>::BasicInflater(Source source, const Part& part) : BasicInflater(std::move(source)) {
    part_ = part;
    zlib_ = false;
    if (part.unknown_history) {  // the 32 KiB before the part, as values that name them
        for (size_t i = 0; i < kHistory; ++i) window_[i] = static_cast<T>(256 + i);
        pos_ = rd_ = kHistory;
    }
}

template <class T>
template <class U>
BasicInflater<T>::BasicInflater(BasicInflater<U>&& from)
    : source_(std::move(from.source_)), part_{from.part_.skip, from.part_.unknown_history, from.part_.stop},
      zlib_(from.zlib_), in_(std::move(from.in_)), ip_(from.ip_), iend_(from.iend_), pulled_(from.pulled_),
      eof_(from.eof_), source_failed_(from.source_failed_), started_(from.started_), dead_(from.dead_),
      bits_(from.bits_), nbits_(from.nbits_), phantom_(from.phantom_), window_(kHistory + kBatch + kSlack),
      adler_(from.adler_), state_(static_cast<State>(from.state_)), final_(from.final_),
      stored_left_(from.stored_left_), lit_(std::move(from.lit_)), dist_(std::move(from.dist_)),
      lengths_(std::move(from.lengths_)) {
    const size_t kept = std::min(from.pos_, kHistory), dropped = from.pos_ - kept;
    std::copy_n(from.window_.data() + dropped, kept, window_.data());
    pos_ = rd_ = kept;
    origin_ = from.origin_ + dropped;
    phantom_pos_ = from.phantom_pos_ > dropped ? from.phantom_pos_ - dropped : 0;
}

template <class T>
void BasicInflater<T>::pull() {
    if (eof_) return;
    std::memmove(in_.data(), in_.data() + ip_, iend_ - ip_);
    iend_ -= ip_;
    ip_ = 0;
    const long n = source_(in_.data() + iend_, kInput - iend_);
    if (n <= 0) {
        eof_ = true;
        source_failed_ = n < 0;
    } else {
        iend_ += static_cast<size_t>(n);
        pulled_ += static_cast<uint64_t>(n);
    }
}

template <class T>
uint64_t BasicInflater<T>::position() const {
    return 8 * (pulled_ - (iend_ - ip_) + phantom_) - nbits_;
}

// 56 to 63 bits in the buffer (a word refill shifts by the count): the stream's, then zeros past
// its end (counted in phantom_: bits_real() is false once one of them is taken).
template <class T>
void BasicInflater<T>::refill() {
    while (nbits_ < 56) {
        if (ip_ == iend_) pull();
        if (ip_ == iend_) {
            if (phantom_++ == 0) phantom_pos_ = pos_;
        } else {
            bits_ |= uint64_t(in_[ip_++]) << nbits_;
        }
        nbits_ += 8;
    }
}

template <class T>
unsigned BasicInflater<T>::next_bits(unsigned n) {
    const unsigned value = static_cast<unsigned>(low(bits_, n));
    bits_ >>= n;
    nbits_ -= n;
    return value;
}

template <class T>
void BasicInflater<T>::to_byte_edge() { next_bits(nbits_ % 8); }

template <class T>
void BasicInflater<T>::begin() {
    if (started_) return;
    started_ = true;
    dead_ = !header();
}

template <class T>
bool BasicInflater<T>::header() {
    refill();
    if (!zlib_) {
        next_bits(part_.skip);
        return bits_real();
    }
    unsigned char head[2];
    head[0] = static_cast<unsigned char>(next_bits(8));
    head[1] = static_cast<unsigned char>(next_bits(8));
    return bits_real() && zlib_header_ok(head);
}

template <class T>
bool BasicInflater<T>::read(T* out, size_t size) {
    begin();
    for (;;) {  // what is made, then more
        const size_t n = std::min(size, pos_ - rd_);
        take_output(out, n);
        out += n;
        size -= n;
        if (size == 0) return true;
        if (dead_ || !produce()) {
            dead_ = true;
            return false;
        }
    }
}

template <class T>
size_t BasicInflater<T>::read_some(T* out, size_t capacity) {
    begin();
    while (pos_ == rd_ && !dead_ && state_ != State::Done) produce();
    const size_t n = std::min(capacity, pos_ - rd_);
    take_output(out, n);
    return n;
}

template <class T>
void BasicInflater<T>::take_output(T* out, size_t n) {
    std::memcpy(out, window_.data() + rd_, n * sizeof(T));
    if constexpr (sizeof(T) == 1) adler_ = static_cast<uint32_t>(libdeflate_adler32(adler_, out, n));
    rd_ += n;
}

// More output (true where some was made). Where the stream is found wrong, the output before the
// place it went wrong is kept and nothing after it is made (dead_): the bytes before a bad code,
// or before the source's end where the stream needed more than it gave. A part ends after the
// block that ends at its stop or past it.
template <class T>
bool BasicInflater<T>::produce() {
    if (pos_ > kHistory) {  // keep the last 32 KiB as history
        const size_t shift = pos_ - kHistory;
        std::memmove(window_.data(), window_.data() + shift, kHistory * sizeof(T));
        origin_ += shift;
        pos_ = rd_ = kHistory;
        phantom_pos_ = phantom_pos_ > shift ? phantom_pos_ - shift : 0;
    }
    const size_t start = pos_;
    bool ok = true;
    while (ok && pos_ < kHistory + kBatch && state_ != State::Done) {
        ok = state_ == State::Header ? block_header() : state_ == State::Stored ? stored() : huffman();
        if (ok && state_ == State::Header && position() >= part_.stop) state_ = State::Done;
    }
    if (!ok || !bits_real()) {
        if (!bits_real()) pos_ = std::min(pos_, std::max(phantom_pos_, start));
        dead_ = true;
    }
    return pos_ > start;
}

template <class T>
bool BasicInflater<T>::block_header() {
    refill();
    final_ = next_bits(1);
    const unsigned type = next_bits(2);
    if (type == 0) {  // stored: to a byte's edge, then LEN and its complement
        to_byte_edge();
        refill();
        stored_left_ = next_bits(16);
        const bool complement = next_bits(16) == (~stored_left_ & 0xffff);
        state_ = State::Stored;
        return complement;
    }
    if (type == 1) {  // the fixed code (3.2.6)
        unsigned char lengths[288 + 32];
        std::fill(lengths, lengths + 144, 8);
        std::fill(lengths + 144, lengths + 256, 9);
        std::fill(lengths + 256, lengths + 280, 7);
        std::fill(lengths + 280, lengths + 288, 8);
        std::fill(lengths + 288, lengths + 320, 5);
        build<literal_length>(lengths, 288, kLitRoot, false, lit_);
        build<distance>(lengths + 288, 32, kDistRoot, false, dist_);
        state_ = State::Huffman;
        return true;
    }
    if (type == 2 && dynamic_tables()) {
        state_ = State::Huffman;
        return true;
    }
    return false;
}

// The inflater's bits, for dynamic_code().
template <class T>
struct BasicInflater<T>::Bits {
    BasicInflater& f;
    unsigned take(unsigned n) {
        if (f.nbits_ < n) f.refill();
        return f.next_bits(n);
    }
    uint64_t peek() {  // 16 bits at least
        if (f.nbits_ < 16) f.refill();
        return f.bits_;
    }
};

template <class T>
bool BasicInflater<T>::dynamic_tables() {
    Bits bits{*this};
    return dynamic_code(bits, lengths_, lit_, dist_);
}

template <class T>
bool BasicInflater<T>::stored() {
    const size_t limit = kHistory + kBatch;
    while (stored_left_ > 0 && pos_ < limit) {
        if (nbits_ >= 8) {  // whole bytes already in the bit buffer
            window_[pos_++] = static_cast<T>(next_bits(8));
            --stored_left_;
            continue;
        }
        bits_ = 0;  // (a word refill's look-ahead: those bytes are copied here)
        if (ip_ == iend_) pull();
        if (ip_ == iend_) return false;
        const size_t n = std::min({stored_left_, iend_ - ip_, limit - pos_});
        std::copy_n(in_.data() + ip_, n, window_.data() + pos_);
        pos_ += n;
        ip_ += n;
        stored_left_ -= n;
    }
    if (stored_left_ == 0) state_ = final_ ? State::Done : State::Header;
    return true;
}

template <class T>
bool BasicInflater<T>::huffman() {
    const size_t limit = kHistory + kBatch;
    T* const w = window_.data();
    const uint32_t* const lit = lit_.data();
    const uint32_t* const dist = dist_.data();
    const unsigned char* const in = in_.data();
    size_t pos = pos_, ip = ip_;
    const size_t iend = iend_;
    uint64_t bits = bits_;
    unsigned nbits = nbits_;
    const uint64_t origin = origin_;
    bool ok = true;
    auto take = [&](unsigned n) {
        bits >>= n;
        nbits -= n;
    };
    // A length and distance take at most 15 + 5 + 15 + 13 = 48 bits, three literals 15 + 11 + 11:
    // a word's whole bytes each round (56 bits and more; the rest is read again later).
    auto word_refill = [&] {
        uint64_t word;
        std::memcpy(&word, in + ip, 8);
        bits |= word << nbits;
        ip += (63 - nbits) >> 3;
        nbits |= 56;
    };
    uint32_t e = 0;
    bool preloaded = false;  // e is the next code's entry, looked up while a match was copied
    while (pos < limit) {
        if (!preloaded) {
            if (iend - ip >= 8) {
                word_refill();
            } else if (nbits < 48) {  // the input's last bytes, or more of it
                bits_ = bits, nbits_ = nbits, ip_ = ip;
                refill();
                bits = bits_, nbits = nbits_, ip = ip_;
                if (iend_ != iend) break;  // pulled: again with the new end
            }
            e = lit[low(bits, kLitRoot)];
        }
        preloaded = false;
        if (e & kLink) {
            take(kLitRoot);
            e = lit[value_of(e) + low(bits, code_bits(e))];
        }
        if (e & kLiteral) {  // and up to two more in the root table
            take(total_bits(e));
            w[pos++] = static_cast<T>(value_of(e));
            e = lit[low(bits, kLitRoot)];
            if (e & kLiteral) {
                take(total_bits(e));
                w[pos++] = static_cast<T>(value_of(e));
                e = lit[low(bits, kLitRoot)];
                if (e & kLiteral) {
                    take(total_bits(e));
                    w[pos++] = static_cast<T>(value_of(e));
                }
            }
            continue;
        }
        if (e & (kEnd | kInvalid)) {
            take(total_bits(e));
            if (e & kInvalid) ok = false;  // zlib: "invalid literal/length code"
            else state_ = final_ ? State::Done : State::Header;
            break;
        }
        const size_t length = based(e, bits);
        take(total_bits(e));
        uint32_t d = dist[low(bits, kDistRoot)];
        if (d & kLink) {
            take(kDistRoot);
            d = dist[value_of(d) + low(bits, code_bits(d))];
        }
        if (d & kInvalid) {
            ok = false;  // zlib: "invalid distance code"
            break;
        }
        const size_t back = based(d, bits);
        take(total_bits(d));
        if (back > origin + pos) {
            ok = false;  // zlib: "invalid distance too far back"
            break;
        }
        if (iend - ip >= 8) {  // the next code's entry, its load beside the copy and the refill
            // (The last word refill left 64 bits of the stream in the buffer, nbits counting its
            // whole bytes; a length and distance took at most 48, so the next code's first 11 are
            // there: the load need not wait for this refill.)
            e = lit[low(bits, kLitRoot)];
            word_refill();
            preloaded = true;
        }
        copy_back(w + pos, back, length);
        pos += length;
    }
    pos_ = pos;
    ip_ = ip;
    bits_ = bits;
    nbits_ = nbits;
    return ok;
}

template <class T>
bool BasicInflater<T>::finish() {
    begin();
    if (dead_ || rd_ != pos_) return false;
    if (state_ != State::Done) {
        if (produce() || dead_ || state_ != State::Done) return false;  // more output, or none and no end
    }
    to_byte_edge();  // the stream's last byte's unused bits
    refill();
    uint32_t check = 0;
    for (int i = 0; i < 4; ++i) check = check << 8 | next_bits(8);
    if (!bits_real() || check != adler_ || nbits_ != 8 * phantom_ || ip_ != iend_) return false;
    pull();  // nothing may follow
    return ip_ == iend_ && !source_failed_;
}

template class BasicInflater<unsigned char>;
template class BasicInflater<uint16_t>;
template BasicInflater<unsigned char>::BasicInflater(BasicInflater<uint16_t>&&);

namespace {

// A stream's bits from memory, for block_may_start(): zeros past its end.
struct MemoryBits {
    const unsigned char* data;
    size_t size;
    uint64_t at;  // the next bit
    uint64_t peek() const {
        const size_t byte = static_cast<size_t>(at / 8);
        uint64_t word = 0;
        if (byte + 8 <= size) std::memcpy(&word, data + byte, 8);
        else if (byte < size) std::memcpy(&word, data + byte, size - byte);
        return word >> (at % 8);
    }
    unsigned take(unsigned n) {
        const unsigned value = static_cast<unsigned>(low(peek(), n));
        at += n;
        return value;
    }
};

// Could a block start `bit` bits into `data`? Only one of deflate's dynamic blocks, not the final
// one, whose header reads as a whole (counts in range, every code as zlib accepts it) is taken:
// the test that finds where a part starts, confirmed (or not) once the part before it is read.
bool block_may_start(const unsigned char* data, size_t size, uint64_t bit, std::vector<uint32_t> (&tables)[3]) {
    MemoryBits bits{data, size, bit};
    const uint64_t head = bits.peek();
    if ((head & 7) != 4) return false;  // not final, type 2
    unsigned kraft = 0;  // the code lengths' code must be complete: a quick test before the rest
    for (unsigned i = 0, n = ((head >> 13) & 15) + 4; i < n; ++i) {
        MemoryBits at{data, size, bit + 17 + 3 * i};
        const unsigned len = at.take(3);
        if (len) kraft += 128u >> len;
    }
    if (kraft != 128) return false;
    bits.take(3);
    return dynamic_code(bits, tables[0], tables[1], tables[2]);
}

// A part's output: 16-bit values (bytes, or 256 + i for the i-th of the 32 KiB before the part)
// until 32 KiB of it are bytes alone, then bytes.
struct PartOutput {
    uint64_t start = 0;  // its first block, bits into the raw stream
    std::vector<uint16_t> values;
    std::vector<unsigned char> bytes;
    uint64_t end = 0;  // the bits it took
    bool ok = false, final = false;
    size_t size() const { return values.size() + bytes.size(); }
};

// Up to `limit` values more from `inflater` into `out` (grown as needed): false past the limit.
// (Room for a whole batch each time, so that each call takes all the inflater has made.)
template <class T, class Stop>
bool read_part(BasicInflater<T>& inflater, std::vector<T>& out, size_t limit, size_t guess, Stop stop) {
    size_t made = 0;
    for (;;) {
        if (out.size() - made < kHistory + kBatch + kSlack) out.resize(std::max({2 * out.size(), guess, made + kHistory + kBatch + kSlack}));
        const size_t n = inflater.read_some(out.data() + made, out.size() - made);
        if (n == 0 || stop(out.data(), made, n)) {
            out.resize(made + n);
            return true;
        }
        made += n;
        if (made > limit) return false;
    }
}

void inflate_part(const unsigned char* raw, size_t raw_size, size_t size, uint64_t stop, bool first, PartOutput& part) {
    const size_t from = static_cast<size_t>(part.start / 8);
    size_t at = from;
    BasicInflater<uint16_t>::Part how;
    how.skip = static_cast<unsigned>(part.start % 8);
    how.unknown_history = !first;
    how.stop = stop == UINT64_MAX ? stop : stop - 8 * uint64_t(from);
    BasicInflater<uint16_t> values(
        [&](unsigned char* buffer, size_t capacity) -> long {
            const size_t n = std::min(capacity, raw_size - at);
            std::memcpy(buffer, raw + at, n);
            at += n;
            return static_cast<long>(n);
        },
        how);
    // Values until the last 32 KiB of them name no byte before the part.
    size_t named = 0;  // values up to the last that names one
    const bool in_limit = read_part(values, part.values, size, size_t(1) << 18, [&](const uint16_t* v, size_t made, size_t n) {
        for (size_t i = made; i < made + n; ++i)
            if (v[i] > 255) named = i + 1;
        return made + n - named >= kHistory;
    });
    if (!in_limit) return;
    BasicInflater<unsigned char> bytes(std::move(values));
    const double share = static_cast<double>(how.stop == UINT64_MAX ? 8 * uint64_t(raw_size) - part.start : stop - part.start) / (8.0 * raw_size);
    if (!read_part(bytes, part.bytes, size, static_cast<size_t>(1.25 * share * static_cast<double>(size)) + (size_t(1) << 18),
                   [](const unsigned char*, size_t, size_t) { return false; }) || part.size() > size)
        return;
    part.ok = !bytes.failed();
    part.final = bytes.final_block();
    part.end = 8 * uint64_t(from) + bytes.position();
}

// Every job's end, then what the first that threw threw (no job outlives what it reads).
void wait(std::vector<std::future<void>>& jobs) {
    for (auto& job : jobs) job.wait();
    for (auto& job : jobs) job.get();
}

// Values to bytes: `v` from `before`, the 32 KiB before them (complete where a value names them).
void resolve(const uint16_t* v, size_t n, unsigned char* out, const unsigned char* before) {
    for (size_t i = 0; i < n; ++i) out[i] = v[i] < 256 ? static_cast<unsigned char>(v[i]) : before[v[i] - 256];
}

// A part's output from `from` to `to` as bytes at `out` (the place of its first byte), its values
// naming `before` (the 32 KiB before the part).
void emit(const PartOutput& p, size_t from, size_t to, unsigned char* out, const unsigned char* before) {
    const size_t split = std::clamp(p.values.size(), from, to);
    resolve(p.values.data() + from, split - from, out + from, before);
    if (to > split) std::copy(p.bytes.data() + (split - p.values.size()), p.bytes.data() + (to - p.values.size()), out + split);
}

}  // namespace

bool inflate_in_parts(const unsigned char* z, size_t z_size, unsigned char* out, size_t size, unsigned parts,
                      const JobRunner& run, size_t min_part) {
    if (z_size < 6 || !zlib_header_ok(z)) return false;
    const unsigned char* const raw = z + 2;
    const size_t raw_size = z_size - 2;  // the deflate stream, then the Adler-32
    parts = static_cast<unsigned>(std::clamp<size_t>(raw_size / std::max<size_t>(min_part, 1), 1, std::max(parts, 1u)));
    if (parts < 2) return false;

    // Each part past the first starts at the first block that may start in its share of the stream.
    std::vector<PartOutput> found(parts);
    std::vector<std::future<void>> jobs;
    for (unsigned k = 1; k < parts; ++k)
        jobs.push_back(run([&, k] {
            std::vector<uint32_t> tables[3];
            const uint64_t end = 8 * uint64_t(raw_size) * (k + 1) / parts;
            uint64_t bit = 8 * uint64_t(raw_size) * k / parts;
            while (bit < end && !block_may_start(raw, raw_size, bit, tables)) ++bit;
            found[k].start = bit < end ? bit : UINT64_MAX;
        }));
    wait(jobs);
    std::vector<PartOutput> part;
    part.emplace_back();
    for (unsigned k = 1; k < parts; ++k)
        if (found[k].start != UINT64_MAX) part.push_back(std::move(found[k]));
    if (part.size() < 2) return false;

    jobs.clear();
    for (size_t k = 0; k < part.size(); ++k)
        jobs.push_back(run([&, k] {
            const uint64_t stop = k + 1 < part.size() ? part[k + 1].start : UINT64_MAX;
            inflate_part(raw, raw_size, size, stop, k == 0, part[k]);
        }));
    wait(jobs);

    // The chain: each part ends where the next starts, the last with the final block; the output's
    // size exact; the Adler-32 just after the final block's last byte, and nothing after it.
    size_t total = 0;
    std::vector<size_t> offset(part.size());
    for (size_t k = 0; k < part.size(); ++k) {
        const PartOutput& p = part[k];
        const bool last = k + 1 == part.size();
        if (!p.ok || p.final != last || (!last && p.end != part[k + 1].start)) return false;
        offset[k] = total;
        total += p.size();
        if (k > 0 && offset[k] < kHistory) return false;  // (a value might name a byte before the stream)
    }
    const size_t end = static_cast<size_t>((part.back().end + 7) / 8);
    if (total != size || end + 4 != raw_size) return false;

    // Each part's last 32 KiB in order (its values may name the part's before it), then the rest of
    // each part at once (naming only bytes of the first step).
    auto emit_part = [&](size_t k, size_t from, size_t to) {
        emit(part[k], from, to, out + offset[k], k > 0 ? out + offset[k] - kHistory : out);
    };
    std::vector<size_t> body(part.size());
    for (size_t k = 0; k < part.size(); ++k) {
        body[k] = part[k].size() - std::min(part[k].size(), kHistory);
        emit_part(k, body[k], part[k].size());
    }
    std::vector<uint32_t> adler(part.size());
    jobs.clear();
    for (size_t k = 0; k < part.size(); ++k)
        jobs.push_back(run([&, k] {
            emit_part(k, 0, body[k]);
            adler[k] = static_cast<uint32_t>(libdeflate_adler32(1, out + offset[k], part[k].size()));
        }));
    wait(jobs);
    uLong sum = adler[0];
    for (size_t k = 1; k < part.size(); ++k) sum = adler32_combine(sum, adler[k], static_cast<z_off_t>(part[k].size()));
    const unsigned char* const check = raw + end;
    return sum == (uLong(check[0]) << 24 | uLong(check[1]) << 16 | uLong(check[2]) << 8 | check[3]);
}

}  // namespace gpufft
