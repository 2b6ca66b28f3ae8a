#include "image/png_io.h"

#include "base/core_pool.h"
#include "base/error.h"
#include "image/files.h"
#include "image/deflate.h"
#include "image/inflate.h"

#include <libdeflate.h>
#include <png.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <condition_variable>
#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace gpufft {

namespace {

/// This thread's libdeflate decompressor (made on first use, kept for the thread's life).
libdeflate_decompressor* thread_inflater() {
    struct Free {
        void operator()(libdeflate_decompressor* d) const { libdeflate_free_decompressor(d); }
    };
    thread_local std::unique_ptr<libdeflate_decompressor, Free> inflater(libdeflate_alloc_decompressor());
    if (!inflater) throw std::bad_alloc();
    return inflater.get();
}

// libpng reports errors by longjmp. Every libpng call that can fail runs inside one of the small
// functions below that hold the setjmp; their frames own no C++ objects, so the jump skips no
// destructor. Messages land in the context's buffer.

struct PngContext {
    FILE* file = nullptr;
    png_structp png = nullptr;
    png_infop info = nullptr;
    char message[256] = {0};
    char warning[256] = {0};  // the last warning: libpng often says why in a warning, then fails
    bool truncated = false;
};

void on_error(png_structp png, png_const_charp msg) {
    auto* c = static_cast<PngContext*>(png_get_error_ptr(png));
    if (!c->message[0]) std::snprintf(c->message, sizeof c->message, "%s", msg);
    std::longjmp(png_jmpbuf(png), 1);
}

// Ancillary-chunk problems are warnings (libpng drops the chunk); kept to explain a later error.
void on_warning(png_structp png, png_const_charp msg) {
    auto* c = static_cast<PngContext*>(png_get_error_ptr(png));
    std::snprintf(c->warning, sizeof c->warning, "%s", msg);
}

void read_data(png_structp png, png_bytep data, size_t length) {
    auto* c = static_cast<PngContext*>(png_get_io_ptr(png));
    if (std::fread(data, 1, length, c->file) != length) {
        c->truncated = !std::ferror(c->file);
        png_error(png, c->truncated ? "the file ends early (truncated)" : "read error");
    }
}

// The reason this thread's last write to an output failed (errno: a full disk, a file-size limit),
// for the file's one line: libpng's writes and our own chunks' (write_chunk) fail the same way.
thread_local int t_write_errno = 0;

bool put(const void* data, size_t length, FILE* file) {
    if (std::fwrite(data, 1, length, file) == length) return true;
    t_write_errno = errno;
    return false;
}

void describe_write_error(char* message, size_t size) {
    if (t_write_errno) std::snprintf(message, size, "write error: %s", std::strerror(t_write_errno));
    else std::snprintf(message, size, "write error");
}

void write_data(png_structp png, png_bytep data, size_t length) {
    auto* c = static_cast<PngContext*>(png_get_io_ptr(png));
    if (put(data, length, c->file)) return;
    describe_write_error(c->message, sizeof c->message);  // (no C++ temporaries across libpng's longjmp)
    png_error(png, c->message);
}

void flush_data(png_structp) {}

struct Header {
    png_uint_32 width = 0, height = 0;
    int bit_depth = 0, color_type = 0, interlace = 0;
};

bool read_header(PngContext* c, Header* h) {
    if (setjmp(png_jmpbuf(c->png))) return false;
    png_set_sig_bytes(c->png, 8);
    // Chunks libpng does not know are kept (read_metadata() takes those safe to copy).
    png_set_keep_unknown_chunks(c->png, PNG_HANDLE_CHUNK_IF_SAFE, nullptr, 0);
    // Our own pixel limit applies (PngLimits), with a clear message; lift libpng's 1e6 per side.
    png_set_user_limits(c->png, 0x7fffffff, 0x7fffffff);
    png_read_info(c->png, c->info);
    png_get_IHDR(c->png, c->info, &h->width, &h->height, &h->bit_depth, &h->color_type, &h->interlace, nullptr,
                 nullptr);
    return true;
}

/// Palette to RGB, grey below 8 bits to 8, tRNS to alpha; 16-bit samples in native byte order.
bool set_transforms(PngContext* c, int* passes, size_t* rowbytes, int* channels, int* depth) {
    if (setjmp(png_jmpbuf(c->png))) return false;
    png_set_expand(c->png);
    png_set_swap(c->png);  // little-endian hosts: native uint16
    *passes = png_set_interlace_handling(c->png);
    png_read_update_info(c->png, c->info);
    *rowbytes = png_get_rowbytes(c->png, c->info);
    *channels = png_get_channels(c->png, c->info);
    *depth = png_get_bit_depth(c->png, c->info);
    return true;
}

bool read_row(PngContext* c, png_bytep row) {
    if (setjmp(png_jmpbuf(c->png))) return false;
    png_read_row(c->png, row, nullptr);
    return true;
}

bool read_all(PngContext* c, png_bytepp rows) {
    if (setjmp(png_jmpbuf(c->png))) return false;
    png_read_image(c->png, rows);
    return true;
}

inline uint32_t big_endian32(const unsigned char* p) {
    return static_cast<uint32_t>(p[0]) << 24 | static_cast<uint32_t>(p[1]) << 16 | static_cast<uint32_t>(p[2]) << 8 | p[3];
}

bool read_end(PngContext* c) {
    if (setjmp(png_jmpbuf(c->png))) return false;
    png_read_end(c->png, nullptr);
    return true;
}

/// The chunks before the image data, from `file`'s position just after the signature, against
/// the file's length: libpng (1.6.39) allocates what a text, eXIf, sPLT, pCAL or sCAL chunk
/// declares before reading it, so a chunk there longer than the rest of the file is refused
/// first. "" when each fits (or the headers end early: libpng says so); the position is restored.
std::string chunk_past_the_end(FILE* file) {
    const off_t start = ftello(file);
    if (start < 0 || fseeko(file, 0, SEEK_END) != 0) return "";
    const off_t size = ftello(file);
    std::string problem;
    for (off_t at = start; fseeko(file, at, SEEK_SET) == 0;) {
        unsigned char head[8];
        if (std::fread(head, 1, 8, file) != 8) break;
        const uint32_t length = big_endian32(head);
        const std::string type(reinterpret_cast<const char*>(head + 4), 4);
        if (type == "IDAT" || length > 0x7fffffffu) break;  // (the latter is libpng's to refuse)
        if (static_cast<long long>(length) + 12 > static_cast<long long>(size - at)) {
            problem = "the file ends early (truncated): its " + type + " chunk declares " + std::to_string(length) + " bytes, " +
                      std::to_string(size - at - 8 > 0 ? size - at - 8 : 0) + " are left";
            break;
        }
        at += 12 + static_cast<off_t>(length);
    }
    fseeko(file, start, SEEK_SET);
    return problem;
}

void read_metadata(PngContext* c, PngFormat& f) {
    int intent = 0;
    if (png_get_sRGB(c->png, c->info, &intent)) {
        f.srgb = true;
        f.srgb_intent = intent;
    }
    double gamma = 0;
    if (png_get_gAMA(c->png, c->info, &gamma)) f.gamma = gamma;
    png_charp name = nullptr;
    png_bytep profile = nullptr;
    png_uint_32 length = 0;
    int compression = 0;
    if (png_get_iCCP(c->png, c->info, &name, &compression, &profile, &length) && profile) {
        f.icc_profile.assign(profile, profile + length);
        f.icc_name = name ? name : "ICC profile";
    }
    png_uint_32 px = 0, py = 0;
    int unit = 0;
    if (png_get_pHYs(c->png, c->info, &px, &py, &unit)) {
        f.has_phys = true;
        f.phys_x = px;
        f.phys_y = py;
        f.phys_unit = unit;
    }
    png_fixed_point w[2], r[2], g[2], b[2];
    if (png_get_cHRM_fixed(c->png, c->info, &w[0], &w[1], &r[0], &r[1], &g[0], &g[1], &b[0], &b[1])) {
        f.has_chrm = true;
        f.chrm = {w[0], w[1], r[0], r[1], g[0], g[1], b[0], b[1]};
    }
    png_bytep exif = nullptr;
    png_uint_32 exif_length = 0;
    if (png_get_eXIf_1(c->png, c->info, &exif_length, &exif) && exif) f.exif.assign(exif, exif + exif_length);
    png_unknown_chunkp unknown = nullptr;
    const int unknowns = png_get_unknown_chunks(c->png, c->info, &unknown);
    for (int i = 0; i < unknowns; ++i) {
        const png_unknown_chunk& u = unknown[i];
        if (!(u.name[3] & 0x20)) continue;  // not safe to copy
        f.unknown_chunks.push_back({std::string(reinterpret_cast<const char*>(u.name), 4),
                                    std::vector<unsigned char>(u.data, u.data + u.size), u.location});
    }
    png_textp text = nullptr;
    const int count = png_get_text(c->png, c->info, &text, nullptr);
    for (int i = 0; i < count; ++i) {
        const png_text& t = text[i];
        if (!t.key || !valid_text_key(t.key)) continue;  // (libpng would refuse to write it)
        PngText kept;
        kept.key = t.key;
        const bool international = t.compression >= PNG_ITXT_COMPRESSION_NONE;
        const size_t length = international ? t.itxt_length : t.text_length;
        if (t.text) kept.text.assign(t.text, length);
        kept.kind = t.compression == PNG_TEXT_COMPRESSION_zTXt ? PngText::Kind::CompressedText
                  : t.compression == PNG_ITXT_COMPRESSION_NONE ? PngText::Kind::International
                  : t.compression == PNG_ITXT_COMPRESSION_zTXt ? PngText::Kind::CompressedInternational
                                                               : PngText::Kind::Text;
        if (international && t.lang) kept.language = t.lang;
        if (international && t.lang_key) kept.translated_key = t.lang_key;
        f.text.push_back(std::move(kept));
    }
}

/// The chunks of `f.text` as libpng takes them (pointing into `f`).
std::vector<png_text> libpng_text(const PngFormat& f) {
    std::vector<png_text> chunks;
    for (const PngText& t : f.text) {
        png_text c{};
        c.compression = t.kind == PngText::Kind::CompressedText          ? PNG_TEXT_COMPRESSION_zTXt
                      : t.kind == PngText::Kind::International           ? PNG_ITXT_COMPRESSION_NONE
                      : t.kind == PngText::Kind::CompressedInternational ? PNG_ITXT_COMPRESSION_zTXt
                                                                         : PNG_TEXT_COMPRESSION_NONE;
        c.key = const_cast<png_charp>(t.key.c_str());
        c.text = const_cast<png_charp>(t.text.c_str());
        c.text_length = t.text.size();
        if (c.compression >= PNG_ITXT_COMPRESSION_NONE) {
            c.lang = const_cast<png_charp>(t.language.c_str());
            c.lang_key = const_cast<png_charp>(t.translated_key.c_str());
        }
        chunks.push_back(c);
    }
    return chunks;
}

// The Paeth predictor (PNG, filter type 4) of a sample from its left, upper and upper-left
// neighbours.
inline int paeth(int a, int b, int c) {
    const int pa = std::abs(b - c), pb = std::abs(a - c), pc = std::abs(a + b - 2 * c);
    return (pa <= pb && pa <= pc) ? a : (pb <= pc ? b : c);
}

// Image data whose rows are whole bytes a sample and one pass: not interlaced, 8 or 16 bits, not
// palette. Our own filters and unfilters take such rows (the readers and writers below).
bool plain_rows(const PngFormat& f) {
    return !f.interlaced && (f.bit_depth == 8 || f.bit_depth == 16) && f.color_type != PNG_COLOR_TYPE_PALETTE;
}

// Images that libpng would hand over as stored (plain rows and no tRNS, so no transform but the
// 16-bit byte swap) skip libpng's row reader: the image data is gathered from its IDAT chunks,
// inflated by libdeflate (whole) or our Inflater (by rows, inflate.h) and unfiltered here. On a
// 2048x2048 RGB image libpng took 56-68 ms, a third in zlib's inflate and the rest unfiltering
// byte by byte (Debian's libpng has no SIMD filters); src/README.md, "The batch's decoding".
bool inflates_itself(const PngFormat& f) { return plain_rows(f) && !f.has_trns; }

// A chunk type PNG allows: four ASCII letters (libpng refuses any other).
bool letters(const unsigned char type[4]) {
    for (int i = 0; i < 4; ++i)
        if (!((type[i] >= 'A' && type[i] <= 'Z') || (type[i] >= 'a' && type[i] <= 'z'))) return false;
    return true;
}

// The chunks of a PNG from one in memory, each CRC checked as it is taken.
struct ChunkReader {
    unsigned char* at;
    unsigned char* end;
    uint32_t length = 0;
    unsigned char* type = nullptr;
    unsigned char* data = nullptr;
    /// The next chunk; false where the bytes end before it does, its length or type is one PNG
    /// does not allow, or its CRC does not match.
    bool next() {
        if (end - at < 12) return false;
        length = big_endian32(at);
        if (length > 0x7fffffffu || static_cast<size_t>(end - at) - 12 < length) return false;
        type = at + 4;
        data = at + 8;
        at = data + length + 4;
        return letters(type) && libdeflate_crc32(0, type, length + size_t(4)) == big_endian32(data + length);
    }
    bool is(const char* name) const { return std::memcmp(type, name, 4) == 0; }
};

// The filters that chain along a row, Sub (1), Average (3) and Paeth (4), undone in place as
// unfilter_row() does. Each byte chains to the one a pixel to its left, so a pixel's bytes are the
// parallel work: here as 16-bit lanes of one SSE2 register (Bpp <= 8), Paeth's choices as masks,
// not branches (noisy rows mispredict them); Paeth's chain from one pixel to the next is a dozen
// vector operations, where bytewise it is a dozen scalar ones a byte. The rows are read and written
// 12 or 16 bytes (whole pixels) at a time, each pixel's bytes shifted out of the register and back
// (a byte at a time they took more instructions than the chain). Two rows of one filter run as two
// chains side by side, the lower a chunk behind the upper (unchain_rows): the bytes it needs above
// are the upper chain's last chunk, still in a register. Pixels of one or two bytes keep the byte
// loops for Sub and Average (cheaper there), Paeth takes them a pixel at a time.
#if defined(__SSE2__)
// The predictors, on 16-bit lanes: of the left (a), upper (b) and upper-left (c) neighbours.
struct Sub {
    static __m128i of(__m128i a, __m128i, __m128i) { return a; }
};
struct Average {
    static __m128i of(__m128i a, __m128i b, __m128i) { return _mm_srli_epi16(_mm_add_epi16(a, b), 1); }
};
struct Paeth {
    [[gnu::always_inline]] static __m128i of(__m128i a, __m128i b, __m128i c) {
        const __m128i zero = _mm_setzero_si128();
        auto abs16 = [&](__m128i v) { return _mm_max_epi16(v, _mm_sub_epi16(zero, v)); };
        const __m128i db = _mm_sub_epi16(b, c), da = _mm_sub_epi16(a, c);
        const __m128i pa = abs16(db), pb = abs16(da), pc = abs16(_mm_add_epi16(da, db));
        const __m128i not_a = _mm_or_si128(_mm_cmpgt_epi16(pa, pb), _mm_cmpgt_epi16(pa, pc));
        const __m128i take_c = _mm_cmpgt_epi16(pb, pc);
        const __m128i b_or_c = _mm_or_si128(_mm_and_si128(take_c, c), _mm_andnot_si128(take_c, b));
        return _mm_or_si128(_mm_and_si128(not_a, b_or_c), _mm_andnot_si128(not_a, a));
    }
};

template <size_t... K, class F>
[[gnu::always_inline]] inline void each_of(std::index_sequence<K...>, F f) {
    (f(std::integral_constant<size_t, K>{}), ...);
}

template <size_t Bpp, class Predictor>
struct RowLanes {
    static_assert(Bpp <= 8, "a pixel in one register");
    static constexpr size_t chunk_bytes = Bpp == 3 || Bpp == 6 ? 12 : 16;

