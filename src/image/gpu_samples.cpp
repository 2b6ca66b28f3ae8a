#include "image/gpu_samples.h"

#include "image/convolve.h"

#include <cctype>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

namespace gpufft {

namespace {

constexpr int kTableWidth = 256;
constexpr int kGroup = 16;  // the programs' local size, both axes

int table_rows(size_t entries) { return static_cast<int>((entries + kTableWidth - 1) / kTableWidth); }

/// A rectangle texture of `internal` format, nearest sampling; throws GlError on failure.
TextureHandle make_texture(GLenum internal, GLenum format, GLenum type, int width, int height, const void* data,
                           const char* what) {
    while (glGetError() != GL_NO_ERROR) {}
    TextureHandle id = new_texture();
    glBindTexture(GL_TEXTURE_RECTANGLE, id.get());
    glTexParameteri(GL_TEXTURE_RECTANGLE, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_RECTANGLE, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexImage2D(GL_TEXTURE_RECTANGLE, 0, static_cast<GLint>(internal), width, height, 0, format, type, data);
    glBindTexture(GL_TEXTURE_RECTANGLE, 0);
    GLenum e = glGetError();
    if (e != GL_NO_ERROR)
        throw GlError(std::string(e == GL_OUT_OF_MEMORY ? "out of GPU memory" : gl_error_name(e)) + " in allocating " +
                      what + " (" + std::to_string(width) + "x" + std::to_string(height) + ")");
    return id;
}

void bind_rect(GLenum unit, GLuint texture) {
    glActiveTexture(unit);
    glBindTexture(GL_TEXTURE_RECTANGLE, texture);
}

void dispatch(int width, int height) {
    glDispatchCompute(static_cast<GLuint>((width + kGroup - 1) / kGroup), static_cast<GLuint>((height + kGroup - 1) / kGroup), 1);
}

}  // namespace

void SampleIo::OutTexture::reserve(bool wide, int w, int h) {
    if (id && w <= width && h <= height) return;
    id.reset();
    width = std::max(w, width);
    height = std::max(h, height);
    id = make_texture(wide ? GL_RGBA16UI : GL_RGBA8UI, GL_RGBA_INTEGER, wide ? GL_UNSIGNED_SHORT : GL_UNSIGNED_BYTE, width,
                      height, nullptr, "the output's samples");
}

std::vector<float> decode_table(int depth, bool linear, const Transfer& t) {
    const std::vector<float> value = sample_values(depth);
    std::vector<float> table(static_cast<size_t>(table_rows(value.size())) * kTableWidth * 2, 0.0f);
    for (size_t v = 0; v < value.size(); ++v) {
        table[2 * v] = linear ? to_linear(value[v], t) : value[v];
        table[2 * v + 1] = value[v];
    }
    return table;
}

std::vector<float> encode_table(int depth, bool linear, const Transfer& t) {
    const unsigned max = (1u << depth) - 1;
    std::vector<float> table(static_cast<size_t>(table_rows(max + 1)) * kTableWidth * 2, 0.0f);
    for (int part = 0; part < 2; ++part) {
        const bool encode = linear && part == 0;
        auto sample = [&](uint32_t bits) {
            float v;
            std::memcpy(&v, &bits, sizeof v);
            return quantise_sample(encode ? from_linear(v, t) : v, max);
        };
        // The conversion is non-decreasing in v, and floats >= 0 order as their bit patterns: for
        // each k, a binary search between +0 (which gives 0) and 1.0 (which gives max).
        uint32_t lo = 0;
        const uint32_t one = 0x3f800000u;
        for (unsigned k = 1; k <= max; ++k) {
            uint32_t hi = one;
            while (hi - lo > 1) {
                uint32_t mid = lo + (hi - lo) / 2;
                (sample(mid) >= k ? hi : lo) = mid;
            }
            std::memcpy(&table[2 * k + static_cast<size_t>(part)], &hi, sizeof(float));
            lo = hi - 1;  // the next threshold is at least this one
        }
    }
    return table;
}

struct SampleIo::Table {
    TextureHandle texture;
};

SampleIo::SampleIo(ProgramCache& programs) : programs_(programs) {}

SampleIo::~SampleIo() {
    for (Slot& s : slots_) {
        if (!s.fence) continue;
        // An image still queued may yet copy into its caller's host area, which the caller gives
        // back once this is gone: its work is waited for (a lost context returns at once).
        glClientWaitSync(s.fence, GL_SYNC_FLUSH_COMMANDS_BIT, GLuint64(10) * 1000000000);
        glDeleteSync(s.fence);
    }
}

bool SampleLimits::fits(int width, int height, int in_channels, int in_depth, int out_channels, int out_depth) const {
    auto bytes = [&](int channels, int depth) {
        return static_cast<long long>(width) * height * channels * (depth == 16 ? 2 : 1);
    };
    return supported && width <= max_side && height <= max_side && bytes(in_channels, in_depth) <= max_bytes &&
           bytes(out_channels, out_depth) <= max_bytes;
}

SampleLimits SampleIo::limits() {
    SampleLimits l;
    l.supported = GLEW_VERSION_4_3 != 0;
    if (!l.supported) return l;
    GLint64 bytes = 0;
    glGetInteger64v(GL_MAX_SHADER_STORAGE_BLOCK_SIZE, &bytes);
    l.max_bytes = static_cast<long long>(bytes);
    l.max_side = max_texture_side();
    return l;
}

const SampleIo::Table& SampleIo::table(bool encode, int depth, bool linear, const Transfer& t) {
    auto key = std::make_tuple(encode, depth, linear, linear && t.srgb, linear && !t.srgb ? t.gamma : 0.0);
    auto it = tables_.find(key);
    if (it != tables_.end()) return it->second;
    std::vector<float> data = encode ? encode_table(depth, linear, t) : decode_table(depth, linear, t);
    Table table;
    table.texture = make_texture(GL_RG32F, GL_RG, GL_FLOAT, kTableWidth, static_cast<int>(data.size() / 2 / kTableWidth),
                                 data.data(), "a sample table");
    return tables_.emplace(key, std::move(table)).first->second;
}

void SampleIo::upload(const Samples& in, const HostArea* area) {
    if (queued_ == slots_.size()) throw std::logic_error("SampleIo: collect() before the next upload");
    Slot& s = slots_[next_];
    width_ = in.width;
    height_ = in.height;
    depth_ = in.depth;
    strip_ = false;
    out_height_ = in.height;
    s.timer.begin();
    // A whole number of words: the programs read 32 bits at a time.
    const size_t bytes = area ? in.row_bytes() * static_cast<size_t>(in.height) : in.data.size();
    s.in.reserve((bytes + 3) / 4 * 4, "the image's samples");
    if (area) copy_buffer(area->gl_buffer(), s.in.id(), bytes);
    else s.in.write(in.data.data(), bytes);
    check_gl("uploading samples");
}

void SampleIo::upload_rows(const std::vector<const unsigned char*>& rows, int width, int channels, int depth,
                           int image_height, int origin, int out_rows) {
    if (queued_ == slots_.size()) throw std::logic_error("SampleIo: collect() before the next upload");
    Slot& s = slots_[next_];
    width_ = width;
    height_ = image_height;
    depth_ = depth;
    strip_ = true;
    strip_origin_ = origin;
    out_height_ = out_rows;
    s.timer.begin();
    const size_t row_bytes = static_cast<size_t>(width) * static_cast<size_t>(channels) * (depth == 16 ? 2 : 1);
    s.in.reserve((row_bytes * rows.size() + 3) / 4 * 4, "a strip's samples");
    for (size_t r = 0; r < rows.size(); ++r)
        if (rows[r]) s.in.write_at(r * row_bytes, rows[r], row_bytes);
    check_gl("uploading samples");
}

namespace {

/// unpack.comp's boundary variant: "BOUNDARY_REFLECT", ...
std::string boundary_define(Boundary b) {
    std::string boundary = boundary_name(b);
    for (char& ch : boundary) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    return "BOUNDARY_" + boundary;
}

/// The uniforms both of unpack.comp's inputs share, the grid bound as image 0, and the dispatch.
void unpack_into(const GlProgram& p, int width, int height, int origin_x, int origin_y, const Texture& grid) {
    glBindImageTexture(0, grid.id(), 0, GL_FALSE, 0, GL_WRITE_ONLY, GL_RGBA32F);
    p.set_ivec2(Uniform::ImageSize, width, height);
    p.set_ivec2(Uniform::Origin, origin_x, origin_y);
    p.set_ivec2(Uniform::Extent, grid.width(), grid.height());
    dispatch(grid.width(), grid.height());
    // The filter samples the grid next.
    glMemoryBarrier(GL_TEXTURE_FETCH_BARRIER_BIT | GL_SHADER_IMAGE_ACCESS_BARRIER_BIT);
}

}  // namespace

void extend_texture(ProgramCache& programs, GLuint image, GLenum target, int width, int height, Boundary b, int origin_x, int origin_y,
                    const Texture& grid) {
    std::vector<std::string> defines = {boundary_define(b), "TEXTURE"};
    if (target == GL_TEXTURE_2D) defines.push_back("SOURCE_2D");
    const GlProgram& p = programs.get({"", "unpack.comp", defines, false});
    p.use();
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(target, image);
    unpack_into(p, width, height, origin_x, origin_y, grid);
    check_gl("extending a frame to its grid");
}

const char* image_format_name(GLenum internal_format) {
    static const std::pair<GLenum, const char*> kFormats[] = {
        {GL_RGBA32F, "rgba32f"}, {GL_RGBA16F, "rgba16f"},         {GL_RGBA8, "rgba8"},           {GL_RGBA16, "rgba16"},
        {GL_RGBA8_SNORM, "rgba8_snorm"}, {GL_RGBA16_SNORM, "rgba16_snorm"}, {GL_RGB10_A2, "rgb10_a2"}, {GL_R11F_G11F_B10F, "r11f_g11f_b10f"}};
    for (auto [format, name] : kFormats)
        if (format == internal_format) return name;
    return nullptr;
}

void crop_texture(ProgramCache& programs, const Texture& result, int origin_x, int origin_y, GLuint dst, GLenum target, GLenum format,
                  int width, int height) {
    std::vector<std::string> defines = {std::string("IMAGE_FORMAT ") + image_format_name(format)};
    if (target == GL_TEXTURE_2D) defines.push_back("DEST_2D");
    const GlProgram& p = programs.get({"", "crop.comp", defines, false});
    // The filter may have written `result` with image stores (the compute backend).
    glMemoryBarrier(GL_TEXTURE_FETCH_BARRIER_BIT);
    p.use();
    bind_rect(GL_TEXTURE0, result.id());
    glBindImageTexture(0, dst, 0, GL_FALSE, 0, GL_WRITE_ONLY, format);
    p.set_ivec2(Uniform::Origin, origin_x, origin_y);
    p.set_ivec2(Uniform::Extent, width, height);
    dispatch(width, height);
    // The caller may use its texture in any way next: drawing, sampling, reading back, copying.
    glMemoryBarrier(GL_ALL_BARRIER_BITS);
    check_gl("storing the result in the output texture");
}

void SampleIo::unpack(const SampleConversion& c, Boundary b, int origin_x, int origin_y, const Texture& grid) {
    std::vector<std::string> defines = {boundary_define(b)};
    if (c.premultiply) defines.push_back("PREMULTIPLY");
    if (depth_ == 16) defines.push_back("WIDE");
    if (strip_) defines.push_back("STRIP");
    const GlProgram& p = programs_.get({"", "unpack.comp", defines, false});
    const Table& t = table(false, c.in_depth, c.linear, c.transfer);
    p.use();
    slots_[next_].in.bind(1);
    bind_rect(GL_TEXTURE5, t.texture.get());
    glActiveTexture(GL_TEXTURE0);
    p.set(Uniform::Channels, c.in_channels);
    if (strip_) p.set(Uniform::StripOrigin, strip_origin_);
    unpack_into(p, width_, height_, origin_x, origin_y, grid);
    StorageBuffer::unbind(1);
}

void SampleIo::pack(const SampleConversion& c, const Texture& result, int origin_x, int origin_y, const Region& out) {
    const bool wide = c.out_depth == 16;
    OutTexture& target = wide ? out16_ : out8_;
    // Rows wider than a texture (a streamed strip) are folded below each other.
    const int fold = std::min(width_, max_texture_side());
    target.reserve(wide, fold, out_height_ * ((width_ + fold - 1) / fold));
    const unsigned max = (1u << c.out_depth) - 1;
    unsigned top = 1;
    while (top * 2 <= max) top *= 2;
    const GlProgram& p = programs_.get({"", "pack.comp", {wide ? "OUT_FORMAT rgba16ui" : "OUT_FORMAT rgba8ui"}, false});
    const Table& t = table(true, c.out_depth, c.linear, c.transfer);
    // The filter may have written `result` with image stores (the compute backend).
    glMemoryBarrier(GL_TEXTURE_FETCH_BARRIER_BIT);
    p.use();
    bind_rect(GL_TEXTURE0, result.id());
    bind_rect(GL_TEXTURE5, t.texture.get());
    glActiveTexture(GL_TEXTURE0);
    glBindImageTexture(0, target.id.get(), 0, GL_FALSE, 0, GL_WRITE_ONLY, wide ? GL_RGBA16UI : GL_RGBA8UI);
    p.set_ivec2(Uniform::Origin, origin_x, origin_y);
    p.set_ivec2(Uniform::Offset, out.x0, out.y0);
    p.set_ivec2(Uniform::Extent, out.x1 - out.x0, out.y1 - out.y0);
    p.set(Uniform::Channels, c.out_channels);
    p.set_ivec2(Uniform::Fold, fold, out_height_);
    glUniform1ui(p.location(Uniform::Max), max);
    glUniform1ui(p.location(Uniform::Top), top);
    dispatch(out.x1 - out.x0, out.y1 - out.y0);
}

void SampleIo::read_back(const SampleConversion& c, const HostArea* to) {
    Slot& s = slots_[next_];
    s.width = width_;
    s.height = out_height_;
    s.channels = c.out_channels;
    s.depth = c.out_depth;
    const bool wide = c.out_depth == 16;
    const size_t bytes = c.output_bytes(width_, out_height_);
    const size_t words = (bytes + 3) / 4;
    s.out.reserve(words * 4, "the output's samples");
    // pack.comp's image stores are read next through a sampler.
    glMemoryBarrier(GL_TEXTURE_FETCH_BARRIER_BIT);
    const GlProgram& p = programs_.get({"", "serialize.comp", wide ? std::vector<std::string>{"WIDE"} : std::vector<std::string>{}, false});
    p.use();
    glActiveTexture(GL_TEXTURE4);
    glBindTexture(GL_TEXTURE_RECTANGLE, (wide ? out16_ : out8_).id.get());
    glActiveTexture(GL_TEXTURE0);
    s.out.bind(2);
    p.set_ivec2(Uniform::ImageSize, width_, out_height_);
    p.set_ivec2(Uniform::Fold, std::min(width_, max_texture_side()), out_height_);
    p.set(Uniform::Channels, c.out_channels);
    const size_t groups = (words + 255) / 256, x = std::min<size_t>(groups, 65535);
    glDispatchCompute(static_cast<GLuint>(x), static_cast<GLuint>((groups + x - 1) / x), 1);
    StorageBuffer::unbind(2);
    glActiveTexture(GL_TEXTURE4);
    glBindTexture(GL_TEXTURE_RECTANGLE, 0);
    glActiveTexture(GL_TEXTURE0);
    glUseProgram(0);
    // The copy out of the buffer sees the stores.
    glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
    s.deflated = c.deflate && !strip_ && (c.out_depth == 8 || wide) && bytes + static_cast<size_t>(out_height_) < GpuRunCoder::kMaxLength;
    if (s.deflated) {
        glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);  // png_filter.comp reads serialize.comp's stores
        if (!s.coder) s.coder = std::make_unique<GpuRunCoder>(programs_);
        const size_t bpp = static_cast<size_t>(c.out_channels) * (wide ? 2 : 1);
        s.coder->deflate(s.out, bpp * static_cast<size_t>(width_), out_height_, static_cast<int>(bpp), wide,
                         c.samples_if_needed && to);
    }
    // Where the stream makes the samples needless, they wait on the GPU for collect() to know.
    s.to_area_if_needed = s.deflated && to && s.coder->bands_back();
    s.area_buffer = to ? to->gl_buffer() : 0;
    s.to_area = to != nullptr && !s.to_area_if_needed;
    // The slot's mapped buffer is made on its first image, areas or not (4 bytes until an image
    // without an output area needs more), so that the GL objects a batch holds do not depend on
    // which slots met a file that found no free area (test_reliability).
    if (s.back.size() == 0) s.back.reserve(4);
    s.mapped = !to && words * 4 <= mapped_limit && s.back.reserve(words * 4);
    if (s.to_area) copy_to_mapped(s.out.id(), to->gl_buffer(), words * 4);
    else if (s.mapped) s.back.copy_from(s.out, words * 4);
    s.timer.end();
    s.fence = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
    check_gl("reading samples back");
    next_ = (next_ + 1) % slots_.size();
    ++queued_;
}

size_t SampleIo::mapped_limit = size_t(128) << 20;

Samples SampleIo::collect(double* gpu_ms, std::vector<unsigned char>&& storage, DeflatedRows* deflated) {
    if (queued_ == 0) throw std::logic_error("SampleIo: nothing to collect");
    Slot& s = slots_[(next_ + slots_.size() - queued_) % slots_.size()];
    glClientWaitSync(s.fence, GL_SYNC_FLUSH_COMMANDS_BIT, GLuint64(60) * 1000000000);
    if (deflated) {
        deflated->without_samples = false;
        if (s.deflated) s.coder->collect(*deflated);
        else {
            deflated->coded = false;
            deflated->data.clear();  // its memory kept for the caller
            deflated->adler = 1;
            deflated->bands.clear();
        }
    }
    glDeleteSync(s.fence);
    s.fence = nullptr;
    --queued_;
    Samples out;
    out.data = std::move(storage);
    out.width = s.width, out.height = s.height, out.channels = s.channels, out.depth = s.depth;
    const size_t bytes = out.row_bytes() * static_cast<size_t>(out.height);
    if (s.to_area_if_needed) {
        if (deflated && deflated->coded) {
            deflated->without_samples = true;  // the stream (and its bands) stand for the samples
        } else {  // needed after all: copied now (the slot's buffer is still the output's)
            if (deflated) deflated->bands.clear();
            copy_to_mapped(s.out.id(), s.area_buffer, (bytes + 3) / 4 * 4);
            GLsync copied = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
            glClientWaitSync(copied, GL_SYNC_FLUSH_COMMANDS_BIT, GLuint64(60) * 1000000000);
            glDeleteSync(copied);
        }
        s.to_area = true;
        s.to_area_if_needed = false;
    }
    // Never zero filled first: fresh memory, zeroed and then copied over, took the GL thread as
    // long as the copy (a 2048x2048 RGB file's 12.6 MB). assign() copies into memory given back
    // that holds as much, else into a fresh allocation.
    if (s.to_area) {
        out.data.clear();  // the samples lie in the caller's host area
    } else if (s.mapped) {
        out.data.assign(s.back.data(), s.back.data() + bytes);
    } else {
        out.data.resize(bytes);
        s.out.read(out.data.data(), bytes);
    }
    check_gl("copying samples back");
    if (gpu_ms) *gpu_ms = s.timer.milliseconds();
    return out;
}

}  // namespace gpufft
