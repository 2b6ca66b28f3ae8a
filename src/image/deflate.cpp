#include "image/deflate.h"

#include <libdeflate.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

namespace gpufft {

namespace {

constexpr size_t kStoredMax = 65535;                  // a stored block's bytes at most
constexpr int kLitLen = 286, kDistances = 30, kCodeLengthSymbols = 19;
constexpr int kMaxBits = 15, kMaxCodeLengthBits = 7;
// Runs of fewer than kShortRun repeats are always literals, runs of kLongRun or more always
// matches; between, m (raced per block: kMinRuns, kLongRun meaning none) decides. On filtered
// photographs every block took m = 8 or 10 of 3 .. 16, so shorter runs need not be found at all.
constexpr int kShortRun = 8, kLongRun = 16;
constexpr int kMinRuns[] = {8, 10, 12, 16};
constexpr int kOrder[kCodeLengthSymbols] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
// The extra bits after each code-length symbol (16: 2, 17: 3, 18: 7).
constexpr unsigned kCodeLengthExtra[kCodeLengthSymbols] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 7};

// Length symbols (RFC 1951, 3.2.5): for each match length 3 .. 258, its symbol's index above 257,
// extra bits and their value.
struct LengthCode {
    uint8_t symbol = 0, extra_bits = 0;
    uint16_t extra = 0;
};
const std::array<LengthCode, 259>& length_codes() {
    static const std::array<LengthCode, 259> table = [] {
        const int base[29] = {3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
        const int extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
        std::array<LengthCode, 259> t{};
        for (int s = 0; s < 29; ++s)
            for (int len = base[s]; len < (s == 28 ? 259 : base[s + 1]); ++len)
                t[static_cast<size_t>(len)] = {static_cast<uint8_t>(s), static_cast<uint8_t>(extra[s]), static_cast<uint16_t>(len - base[s])};
        return t;
    }();
    return table;
}

// `repeats` bytes (3 or more) as match lengths of 3 .. 258, each given to `emit`: 258s while at
// least 3 would be left, then the rest.
template <class Emit>
void match_lengths(size_t repeats, Emit emit) {
    while (repeats > 258) {
        const size_t take = repeats - 258 >= 3 ? 258 : repeats - 3;
        emit(take);
        repeats -= take;
    }
    emit(repeats);
}

// Words of eight bytes are read and written whole where the machine is little-endian (a word's
// first byte its lowest), as deflate's bit order and the run finder take them.
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
constexpr bool kWords = true;
#else
constexpr bool kWords = false;
#endif

// Bits appended least significant first, as deflate packs them: added to a 64-bit buffer, whose
// whole bytes flush() stores by one unaligned 8-byte write (so the output needs 8 bytes of slack)
// and drops, fewer than 8 bits staying. Up to 56 bits may be added between flushes.
class BitWriter {
public:
    explicit BitWriter(unsigned char* out, uint64_t buffer = 0, unsigned count = 0) : out_(out), buffer_(buffer), count_(count) {}
    void add(uint64_t bits, unsigned n) {
        buffer_ |= bits << count_;
        count_ += n;
    }
    void flush() {
        if (kWords) {
            std::memcpy(out_, &buffer_, 8);
        } else {
            for (int k = 0; k < 8; ++k) out_[k] = static_cast<unsigned char>(buffer_ >> (8 * k));
        }
        out_ += count_ >> 3;
        buffer_ >>= count_ & ~7u;  // at most 56: count_ is below 64
        count_ &= 7;
    }
    void put(uint64_t bits, unsigned n) {  // n <= 56
        add(bits, n);
        flush();
    }
    /// Up to the next byte, with zero bits.
    void align() {
        flush();
        if (count_ > 0) *out_++ = static_cast<unsigned char>(buffer_);
        buffer_ = 0;
        count_ = 0;
    }
    void bytes(const unsigned char* data, size_t n) {  // aligned
        if (n == 0) return;  // (an empty input's data may be null, which memcpy may not take)
        std::memcpy(out_, data, n);
        out_ += n;
    }
    unsigned char* end() const { return out_; }
    uint64_t buffer() const { return buffer_; }  // (bits not yet stored: fewer than 8 after a flush)
    unsigned count() const { return count_; }

private:
    unsigned char* out_;
    uint64_t buffer_;
    unsigned count_;
};

// Code lengths of a Huffman code for `freq` (n symbols), none longer than `limit`: a complete code
// over the symbols used, and two at least (a lone symbol, or none, gets a partner of one bit:
// zlib refuses incomplete codes but a lone one of one bit, and that only in some places).
void code_lengths(const uint32_t* freq, int n, int limit, uint8_t* len) {
    std::fill(len, len + n, uint8_t(0));
    int used[kLitLen];
    int k = 0;
    for (int i = 0; i < n; ++i)
        if (freq[i] > 0) used[k++] = i;
    if (k < 2) {
        const int a = k == 1 ? used[0] : 0;
        len[a] = 1;
        len[a == 0 ? 1 : 0] = 1;
        return;
    }
    std::sort(used, used + k, [&](int a, int b) { return freq[a] != freq[b] ? freq[a] < freq[b] : a < b; });
    // Huffman's merges by two queues (leaves by weight, then the merged nodes, made in order of
    // weight): leaves 0 .. k-1, merged nodes k .. 2k-2, the root last.
    uint64_t weight[2 * kLitLen];
    int parent[2 * kLitLen], depth[2 * kLitLen];
    for (int i = 0; i < k; ++i) weight[i] = freq[used[i]];
    int leaf = 0, merged = k;
    for (int next = k; next < 2 * k - 1; ++next) {
        auto take = [&] { return leaf < k && (merged >= next || weight[leaf] <= weight[merged]) ? leaf++ : merged++; };
        const int a = take(), b = take();
        weight[next] = weight[a] + weight[b];
        parent[a] = parent[b] = next;
    }
    depth[2 * k - 2] = 0;
    int count[kLitLen + 1] = {};
    int deepest = 0;
    for (int i = 2 * k - 3; i >= 0; --i) {
        depth[i] = depth[parent[i]] + 1;
        if (i < k) {
            ++count[depth[i]];
            deepest = std::max(deepest, depth[i]);
        }
    }
    // Too long: JPEG's way (ITU T.81, K.3): two leaves at the deepest level become one a level up
    // and one beside a leaf made a node at the deepest level above that has leaves.
    for (int i = deepest; i > limit; --i)
        while (count[i] > 0) {
            int j = i - 2;
            while (count[j] == 0) --j;
            count[i] -= 2;
            count[i - 1] += 1;
            count[j + 1] += 2;
            count[j] -= 1;
        }
    // The most frequent symbols get the shortest codes.
    int at = k - 1;
    for (int bits = 1; bits <= limit; ++bits)
        for (int c = 0; c < count[bits]; ++c) len[used[at--]] = static_cast<uint8_t>(bits);
}

// Canonical codes (RFC 1951, 3.2.2) for `len`, bit-reversed: deflate sends a code's first bit
// first, the writer the value's lowest.
void canonical_codes(const uint8_t* len, int n, uint16_t* code) {
    int count[kMaxBits + 1] = {};
    for (int i = 0; i < n; ++i) ++count[len[i]];
    count[0] = 0;
    int next[kMaxBits + 2] = {};
    for (int bits = 1, c = 0; bits <= kMaxBits; ++bits) {
        c = (c + count[bits - 1]) << 1;
        next[bits] = c;
    }
    for (int i = 0; i < n; ++i) {
        if (len[i] == 0) continue;
        unsigned c = static_cast<unsigned>(next[len[i]]++), r = 0;
        for (int b = 0; b < len[i]; ++b) r |= ((c >> b) & 1u) << (len[i] - 1 - b);
        code[i] = static_cast<uint16_t>(r);
    }
}

// A dynamic block's header: the code lengths of both codes as one sequence, run-length coded
// (16: the last length again 3-6 times, 17: 3-10 zeros, 18: 11-138 zeros), and the code of that.
struct Header {
    int hlit = 257, hdist = 1, hclen = 4;
    uint8_t symbols[kLitLen + kDistances];
    uint8_t extras[kLitLen + kDistances];
    int count = 0;
    uint8_t len[kCodeLengthSymbols];
    uint16_t code[kCodeLengthSymbols];
    uint64_t bits = 0;
};

void make_header(const uint8_t* lit_len, const uint8_t* dist_len, Header& h) {
    h.hlit = kLitLen;
    while (h.hlit > 257 && lit_len[h.hlit - 1] == 0) --h.hlit;
    h.hdist = kDistances;
    while (h.hdist > 1 && dist_len[h.hdist - 1] == 0) --h.hdist;
    uint8_t lengths[kLitLen + kDistances];
    std::copy(lit_len, lit_len + h.hlit, lengths);
    std::copy(dist_len, dist_len + h.hdist, lengths + h.hlit);
    const int total = h.hlit + h.hdist;
    h.count = 0;
    auto add = [&](int symbol, int extra) {
        h.symbols[h.count] = static_cast<uint8_t>(symbol);
        h.extras[h.count++] = static_cast<uint8_t>(extra);
    };
    for (int i = 0; i < total;) {
        const uint8_t v = lengths[i];
        int run = 1;
        while (i + run < total && lengths[i + run] == v) ++run;
        i += run;
        if (v == 0) {
            while (run >= 11) {
                const int n = std::min(run, 138);
                add(18, n - 11);
                run -= n;
            }
            if (run >= 3) {
                add(17, run - 3);
                run = 0;
            }
        } else {
            add(v, 0);
            --run;
            while (run >= 3) {
                const int n = std::min(run, 6);
                add(16, n - 3);
                run -= n;
            }
        }
        for (; run > 0; --run) add(v, 0);
    }
    uint32_t freq[kCodeLengthSymbols] = {};
    for (int i = 0; i < h.count; ++i) ++freq[h.symbols[i]];
    code_lengths(freq, kCodeLengthSymbols, kMaxCodeLengthBits, h.len);
    canonical_codes(h.len, kCodeLengthSymbols, h.code);
    h.hclen = kCodeLengthSymbols;
    while (h.hclen > 4 && h.len[kOrder[h.hclen - 1]] == 0) --h.hclen;
    h.bits = 3 + 5 + 5 + 4 + 3 * static_cast<uint64_t>(h.hclen);
    for (int s = 0; s < kCodeLengthSymbols; ++s) h.bits += uint64_t(freq[s]) * (h.len[s] + kCodeLengthExtra[s]);
}

void write_header(const Header& h, bool final, BitWriter& w) {
    w.put((final ? 1u : 0u) | 2u << 1, 3);
    w.put(static_cast<uint32_t>(h.hlit - 257), 5);
    w.put(static_cast<uint32_t>(h.hdist - 1), 5);
    w.put(static_cast<uint32_t>(h.hclen - 4), 4);
    for (int i = 0; i < h.hclen; ++i) w.put(h.len[kOrder[i]], 3);
    for (int i = 0; i < h.count; ++i) {
        const int s = h.symbols[i];
        w.put(h.code[s], h.len[s]);
        if (kCodeLengthExtra[s]) w.put(h.extras[i], kCodeLengthExtra[s]);
    }
}

// Stored blocks of `n` bytes (none: one empty block); `final` on the last.
void write_stored(const unsigned char* d, size_t n, bool final, BitWriter& w) {
    size_t at = 0;
    do {
        const size_t take = std::min(kStoredMax, n - at);
        const bool last = final && at + take == n;
        w.put(last ? 1u : 0u, 3);
        w.align();
        const unsigned char head[4] = {static_cast<unsigned char>(take), static_cast<unsigned char>(take >> 8),
                                       static_cast<unsigned char>(~take), static_cast<unsigned char>(~take >> 8)};
        w.bytes(head, 4);
        w.bytes(d + at, take);
        at += take;
    } while (at < n);
}

// The most bits write_stored() takes for `n` bytes: a header, up to 7 bits of padding and the
// lengths a block.
uint64_t stored_bits(size_t n) {
    const uint64_t blocks = n == 0 ? 1 : (n + kStoredMax - 1) / kStoredMax;
    return blocks * (3 + 7 + 32) + 8 * uint64_t(n);
}

inline uint64_t word_at(const unsigned char* p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
}

// The runs of a block with kShortRun repeats or more (a byte, then at least that many bytes equal
// to it), in order: `run(i, e)` for the byte at i repeated to e - 1. Eight bytes at a time: the
// zero bytes of a word xor the word one byte before it mark repeats, so a run that long has a word
// of them all, or ends a word with some and starts the next with the rest; only there are bytes
// compared one by one, or a word at a time along a run.
template <class Run>
void for_long_runs(const unsigned char* d, size_t n, Run run) {
    // The end of the repeats of d[i]: eight bytes at a time against the byte in every lane (the
    // first nonzero byte of the xor is the first that differs), then the last few one by one.
    auto end_of = [&](size_t i) {
        size_t e = i + 1;
        if (kWords) {
            const uint64_t same = 0x0101010101010101ull * d[i];
            for (; e + 8 <= n; e += 8)
                if (const uint64_t x = word_at(d + e) ^ same) return e + static_cast<size_t>(__builtin_ctzll(x)) / 8;
        }
        while (e < n && d[e] == d[i]) ++e;
        return e;
    };
    size_t k = 1;       // the next word's first byte
    unsigned tail = 0;  // the repeats that end the bytes before k
    if (kWords)
        while (k + 8 <= n) {
            const uint64_t x = word_at(d + k) ^ word_at(d + k - 1);
            const unsigned lead = x ? static_cast<unsigned>(__builtin_ctzll(x)) / 8 : 8;
            if (tail + lead >= static_cast<unsigned>(kShortRun)) {
                const size_t head = k - tail - 1, e = end_of(head);
                run(head, e);
                k = e;  // d[e] differs from d[e - 1]: no repeats end the bytes before it
                tail = 0;
                continue;
            }
            tail = static_cast<unsigned>(__builtin_clzll(x)) / 8;  // x is not 0 here: lead < 8
            k += 8;
        }
    // The rest one by one, from the byte before the repeats that end the bytes before k (a run's
    // first byte, or one alone).
    for (size_t i = k - tail - 1; i < n;) {
        const size_t e = end_of(i);
        if (e - i - 1 >= static_cast<size_t>(kShortRun)) run(i, e);
        i = e;
    }
}

// The runs of a block (for_long_runs) counted into `c` as the coder's choice needs them, each
// also given to `each(at, end)`.
template <class Each>
void count_block(const unsigned char* d, size_t n, RunCounts& c, Each each) {
    const auto& lengths = length_codes();
    // Every byte counted, then each run's repeats taken off as it is found: those of fewer than
    // kLongRun repeats by byte and count (literals or a match, as m says), longer ones matches.
    uint32_t bytes[8][256] = {};  // eight counts a byte, so that neighbouring increments rarely wait on each other
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w = word_at(d + i);
        ++bytes[0][w & 255], ++bytes[1][(w >> 8) & 255], ++bytes[2][(w >> 16) & 255], ++bytes[3][(w >> 24) & 255];
        ++bytes[4][(w >> 32) & 255], ++bytes[5][(w >> 40) & 255], ++bytes[6][(w >> 48) & 255], ++bytes[7][w >> 56];
    }
    for (; i < n; ++i) ++bytes[0][d[i]];
    for (int v = 0; v < 256; ++v) c.heads[v] = bytes[0][v] + bytes[1][v] + bytes[2][v] + bytes[3][v] + bytes[4][v] + bytes[5][v] + bytes[6][v] + bytes[7][v];
    for (auto& row : c.short_runs) std::fill(row, row + 256, 0u);
    std::fill(c.long_symbols, c.long_symbols + 29, 0u);
    c.long_extra = c.long_matches = 0;
    for_long_runs(d, n, [&](size_t at, size_t end) {
        each(at, end);
        const size_t r = end - at - 1;
        c.heads[d[at]] -= static_cast<uint32_t>(r);
        if (r < kLongRun) {
            ++c.short_runs[r - kShortRun][d[at]];
        } else {
            match_lengths(r, [&](size_t len) {
                ++c.long_symbols[lengths[len].symbol];
                c.long_extra += lengths[len].extra_bits;
                ++c.long_matches;
            });
        }
    });
}

// The code a block's counts choose: each minimum run m's bits (codes, extra bits and the
// header), the fewest taken; `stored` where storing the block takes no more.
struct Choice {
    uint64_t bits = UINT64_MAX;
    int m = kLongRun;
    bool stored = false;
    uint8_t lit[kLitLen], dist[kDistances];
    Header header;
};

void choose(const RunCounts& c, size_t n, Choice& best) {
    const auto& lengths = length_codes();
    uint32_t short_total[kLongRun] = {};
    for (int r = kShortRun; r < kLongRun; ++r)
        for (int v = 0; v < 256; ++v) short_total[r] += c.short_runs[r - kShortRun][v];
    best.bits = UINT64_MAX;
    for (int m : kMinRuns) {
        uint32_t freq[kLitLen] = {};
        uint64_t extra = c.long_extra, matches = c.long_matches;
        for (int v = 0; v < 256; ++v) {
            uint32_t f = c.heads[v];
            for (int r = kShortRun; r < m; ++r) f += static_cast<uint32_t>(r) * c.short_runs[r - kShortRun][v];
            freq[v] = f;
        }
        freq[256] = 1;
        for (int s = 0; s < 29; ++s) freq[257 + s] = c.long_symbols[s];
        for (int r = m; r < kLongRun; ++r) {
            freq[257 + lengths[static_cast<size_t>(r)].symbol] += short_total[r];
            extra += uint64_t(short_total[r]) * lengths[static_cast<size_t>(r)].extra_bits;
            matches += short_total[r];
        }
        uint8_t lit[kLitLen], dist[kDistances];
        code_lengths(freq, kLitLen, kMaxBits, lit);
        uint32_t dist_freq[kDistances] = {};
        dist_freq[0] = static_cast<uint32_t>(std::min<uint64_t>(matches, UINT32_MAX));
        code_lengths(dist_freq, kDistances, kMaxBits, dist);
        Header h;
        make_header(lit, dist, h);
        uint64_t bits = h.bits + extra + matches * dist[0];
        for (int s = 0; s < kLitLen; ++s) bits += uint64_t(freq[s]) * lit[s];
        if (bits < best.bits) {
            best.bits = bits;
            best.m = m;
            std::copy(lit, lit + kLitLen, best.lit);
            std::copy(dist, dist + kDistances, best.dist);
            best.header = h;
        }
    }
    best.stored = best.bits >= stored_bits(n);
}

// The chosen code as the emitter takes it: each literal's code and length in one word (code |
// bits << 16), each match length's codes (its length's code and extra bits, then distance 1's
// code: the distance code has one symbol and its partner; 21 bits at most) and bits, the end.
struct Tables {
    uint32_t literal[256];
    uint32_t match_code[259] = {};
    uint8_t match_bits[259] = {};
    uint32_t end_code;
    unsigned end_bits;
};

void make_tables(const Choice& best, Tables& t) {
    const auto& lengths = length_codes();
    uint16_t lit_code[kLitLen] = {}, dist_code[kDistances] = {};
    canonical_codes(best.lit, kLitLen, lit_code);
    canonical_codes(best.dist, kDistances, dist_code);
    for (int len = 3; len <= 258; ++len) {
        const LengthCode& c = lengths[static_cast<size_t>(len)];
        const int s = 257 + c.symbol;
        t.match_code[len] = lit_code[s] | uint32_t(c.extra) << best.lit[s] | uint32_t(dist_code[0]) << (best.lit[s] + c.extra_bits);
        t.match_bits[len] = static_cast<uint8_t>(best.lit[s] + c.extra_bits + best.dist[0]);
    }
    for (int v = 0; v < 256; ++v) t.literal[v] = lit_code[v] | uint32_t(best.lit[v]) << 16;
    t.end_code = lit_code[256];
    t.end_bits = best.lit[256];
}

// One block: its runs counted, the minimum run m chosen by the bits each takes, then coded (or
// stored, where that is smaller).
void code_block(const unsigned char* d, size_t n, bool final, BitWriter& w) {
    struct Run {
        size_t at, end;
    };
    static thread_local std::vector<Run> runs;
    runs.clear();
    RunCounts counts;
    count_block(d, n, counts, [&](size_t at, size_t end) { runs.push_back({at, end}); });
    Choice best;
    choose(counts, n, best);
    if (best.stored) {
        write_stored(d, n, final, w);
        return;
    }
    Tables t;
    make_tables(best, t);
    write_header(best.header, final, w);
    // Literals three a put (45 bits at most), and the writer in locals (the compiler keeps a
    // local's fields in registers; a reference's it stores at every byte).
    BitWriter out = w;
    const size_t m = static_cast<size_t>(best.m);
    size_t at = 0;
    for (auto r = runs.begin();; ++r) {
        while (r != runs.end() && r->end - r->at - 1 < m) ++r;  // runs under m: literals, with the bytes around them
        const size_t to = r == runs.end() ? n : r->at + 1;       // up to the run's first byte
        for (; at + 3 <= to; at += 3) {
            const uint32_t x = t.literal[d[at]], y = t.literal[d[at + 1]], z = t.literal[d[at + 2]];
            const unsigned bx = x >> 16, by = y >> 16;
            out.put(uint64_t(x & 0xffff) | uint64_t(y & 0xffff) << bx | uint64_t(z & 0xffff) << (bx + by), bx + by + (z >> 16));
        }
        for (; at < to; ++at) out.put(t.literal[d[at]] & 0xffff, t.literal[d[at]] >> 16);
        if (r == runs.end()) break;
        match_lengths(r->end - r->at - 1, [&](size_t len) { out.put(t.match_code[len], t.match_bits[len]); });
        at = r->end;
    }
    out.put(t.end_code, t.end_bits);
    w = out;
}

}  // namespace

