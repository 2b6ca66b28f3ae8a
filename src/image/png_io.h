// PNG files in and out: every colour type (grey, grey+alpha, RGB, RGBA, palette with or without
// tRNS), every bit depth (1, 2, 4, 8, 16), interlaced or not; errors as one line naming the file;
// outputs written atomically. libpng reads and writes the chunks and every image the fast paths
// do not take; 8- and 16-bit image data is inflated by libdeflate (whole) or our Inflater (by
// rows) and unfiltered here, and at the fast levels filtered here and deflated by libdeflate
// (whole) or in parallel zlib parts (by rows, or a file alone). libpng has the last word on any
// file that is not plainly right.
#pragma once

#include "image/image.h"

#include <array>
#include <memory>
#include <string>
#include <vector>

namespace gpufft {

/// A text chunk: tEXt (Latin-1), zTXt (Latin-1, compressed) or iTXt (UTF-8, compressed or not).
struct PngText {
    enum class Kind { Text, CompressedText, International, CompressedInternational };
    std::string key;   ///< 1-79 Latin-1 characters ("Title", "Author", "Copyright", ...)
    std::string text;
    Kind kind = Kind::Text;
    std::string language, translated_key;  ///< iTXt's, UTF-8
};

/// A chunk that the PNG format does not define, copied as it came: only those marked safe to copy
/// (the fourth letter of its type in lower case), which the format lets an editor copy into an
/// image whose pixels it changed.
struct PngChunk {
    std::string type;  ///< four letters
    std::vector<unsigned char> data;
    int location = 0;  ///< where it lay: libpng's PNG_HAVE_IHDR (before PLTE) or PNG_HAVE_PLTE
};

/// What a PNG file stored, so an output can keep it.
struct PngFormat {
    int color_type = 6;       ///< PNG_COLOR_TYPE_*: 0 grey, 2 RGB, 3 palette, 4 grey+alpha, 6 RGBA
    int bit_depth = 8;        ///< 1, 2, 4, 8 or 16
    bool interlaced = false;
    bool has_trns = false;    ///< a tRNS chunk (palette, grey or RGB transparency)
    // Colour metadata, copied to outputs.
    bool srgb = false;
    int srgb_intent = 0;
    double gamma = 0;         ///< gAMA value (e.g. 0.45455), 0 when absent
    std::vector<unsigned char> icc_profile;
    std::string icc_name;
    bool has_phys = false;
    unsigned phys_x = 0, phys_y = 0;
    int phys_unit = 0;
    bool has_chrm = false;  ///< cHRM: white point and primaries (x, y of each, times 100000)
    std::array<int, 8> chrm{};
    std::vector<unsigned char> exif;  ///< eXIf: Exif data (orientation, camera...), empty when absent
    /// Safe-to-copy chunks of types libpng does not know, before the image data.
    std::vector<PngChunk> unknown_chunks;
    /// Text chunks before the image data (an image's title, author, copyright...), in file order;
    /// outputs keep them. Those whose keyword a PNG may not hold are left out.
    std::vector<PngText> text;

    bool has_alpha() const { return color_type == 4 || color_type == 6 || has_trns; }
    bool is_grey() const { return color_type == 0 || color_type == 4; }
    /// "RGB 8-bit", "palette 4-bit + tRNS, interlaced", ...
    std::string describe() const;
    /// The text of the first chunk with keyword `key`, or null.
    const std::string* find_text(const std::string& key) const;
    /// Sets the text of keyword `key` (a tEXt chunk; the first of that keyword, others removed).
    void set_text(const std::string& key, const std::string& text);
};

/// Whether `key` may be a text chunk's keyword: 1-79 printable Latin-1 characters, no space at
/// either end or two in a row.
bool valid_text_key(const std::string& key);

// Samples (stored samples as a PNG holds them) are public: gpufft/gpufft.h.

struct PngImage {
    Image image;  ///< samples / (2^depth - 1), expanded to RGBA (grey to R = G = B, no alpha to 1)
    PngFormat format;
};

struct PngSamples {
    Samples samples;
    PngFormat format;
};

/// Samples per pixel of a PNG colour type as written (palette: 1 index).
int channels_of(int color_type);

struct PngLimits {
    /// Refused before any pixel memory is allocated. 2^28 pixels: 4 GiB as float RGBA. 0: no limit.
    long long max_pixels = 1LL << 28;
};

/// A PNG read a few rows at a time, so that an image larger than memory can be filtered as it is
/// decoded. The constructor reads the header (and refuses, naming the file, what read_png_samples
/// refuses); rows come as read_png_samples gives them (8 or 16 bits, palette and grey expanded,
/// tRNS to alpha). An interlaced (Adam7) image cannot be read by rows: read_image() whole only.
class PngReader {
public:
    PngReader(const std::string& path, const PngLimits& limits);
    /// A PNG file's bytes already in memory, named `name` in errors.
    PngReader(const void* data, size_t size, const std::string& name, const PngLimits& limits);
    ~PngReader();
    PngReader(const PngReader&) = delete;
    PngReader& operator=(const PngReader&) = delete;

