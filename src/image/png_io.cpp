#include "image/png_io.h"

#include "base/error.h"
#include "image/files.h"

#include <libdeflate.h>
#include <png.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace gpufft {

namespace {

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

void write_data(png_structp png, png_bytep data, size_t length) {
    auto* c = static_cast<PngContext*>(png_get_io_ptr(png));
    if (std::fwrite(data, 1, length, c->file) != length) png_error(png, "write error");
}

void flush_data(png_structp) {}

struct Header {
    png_uint_32 width = 0, height = 0;
    int bit_depth = 0, color_type = 0, interlace = 0;
};

bool read_header(PngContext* c, Header* h) {
    if (setjmp(png_jmpbuf(c->png))) return false;
    png_set_sig_bytes(c->png, 8);
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

bool read_end(PngContext* c) {
    if (setjmp(png_jmpbuf(c->png))) return false;
    png_read_end(c->png, nullptr);
    return true;
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
}

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

struct PngReader::State {
    PngContext c;
    std::string name;
    PngFormat format;
    Samples shape;  // width, height, channels and depth of the rows given (no data)
    int passes = 1;
    int next_row = 0;
    ~State() {
        if (c.png) png_destroy_read_struct(&c.png, c.info ? &c.info : nullptr, nullptr);
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
    PngContext& c = s_->c;
    const std::string& path = s_->name;
    unsigned char signature[8];
    size_t got = std::fread(signature, 1, 8, c.file);
    if (got < 8 || png_sig_cmp(signature, 0, 8) != 0) fail(path, got == 0 ? "empty file, not a PNG" : "not a PNG file");

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

void PngReader::read_rows(unsigned char* dst, int count) {
    if (s_->format.interlaced) throw std::logic_error("PngReader::read_rows: an interlaced image is read whole");
    if (count < 0 || s_->next_row + count > height()) throw std::logic_error("PngReader::read_rows: past the last row");
    PngContext& c = s_->c;
    for (int i = 0; i < count; ++i, dst += row_bytes())
        if (!read_row(&c, dst)) fail(s_->name, libpng_problem(c));
    s_->next_row += count;
    if (s_->next_row == height() && !read_end(&c)) fail(s_->name, libpng_problem(c));
}

PngSamples PngReader::read_image() {
    if (s_->next_row != 0) throw std::logic_error("PngReader::read_image: rows already read");
    PngSamples out;
    out.format = s_->format;
    Samples& s = out.samples;
    s.resize(width(), height(), channels(), depth());
    if (s_->passes == 1) {
        read_rows(s.data.data(), height());
        return out;
    }
    // interlaced: the passes fill the whole image
    PngContext& c = s_->c;
    std::vector<png_bytep> rows(static_cast<size_t>(height()));
    for (int y = 0; y < height(); ++y) rows[static_cast<size_t>(y)] = s.row(y);
    if (!read_all(&c, rows.data())) fail(s_->name, libpng_problem(c));
    if (!read_end(&c)) fail(s_->name, libpng_problem(c));
    s_->next_row = height();
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

namespace {

bool write_header(PngContext* c, const PngFormat* f, int compression, png_uint_32 width, png_uint_32 height) {
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
    png_write_info(c->png, c->info);
    if (f->bit_depth < 8) png_set_packing(c->png);  // one byte per sample in, packed out
    if (f->bit_depth == 16) png_set_swap(c->png);   // native uint16 in
    if (f->interlaced) png_set_interlace_handling(c->png);
    return true;
}

// Whole images at the fast levels (1-4: every row filtered with Paeth, as write_header() sets
// libpng up) skip libpng's row writer: the rows are filtered here and compressed in one call by
// libdeflate, which at each of these levels is faster than zlib and makes smaller files (a 2048x2048
// filtered colour image: zlib's level 4 1.682 MB in 134 ms, libdeflate's level 3 1.661 MB in 68 and
// level 4 1.618 MB in 100; src/README.md, "The batch's encoding"). libpng still writes the
// signature and every chunk before the image data (png_write_info), so chunk rules stay its own;
// rows streamed a few at a time (write_rows), interlaced images, palettes, sub-byte samples and the
// other levels keep libpng's writer.
bool deflates_whole(const PngFormat& f, int compression) {
    return compression >= 1 && compression <= 4 && (f.bit_depth == 8 || f.bit_depth == 16) &&
           f.color_type != PNG_COLOR_TYPE_PALETTE && !f.interlaced;
}

// The Paeth predictor (PNG, filter type 4) of a sample from its left, upper and upper-left
// neighbours.
inline int paeth(int a, int b, int c) {
    const int pa = std::abs(b - c), pb = std::abs(a - c), pc = std::abs(a + b - 2 * c);
    return (pa <= pb && pa <= pc) ? a : (pb <= pc ? b : c);
}

// One row filtered: `out` = `cur` less the predictor from it and the row above (`prev`), `bpp`
// bytes a pixel. GCC's -O2 does not vectorise the loop (its cost model), and vectorised it takes a
// sixth of the time (a 2048x2048 RGB image: 11-14 ms against 65).
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("tree-vectorize", "vect-cost-model=dynamic")))
#endif
void paeth_row(const unsigned char* cur, const unsigned char* prev, unsigned char* out, size_t stride, size_t bpp) {
    for (size_t i = 0; i < bpp && i < stride; ++i) out[i] = static_cast<unsigned char>(cur[i] - paeth(0, prev[i], 0));
    for (size_t i = bpp; i < stride; ++i) out[i] = static_cast<unsigned char>(cur[i] - paeth(cur[i - bpp], prev[i], prev[i - bpp]));
}

// The image data of a PNG: each row its filter byte (4, Paeth) then its filtered bytes, 16-bit
// samples big-endian as the file stores them. 8-bit rows are filtered where they lie; 16-bit rows
// (in the machine's order) are first copied big-endian into one of two row buffers, the other
// holding the row above.
std::vector<unsigned char> paeth_rows(const Samples& s) {
    const size_t stride = s.row_bytes();
    const size_t bpp = static_cast<size_t>(s.channels) * static_cast<size_t>(s.depth / 8);
    std::vector<unsigned char> out((stride + 1) * static_cast<size_t>(s.height));
    const std::vector<unsigned char> zeros(stride, 0);
    std::vector<unsigned char> wide[2];
    if (s.depth == 16) wide[0].resize(stride), wide[1].resize(stride);
    const unsigned char* prev = zeros.data();
    for (int y = 0; y < s.height; ++y) {
        const unsigned char* cur = s.row(y);
        if (s.depth == 16) {
            unsigned char* big = wide[y % 2].data();
            for (size_t i = 0; i < stride; i += 2) {
                uint16_t v;
                std::memcpy(&v, cur + i, 2);
                big[i] = static_cast<unsigned char>(v >> 8);
                big[i + 1] = static_cast<unsigned char>(v & 0xff);
            }
            cur = big;
        }
        unsigned char* o = &out[(stride + 1) * static_cast<size_t>(y)];
        *o = 4;
        paeth_row(cur, prev, o + 1, stride, bpp);
        prev = cur;
    }
    return out;
}

// A chunk: its length, type, data and CRC (of the type and the data).
bool write_chunk(FILE* file, const char* type, const unsigned char* data, size_t length) {
    const unsigned char head[8] = {static_cast<unsigned char>(length >> 24), static_cast<unsigned char>(length >> 16),
                                   static_cast<unsigned char>(length >> 8), static_cast<unsigned char>(length),
                                   static_cast<unsigned char>(type[0]), static_cast<unsigned char>(type[1]),
                                   static_cast<unsigned char>(type[2]), static_cast<unsigned char>(type[3])};
    uLong crc = crc32(0L, head + 4, 4);
    if (length > 0) crc = crc32_z(crc, data, length);
    const unsigned char tail[4] = {static_cast<unsigned char>(crc >> 24), static_cast<unsigned char>(crc >> 16),
                                   static_cast<unsigned char>(crc >> 8), static_cast<unsigned char>(crc)};
    return std::fwrite(head, 1, 8, file) == 8 && (length == 0 || std::fwrite(data, 1, length, file) == length) &&
           std::fwrite(tail, 1, 4, file) == 4;
}

// The image data of `s` as IDAT chunks, compressed at libdeflate's `level` (one compressor per
// thread and level, reused). False on a write error.
bool write_deflated(FILE* file, const Samples& s, int level) {
    struct Free {
        void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
    };
    thread_local std::unique_ptr<libdeflate_compressor, Free> compressors[13];
    auto& compressor = compressors[level];
    if (!compressor) compressor.reset(libdeflate_alloc_compressor(level));
    if (!compressor) throw std::bad_alloc();
    const std::vector<unsigned char> rows = paeth_rows(s);
    // Not zeroed: the pages past the compressed size are never touched, so they take no memory
    // (a 2048x2048 RGB image: a 12.6 MB bound, 1.6 MB used).
    const size_t bound = libdeflate_zlib_compress_bound(compressor.get(), rows.size());
    const std::unique_ptr<unsigned char[]> z(new unsigned char[bound]);
    const size_t size = libdeflate_zlib_compress(compressor.get(), rows.data(), rows.size(), z.get(), bound);
    if (size == 0) throw std::logic_error("libdeflate: the bound did not hold");
    const size_t chunk = size_t(1) << 20;  // IDAT chunks of 1 MiB
    for (size_t at = 0; at < size; at += chunk)
        if (!write_chunk(file, "IDAT", z.get() + at, std::min(chunk, size - at))) return false;
    return true;
}

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
    bool deflated = false;  // write_image() wrote the image data itself (deflates_whole())
    int next_row = 0;
    State(const std::string& p, bool overwrite) : path(p), file(p, overwrite) {}
    ~State() {
        if (c.png) png_destroy_write_struct(&c.png, c.info ? &c.info : nullptr);
    }
    [[noreturn]] void fail() { throw Error(path + ": cannot write PNG: " + (c.message[0] ? c.message : "out of memory")); }
    /// What our own chunk writes (write_deflated(), write_chunk()) fail with, as libpng's writes do.
    [[noreturn]] void fail_writing() {
        std::snprintf(c.message, sizeof c.message, "write error");
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
    if (!write_header(&c, &format, compression, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height)))
        s_->fail();
}

PngWriter::~PngWriter() = default;

size_t PngWriter::row_bytes() const { return s_->shape.row_bytes(); }

void PngWriter::write_rows(const unsigned char* first, int count) {
    if (s_->format.interlaced) throw std::logic_error("PngWriter::write_rows: an interlaced image is written whole");
    if (count < 0 || s_->next_row + count > s_->shape.height) throw std::logic_error("PngWriter::write_rows: past the last row");
    std::vector<png_bytep> rows(static_cast<size_t>(count));
    for (int y = 0; y < count; ++y) rows[static_cast<size_t>(y)] = const_cast<png_bytep>(first + row_bytes() * static_cast<size_t>(y));
    if (count > 0 && !gpufft::write_rows(&s_->c, rows.data(), static_cast<png_uint_32>(count))) s_->fail();
    s_->next_row += count;
}

void PngWriter::write_image(const Samples& s) {
    if (s.channels != s_->shape.channels || s.depth != s_->shape.depth || s.width != s_->shape.width ||
        s.height != s_->shape.height || s.data.size() != s.row_bytes() * static_cast<size_t>(s.height) || s_->next_row != 0)
        throw std::invalid_argument("PngWriter::write_image: samples do not match the format");
    if (deflates_whole(s_->format, s_->compression)) {
        if (!write_deflated(s_->c.file, s, s_->compression)) s_->fail_writing();  // libdeflate's level: the same number
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
    if (s_->deflated) {
        if (!write_chunk(s_->c.file, "IEND", nullptr, 0)) s_->fail_writing();
    } else if (!write_end(&s_->c)) {
        s_->fail();
    }
    s_->file.commit();
}

unsigned quantise_sample(float v, unsigned max) {
    if (!(v > 0.0f)) return 0;  // also NaN
    if (v >= 1.0f) return max;
    return static_cast<unsigned>(std::lround(static_cast<double>(v) * max));  // exact: 24 + 16 bits
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

void write_png(const std::string& path, const Image& image, const PngFormat& format, bool overwrite, int compression) {
    write_png_samples(path, image_to_samples(image, format), format, overwrite, compression);
}

void write_png_samples(const std::string& path, const Samples& s, const PngFormat& format, bool overwrite,
                       int compression) {
    if (s.channels != channels_of(format.color_type) || s.depth != format.bit_depth ||
        s.data.size() != s.row_bytes() * static_cast<size_t>(s.height))
        throw std::invalid_argument("write_png_samples: samples do not match the format");
    PngWriter writer(path, s.width, s.height, format, overwrite, compression);
    writer.write_image(s);
    writer.commit();
}

}  // namespace gpufft