    // A lone pixel's bytes in and out through a general register (the rows' ends).
    static __m128i load(const unsigned char* p) {
        uint64_t v = 0;
        for (size_t k = 0; k < Bpp; ++k) v |= static_cast<uint64_t>(p[k]) << (8 * k);
        return _mm_unpacklo_epi8(_mm_cvtsi64_si128(static_cast<long long>(v)), _mm_setzero_si128());
    }
    static void store(unsigned char* p, __m128i pixel) {
        const uint64_t out = static_cast<uint64_t>(_mm_cvtsi128_si64(_mm_packus_epi16(pixel, _mm_setzero_si128())));
        for (size_t k = 0; k < Bpp; ++k) p[k] = static_cast<unsigned char>(out >> (8 * k));
    }
    // A pixel from its filtered bytes and its left (a), upper (b) and upper-left (c) neighbours.
    // The lanes past the pixel's are left to hold anything.
    [[gnu::always_inline]] static __m128i unfiltered(__m128i filtered, __m128i a, __m128i b, __m128i c) {
        return _mm_and_si128(_mm_add_epi16(filtered, Predictor::of(a, b, c)), _mm_set1_epi16(0xff));
    }
    // The chunk_bytes of a row at the front of `filtered` (16 bytes), `above` the row above them,
    // `a` and `c` carried from the pixel before (and on to the next chunk): the unfiltered bytes.
    [[gnu::always_inline]] static __m128i chunk(__m128i filtered, __m128i above, __m128i& a, __m128i& c) {
        const __m128i zero = _mm_setzero_si128();
        const __m128i mask = _mm_cvtsi64_si128(static_cast<long long>(Bpp == 8 ? ~0ull : (1ull << (8 * Bpp)) - 1));
        __m128i out = zero;
        each_of(std::make_index_sequence<chunk_bytes / Bpp>(), [&](auto k) __attribute__((always_inline)) {
            constexpr int at = static_cast<int>(decltype(k)::value * Bpp);
            const __m128i b = _mm_unpacklo_epi8(_mm_srli_si128(above, at), zero);
            a = unfiltered(_mm_unpacklo_epi8(_mm_srli_si128(filtered, at), zero), a, b, c);
            c = b;
            out = _mm_or_si128(out, _mm_slli_si128(_mm_and_si128(_mm_packus_epi16(a, zero), mask), at));
        });
        return out;
    }
    // chunk() of two rows at once (Bpp <= 4), the second's pixels in lanes 4-7 of `a` and `c`.
    struct Two {
        __m128i first, second;
    };
    [[gnu::always_inline]] static Two chunks(__m128i filtered, __m128i above, __m128i filtered2, __m128i above2,
                                             __m128i& a, __m128i& c) {
        static_assert(Bpp <= 4, "two pixels in one register");
        const __m128i zero = _mm_setzero_si128();
        const __m128i mask = _mm_cvtsi32_si128(static_cast<int>((1ull << (8 * Bpp)) - 1));
        __m128i out = zero, out2 = zero;
        each_of(std::make_index_sequence<chunk_bytes / Bpp>(), [&](auto k) __attribute__((always_inline)) {
            constexpr int at = static_cast<int>(decltype(k)::value * Bpp);
            auto lanes = [&](__m128i first, __m128i second) {
                return _mm_unpacklo_epi64(_mm_unpacklo_epi8(_mm_srli_si128(first, at), zero),
                                          _mm_unpacklo_epi8(_mm_srli_si128(second, at), zero));
            };
            const __m128i b = lanes(above, above2);
            a = unfiltered(lanes(filtered, filtered2), a, b, c);
            c = b;
            const __m128i bytes = _mm_packus_epi16(a, zero);
            out = _mm_or_si128(out, _mm_slli_si128(_mm_and_si128(bytes, mask), at));
            out2 = _mm_or_si128(out2, _mm_slli_si128(_mm_and_si128(_mm_srli_si128(bytes, 4), mask), at));
        });
        return {out, out2};
    }
    static __m128i load16(const unsigned char* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
    static void store_chunk(unsigned char* p, __m128i bytes) {
        if (chunk_bytes == 16) {
            _mm_storeu_si128(reinterpret_cast<__m128i*>(p), bytes);
        } else {
            _mm_storel_epi64(reinterpret_cast<__m128i*>(p), bytes);
            const uint32_t last = static_cast<uint32_t>(_mm_cvtsi128_si32(_mm_srli_si128(bytes, 8)));
            std::memcpy(p + 8, &last, 4);
        }
    }
    // The pixel at `p` alone, `b` above it, `a` and `c` carried from the pixel before (and on).
    static void pixel(unsigned char* p, __m128i b, __m128i& a, __m128i& c) {
        a = unfiltered(load(p), a, b, c);
        c = b;
        store(p, a);
    }
    // A row's pixels from byte `x` on, one at a time.
    static void rest(unsigned char* row, const unsigned char* prev, size_t x, size_t stride, __m128i& a, __m128i& c) {
        for (; x < stride; x += Bpp) pixel(row + x, load(prev + x), a, c);
    }
};

// Chunks where a pixel is 3 bytes or more; one or two bytes are cheaper to take one at a time
// (and, for Sub and Average, a byte at a time: unfilter_row()).
template <size_t Bpp>
constexpr bool by_chunks = Bpp >= 3;

template <size_t Bpp, class Predictor>
[[gnu::noinline]] void unchain_row(unsigned char* row, const unsigned char* prev, size_t stride) {
    using L = RowLanes<Bpp, Predictor>;
    __m128i a = _mm_setzero_si128(), c = a;  // left of the first pixel: zeros
    size_t x = 0;
    if (by_chunks<Bpp>)
        for (; x + 16 <= stride; x += L::chunk_bytes)
            L::store_chunk(row + x, L::chunk(L::load16(row + x), L::load16(prev + x), a, c));
    L::rest(row, prev, x, stride, a, c);
}

// Rows `upper` and `lower` (the one below it), both of Predictor's filter, `prev` the row above
// `upper`: the lower a chunk behind the upper, or a pixel where pixels go one at a time.
template <size_t Bpp, class Predictor>
[[gnu::noinline]] void unchain_rows(unsigned char* upper, unsigned char* lower, const unsigned char* prev, size_t stride) {
    using L = RowLanes<Bpp, Predictor>;
    constexpr size_t n = by_chunks<Bpp> ? L::chunk_bytes : Bpp;
    __m128i a = _mm_setzero_si128(), c = a, lower_a = a, lower_c = a;
    __m128i above_lower = a;  // the upper row's last chunk or pixel, unfiltered
    size_t x = 0;
    if constexpr (Bpp <= 4 && by_chunks<Bpp>) {  // both chains in one register: the lower's lanes 4-7
        if (stride >= 16) {
            L::store_chunk(upper, above_lower = L::chunk(L::load16(upper), L::load16(prev), a, c));
            __m128i both_a = _mm_unpacklo_epi64(a, lower_a), both_c = _mm_unpacklo_epi64(c, lower_c);
            for (x = n; x + 16 <= stride; x += n) {
                const auto [out, lower_out] =
                    L::chunks(L::load16(upper + x), L::load16(prev + x), L::load16(lower + x - n), above_lower, both_a, both_c);
                L::store_chunk(lower + x - n, lower_out);
                L::store_chunk(upper + x, out);
                above_lower = out;
            }
            a = both_a, c = both_c;
            lower_a = _mm_srli_si128(both_a, 8), lower_c = _mm_srli_si128(both_c, 8);
        }
    }
    for (; x + 16 <= stride; x += n) {
        if (by_chunks<Bpp>) {
            const __m128i out = L::chunk(L::load16(upper + x), L::load16(prev + x), a, c);
            if (x > 0) L::store_chunk(lower + x - n, L::chunk(L::load16(lower + x - n), above_lower, lower_a, lower_c));
            L::store_chunk(upper + x, out);
            above_lower = out;
        } else {
            if (x > 0) L::pixel(lower + x - n, a, lower_a, lower_c);  // above it: the upper's last pixel
            L::pixel(upper + x, L::load(prev + x), a, c);
        }
    }
    L::rest(upper, prev, x, stride, a, c);
    L::rest(lower, upper, x > 0 ? x - n : 0, stride, lower_a, lower_c);
}
#endif

// `undo` called with the predictor (Sub, Average or Paeth) whose SSE2 lanes (above) undo `filter`
// on pixels of `Bpp` bytes; false where the filter has none.
template <size_t Bpp, class Undo>
bool in_lanes(int filter, Undo undo) {
#if defined(__SSE2__)
    if (filter == 4) return undo(Paeth{}), true;
    if (by_chunks<Bpp> && filter == 1) return undo(Sub{}), true;
    if (by_chunks<Bpp> && filter == 3) return undo(Average{}), true;
#endif
    (void)filter, (void)undo;
    return false;
}

// The row filters of PNG undone in place a byte at a time: `row` holds a row's filtered bytes, `prev`
// the row above, already unfiltered (zeros for the first row), `Bpp` bytes a pixel.
template <size_t Bpp>
[[gnu::noinline]] void unfilter_bytes(int filter, unsigned char* row, const unsigned char* prev, size_t stride) {
    switch (filter) {
        case 1:
            for (size_t i = Bpp; i < stride; ++i) row[i] = static_cast<unsigned char>(row[i] + row[i - Bpp]);
            break;
        case 2:
            for (size_t i = 0; i < stride; ++i) row[i] = static_cast<unsigned char>(row[i] + prev[i]);
            break;
        case 3:
            for (size_t i = 0; i < Bpp; ++i) row[i] = static_cast<unsigned char>(row[i] + (prev[i] >> 1));
            for (size_t i = Bpp; i < stride; ++i) row[i] = static_cast<unsigned char>(row[i] + ((row[i - Bpp] + prev[i]) >> 1));
            break;
        case 4:
            for (size_t i = 0; i < Bpp; ++i) row[i] = static_cast<unsigned char>(row[i] + prev[i]);
            for (size_t i = Bpp; i < stride; ++i) row[i] = static_cast<unsigned char>(row[i] + paeth(row[i - Bpp], prev[i], prev[i - Bpp]));
            break;
        default: break;
    }
}

// The row filters undone in place, as unfilter_bytes(), in SSE2 lanes where that is faster.
template <size_t Bpp>
void unfilter_row(int filter, unsigned char* row, const unsigned char* prev, size_t stride) {
    if (in_lanes<Bpp>(filter, [&](auto p) { unchain_row<Bpp, decltype(p)>(row, prev, stride); })) return;
#if defined(__SSE2__)
    if (filter == 2) {  // Up: 16 bytes an addition (GCC's -O2 leaves the loop a byte at a time)
        size_t i = 0;
        for (; i + 16 <= stride; i += 16) {
            const __m128i* const p = reinterpret_cast<const __m128i*>(prev + i);
            __m128i* const r = reinterpret_cast<__m128i*>(row + i);
            _mm_storeu_si128(r, _mm_add_epi8(_mm_loadu_si128(r), _mm_loadu_si128(p)));
        }
        for (; i < stride; ++i) row[i] = static_cast<unsigned char>(row[i] + prev[i]);
        return;
    }
#endif
    unfilter_bytes<Bpp>(filter, row, prev, stride);
}

// Two rows, `upper` (its `filter`) and `lower` (`lower_filter`, below it), undone as
// unfilter_row() does each; `prev` the row above `upper`. Where both chain along the row with the
// same filter they run side by side.
template <size_t Bpp>
void unfilter_rows(int filter, unsigned char* upper, int lower_filter, unsigned char* lower, const unsigned char* prev,
                   size_t stride) {
    if (filter == lower_filter &&
        in_lanes<Bpp>(filter, [&](auto p) { unchain_rows<Bpp, decltype(p)>(upper, lower, prev, stride); }))
        return;
    unfilter_row<Bpp>(filter, upper, prev, stride);
    unfilter_row<Bpp>(lower_filter, lower, upper, stride);
}

// A row (`lower` null) or two, `bpp` bytes a pixel.
void unfilter(int filter, unsigned char* row, const unsigned char* prev, size_t stride, size_t bpp,
              int lower_filter = 0, unsigned char* lower = nullptr) {
    auto rows = [&](auto one, auto two) { lower ? two(filter, row, lower_filter, lower, prev, stride) : one(filter, row, prev, stride); };
    switch (bpp) {
        case 1: rows(unfilter_row<1>, unfilter_rows<1>); break;
        case 2: rows(unfilter_row<2>, unfilter_rows<2>); break;
        case 3: rows(unfilter_row<3>, unfilter_rows<3>); break;
        case 4: rows(unfilter_row<4>, unfilter_rows<4>); break;
        case 6: rows(unfilter_row<6>, unfilter_rows<6>); break;
        default: rows(unfilter_row<8>, unfilter_rows<8>); break;
    }
}

// 16-bit samples from the file's order (big-endian) to the machine's, `bytes` of them.
void swap_samples(const unsigned char* from, unsigned char* to, size_t bytes) {
    for (size_t i = 0; i < bytes; i += 2) {
        const unsigned char high = from[i];
        to[i] = from[i + 1];
        to[i + 1] = high;
    }
}

// The image data after png_read_info() (which stops inside the first IDAT chunk, its head read)
// into `out`: every chunk's CRC up to IEND checked, the stream inflated to
// exactly the rows' size, its Adler-32 checked, the rows unfiltered, 16-bit samples to the
// machine's order. `parts`: a stream of two parts at least (inflate_in_parts' 4 MiB each) is
// inflated in parts on every core (CorePool), for a file read alone, where they would wait; a
// batch's workers keep libdeflate, the faster a core. Gives who inflated it ("libdeflate",
// "inflater, in parts"); null, with `out` in any state, on anything that is not plainly right (a
// CRC, the stream, a filter type, a critical chunk after the data, the file's end before IEND):
// the caller then reads the file again through libpng, whose word on it stands. The samples of
// `height` rows of `stride` bytes (`bpp` a pixel, `depth` bits a sample) go to `out`, which holds
// (stride + 1) * height bytes (the rows with their filter bytes, before they are moved down).
const char* inflate_whole(FILE* file, unsigned char* out, size_t stride, size_t bpp, size_t height, int depth, bool parts) {
    // The rest of the file in one buffer, from the first IDAT's head; the image data gathered
    // where it lies, each IDAT's data moved down after the one before.
    const long at = std::ftell(file);
    if (at < 16 || std::fseek(file, 0, SEEK_END) != 0) return nullptr;
    const long size = std::ftell(file);
    if (size < at || std::fseek(file, at - 8, SEEK_SET) != 0) return nullptr;
    std::vector<unsigned char> bytes(static_cast<size_t>(size - at + 8));
    if (std::fread(bytes.data(), 1, bytes.size(), file) != bytes.size()) return nullptr;
    ChunkReader chunk{bytes.data(), bytes.data() + bytes.size()};
    if (!chunk.next() || !chunk.is("IDAT")) return nullptr;
    size_t stream = 0;
    do {
        std::memmove(bytes.data() + stream, chunk.data, chunk.length);
        stream += chunk.length;
        if (!chunk.next()) return nullptr;
    } while (chunk.is("IDAT"));
    // After it, up to IEND: ancillary chunks (ignored, as libpng ignores them here); a critical
    // chunk is libpng's to judge.
    while (!chunk.is("IEND"))
        if ((chunk.type[0] & 0x20) == 0 || !chunk.next()) return nullptr;

    // (A window under 32 KiB, which libpng's writer gives images of under 16 KiB, is libpng's to
    // read: it refuses distances beyond it, libdeflate ignores the window; zlib_header_ok().)
    if (stream < 2 || !zlib_header_ok(bytes.data())) return nullptr;
    const size_t inflated = (stride + 1) * height;
    const char* by = "inflater, in parts";
    if (!parts || !inflate_in_parts(bytes.data(), stream, out, inflated, CorePool::get().size(),
                                    [](std::function<void()> job) { return CorePool::get().run(std::move(job)); })) {
        if (libdeflate_zlib_decompress(thread_inflater(), bytes.data(), stream, out, inflated, nullptr) !=
            LIBDEFLATE_SUCCESS)
            return nullptr;
        by = "libdeflate";
    }

    // Row y's filter byte and bytes lie at (stride + 1) y; moved down to stride y, then unfiltered
    // against the row above, which is already in place.
    const std::vector<unsigned char> zeros(stride, 0);
    for (size_t y = 0; y < height; y += 2) {  // two rows a step (of one filter, side by side)
        unsigned char* row = out + stride * y;
        const int filter = row[y];
        std::memmove(row, row + y + 1, stride);
        unsigned char* const lower = y + 1 < height ? row + stride : nullptr;
        const int lower_filter = lower ? lower[y + 1] : 0;
        if (lower) std::memmove(lower, lower + y + 2, stride);
        if (filter > 4 || lower_filter > 4) return nullptr;
        unfilter(filter, row, y ? row - stride : zeros.data(), stride, bpp, lower_filter, lower);
    }
    if (depth == 16) swap_samples(out, out, stride * height);
    return by;
}

// Rows of the image data read a few at a time (PngReader::read_rows, for images streamed by
// rows), where inflate_whole() cannot hold the stream. Two threads share the work: an inflater
// reads the IDAT chunks (each CRC checked at its end, as libpng does) and inflates the zlib
// stream (our Inflater, inflate.h: header, Adler-32 and all) into blocks of filtered rows (about
// 256 KiB each, a ring of four); the caller's thread unfilters each block's rows into its own. On
// one thread a 16384x16384 RGB file spent two thirds of its time in zlib and the rest
// unfiltering (src/README.md, "Streamed decoding on two threads", "Our own inflater"). Any call
// returns false on anything not plainly right, and the caller reads on through libpng; a problem
// the inflater meets ahead of the rows asked for stays unseen until a call needs the rows after
// it, so the calls fail where they would on one thread or earlier, never later.
class StreamInflate {
public:
    StreamInflate(FILE* file, int width, int height, int channels, int depth)
        : file_(file), bpp_(static_cast<size_t>(channels) * static_cast<size_t>(depth / 8)),
          stride_(static_cast<size_t>(width) * bpp_), height_(height), wide_(depth == 16),
          block_rows_(block_rows(stride_ + 1, height)), prev_(stride_, 0),
          inflate_([this](unsigned char* buffer, size_t capacity) { return idat_data(buffer, capacity); }) {
        for (Block& b : ring_) b.bytes.resize(block_rows_ * (stride_ + 1));
    }
    ~StreamInflate() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stop_ = true;
        }
        changed_.notify_all();
        if (inflater_.joinable()) inflater_.join();
    }
    /// After png_read_info(): the first IDAT's head again; the inflater starts.
    bool start() {
        const long at = std::ftell(file_);
        if (at < 16 || std::fseek(file_, at - 8, SEEK_SET) != 0 || !next_chunk() || !is_idat_) return false;
        inflater_ = std::thread([this] { run(); });
        return true;
    }
    /// The next `count` rows into `dst`, in the machine's order.
    bool read(unsigned char* dst, int count) {
        for (int y = 0; y < count; ++y, dst += stride_) {
            if (!block_ && !next_block()) return false;
            unsigned char* row = block_->bytes.data() + row_in_block_ * (stride_ + 1);
            if (unfiltered_) {  // with the row above it
                unfiltered_ = false;
            } else {
                if (row[0] > 4) return false;
                const unsigned char* above = row_in_block_ > 0 ? row - stride_ : prev_.data();
                unsigned char* const lower = row + stride_ + 1;  // two rows of one filter side by side
                unfiltered_ = row_in_block_ + 1 < block_->rows && lower[0] == row[0];
                unfilter(row[0], row + 1, above, stride_, bpp_, row[0], unfiltered_ ? lower + 1 : nullptr);
            }
            if (wide_) swap_samples(row + 1, dst, stride_);
            else std::memcpy(dst, row + 1, stride_);
            if (++row_in_block_ == block_->rows) {
                std::memcpy(prev_.data(), row + 1, stride_);
                block_ = nullptr;
                {
                    std::lock_guard<std::mutex> lock(mutex_);
                    ++used_;
                }
                changed_.notify_all();
            }
        }
        return true;
    }
    /// After the last row: the inflater's word on the stream's end (its Adler-32) with no data
    /// past it, the last IDAT's CRC, and the chunks after it up to IEND (ancillary only, each CRC
    /// checked).
    bool finish() {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [this] { return end_ != 0; });
        return end_ > 0;
    }