RunCounts run_counts(const unsigned char* data, size_t n) {
    RunCounts c;
    count_block(data, n, c, [](size_t, size_t) {});
    return c;
}

bool run_block_stored(const RunCounts& counts, size_t n) {
    Choice best;
    choose(counts, n, best);
    return best.stored;
}

size_t deflate_runs_bound(size_t length, size_t block) {
    if (block == 0) block = kRunBlock;
    // Each block no more than stored (stored_bits(): 6 bytes a stored block of 65535 at most,
    // and a block of the coder's may end one early), the sync flush's empty stored block, a byte
    // of padding, and BitWriter::flush()'s 8 bytes of slack.
    const size_t blocks = length == 0 ? 1 : (length + block - 1) / block;
    return length + 6 * (length / kStoredMax + 2 * blocks + 2) + 16;
}

RunCoder::RunCoder(unsigned char* out, size_t block) : start_(out), out_(out), block_(block == 0 ? kRunBlock : block) {}

void RunCoder::code(const unsigned char* data, size_t length, bool last) {
    BitWriter w(out_, bits_, count_);
    for (size_t at = 0; at < length; at += block_) {
        const size_t n = std::min(block_, length - at);
        code_block(data + at, n, last && at + n == length, w);
    }
    ended_ = ended_ || (last && length > 0);
    out_ = w.end();
    bits_ = w.buffer();
    count_ = w.count();
}