    const PngFormat& format() const;
    int width() const;
    int height() const;
    int channels() const;  ///< of the rows given: 1 grey, 2 grey+alpha, 3 RGB, 4 RGBA
    int depth() const;     ///< of the rows given: 8 or 16
    size_t row_bytes() const;

    /// The next `count` rows into `dst` (row_bytes() each, contiguous); after the last row the
    /// file's end is read and checked too. Throws gpufft::Error "<path>: <problem>" on corrupt or
    /// truncated data.
    void read_rows(unsigned char* dst, int count);
    /// The whole image (interlaced or not), before any row was read. Not interlaced, 8 or 16 bits,
    /// not palette and without tRNS, it is inflated by libdeflate (or, where `parts` and its
    /// stream makes two parts of 4 MiB at least, in parts on every core: for a file read alone,
    /// where the cores would otherwise wait) and unfiltered here; anything there not plainly right
    /// (a CRC, the stream, a filter type, a chunk) reads it again through libpng, whose errors and
    /// tolerances stand. The samples go into `storage` (an earlier image's, given back so that its
    /// memory serves again).
    PngSamples read_image(bool parts = false, std::vector<unsigned char>&& storage = {});
    /// The same into `dst`, which holds `capacity` bytes, image_bytes() at least: the samples,
    /// row_bytes() * height() of them, from its start (a host area's memory, fftfilter's batch).
    void read_image_to(unsigned char* dst, size_t capacity, bool parts = false);
    /// The room read_image_to() takes: the samples, and where the image data is inflated whole a
    /// byte more a row (each row's filter byte, before the rows are moved down).
    size_t image_bytes() const;
    /// Who decoded the image data: "libdeflate" (read_image() inflating the whole stream),
    /// "inflater, in parts" (the same in parts, inflate.h),
    /// "inflater" (read_rows() inflating as it goes, inflate.h; both unfiltering here, for images
    /// read_image() would inflate whole) or "libpng" (every other image, and any file not plainly
    /// right).
    const char* decoder() const;
    /// Every row through libpng, before any is read (tests compare the other decoders with it).
    void use_libpng();
    /// read_image() inflates the whole stream itself (and unfilters it here), unless anything
    /// there is not plainly right.
    bool inflates_whole() const;

private:
    struct State;
    void start(const PngLimits& limits);
    void restart_libpng();
    std::unique_ptr<State> s_;
};

/// A PNG written a few rows at a time into a hidden temporary file that commit() renames into
/// place (AtomicFile): until then, and if the writer dies first, the final name is untouched.
class PngWriter {
public:
    /// Throws gpufft::Error naming the path when the file cannot be made (or exists, unless `overwrite`).
    PngWriter(const std::string& path, int width, int height, const PngFormat& format, bool overwrite, int compression = -1);
    ~PngWriter();
    PngWriter(const PngWriter&) = delete;
    PngWriter& operator=(const PngWriter&) = delete;