private:
    struct Block {
        std::vector<unsigned char> bytes;  // rows with their filter bytes
        size_t rows = 0;
    };
    static constexpr size_t ring_size = 4;

    // Rows a block: about 256 KiB, and at least eight blocks an image (so that small images meet
    // the blocks' edges too).
    static size_t block_rows(size_t row, int height) {
        const size_t by_bytes = std::max<size_t>(1, (size_t(256) << 10) / row);
        const size_t by_height = std::max<size_t>(1, (static_cast<size_t>(height) + 7) / 8);
        return std::min(by_bytes, by_height);
    }

    // The caller's side: the inflater's next block, once made; false where it failed first.
    bool next_block() {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [this] { return made_ > used_ || end_ < 0; });
        if (made_ == used_) return false;
        block_ = &ring_[used_ % ring_size];
        row_in_block_ = 0;
        return true;
    }

    // The inflater's thread: every row, then the stream's end and the chunks after it.
    void run() {
        bool ok = true;
        try {
            for (size_t made = 0; ok && made < static_cast<size_t>(height_);) {
                Block* b;
                {
                    std::unique_lock<std::mutex> lock(mutex_);
                    changed_.wait(lock, [this] { return made_ - used_ < ring_size || stop_; });
                    if (stop_) return;
                    b = &ring_[made_ % ring_size];
                }
                b->rows = std::min(block_rows_, static_cast<size_t>(height_) - made);
                ok = inflate_.read(b->bytes.data(), b->rows * (stride_ + 1));
                if (ok) {
                    made += b->rows;
                    std::lock_guard<std::mutex> lock(mutex_);
                    ++made_;
                }
                changed_.notify_all();
            }
            if (ok) ok = end_checked();
        } catch (...) {
            ok = false;
        }
        {
            std::lock_guard<std::mutex> lock(mutex_);
            end_ = ok ? 1 : -1;
        }
        changed_.notify_all();
    }

    // After the last row: the stream ends here, its Adler-32 matches, nothing follows it but
    // empty IDATs and ancillary chunks up to IEND.
    bool end_checked() {
        if (!inflate_.finish() || is_idat_) return false;  // (finish(): idat_data() gave its end)
        for (;;) {
            const bool end = std::memcmp(type_, "IEND", 4) == 0;
            if (!end && (type_[0] & 0x20) == 0) return false;
            unsigned char skipped[4096];
            while (left_ > 0)
                if (chunk_data(skipped, sizeof skipped) <= 0) return false;
            if (end) return crc_checked();
            if (!next_chunk()) return false;
        }
    }
    // The current chunk's CRC, after its data.
    bool crc_checked() {
        unsigned char tail[4];
        return std::fread(tail, 1, 4, file_) == 4 && big_endian32(tail) == crc_;
    }
    // The current chunk's CRC checked, then the next chunk's head read.
    bool next_chunk() {
        if (started_ && !crc_checked()) return false;
        started_ = true;
        unsigned char head[8];
        if (std::fread(head, 1, 8, file_) != 8) return false;
        left_ = big_endian32(head);
        if (left_ > 0x7fffffffu) return false;
        std::memcpy(type_, head + 4, 4);
        if (!letters(type_)) return false;
        is_idat_ = std::memcmp(type_, "IDAT", 4) == 0;
        crc_ = libdeflate_crc32(0, head + 4, 4);
        return true;
    }
    // Up to `capacity` bytes more of the current chunk's data, its CRC updated; -1 where the file
    // ends first.
    long chunk_data(unsigned char* buffer, size_t capacity) {
        const size_t n = std::min<size_t>(left_, capacity);
        if (std::fread(buffer, 1, n, file_) != n) return -1;
        crc_ = libdeflate_crc32(crc_, buffer, n);
        left_ -= static_cast<uint32_t>(n);
        return static_cast<long>(n);
    }
    // The inflater's source: the IDATs' data, one after another; 0 at the first other chunk (its
    // head read), -1 on a bad CRC or the file's end.
    long idat_data(unsigned char* buffer, size_t capacity) {
        for (;;) {
            if (!is_idat_) return 0;
            if (left_ > 0) return chunk_data(buffer, capacity);
            if (!next_chunk()) return -1;
        }
    }

    FILE* file_;
    const size_t bpp_, stride_;
    const int height_;
    const bool wide_;
    const size_t block_rows_;

    // Shared: the ring of blocks, made_ and used_ counting the blocks made and given back.
    std::mutex mutex_;
    std::condition_variable changed_;
    Block ring_[ring_size];
    size_t made_ = 0, used_ = 0;
    bool stop_ = false;
    int end_ = 0;  // 1 every row made and the end checked; -1 not plainly right (rows or end)

    // The caller's thread: the block being read and the row above its first (as stored).
    Block* block_ = nullptr;
    size_t row_in_block_ = 0;
    bool unfiltered_ = false;  // the row at row_in_block_ unfiltered already, beside the one above
    std::vector<unsigned char> prev_;

    // The inflater's thread (and start(), before it runs).
    std::thread inflater_;
    Inflater inflate_;
    bool started_ = false, is_idat_ = false;
    unsigned char type_[4] = {0, 0, 0, 0};
    uint32_t left_ = 0, crc_ = 0;
};