size_t RunCoder::finish(bool last) {
    BitWriter w(out_, bits_, count_);
    if (last && !ended_) write_stored(nullptr, 0, true, w);  // nothing coded: the stream's end alone
    if (!last) write_stored(nullptr, 0, false, w);          // the sync flush: an empty stored block, aligned
    w.align();
    out_ = w.end();
    bits_ = 0;
    count_ = 0;
    return static_cast<size_t>(out_ - start_);
}

size_t deflate_runs(const unsigned char* data, size_t length, bool last, unsigned char* out, size_t block) {
    RunCoder coder(out, block);
    coder.code(data, length, last);
    const size_t written = coder.finish(last);
    if (written + 8 > deflate_runs_bound(length, block)) throw std::logic_error("deflate_runs: the bound did not hold");
    return written;
}

std::vector<std::pair<size_t, size_t>> runs_sample(size_t length, size_t fewest) {
    constexpr size_t kBand = size_t(32) << 10, kWhole = size_t(128) << 10, kEach = size_t(1) << 20;
    if (length <= kWhole) return {{0, length}};
    // Each band at the middle of its share: a sample from the image's first and last rows (the
    // first version's) saw the background of a render and missed the object between.
    const size_t bands = std::clamp<size_t>(length / kEach, fewest, 8);
    std::vector<std::pair<size_t, size_t>> out;
    for (size_t b = 0; b < bands; ++b) out.emplace_back((length - kBand) * (2 * b + 1) / (2 * bands), kBand);
    return out;
}

