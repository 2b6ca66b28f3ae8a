#include "image/convolve.h"

#include "fft/sizes.h"
#include "gl/gl.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <set>
#include <stdexcept>

namespace gpufft {

Boundary parse_boundary(const std::string& name) {
    for (Boundary b : {Boundary::Reflect, Boundary::Clamp, Boundary::Zero, Boundary::Wrap})
        if (name == boundary_name(b)) return b;
    throw Error("unknown boundary '" + name + "' (reflect, clamp, zero or wrap)");
}

const char* boundary_name(Boundary b) {
    switch (b) {
        case Boundary::Reflect: return "reflect";
        case Boundary::Clamp: return "clamp";
        case Boundary::Zero: return "zero";
        case Boundary::Wrap: return "wrap";
    }
    return "?";
}

long long boundary_index(long long i, long long n, Boundary b) {
    if (i >= 0 && i < n) return i;
    switch (b) {
        case Boundary::Zero: return -1;
        case Boundary::Clamp: return i < 0 ? 0 : n - 1;
        case Boundary::Wrap: {
            long long r = i % n;
            return r < 0 ? r + n : r;
        }
        case Boundary::Reflect: {  // period 2n: 0 1 .. n-1 n-1 .. 1 0
            long long r = i % (2 * n);
            if (r < 0) r += 2 * n;
            return r < n ? r : 2 * n - 1 - r;
        }
    }
    return -1;
}

namespace {

/// Overlap-save tiles of one length in [from, to] for an axis of `length`: the length that costs
/// the axis least (tiles times length times cost), and that cost; {0, 0} if none.
std::pair<long long, double> cheapest_tiles(int length, int size, long long from, long long to, const LengthModel& lengths) {
    long long fft = 0;
    double least = 0;
    // From 4, as LengthModel::best(): the fast chain cannot rate 2, and tiles of 2 or 3 serve no
    // kernel (a 1-tap kernel on an axis above the largest FFT asked for them, and threw).
    for (long long n = lengths.next_allowed(std::max<long long>({from, size + 1, 4}), to); n != 0; n = lengths.next_allowed(n + 1, to)) {
        const long long block = std::min<long long>(length, n - size + 1);
        const double c = static_cast<double>((length + block - 1) / block) * static_cast<double>(n) * lengths.cost(n);
        if (fft == 0 || c < least) fft = n, least = c;
    }
    return {fft, least};
}

/// Whether wrap takes this axis whole, at its own length (no padding, no tile).
bool wraps_whole(int length, Boundary b, int max_fft, const LengthModel& lengths) {
    const bool whole = lengths.any_whole ? length >= 1 : length >= 4 && lengths.allowed(length);
    return b == Boundary::Wrap && whole && length <= max_fft;
}

/// What one transform along an axis must hold: the image and the kernel less one.
long long axis_need(int length, int size) { return std::max<long long>(2, static_cast<long long>(length) + size - 1); }

}  // namespace

// With the kernel's centre at index 0 (tap i at (i - centre) mod fft), circular convolution of a
// tile t(s) = in(start + s) gives sum_i k(i) in(start + s + centre - i). That is output
// start + s wherever no tap wraps: s >= size - 1 - centre and s <= fft - 1 - centre. So a tile
// reading from b - lead, lead = size - 1 - centre, yields outputs b .. b + fft - size at indices
// lead .. lead + block - 1 (overlap-save). A wrapped axis of a length the FFT takes needs no tile
// at all: the circular convolution of the whole axis is the answer (lead 0, block = length).
AxisTiling tile_axis(int length, int size, int centre, Boundary b, int max_fft, const LengthModel& lengths, int axis) {
    AxisTiling t;
    t.kernel_shift = centre;
    if (wraps_whole(length, b, max_fft, lengths)) {
        t.fft = t.block = length;
        t.circular = true;
        return t;
    }
    const long long need = axis_need(length, size);
    long long fft = need <= max_fft ? lengths.best(need, max_fft) : 0;
    bool tiled = false;
    if (fft != 0 && lengths.tile_to > 0) {
        // Tiles where the measured model says they cost the axis less than the one transform
        // (the need's own best: a length shared by a batch does not make tiles pay).
        const auto [n, c] = cheapest_tiles(length, size, lengths.tile_from, std::min<long long>(lengths.tile_to, max_fft), lengths);
        if (n != 0 && c <= kTilesPay * static_cast<double>(fft) * lengths.cost(fft)) fft = n, tiled = true;
    }
    if (fft != 0 && !tiled)
        if (const long long shared = lengths.shared_length(need, max_fft, axis)) fft = shared;  // the batch's shared length
    if (fft == 0) fft = cheapest_tiles(length, size, size + 1, max_fft, lengths).first;
    if (fft == 0)
        throw Error("a " + std::to_string(size) + "-pixel kernel leaves no room in an FFT of at most " + std::to_string(max_fft) +
                    " points");
    t.fft = static_cast<int>(fft);
    t.lead = size - 1 - centre;
    t.block = std::min(length, t.fft - size + 1);
    return t;
}

std::vector<float> impulse_response(const Kernel& kernel, int fft_width, int fft_height, bool flip_y) {
    // Taps beyond the grid fold over it: circular convolution with the kernel wrapped, as a
    // periodic image demands.
    const Image& w = kernel.weights;
    std::vector<float> impulse(static_cast<size_t>(fft_width) * static_cast<size_t>(fft_height) * 4, 0.0f);
    for (int j = 0; j < w.height; ++j)
        for (int i = 0; i < w.width; ++i) {
            long long tx = boundary_index(i - kernel.cx, fft_width, Boundary::Wrap);
            long long ty = boundary_index(flip_y ? kernel.cy - j : j - kernel.cy, fft_height, Boundary::Wrap);
            float* dst = &impulse[(static_cast<size_t>(ty) * static_cast<size_t>(fft_width) + static_cast<size_t>(tx)) * 4];
            for (int c = 0; c < 4; ++c) dst[c] += w.at(i, j)[c];
        }
    return impulse;
}

void upload_impulse_response(const Kernel& kernel, Texture& target, bool flip_y) {
    const Image& w = kernel.weights;
    const int width = target.width(), height = target.height();
    if (w.width > width || w.height > height) {  // taps fold over the grid: sum them on the CPU
        target.upload(impulse_response(kernel, width, height, flip_y).data());
        return;
    }
    target.clear();
    // Tap (i, j) lands at ((i - cx) mod M, (j' - cy') mod N), j' the row or, mirrored, h - 1 - j
    // with cy' = h - 1 - cy: along each axis a run of taps before the centre (wrapped to the
    // grid's end) and one from it, each contiguous in the grid.
    auto runs = [](int size, int centre, int grid) {
        std::vector<std::array<int, 3>> r;  // {first tap, count, first texel}
        if (centre > 0) r.push_back({0, centre, grid - centre});
        r.push_back({centre, size - centre, 0});
        return r;
    };
    const int cy = flip_y ? w.height - 1 - kernel.cy : kernel.cy;
    std::vector<float> block;
    for (const auto& [i0, ni, tx] : runs(w.width, kernel.cx, width))
        for (const auto& [j0, nj, ty] : runs(w.height, cy, height)) {
            if (ni <= 0 || nj <= 0) continue;
            block.assign(static_cast<size_t>(ni) * static_cast<size_t>(nj) * 4, 0.0f);
            for (int jj = 0; jj < nj; ++jj) {
                const int j = flip_y ? w.height - 1 - (j0 + jj) : j0 + jj;
                for (int ii = 0; ii < ni; ++ii)
                    for (int c = 0; c < 4; ++c)  // + 0.0f: as impulse_response's sum into zeros (-0 becomes +0)
                        block[(static_cast<size_t>(jj) * static_cast<size_t>(ni) + static_cast<size_t>(ii)) * 4 + static_cast<size_t>(c)] =
                            0.0f + w.at(i0 + ii, j)[c];
            }
            target.upload_region(tx, ty, ni, nj, block.data());
        }
}

bool point_symmetric(const Kernel& kernel) {
    const Image& w = kernel.weights;
    for (int j = 0; j < w.height; ++j)
        for (int i = 0; i < w.width; ++i) {
            const int mi = 2 * kernel.cx - i, mj = 2 * kernel.cy - j;
            const bool inside = mi >= 0 && mi < w.width && mj >= 0 && mj < w.height;
            for (int c = 0; c < 4; ++c)
                if (!(w.at(i, j)[c] == (inside ? w.at(mi, mj)[c] : 0.0f))) return false;
        }
    return true;
}

std::pair<AxisTiling, AxisTiling> tile_image(int width, int height, const Kernel& kernel, Boundary b, TileCaps largest,
                                             const LengthModel& lengths) {
    return {tile_axis(width, kernel.weights.width, kernel.cx, b, largest.x, lengths, 0),
            tile_axis(height, kernel.weights.height, kernel.cy, b, largest.y, lengths, 1)};
}

void share_lengths(LengthModel& lengths, const std::vector<std::array<int, 2>>& sizes, const Kernel& kernel, Boundary b, int max_fft) {
    if (!lengths.programs_per_length) return;
    const int taps[2] = {kernel.weights.width, kernel.weights.height};
    for (int axis : {0, 1}) {
        std::vector<long long> needs;
        for (const std::array<int, 2>& s : sizes)
            if (s[0] >= 1 && s[1] >= 1 && !wraps_whole(s[axis], b, max_fft, lengths)) needs.push_back(axis_need(s[axis], taps[axis]));
        lengths.share(axis, std::move(needs), max_fft, kSharedLengthsWithin);
    }
}

int gpu_max_fft() {
    int side = max_texture_side(), p = 2;
    while (p * 2 <= side) p *= 2;
    return p;
}

Convolver::Convolver(ProgramCache& programs, Kernel kernel, ConvolveOptions options)
    : programs_(programs), kernel_(std::move(kernel)), options_(options) {
    if (options_.max_fft <= 0) options_.max_fft = gpu_max_fft();
    lengths_ = fft_lengths(options_.fft);
    if (!options_.measured_tiles) lengths_.tile_to = 0;
    lengths_.tabulate(kTabulatedLengths);  // each image's tiling asks thousands
}

void Convolver::share_lengths(const std::vector<std::array<int, 2>>& sizes) {
    gpufft::share_lengths(lengths_, sizes, kernel_, options_.boundary, options_.max_fft);
}

void Convolver::prepare_programs(const std::vector<std::array<int, 2>>& sizes) {
    std::set<std::pair<int, int>> grids;
    for (const std::array<int, 2>& s : sizes) {
        const auto [x, y] = tiling(s[0], s[1]);
        if (static_cast<long long>(x.fft) * y.fft <= kPreparedGridPixels) grids.insert({x.fft, y.fft});
    }
    // Each grid's transform made for the moment (its intermediates too) to name its programs.
    const bool real = point_symmetric(kernel_);
    std::vector<ProgramSpec> specs;
    for (const auto& [w, h] : grids) {
        const std::vector<ProgramSpec> some = make_fft(programs_, w, h, options_.fft)->filter_programs(real);
        specs.insert(specs.end(), some.begin(), some.end());
    }
    programs_.prepare(specs);
}

std::pair<AxisTiling, AxisTiling> Convolver::tiling(int width, int height, TileCaps caps) const {
    auto limit = [&](int cap) { return cap > 0 ? std::min(cap, options_.max_fft) : options_.max_fft; };
    return tile_image(width, height, kernel_, options_.boundary, {limit(caps.x), limit(caps.y)}, lengths_);
}

Convolver::Setup& Convolver::setup(const AxisTiling& x, const AxisTiling& y) {
    setup_ms_ = 0;
    for (auto it = setups_.begin(); it != setups_.end(); ++it)
        if (it->width == x.fft && it->height == y.fft) {
            setups_.splice(setups_.begin(), setups_, it);
            return setups_.front();
        }
    while (static_cast<int>(setups_.size()) >= std::max(1, options_.cached_sizes)) setups_.pop_back();
    const auto start = std::chrono::steady_clock::now();
    Setup s{x.fft, y.fft, make_fft(programs_, x.fft, y.fft, options_.fft), nullptr, Texture()};
    upload_impulse_response(kernel_, s.fft->input());
    s.filter = std::make_unique<Filter>(*s.fft, s.fft->input(), point_symmetric(kernel_));
    setups_.push_front(std::move(s));
    setup_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return setups_.front();
}

Image Convolver::apply(const Image& image, TileCaps caps) {
    const Boundary b = options_.boundary;
    const auto [tx, ty] = tiling(image.width, image.height, caps);
    Setup& s = setup(tx, ty);
    Fft2D& fft = *s.fft;

    Image out(image.width, image.height);
    std::vector<float> tile(static_cast<size_t>(tx.fft) * static_cast<size_t>(ty.fft) * 4);
    std::vector<float> result;
    std::vector<long long> column(static_cast<size_t>(tx.fft));
    last_ = Stats{0, tx.fft, ty.fft, 0, setup_ms_};
    GpuTimer timer;
    for (int by = 0; by < image.height; by += ty.block) {
        for (int bx = 0; bx < image.width; bx += tx.block) {
            for (int s = 0; s < tx.fft; ++s) column[static_cast<size_t>(s)] = boundary_index(bx - tx.lead + s, image.width, b);
            for (int r = 0; r < ty.fft; ++r) {
                long long iy = boundary_index(by - ty.lead + r, image.height, b);
                float* dst = &tile[static_cast<size_t>(r) * static_cast<size_t>(tx.fft) * 4];
                for (int s = 0; s < tx.fft; ++s, dst += 4) {
                    long long ix = column[static_cast<size_t>(s)];
                    if (iy < 0 || ix < 0) {
                        std::fill(dst, dst + 4, 0.0f);
                    } else {
                        const float* src = image.at(static_cast<int>(ix), static_cast<int>(iy));
                        std::copy(src, src + 4, dst);
                    }
                }
            }
            fft.input().upload(tile.data());
            timer.begin();
            s.filter->apply(fft.input(), fft.output());
            timer.end();
            result = fft.output().download();
            last_.gpu_ms += timer.milliseconds();
            ++last_.tiles;
            int rows = std::min(ty.block, image.height - by), cols = std::min(tx.block, image.width - bx);
            for (int q = 0; q < rows; ++q) {
                const float* src = &result[(static_cast<size_t>(q + ty.lead) * static_cast<size_t>(tx.fft) +
                                            static_cast<size_t>(tx.lead)) * 4];
                std::copy(src, src + static_cast<size_t>(cols) * 4, out.at(bx, by + q));
            }
        }
    }
    return out;
}

Convolver::Setup& Convolver::sample_setup(const AxisTiling& x, const AxisTiling& y) {
    Setup& s = setup(x, y);
    if (!s.grid.id()) s.grid = Texture(x.fft, y.fft, Storage::Float32);
    if (!io_) io_ = std::make_unique<SampleIo>(programs_);
    return s;
}

void Convolver::prepare(int width, int height, TileCaps caps) {
    const auto [tx, ty] = tiling(width, height, caps);
    sample_setup(tx, ty);
}

namespace {

void require_gpu_conversion(const SampleConversion& c, const char* who) {
    if (c.premultiply && (c.out_channels == 2 || c.out_channels == 4))
        throw std::logic_error(std::string(who) + ": premultiplied alpha is divided back on the CPU");
}

}  // namespace

void Convolver::filter_row_of_tiles(Setup& s, const AxisTiling& x, const AxisTiling& y, const SampleConversion& c, int width,
                                    int origin_y, int y0, int y1) {
    for (int bx = 0; bx < width; bx += x.block) {
        io_->unpack(c, options_.boundary, bx - x.lead, origin_y, s.grid);
        s.filter->apply(s.grid, s.fft->output());
        io_->pack(c, s.fft->output().texture(), x.lead, y.lead, Region{bx, y0, std::min(bx + x.block, width), y1});
        ++last_.tiles;
    }
}

void Convolver::submit(const Samples& in, const SampleConversion& conversion, TileCaps caps, const HostArea* from,
                       const HostArea* to) {
    require_gpu_conversion(conversion, "Convolver::submit");
    const auto [tx, ty] = tiling(in.width, in.height, caps);  // the blocks depend on the image, not only the grid
    Setup& s = sample_setup(tx, ty);
    last_ = Stats{0, tx.fft, ty.fft, 0, setup_ms_};
    io_->upload(in, from);
    for (int by = 0; by < in.height; by += ty.block)
        filter_row_of_tiles(s, tx, ty, conversion, in.width, by - ty.lead, by, std::min(by + ty.block, in.height));
    io_->read_back(conversion, to);
}

void Convolver::submit_strip(const std::vector<const unsigned char*>& rows, int origin, int first, int count, int width,
                             int height, const SampleConversion& conversion, TileCaps caps) {
    require_gpu_conversion(conversion, "Convolver::submit_strip");
    const auto [tx, ty] = tiling(width, height, caps);
    if (static_cast<int>(rows.size()) != ty.fft || origin != first - ty.lead)
        throw std::logic_error("Convolver::submit_strip: rows are not a strip of this tiling");
    Setup& s = sample_setup(tx, ty);
    last_ = Stats{0, tx.fft, ty.fft, 0, setup_ms_};
    io_->upload_rows(rows, width, conversion.in_channels, conversion.in_depth, height, origin, count);
    filter_row_of_tiles(s, tx, ty, conversion, width, origin, 0, count);  // the strip's rows, from 0 in its output
    io_->read_back(conversion);
}

Samples Convolver::collect(double* gpu_ms, std::vector<unsigned char>&& storage, DeflatedRows* deflated) {
    if (!io_) throw std::logic_error("Convolver::collect: nothing submitted");
    return io_->collect(gpu_ms, std::move(storage), deflated);
}

}  // namespace gpufft