[[noreturn]] void fail(const std::string& path, const std::string& problem) { throw Error(path + ": " + problem); }

std::string libpng_problem(const PngContext& c) {
    if (c.truncated) return "truncated PNG (the file ends before the image data does)";
    std::string problem = std::string("corrupt PNG: ") + (c.message[0] ? c.message : "unknown libpng error");
    if (c.warning[0]) problem += std::string(" (") + c.warning + ")";
    return problem;
}

}  // namespace

std::string PngFormat::describe() const {
    const char* type = color_type == 0 ? "grey" : color_type == 2 ? "RGB" : color_type == 3 ? "palette"
                     : color_type == 4 ? "grey+alpha" : color_type == 6 ? "RGBA" : "unknown";
    return std::string(type) + " " + std::to_string(bit_depth) + "-bit" + (has_trns ? " + tRNS" : "") +
           (interlaced ? ", interlaced" : "");
}

const std::string* PngFormat::find_text(const std::string& key) const {
    for (const PngText& t : text)
        if (t.key == key) return &t.text;
    return nullptr;
}

void PngFormat::set_text(const std::string& key, const std::string& value) {
    text.erase(std::remove_if(text.begin(), text.end(), [&](const PngText& t) { return t.key == key; }), text.end());
    PngText t;
    t.key = key;
    t.text = value;
    text.push_back(std::move(t));
}

bool valid_text_key(const std::string& key) {
    if (key.empty() || key.size() > 79 || key.front() == ' ' || key.back() == ' ') return false;
    for (size_t i = 0; i < key.size(); ++i) {
        const auto c = static_cast<unsigned char>(key[i]);
        if (c < 32 || (c > 126 && c < 161) || (c == ' ' && key[i + 1] == ' ')) return false;
    }
    return true;
}

struct PngReader::State {
    PngContext c;
    std::string name;
    PngFormat format;
    Samples shape;  // width, height, channels and depth of the rows given (no data)
    PngLimits limits;
    int passes = 1;
    int next_row = 0;
    const char* decoder = "libpng";
    bool libpng_only = false;               // after a file not plainly right: libpng's word
    std::unique_ptr<StreamInflate> stream;  // read_rows() where inflates_itself()
    void destroy_png() {
        if (c.png) png_destroy_read_struct(&c.png, c.info ? &c.info : nullptr, nullptr);
        c.png = nullptr;
        c.info = nullptr;
    }
    ~State() {
        stream.reset();  // its inflater reads c.file until it is joined
        destroy_png();
        if (c.file) std::fclose(c.file);
    }
};

PngReader::PngReader(const std::string& path, const PngLimits& limits) : s_(std::make_unique<State>()) {
    s_->name = path;
    s_->c.file = std::fopen(path.c_str(), "rb");
    if (!s_->c.file) fail(path, std::string("cannot open: ") + std::strerror(errno));
    if (is_directory(path)) fail(path, "is a directory, not a PNG file");
    start(limits);
}

PngReader::PngReader(const void* data, size_t size, const std::string& name, const PngLimits& limits)
    : s_(std::make_unique<State>()) {
    s_->name = name;
    if (size == 0) fail(name, "empty file, not a PNG");
    s_->c.file = fmemopen(const_cast<void*>(data), size, "rb");
    if (!s_->c.file) fail(name, std::string("cannot read: ") + std::strerror(errno));
    start(limits);
}