libdeflate_compressor* level_compressor(int level) {
    struct Free {
        void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
    };
    thread_local std::unique_ptr<libdeflate_compressor, Free> compressors[13];
    level = std::clamp(level, 1, 12);
    auto& compressor = compressors[level];
    if (!compressor) compressor.reset(libdeflate_alloc_compressor(level));
    if (!compressor) throw std::bad_alloc();
    return compressor.get();
}

bool runs_pay(const std::vector<std::pair<const unsigned char*, size_t>>& bands, int level, std::vector<unsigned char>* smaller) {
    libdeflate_compressor* const compressor = level_compressor(level);
    thread_local std::vector<unsigned char> theirs, ours;  // (zeroed once, when they grow)
    size_t their_bytes = 0, our_bytes = 0;
    for (const auto& [data, size] : bands) {
        theirs.resize(libdeflate_deflate_compress_bound(compressor, size));
        their_bytes += libdeflate_deflate_compress(compressor, data, size, theirs.data(), theirs.size());
        ours.resize(deflate_runs_bound(size));
        our_bytes += deflate_runs(data, size, true, ours.data());
    }
    const bool runs = our_bytes <= their_bytes;
    if (smaller && bands.size() == 1) {
        const unsigned char* kept = runs ? ours.data() : theirs.data();
        smaller->assign(kept, kept + (runs ? our_bytes : their_bytes));
    }
    return runs;
}

bool runs_pay(const unsigned char* data, size_t length, int level) {
    std::vector<std::pair<const unsigned char*, size_t>> bands;
    for (const auto& [first, size] : runs_sample(length)) bands.emplace_back(data + first, size);
    return runs_pay(bands, level);
}

}  // namespace gpufft