    size_t row_bytes() const;
    /// The next `count` rows in the format's layout (one byte per sample below 8 bits, 16-bit
    /// samples in native order), row_bytes() each, contiguous. Not for an interlaced format.
    void write_rows(const unsigned char* first, int count);
    /// Every row at once (any format, interlaced included), before any row was written. At the
    /// fast levels (1-4) the image data is compressed by libdeflate on this thread (the faster a
    /// core), or, where `parts` and the image makes two parts at least, as write_rows()
    /// compresses it: parts on every core (for a file written alone, where the cores would
    /// otherwise wait).
    /// `deflated`: the same rows deflated on the GPU (SampleConversion::deflate), written where the
    /// run coder would code them here (the same bytes).
    void write_image(const Samples& samples, bool parts = false, const DeflatedRows* deflated = nullptr);
    /// Ends the file after its last row, flushes it and renames it into place.
    void commit();

private:
    struct State;
    std::unique_ptr<State> s_;
};

/// Reads a PNG; throws gpufft::Error "<path>: <problem>" for a missing or unreadable file, a file
/// that is not a PNG, truncated or corrupt data (CRC, zlib), or dimensions above the limits.
PngImage read_png(const std::string& path, const PngLimits& limits = {});
/// The same for a PNG file's bytes already in memory, named `name` in errors.
PngImage read_png_memory(const void* data, size_t size, const std::string& name, const PngLimits& limits = {});
/// Reads the samples as stored (8 or 16 bits, no conversion to float); errors as read_png.
PngSamples read_png_samples(const std::string& path, const PngLimits& limits = {});
/// The width and height a PNG's header (IHDR) declares, read from its first 24 bytes without
/// decoding anything: a hint for planning ahead; false if the file does not start as a PNG does.
bool png_dimensions(const std::string& path, int& width, int& height);

/// The float value of every sample of an 8- or 16-bit image: v / (2^depth - 1), as read_png gives.
/// One table so that the CPU and the GPU convert identically.
std::vector<float> sample_values(int depth);
/// Samples to float RGBA as read_png: grey to R = G = B, no alpha to 1.
Image samples_to_image(const Samples& samples);
/// The same for pixel x of one row of samples (`values`: sample_values(depth)) into rgba[0..3].
inline void sample_pixel(const unsigned char* row, int channels, int depth, const float* values, long long x, float* rgba) {
    const size_t i = static_cast<size_t>(x) * static_cast<size_t>(channels);
    auto sample = [&](int c) {
        return values[depth == 16 ? reinterpret_cast<const unsigned short*>(row)[i + static_cast<size_t>(c)]
                                  : row[i + static_cast<size_t>(c)]];
    };
    const bool grey = channels <= 2;
    rgba[0] = sample(0);
    rgba[1] = grey ? rgba[0] : sample(1);
    rgba[2] = grey ? rgba[0] : sample(2);
    rgba[3] = channels == 2 || channels == 4 ? sample(channels - 1) : 1.0f;
}
/// Float RGBA to the samples of `format` (its colour type and bit depth), rounded to nearest and
/// clamped (NaN to 0), as write_png stores them; grey takes R, grey+alpha (R, A).
Samples image_to_samples(const Image& image, const PngFormat& format);
/// The quantiser of write_png: v in [0, 1] to the nearest of 0..max (NaN and v <= 0 to 0).
unsigned quantise_sample(float v, unsigned max);

/// One row under PNG's Paeth filter (type 4), as the fast levels' writer filters every row: `out`
/// (`stride` bytes) = `cur` less the predictor from its left, upper and upper-left bytes (`bpp`
/// bytes a pixel back, in `cur` and the row above, `prev`; 0 before the row's start).
void paeth_filter_row(const unsigned char* cur, const unsigned char* prev, unsigned char* out, size_t stride, size_t bpp);

/// The image data the fast levels' writer deflates: each row of 8- or 16-bit `s` its filter byte
/// (4), then its bytes under Paeth, 16-bit samples big-endian as the file stores them.
std::vector<unsigned char> filtered_rows(const Samples& s);

/// The format an output of `input` is written in: the input's colour type, bit depth, interlacing
/// and colour metadata, except that
/// palette images come out RGB(A) 8-bit, tRNS transparency becomes an alpha channel, and a grey input
/// whose result has colour (a per-channel kernel) comes out RGB(A).
PngFormat output_format(const PngFormat& input, bool result_has_colour);

/// Writes `image` rounded to nearest and clamped to the format's range. The file appears whole or
/// not at all: written to a temporary file in the same directory, flushed, then renamed. Unless
/// `overwrite`, an existing file is never replaced (atomically: the rename refuses).
/// `compression`: zlib level 0-9, or -1 for libpng's default.
/// `parts`: as PngWriter::write_image.
void write_png(const std::string& path, const Image& image, const PngFormat& format, bool overwrite,
               int compression = -1, bool parts = false);
/// Writes samples already in `format`'s layout (image_to_samples, or packed on the GPU).
/// `deflated`: as PngWriter::write_image.
void write_png_samples(const std::string& path, const Samples& samples, const PngFormat& format, bool overwrite,
                       int compression = -1, bool parts = false, const DeflatedRows* deflated = nullptr);

/// Whether PngWriter::write_image() codes `format` itself at `compression` (the fast levels 1-4, 8-
/// or 16-bit rows, not interlaced, not palette): where it may take DeflatedRows.
bool writes_runs(const PngFormat& format, int compression);

/// True when some pixel has R, G, B not all equal after quantising to `bit_depth`.
bool has_colour(const Image& image, int bit_depth);

}  // namespace gpufft