PngReader::~PngReader() = default;

void PngReader::start(const PngLimits& limits) {
    s_->limits = limits;
    PngContext& c = s_->c;
    const std::string& path = s_->name;
    unsigned char signature[8];
    size_t got = std::fread(signature, 1, 8, c.file);
    if (got < 8 || png_sig_cmp(signature, 0, 8) != 0) fail(path, got == 0 ? "empty file, not a PNG" : "not a PNG file");
    const std::string past_the_end = chunk_past_the_end(c.file);
    if (!past_the_end.empty()) fail(path, past_the_end);

    c.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &c, on_error, on_warning);
    if (!c.png) fail(path, "out of memory");
    c.info = png_create_info_struct(c.png);
    if (!c.info) fail(path, "out of memory");
    png_set_read_fn(c.png, &c, read_data);

    Header h;
    if (!read_header(&c, &h)) fail(path, libpng_problem(c));
    long long pixels = static_cast<long long>(h.width) * static_cast<long long>(h.height);
    if (limits.max_pixels > 0 && pixels > limits.max_pixels)
        fail(path, std::to_string(h.width) + "x" + std::to_string(h.height) + " is " + std::to_string(pixels) +
                       " pixels, above the limit of " + std::to_string(limits.max_pixels));

    PngFormat& f = s_->format;
    f.color_type = h.color_type;
    f.bit_depth = h.bit_depth;
    f.interlaced = h.interlace != PNG_INTERLACE_NONE;
    f.has_trns = png_get_valid(c.png, c.info, PNG_INFO_tRNS) != 0;
    read_metadata(&c, f);

    int channels = 0, depth = 0;
    size_t rowbytes = 0;
    if (!set_transforms(&c, &s_->passes, &rowbytes, &channels, &depth)) fail(path, libpng_problem(c));
    Samples& s = s_->shape;
    s.width = static_cast<int>(h.width);
    s.height = static_cast<int>(h.height);
    s.channels = channels;
    s.depth = depth;
    if ((depth != 8 && depth != 16) || channels < 1 || channels > 4 || rowbytes != s.row_bytes())
        fail(path, "unexpected row layout after expansion");
}

const PngFormat& PngReader::format() const { return s_->format; }
int PngReader::width() const { return s_->shape.width; }
int PngReader::height() const { return s_->shape.height; }
int PngReader::channels() const { return s_->shape.channels; }
int PngReader::depth() const { return s_->shape.depth; }
size_t PngReader::row_bytes() const { return s_->shape.row_bytes(); }
const char* PngReader::decoder() const { return s_->decoder; }

void PngReader::use_libpng() {
    if (s_->next_row != 0) throw std::logic_error("PngReader::use_libpng: rows already read");
    s_->libpng_only = true;
}

void PngReader::restart_libpng() {
    s_->stream.reset();
    s_->destroy_png();
    if (std::fseek(s_->c.file, 0, SEEK_SET) != 0) fail(s_->name, std::string("cannot read: ") + std::strerror(errno));
    start(s_->limits);
    s_->libpng_only = true;
    s_->decoder = "libpng";
}

void PngReader::read_rows(unsigned char* dst, int count) {
    if (s_->format.interlaced) throw std::logic_error("PngReader::read_rows: an interlaced image is read whole");
    if (count < 0 || s_->next_row + count > height()) throw std::logic_error("PngReader::read_rows: past the last row");
    if (!s_->libpng_only && inflates_itself(s_->format)) {
        if (s_->next_row == 0) {
            s_->stream = std::make_unique<StreamInflate>(s_->c.file, width(), height(), channels(), depth());
            s_->decoder = "inflater";
        }
        StreamInflate& z = *s_->stream;
        if ((s_->next_row > 0 || z.start()) && z.read(dst, count) && (s_->next_row + count < height() || z.finish())) {
            s_->next_row += count;
            return;
        }
        // Something not plainly right: libpng reads the file again, from its start, to this call's
        // first row, and has the last word on the rest.
        restart_libpng();
        std::vector<unsigned char> skip(row_bytes());
        for (int y = 0; y < s_->next_row; ++y)
            if (!read_row(&s_->c, skip.data())) fail(s_->name, libpng_problem(s_->c));
    }
    PngContext& c = s_->c;
    for (int i = 0; i < count; ++i, dst += row_bytes())
        if (!read_row(&c, dst)) fail(s_->name, libpng_problem(c));
    s_->next_row += count;
    if (s_->next_row == height() && !read_end(&c)) fail(s_->name, libpng_problem(c));
}

bool PngReader::inflates_whole() const { return s_->passes == 1 && inflates_itself(s_->format) && !s_->libpng_only; }

size_t PngReader::image_bytes() const {
    const size_t rows = row_bytes() * static_cast<size_t>(height());
    return inflates_whole() ? rows + static_cast<size_t>(height()) : rows;  // inflate_whole()'s rows with filter bytes
}

void PngReader::read_image_to(unsigned char* dst, size_t capacity, bool parts) {
    if (s_->next_row != 0) throw std::logic_error("PngReader::read_image: rows already read");
    if (capacity < image_bytes()) throw std::logic_error("PngReader::read_image_to: less room than image_bytes()");
    if (inflates_whole()) {
        const size_t bpp = static_cast<size_t>(channels()) * (depth() == 16 ? 2 : 1);
        if (const char* by = inflate_whole(s_->c.file, dst, row_bytes(), bpp, static_cast<size_t>(height()), depth(), parts)) {
            s_->next_row = height();
            s_->decoder = by;
            return;
        }
        // Something not plainly right: libpng reads the file from its start and has the last word.
        restart_libpng();
    }
    if (s_->passes == 1) {
        read_rows(dst, height());
        return;
    }
    // interlaced: the passes fill the whole image
    PngContext& c = s_->c;
    std::vector<png_bytep> rows(static_cast<size_t>(height()));
    for (int y = 0; y < height(); ++y) rows[static_cast<size_t>(y)] = dst + row_bytes() * static_cast<size_t>(y);
    if (!read_all(&c, rows.data())) fail(s_->name, libpng_problem(c));
    if (!read_end(&c)) fail(s_->name, libpng_problem(c));
    s_->next_row = height();
}

PngSamples PngReader::read_image(bool parts, std::vector<unsigned char>&& storage) {
    PngSamples out;
    out.format = s_->format;
    Samples& s = out.samples;
    s.data = std::move(storage);
    s.data.reserve(image_bytes());  // one allocation of what decoding takes (resize() alone would double a fresh one's)
    s.resize(width(), height(), channels(), depth());
    s.data.resize(image_bytes());
    read_image_to(s.data.data(), s.data.size(), parts);
    s.data.resize(s.row_bytes() * static_cast<size_t>(s.height));
    return out;
}

namespace {

PngImage to_float(PngSamples&& png) {
    PngImage out;
    out.image = samples_to_image(png.samples);
    out.format = std::move(png.format);
    return out;
}

}  // namespace

int channels_of(int color_type) {
    return color_type == PNG_COLOR_TYPE_GRAY || color_type == PNG_COLOR_TYPE_PALETTE ? 1
           : color_type == PNG_COLOR_TYPE_GRAY_ALPHA                               ? 2
           : color_type == PNG_COLOR_TYPE_RGB                                      ? 3
                                                                                   : 4;
}

bool png_dimensions(const std::string& path, int& width, int& height) {
    unsigned char head[24];
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return false;
    const size_t got = std::fread(head, 1, sizeof head, f);
    std::fclose(f);
    static const unsigned char signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (got != sizeof head || std::memcmp(head, signature, 8) != 0 || std::memcmp(head + 12, "IHDR", 4) != 0) return false;
    auto be32 = [&](int at) {
        return (static_cast<uint32_t>(head[at]) << 24) | (static_cast<uint32_t>(head[at + 1]) << 16) |
               (static_cast<uint32_t>(head[at + 2]) << 8) | head[at + 3];
    };
    const uint32_t w = be32(16), h = be32(20);
    if (w == 0 || h == 0 || w > 0x7fffffffu || h > 0x7fffffffu) return false;
    width = static_cast<int>(w);
    height = static_cast<int>(h);
    return true;
}

PngSamples read_png_samples(const std::string& path, const PngLimits& limits) { return PngReader(path, limits).read_image(); }

PngImage read_png(const std::string& path, const PngLimits& limits) { return to_float(read_png_samples(path, limits)); }

PngImage read_png_memory(const void* data, size_t size, const std::string& name, const PngLimits& limits) {
    return to_float(PngReader(data, size, name, limits).read_image());
}

std::vector<float> sample_values(int depth) {
    // An 8-bit v is read as the 16-bit v * 257 (libpng's expansion), then divided by 65535:
    // the same rational v / 255, rounded once.
    const unsigned count = 1u << depth, scale = depth == 8 ? 257 : 1;
    std::vector<float> values(count);
    for (unsigned v = 0; v < count; ++v) values[v] = static_cast<float>(v * scale) / 65535.0f;
    return values;
}

Image samples_to_image(const Samples& s) {
    const std::vector<float> value = sample_values(s.depth);
    Image image(s.width, s.height);
    for (int y = 0; y < s.height; ++y) {
        float* dst = image.at(0, y);
        for (int x = 0; x < s.width; ++x, dst += 4) sample_pixel(s.row(y), s.channels, s.depth, value.data(), x, dst);
    }
    return image;
}

PngFormat output_format(const PngFormat& input, bool result_has_colour) {
    PngFormat f = input;
    bool alpha = input.has_alpha();
    f.has_trns = false;
    if (input.color_type == PNG_COLOR_TYPE_PALETTE) {
        f.color_type = alpha ? PNG_COLOR_TYPE_RGBA : PNG_COLOR_TYPE_RGB;
        f.bit_depth = 8;
    } else if (input.is_grey() && result_has_colour) {
        f.color_type = alpha ? PNG_COLOR_TYPE_RGBA : PNG_COLOR_TYPE_RGB;
    } else if (input.is_grey()) {
        f.color_type = alpha ? PNG_COLOR_TYPE_GRAY_ALPHA : PNG_COLOR_TYPE_GRAY;
    } else {
        f.color_type = alpha ? PNG_COLOR_TYPE_RGBA : PNG_COLOR_TYPE_RGB;
    }
    // Only grey without alpha can be stored in fewer than 8 bits.
    if (f.color_type != PNG_COLOR_TYPE_GRAY && f.bit_depth < 8) f.bit_depth = 8;
    return f;
}

