// Stored PNG samples on the GPU: uploaded as they are stored (8 or 16 bits a sample), turned into
// the float grid of a filter there (boundary extension and overlap-save tiles included), and the
// filtered floats packed back into the output's samples there, so that only the samples cross the
// bus, never 16-byte floats. Every float and every output sample is bit-identical to the CPU path
// (samples_to_image, to_linear, premultiply ... from_linear, image_to_samples): the conversions go
// through tables that the CPU's own code fills.
#pragma once

#include "gl/buffer.h"
#include "gl/program.h"
#include "gl/quad.h"  // Region
#include "gl/texture.h"
#include "gl/timer.h"
#include "image/colour.h"
#include "image/gpu_deflate.h"
#include "image/png_io.h"

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

namespace gpufft {


// SampleConversion is public: gpufft/gpufft.h.

/// 256 RG pairs a row: the float of each stored value of `depth` bits, .r colour (to_linear with
/// `linear`), .g alpha.
std::vector<float> decode_table(int depth, bool linear, const Transfer& t);
/// 256 RG pairs a row: entry k in 1..2^depth - 1 is the smallest float that write_png's rounding
/// (after from_linear for colour with `linear`) takes to k or more; .r colour, .g alpha.
std::vector<float> encode_table(int depth, bool linear, const Transfer& t);

/// Fills `grid` (RGBA32F) with the width x height RGBA texture `image` (level 0 of a
/// GL_TEXTURE_RECTANGLE or GL_TEXTURE_2D, any float or normalised format) read from (origin_x,
/// origin_y) on, extended beyond its edges by rule `b`: unpack.comp's TEXTURE variant (GL 4.3
/// compute shaders). With Wrap from (0, 0) onto a grid of the image's size, a copy.
void extend_texture(ProgramCache& programs, GLuint image, GLenum target, int width, int height, Boundary b, int origin_x, int origin_y,
                    const Texture& grid);

/// The GLSL image format of a texture's internal format (GL_RGBA16F: "rgba16f") for the RGBA
/// formats crop.comp stores, and those extend_texture() reads; nullptr for any other (integer,
/// sRGB, compressed, fewer channels).
const char* image_format_name(GLenum internal_format);

/// Stores width x height texels of `result` from (origin_x, origin_y) on into level 0 of `dst` (a
/// GL_TEXTURE_RECTANGLE or GL_TEXTURE_2D of an internal format image_format_name() names):
/// crop.comp, the compute pass that replaces a framebuffer blit (GL 4.3).
void crop_texture(ProgramCache& programs, const Texture& result, int origin_x, int origin_y, GLuint dst, GLenum target, GLenum format,
                  int width, int height);

// SampleLimits is public: gpufft/gpufft.h.

/// The GL side: sample buffers, tables, programs and the packed output, reused across images and
/// grown to the largest one. The samples go up and come back as plain buffer copies
/// (glBufferSubData, glGetBufferSubData): measured on an H100, a 2048x2048 RGB image takes 1-2 ms
/// each way, where a pixel-transfer upload that widens RGB to RGBA took 30-50 ms and the read-back
/// through a mapped pixel buffer up to 900 ms. Needs GL 4.3 compute shaders.
class SampleIo {
public:
    explicit SampleIo(ProgramCache& programs);
    ~SampleIo();
    SampleIo(const SampleIo&) = delete;
    SampleIo& operator=(const SampleIo&) = delete;

    /// What the current context can take.
    static SampleLimits limits();

    /// Uploads the image's samples (into the next slot's storage buffer): from in.data by the
    /// calling thread, or with `area` a copy the GPU makes from there (the samples there, not in
    /// in.data).
    void upload(const Samples& in, const HostArea* area = nullptr);
    /// Uploads one strip of an image streamed by rows (strips.h): rows[i] holds the samples of the
    /// image row that row `origin` + i of the boundary-extended image reads (null: a zero row, for
    /// the zero boundary beyond the edges), `width` pixels of `channels` samples of `depth` bits;
    /// `image_height` is the whole image's. The output is `out_rows` rows of `width` pixels.
    void upload_rows(const std::vector<const unsigned char*>& rows, int width, int channels, int depth, int image_height,
                     int origin, int out_rows);
    /// Fills `grid` (RGBA32F) with the uploaded image read from (origin_x, origin_y) on.
    void unpack(const SampleConversion& c, Boundary b, int origin_x, int origin_y, const Texture& grid);
    /// Packs `result` texels from (origin_x, origin_y) on into output pixels `out` (of the strip,
    /// after upload_rows()).
    void pack(const SampleConversion& c, const Texture& result, int origin_x, int origin_y, const Region& out);
    /// Queues the packed output (width x height of the last upload, or its strip's rows) as PNG rows into the slot's
    /// storage buffer; collect() copies the oldest slot's out, waiting for the GPU only if it must.
    /// With `to`, the copy goes there (a host area, which holds them) and collect() leaves them
    /// there.
    void read_back(const SampleConversion& c, const HostArea* to = nullptr);
    /// The oldest queued output; `gpu_ms`, if given, gets the GPU time from its upload to its
    /// read-back. Its samples go into `storage` (memory to use again: see ImageFilter::collect).
    Samples collect(double* gpu_ms = nullptr, std::vector<unsigned char>&& storage = {}, DeflatedRows* deflated = nullptr);
    size_t pending() const { return queued_; }
    /// Outputs up to this many bytes come back through a mapped buffer in the host's memory
    /// (HostBuffer), larger ones (and all where the context cannot map one) by glGetBufferSubData:
    /// two slots of pinned memory at most twice this. Tests set it to take either way.
    static size_t mapped_limit;

private:
    struct Table;
    const Table& table(bool encode, int depth, bool linear, const Transfer& t);

    ProgramCache& programs_;
    /// The packed output, RGBA8UI or RGBA16UI, grown to the largest image.
    struct OutTexture {
        TextureHandle id;
        int width = 0, height = 0;
        void reserve(bool wide, int width, int height);
    };
    OutTexture out8_, out16_;
    int width_ = 0, height_ = 0, depth_ = 8;
    bool strip_ = false;
    int strip_origin_ = 0, out_height_ = 0;
    struct Slot {
        StorageBuffer in, out;  // the image's samples, the output's bytes
        HostBuffer back;        // the output's bytes copied to the host's memory, where mapped
        bool mapped = false;    // the last read-back went through `back`
        bool to_area = false;   // the last read-back went into the caller's host area
        // ...or goes there at collect(), only where the GPU did not code the stream
        // (SampleConversion::samples_if_needed): the area's buffer
        bool to_area_if_needed = false;
        GLuint area_buffer = 0;
        GLsync fence = nullptr;
        GpuTimer timer;  // from the upload to the read-back
        std::unique_ptr<GpuRunCoder> coder;  // the output deflated on the GPU, where asked
        bool deflated = false;
        int width = 0, height = 0, channels = 0, depth = 8;
    };
    std::array<Slot, 3> slots_;  // three in flight: a collect() need not wait for the GPU to finish the image before
    size_t next_ = 0, queued_ = 0;
    std::map<std::tuple<bool, int, bool, bool, double>, Table> tables_;
};

}  // namespace gpufft