// Unlike unfiltering, nothing chains: every byte's predictor reads the unfiltered
// rows alone, so 16 bytes go at a time, in byte lanes. There |b - c| and |a - c| are exact
// (saturating differences), and |a + b - 2c| fits a byte where it matters: with b - c and a - c of
// one sign it is their sum, no smaller than either (saturated to 255, it still is), else the
// difference of the two. The first pixel's left and upper-left neighbours are 0, so its predictor
// is the byte above. A 2048x2048 RGB image: 11-14 ms as GCC vectorised the scalar loop (32-bit
// lanes), 65 as -O2 left it scalar; unfiltering's predictor (Paeth::of) on the two halves in
// 16-bit lanes would serve too, at 2% more of a whole write's time (30.7 against 30.0 ms here).
void paeth_filter_row(const unsigned char* cur, const unsigned char* prev, unsigned char* out, size_t stride, size_t bpp) {
    const size_t first = std::min(bpp, stride);
    for (size_t i = 0; i < first; ++i) out[i] = static_cast<unsigned char>(cur[i] - prev[i]);
    size_t i = first;
#if defined(__SSE2__)
    auto load = [](const unsigned char* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); };
    auto select = [](__m128i mask, __m128i yes, __m128i no) { return _mm_or_si128(_mm_and_si128(mask, yes), _mm_andnot_si128(mask, no)); };
    const __m128i zero = _mm_setzero_si128();
    for (; i + 16 <= stride; i += 16) {
        const __m128i a = load(cur + i - bpp), b = load(prev + i), c = load(prev + i - bpp);
        const __m128i b_below = _mm_subs_epu8(c, b), b_above = _mm_subs_epu8(b, c);  // c - b, b - c, clamped at 0
        const __m128i a_below = _mm_subs_epu8(c, a), a_above = _mm_subs_epu8(a, c);
        const __m128i pa = _mm_or_si128(b_below, b_above), pb = _mm_or_si128(a_below, a_above);
        const __m128i one_sign = _mm_cmpeq_epi8(_mm_cmpeq_epi8(b_below, zero), _mm_cmpeq_epi8(a_below, zero));
        const __m128i pc = select(one_sign, _mm_adds_epu8(pa, pb), _mm_or_si128(_mm_subs_epu8(pa, pb), _mm_subs_epu8(pb, pa)));
        const __m128i take_a = _mm_cmpeq_epi8(_mm_subs_epu8(pa, _mm_min_epu8(pb, pc)), zero);  // pa <= pb and pa <= pc
        const __m128i take_b = _mm_cmpeq_epi8(_mm_subs_epu8(pb, pc), zero);                     // pb <= pc
        const __m128i predictor = select(take_a, a, select(take_b, b, c));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm_sub_epi8(load(cur + i), predictor));
    }
#endif
    for (; i < stride; ++i) out[i] = static_cast<unsigned char>(cur[i] - paeth(cur[i - bpp], prev[i], prev[i - bpp]));
}

namespace {

bool write_header(PngContext* c, const PngFormat* f, std::vector<png_text>* text, std::vector<png_unknown_chunk>* unknown,
                  int compression, png_uint_32 width, png_uint_32 height) {
    if (setjmp(png_jmpbuf(c->png))) return false;
    if (compression >= 0) png_set_compression_level(c->png, compression);
    // The fast levels filter every row with Paeth instead of trying all five filters per row: on
    // filtered images (bundled and 2048x2048 synthetic) 17-24% less encoding time at level 4, and
    // 2-13% larger files than libpng's default (level 6, all filters); one file of strong
    // horizontal bars +43%. Level 0 stores: no filter. Palette and sub-byte images keep libpng's
    // choice (none).
    if (compression >= 0 && compression <= 4 && f->bit_depth >= 8 && f->color_type != PNG_COLOR_TYPE_PALETTE)
        png_set_filter(c->png, PNG_FILTER_TYPE_BASE, compression == 0 ? PNG_FILTER_NONE : PNG_FILTER_PAETH);
    png_set_IHDR(c->png, c->info, width, height, f->bit_depth, f->color_type,
                 f->interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (f->srgb) png_set_sRGB(c->png, c->info, f->srgb_intent);
    if (f->gamma > 0) png_set_gAMA(c->png, c->info, f->gamma);
    if (!f->icc_profile.empty() && !f->srgb)
        png_set_iCCP(c->png, c->info, f->icc_name.c_str(), PNG_COMPRESSION_TYPE_BASE, f->icc_profile.data(),
                     static_cast<png_uint_32>(f->icc_profile.size()));
    if (f->has_phys) png_set_pHYs(c->png, c->info, f->phys_x, f->phys_y, f->phys_unit);
    if (f->has_chrm && !f->srgb)
        png_set_cHRM_fixed(c->png, c->info, f->chrm[0], f->chrm[1], f->chrm[2], f->chrm[3], f->chrm[4], f->chrm[5], f->chrm[6], f->chrm[7]);
    if (!f->exif.empty()) png_set_eXIf_1(c->png, c->info, static_cast<png_uint_32>(f->exif.size()), const_cast<png_bytep>(f->exif.data()));
    if (!unknown->empty()) png_set_unknown_chunks(c->png, c->info, unknown->data(), static_cast<int>(unknown->size()));
    if (!text->empty()) png_set_text(c->png, c->info, text->data(), static_cast<int>(text->size()));
    png_write_info(c->png, c->info);
    if (f->bit_depth < 8) png_set_packing(c->png);  // one byte per sample in, packed out
    if (f->bit_depth == 16) png_set_swap(c->png);   // native uint16 in
    if (f->interlaced) png_set_interlace_handling(c->png);
    return true;
}

// At the fast levels (1-4: every row filtered with Paeth, as write_header() sets libpng up) plain
// rows skip libpng's row writer: they are filtered here and compressed by the run coder
// (deflate.h) where a sample of them says it is no larger, else by libdeflate, in one call (a
// whole image) or in parallel parts (rows streamed, or a file alone: StreamDeflate; zlib there).
// libdeflate is faster than zlib at each of these levels and makes smaller files (a 2048x2048
// filtered colour image: zlib's level 4 1.682 MB in 134 ms, libdeflate's level 3 1.661 MB in 68 and
// level 4 1.618 MB in 100; src/README.md, "The batch's encoding"). libpng still writes the
// signature and every chunk before the image data (png_write_info), so chunk rules stay its own;
// interlaced images, palettes, sub-byte samples and the other levels keep libpng's writer.
bool deflates_itself(const PngFormat& f, int compression) {
    return compression >= 1 && compression <= 4 && plain_rows(f);
}

// Rows as PNG stores them under Paeth: each row its filter byte (4) then its filtered bytes, 16-bit
// samples big-endian as the file stores them, the row above kept from one call to the next. 8-bit
// rows are filtered where they lie; 16-bit rows (in the machine's order) are first copied
// big-endian into one of two row buffers, the other holding the row above.
class PaethRows {
public:
    PaethRows(int width, int channels, int depth)
        : stride_(static_cast<size_t>(width) * static_cast<size_t>(channels) * static_cast<size_t>(depth / 8)),
          bpp_(static_cast<size_t>(channels) * static_cast<size_t>(depth / 8)), wide_(depth == 16), above_(stride_, 0) {
        if (wide_) big_[0].resize(stride_), big_[1].resize(stride_);
    }
    /// Bytes a row in the machine's layout (and a row's filtered bytes, after its filter byte).
    size_t stride() const { return stride_; }
    /// The row above the next one given (in the machine's layout), as if it had been appended.
    void set_above(const unsigned char* row) { as_stored(row, above_.data()); }
    /// `count` rows in the machine's layout, contiguous, appended to `out`.
    void append(const unsigned char* rows, int count, std::vector<unsigned char>& out) {
        if (count <= 0) return;
        size_t at = out.size();
        out.resize(at + (stride_ + 1) * static_cast<size_t>(count));
        const unsigned char* prev = above_.data();
        for (int y = 0; y < count; ++y, at += stride_ + 1) {
            const unsigned char* cur = rows + stride_ * static_cast<size_t>(y);
            if (wide_) {
                unsigned char* big = big_[row_++ % 2].data();
                as_stored(cur, big);
                cur = big;
            }
            out[at] = 4;
            paeth_filter_row(cur, prev, &out[at + 1], stride_, bpp_);
            prev = cur;
        }
        std::memcpy(above_.data(), prev, stride_);
    }

private:
    // A row in the machine's layout into `to` as the file stores it (16-bit samples big-endian).
    void as_stored(const unsigned char* row, unsigned char* to) const {
        if (!wide_) {
            std::memcpy(to, row, stride_);
            return;
        }
        for (size_t i = 0; i < stride_; i += 2) {
            uint16_t v;
            std::memcpy(&v, row + i, 2);
            to[i] = static_cast<unsigned char>(v >> 8);
            to[i + 1] = static_cast<unsigned char>(v & 0xff);
        }
    }

    size_t stride_, bpp_;
    bool wide_;
    std::vector<unsigned char> above_;  // the last row given, as stored
    std::vector<unsigned char> big_[2];
    size_t row_ = 0;
};

// A chunk: its length, type, data and CRC (of the type and the data).
bool write_chunk(FILE* file, const char* type, const unsigned char* data, size_t length) {
    const unsigned char head[8] = {static_cast<unsigned char>(length >> 24), static_cast<unsigned char>(length >> 16),
                                   static_cast<unsigned char>(length >> 8), static_cast<unsigned char>(length),
                                   static_cast<unsigned char>(type[0]), static_cast<unsigned char>(type[1]),
                                   static_cast<unsigned char>(type[2]), static_cast<unsigned char>(type[3])};
    uint32_t crc = libdeflate_crc32(0, head + 4, 4);
    if (length > 0) crc = libdeflate_crc32(crc, data, length);  // (a null buffer restarts it)
    const unsigned char tail[4] = {static_cast<unsigned char>(crc >> 24), static_cast<unsigned char>(crc >> 16),
                                   static_cast<unsigned char>(crc >> 8), static_cast<unsigned char>(crc)};
    return put(head, 8, file) && (length == 0 || put(data, length, file)) && put(tail, 4, file);
}

// zlib's header for a stream deflated at `level`: deflate with a 32 KiB window, the level's class
// (FLEVEL) as zlib sets it.
void zlib_header(int level, unsigned char head[2]) {
    const unsigned cmf = 0x78, flevel = level == 1 ? 0 : level < 6 ? 1 : level == 6 ? 2 : 3;
    unsigned flg = flevel << 6;
    flg += 31 - (cmf * 256 + flg) % 31;
    head[0] = static_cast<unsigned char>(cmf);
    head[1] = static_cast<unsigned char>(flg);
}

// The filtered rows (`total` bytes) that a stream deflated on the GPU codes: the stream inflated.
std::vector<unsigned char> inflated_rows(const DeflatedRows& deflated, size_t total) {
    std::vector<unsigned char> rows(total);
    size_t got = 0;
    if (libdeflate_deflate_decompress(thread_inflater(), deflated.data.data(), deflated.data.size(), rows.data(), total, &got) !=
            LIBDEFLATE_SUCCESS || got != total)
        throw std::logic_error("write_deflated: the GPU's stream does not inflate to the rows");
    return rows;
}

// IDAT chunks of 1 MiB at most holding `size` bytes of the stream. False on a write error.
constexpr size_t kChunk = size_t(1) << 20;
bool write_idat(FILE* file, const unsigned char* z, size_t size) {
    for (size_t at = 0; at < size; at += kChunk)
        if (!write_chunk(file, "IDAT", z + at, std::min(kChunk, size - at))) return false;
    return true;
}

// A raw deflate stream of filtered rows as the image data: zlib's header for `level`, the stream,
// the rows' Adler-32 (big-endian), in IDAT chunks.
bool write_zlib_idat(FILE* file, int level, const unsigned char* raw, size_t size, uint32_t adler) {
    std::vector<unsigned char> stream(2 + size + 4);
    zlib_header(level, stream.data());
    std::copy(raw, raw + size, stream.begin() + 2);
    for (int k = 0; k < 4; ++k) stream[2 + size + static_cast<size_t>(k)] = static_cast<unsigned char>(adler >> (24 - 8 * k));
    return write_idat(file, stream.data(), stream.size());
}

// Bytes [first, first + size) of the image data's filtered rows (each its filter byte, then its
// bytes), made in `scratch` from the rows they lie in and the row above those: the pointer to
// them. The run coder takes the rows so a piece at a time, never all of them filtered at once.
const unsigned char* filtered_range(const Samples& s, size_t first, size_t size, std::vector<unsigned char>& scratch) {
    PaethRows rows(s.width, s.channels, s.depth);
    const size_t filtered_row = rows.stride() + 1;
    const size_t r0 = first / filtered_row, r1 = (first + size + filtered_row - 1) / filtered_row;
    if (r0 > 0) rows.set_above(s.row(static_cast<int>(r0) - 1));
    scratch.clear();
    rows.append(s.row(static_cast<int>(r0)), static_cast<int>(r1 - r0), scratch);
    return scratch.data() + (first - r0 * filtered_row);
}

// The image data of `s` as IDAT chunks: its rows filtered, then coded by runs (deflate.h) where a
// sample of them says that is no larger, else by libdeflate at `level` (level_compressor()). The
// run coder takes the rows filtered a block at a time (the stream deflate_runs() would make of them
// all), so the image's filtered rows are never held whole; libdeflate, which takes one buffer,
// still gets them so. Where the run coder pays and the GPU has coded the rows (`deflated`), its
// stream is the run coder's: only the sample's bands are coded here. Where the samples did not
// come back (DeflatedRows::without_samples), the bands are the GPU's and libdeflate, where it
// wins, takes the rows inflated from the GPU's stream (the same filtered rows). False on a write
// error.
bool write_deflated(FILE* file, const Samples& s, int level, const DeflatedRows* deflated) {
    const size_t total = (s.row_bytes() + 1) * static_cast<size_t>(s.height);
    const bool without_samples = deflated && deflated->without_samples;
    if (without_samples && !deflated->coded) throw std::logic_error("write_deflated: neither the samples nor a stream");
    std::vector<unsigned char> scratch;
    // Not zeroed: the pages past the compressed size are never touched, so they take no memory
    // (a 2048x2048 RGB image: a 12.6 MB bound, 1.6 MB used).
    std::unique_ptr<unsigned char[]> z;
    size_t size = 0;
    std::vector<std::vector<unsigned char>> band_rows;
    std::vector<std::pair<const unsigned char*, size_t>> bands;
    size_t banded = 0;
    for (const auto& [first, bytes] : runs_sample(total, 4)) {
        if (without_samples) {
            if (banded + bytes > deflated->bands.size()) throw std::logic_error("write_deflated: the GPU's bands are short");
            bands.emplace_back(deflated->bands.data() + banded, bytes);
        } else {
            band_rows.emplace_back();
            bands.emplace_back(filtered_range(s, first, bytes, band_rows.back()), bytes);
        }
        banded += bytes;
    }
    // A sample that is all the rows (128 KiB or less) was coded both ways: its smaller stream is
    // the image data (libdeflate's raw stream is what its zlib call wraps), coded once.
    const bool whole = bands.size() == 1 && bands[0].second == total;
    std::vector<unsigned char> smaller;
    const bool runs = runs_pay(bands, level, whole ? &smaller : nullptr);
    if (runs && deflated && deflated->coded)
        return write_zlib_idat(file, level, deflated->data.data(), deflated->data.size(), deflated->adler);
    if (whole)
        return write_zlib_idat(file, level, smaller.data(), smaller.size(),
                               static_cast<uint32_t>(libdeflate_adler32(1, bands[0].first, total)));
    if (runs) {
        z.reset(new unsigned char[2 + deflate_runs_bound(total) + 4]);
        zlib_header(level, z.get());
        RunCoder coder(z.get() + 2);
        uint32_t adler = 1;
        for (size_t at = 0; at < total; at += kRunBlock) {  // a block at a time: deflate_runs()'s stream
            const size_t n = std::min(kRunBlock, total - at);
            const unsigned char* piece = filtered_range(s, at, n, scratch);
            coder.code(piece, n, at + n == total);
            adler = static_cast<uint32_t>(libdeflate_adler32(adler, piece, n));
        }
        size = 2 + coder.finish(true);
        for (int shift = 24; shift >= 0; shift -= 8) z[size++] = static_cast<unsigned char>(adler >> shift);
    } else {
        libdeflate_compressor* const compressor = level_compressor(level);
        const std::vector<unsigned char> rows = without_samples ? inflated_rows(*deflated, total) : filtered_rows(s);
        const size_t bound = libdeflate_zlib_compress_bound(compressor, rows.size());
        z.reset(new unsigned char[bound]);
        size = libdeflate_zlib_compress(compressor, rows.data(), rows.size(), z.get(), bound);
        if (size == 0) throw std::logic_error("libdeflate: the bound did not hold");
    }
    return write_idat(file, z.get(), size);
}

// The image data of rows streamed a few at a time (PngWriter::write_rows at the fast levels), as
// one zlib stream whose parts are compressed in parallel, as pigz does: the filtered rows are cut
// into parts after the row that reaches 1 MiB, each a raw deflate stream of its own on a
// CorePool thread, coded by runs (deflate.h: no dictionary) where a sample of its rows says that
// is no larger, else by zlib primed with the 32 KiB before it as its dictionary, and ended by a
// sync flush (an empty stored block, so the next part starts on a byte), the last one by the
// stream's end; their Adler-32s are combined. The parts depend on the rows alone, not on how they arrive or
// on the number of threads, so the file does too. Parts in flight are at most one a thread and one
// more, each written in turn once compressed: about 2 MiB a thread (1 MiB in, at most that out).
// One stream costs zlib's level's speed on one core (libpng's writer: 103 of 138 s of a
// 65536x65536 image on a 16-core machine); parts run on every core.
class StreamDeflate {
public:
    static constexpr size_t kPart = size_t(1) << 20, kWindow = size_t(32) << 10;

    StreamDeflate(FILE* file, int width, int channels, int depth, int level)
        : file_(file), level_(level), width_(width), channels_(channels), depth_(depth),
          stride_(PaethRows(width, channels, depth).stride()), in_flight_(std::max(1u, std::thread::hardware_concurrency()) + size_t(1)) {
        out_.resize(2);
        zlib_header(level, out_.data());
    }
    ~StreamDeflate() {
        for (const auto& p : parts_) p->done.wait();  // (the jobs write into the parts)
    }
    /// `count` rows, as the image holds them (the parts' jobs filter them); each whole part sent
    /// to be compressed, the oldest written as the parts in flight reach their bound. False on a
    /// write error.
    bool write(const unsigned char* rows, int count) {
        for (int y = 0; y < count; ++y) {
            raw_.insert(raw_.end(), rows + stride_ * static_cast<size_t>(y), rows + stride_ * static_cast<size_t>(y + 1));
            ++part_rows_;
            if (part_rows_ * (stride_ + 1) >= kPart && !submit(false)) return false;
        }
        return true;
    }
    /// The rest, the stream's end and the Adler-32, written. False on a write error.
    bool finish() {
        if (!submit(true)) return false;
        while (!parts_.empty())
            if (!write_oldest()) return false;
        for (int s = 24; s >= 0; s -= 8) out_.push_back(static_cast<unsigned char>(adler_ >> s));
        return flush(true);
    }

private:
    struct Part {
        std::vector<unsigned char> raw;      // its rows as given, after the rows of its dictionary and the row above those
        size_t above = 0, window_rows = 0;   // rows before the dictionary's (0 or 1), the dictionary's rows
        std::vector<unsigned char> input;    // filtered: its dictionary's rows, then its bytes
        size_t window = 0, length = 0;       // the dictionary (the last bytes of those rows, 32 KiB at most), its bytes
        std::unique_ptr<unsigned char[]> z;  // not zeroed: pages past the compressed size stay untouched
        size_t z_size = 0;
        uLong adler = 1;
        std::future<void> done;
    };

    // raw_ (the rows above this part that its dictionary needs, then its rows) sent to the pool.
    // The job filters them (each row needs the one above: the dictionary's rows, the last 32 KiB
    // of the part before, are filtered again, one row above them given unfiltered), so that the
    // thread that writes the rows only copies them.
    bool submit(bool end) {
        while (parts_.size() >= in_flight_)
            if (!write_oldest()) return false;
        auto part = std::make_unique<Part>();
        Part* p = part.get();
        p->above = above_;
        p->window_rows = window_rows_;
        // The next part's lead: the rows holding this part's last 32 KiB filtered, and one above them.
        const size_t rows_here = raw_.size() / stride_, filtered_row = stride_ + 1;
        const size_t window_rows = std::min(part_rows_, (kWindow + filtered_row - 1) / filtered_row);
        const size_t above = rows_here > window_rows ? 1 : 0;
        std::vector<unsigned char> lead(raw_.end() - static_cast<long>((window_rows + above) * stride_), raw_.end());
        p->raw = std::move(raw_);
        raw_ = std::move(lead);
        above_ = above;
        window_rows_ = window_rows;
        part_rows_ = 0;
        p->done = CorePool::get().run([p, end, level = level_, width = width_, channels = channels_, depth = depth_] {
            PaethRows rows(width, channels, depth);
            const size_t stride = rows.stride();
            if (p->above) rows.set_above(p->raw.data());
            rows.append(p->raw.data() + p->above * stride, static_cast<int>(p->raw.size() / stride - p->above), p->input);
            p->raw = std::vector<unsigned char>();
            // The part's bytes follow its dictionary's rows; the dictionary is their last 32 KiB.
            const size_t window_bytes = p->window_rows * (stride + 1);
            p->window = std::min(kWindow, window_bytes);
            const unsigned char* data = p->input.data() + window_bytes;
            const size_t length = p->length = p->input.size() - window_bytes;
            if (runs_pay(data, length, level)) {
                p->z.reset(new unsigned char[deflate_runs_bound(length)]);
                p->z_size = deflate_runs(data, length, end, p->z.get());
            } else {
                p->z_size = deflate_part(data, length, p->window, end, level, p->z);
            }
            p->adler = adler32_z(1, data, length);
        });
        parts_.push_back(std::move(part));
        return true;
    }

    // The oldest part, once compressed, into the stream.
    bool write_oldest() {
        Part& p = *parts_.front();
        p.done.get();
        adler_ = adler32_combine(adler_, p.adler, static_cast<z_off_t>(p.length));
        out_.insert(out_.end(), p.z.get(), p.z.get() + p.z_size);
        parts_.pop_front();
        return flush(false);
    }

    // One part as raw deflate into `z` (its size returned), its dictionary the `window` bytes
    // before `data`; one z_stream a thread, reset between parts.
    static size_t deflate_part(const unsigned char* data, size_t length, size_t window, bool end, int level,
                               std::unique_ptr<unsigned char[]>& z) {
        struct Stream {
            z_stream s{};
            int level = -1;
            ~Stream() {
                if (level >= 0) deflateEnd(&s);
            }
        };
        thread_local Stream stream;
        if (stream.level != level) {
            if (stream.level >= 0) deflateEnd(&stream.s);
            stream.s = z_stream{};
            stream.level = -1;
            // Z_FILTERED, as libpng sets it for filtered rows.
            if (deflateInit2(&stream.s, level, Z_DEFLATED, -15, 8, Z_FILTERED) != Z_OK) throw std::bad_alloc();
            stream.level = level;
        } else if (deflateReset(&stream.s) != Z_OK) {
            throw std::logic_error("zlib: deflateReset failed");
        }
        z_stream& s = stream.s;
        if (window > 0 && deflateSetDictionary(&s, data - window, static_cast<uInt>(window)) != Z_OK)
            throw std::logic_error("zlib: deflateSetDictionary failed");
        const size_t bound = deflateBound(&s, static_cast<uLong>(length)) + 64;  // + the sync flush's marker
        z.reset(new unsigned char[bound]);
        s.next_in = const_cast<unsigned char*>(data);
        s.avail_in = static_cast<uInt>(length);
        s.next_out = z.get();
        s.avail_out = static_cast<uInt>(bound);
        const int rc = deflate(&s, end ? Z_FINISH : Z_SYNC_FLUSH);
        if ((end ? rc != Z_STREAM_END : rc != Z_OK) || s.avail_in != 0) throw std::logic_error("zlib: the bound did not hold");
        return bound - s.avail_out;
    }

    // IDAT chunks of 1 MiB as the stream grows; the rest too at the end.
    bool flush(bool all) {
        const size_t at = all ? out_.size() : out_.size() / kChunk * kChunk;
        if (!write_idat(file_, out_.data(), at)) return false;
        out_.erase(out_.begin(), out_.begin() + static_cast<long>(at));
        return true;
    }

    FILE* file_;
    int level_, width_, channels_, depth_;
    size_t stride_;  // bytes of a row as given
    size_t in_flight_;
    std::deque<std::unique_ptr<Part>> parts_;
    std::vector<unsigned char> raw_, out_;  // the next part's rows as given (after its lead), the stream so far
    size_t above_ = 0, window_rows_ = 0;     // the next part's lead: a row above its dictionary's rows, and those
    size_t part_rows_ = 0;                   // rows of the next part given so far
    uLong adler_ = 1;
};

bool write_rows(PngContext* c, png_bytepp rows, png_uint_32 count) {
    if (setjmp(png_jmpbuf(c->png))) return false;
    png_write_rows(c->png, rows, count);
    return true;
}

bool write_image(PngContext* c, png_bytepp rows) {
    if (setjmp(png_jmpbuf(c->png))) return false;
    png_write_image(c->png, rows);
    return true;
}

bool write_end(PngContext* c) {
    if (setjmp(png_jmpbuf(c->png))) return false;
    png_write_end(c->png, c->info);
    return true;
}

}  // namespace

struct PngWriter::State {
    std::string path;
    AtomicFile file;
    PngContext c;
    PngFormat format;
    Samples shape;
    int compression = -1;
    bool deflated = false;  // write_image() wrote the image data through libdeflate
    std::unique_ptr<StreamDeflate> stream;  // write_rows() at the fast levels
    int next_row = 0;
    State(const std::string& p, bool overwrite) : path(p == kStandardOutput ? "standard output" : p), file(p, overwrite) {}
    ~State() {
        if (c.png) png_destroy_write_struct(&c.png, c.info ? &c.info : nullptr);
    }
    [[noreturn]] void fail() { throw Error(path + ": cannot write PNG: " + (c.message[0] ? c.message : "out of memory")); }
    /// What our own chunk writes (write_deflated(), write_chunk()) fail with, as libpng's writes do.
    [[noreturn]] void fail_writing() {
        describe_write_error(c.message, sizeof c.message);
        fail();
    }
};

PngWriter::PngWriter(const std::string& path, int width, int height, const PngFormat& format, bool overwrite,
                     int compression)
    : s_(std::make_unique<State>(path, overwrite)) {
    s_->format = format;
    s_->compression = compression;
    s_->shape.width = width;
    s_->shape.height = height;
    s_->shape.channels = channels_of(format.color_type);
    s_->shape.depth = format.bit_depth;
    PngContext& c = s_->c;
    c.file = s_->file.stream();
    c.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &c, on_error, on_warning);
    if (c.png) c.info = png_create_info_struct(c.png);
    if (!c.png || !c.info) s_->fail();
    png_set_write_fn(c.png, &c, write_data, flush_data);
    // (Made here: write_header() may longjmp.)
    std::vector<png_text> text = libpng_text(format);
    std::vector<png_unknown_chunk> unknown;
    for (const PngChunk& chunk : format.unknown_chunks) {
        png_unknown_chunk u{};
        std::memcpy(u.name, chunk.type.c_str(), 4);
        u.data = const_cast<png_bytep>(chunk.data.data());
        u.size = chunk.data.size();
        u.location = static_cast<png_byte>(chunk.location);
        unknown.push_back(u);
    }
    if (!write_header(&c, &format, &text, &unknown, compression, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height)))
        s_->fail();
}

PngWriter::~PngWriter() = default;

size_t PngWriter::row_bytes() const { return s_->shape.row_bytes(); }

void PngWriter::write_rows(const unsigned char* first, int count) {
    if (s_->format.interlaced) throw std::logic_error("PngWriter::write_rows: an interlaced image is written whole");
    if (count < 0 || s_->next_row + count > s_->shape.height) throw std::logic_error("PngWriter::write_rows: past the last row");
    if (deflates_itself(s_->format, s_->compression)) {
        const Samples& f = s_->shape;
        if (!s_->stream) s_->stream = std::make_unique<StreamDeflate>(s_->c.file, f.width, f.channels, f.depth, s_->compression);
        if (!s_->stream->write(first, count)) s_->fail_writing();
    } else {
        std::vector<png_bytep> rows(static_cast<size_t>(count));
        for (int y = 0; y < count; ++y) rows[static_cast<size_t>(y)] = const_cast<png_bytep>(first + row_bytes() * static_cast<size_t>(y));
        if (count > 0 && !gpufft::write_rows(&s_->c, rows.data(), static_cast<png_uint_32>(count))) s_->fail();
    }
    s_->next_row += count;
}

void PngWriter::write_image(const Samples& s, bool parts, const DeflatedRows* deflated) {
    // The samples, or (the GPU's stream standing for them) none, where this writer codes them itself.
    const bool without_samples = deflated && deflated->without_samples && s.data.empty() &&
                                 deflates_itself(s_->format, s_->compression);
    if (s.channels != s_->shape.channels || s.depth != s_->shape.depth || s.width != s_->shape.width ||
        s.height != s_->shape.height || (s.data.size() != s.row_bytes() * static_cast<size_t>(s.height) && !without_samples) ||
        s_->next_row != 0)
        throw std::invalid_argument("PngWriter::write_image: samples do not match the format");
    if (without_samples) parts = false;  // (parts are coded from the samples)
    // In parts where there are two at least; one part is faster through libdeflate.
    if (deflates_itself(s_->format, s_->compression) && parts && s.data.size() + static_cast<size_t>(s.height) > StreamDeflate::kPart) {
        write_rows(s.data.data(), s.height);
        return;
    }
    if (deflates_itself(s_->format, s_->compression)) {
        if (!write_deflated(s_->c.file, s, s_->compression, deflated)) s_->fail_writing();  // libdeflate's level: the same number
        s_->deflated = true;
    } else {
        std::vector<png_bytep> rows(static_cast<size_t>(s.height));
        for (int y = 0; y < s.height; ++y) rows[static_cast<size_t>(y)] = const_cast<png_bytep>(s.row(y));
        if (!gpufft::write_image(&s_->c, rows.data())) s_->fail();
    }
    s_->next_row = s.height;
}

void PngWriter::commit() {
    if (s_->next_row != s_->shape.height) throw std::logic_error("PngWriter::commit: rows missing");
    if (s_->stream && !s_->stream->finish()) s_->fail_writing();
    if (s_->deflated || s_->stream) {
        if (!write_chunk(s_->c.file, "IEND", nullptr, 0)) s_->fail_writing();
    } else if (!write_end(&s_->c)) {
        s_->fail();
    }
    s_->file.commit();
}

std::vector<unsigned char> filtered_rows(const Samples& s) {
    std::vector<unsigned char> rows;
    PaethRows(s.width, s.channels, s.depth).append(s.data.data(), s.height, rows);
    return rows;
}

bool writes_runs(const PngFormat& format, int compression) {
    return deflates_itself(format, compression);
}

unsigned quantise_sample(float v, unsigned max) {
    if (!(v > 0.0f)) return 0;  // also NaN
    if (v >= 1.0f) return max;
    // Rounded half away from zero, as std::lround, without its call: v max is exact in double (24 +
    // 16 bits), and so is v max + 0.5 wherever it could reach the next integer (below 2^-13 it is
    // under 1 however rounded). Checked against lround for every float in (0, 1) at each depth's
    // max; test_fftfilter checks every rounding boundary.
    return static_cast<unsigned>(static_cast<double>(v) * max + 0.5);
}

bool has_colour(const Image& image, int bit_depth) {
    unsigned max = (1u << bit_depth) - 1;
    for (size_t i = 0; i < image.pixels(); ++i) {
        const float* p = &image.rgba[4 * i];
        unsigned r = quantise_sample(p[0], max);
        if (quantise_sample(p[1], max) != r || quantise_sample(p[2], max) != r) return true;
    }
    return false;
}

Samples image_to_samples(const Image& image, const PngFormat& format) {
    const int channels = channels_of(format.color_type);
    const unsigned max = (1u << format.bit_depth) - 1;
    // The sample sources per channel: grey is R, grey+alpha is (R, A).
    const int source[4][4] = {{0}, {0, 3}, {0, 1, 2}, {0, 1, 2, 3}};
    const int* src = source[channels - 1];
    Samples s;
    s.resize(image.width, image.height, channels, format.bit_depth);
    for (int y = 0; y < image.height; ++y) {
        unsigned char* out8 = s.row(y);
        auto* out16 = reinterpret_cast<uint16_t*>(out8);
        for (int x = 0; x < image.width; ++x) {
            const float* p = image.at(x, y);
            for (int c = 0; c < channels; ++c) {
                unsigned v = quantise_sample(p[src[c]], max);
                if (format.bit_depth == 16) *out16++ = static_cast<uint16_t>(v);
                else *out8++ = static_cast<unsigned char>(v);
            }
        }
    }
    return s;
}

void write_png(const std::string& path, const Image& image, const PngFormat& format, bool overwrite, int compression,
               bool parts) {
    write_png_samples(path, image_to_samples(image, format), format, overwrite, compression, parts);
}

void write_png_samples(const std::string& path, const Samples& s, const PngFormat& format, bool overwrite,
                       int compression, bool parts, const DeflatedRows* deflated) {
    if (s.channels != channels_of(format.color_type) || s.depth != format.bit_depth ||
        (s.data.size() != s.row_bytes() * static_cast<size_t>(s.height) && !(deflated && deflated->without_samples)))
        throw std::invalid_argument("write_png_samples: samples do not match the format");
    PngWriter writer(path, s.width, s.height, format, overwrite, compression);
    writer.write_image(s, parts, deflated);
    writer.commit();
}

}  // namespace gpufft
