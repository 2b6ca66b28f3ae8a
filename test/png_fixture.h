// A PNG encoder written from the specification with zlib alone (no libpng), so the project's
// libpng-based reader is tested against an independent writer; and the chunk writer for crafting
// broken files.
#pragma once

#include <zlib.h>

#include <array>
#include <cstdlib>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace fixture {

using Bytes = std::vector<uint8_t>;

inline void put32(Bytes& out, uint32_t v) {
    for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<uint8_t>(v >> s));
}

/// Appends a chunk: length, type, data, CRC of type + data.
inline void chunk(Bytes& out, const char* type, const Bytes& data) {
    put32(out, static_cast<uint32_t>(data.size()));
    Bytes body(type, type + 4);
    body.insert(body.end(), data.begin(), data.end());
    out.insert(out.end(), body.begin(), body.end());
    put32(out, static_cast<uint32_t>(crc32(0, body.data(), static_cast<uInt>(body.size()))));
}

inline Bytes signature() { return {137, 80, 78, 71, 13, 10, 26, 10}; }

inline Bytes ihdr(uint32_t width, uint32_t height, int depth, int color_type, bool interlace) {
    Bytes d;
    put32(d, width);
    put32(d, height);
    d.insert(d.end(), {static_cast<uint8_t>(depth), static_cast<uint8_t>(color_type), 0, 0, static_cast<uint8_t>(interlace)});
    return d;
}

/// An image as PNG stores it: samples per pixel (palette: one index), before packing.
struct RawPng {
    int width = 0, height = 0, color_type = 0, depth = 8;
    bool interlace = false;
    std::vector<uint16_t> samples;                 // width * height * channels()
    std::vector<std::array<uint8_t, 3>> palette;   // PLTE
    std::vector<uint8_t> trns_alpha;               // tRNS for palettes
    int trns_grey = -1;                            // tRNS for grey
    std::array<int, 3> trns_rgb = {-1, -1, -1};    // tRNS for RGB

    int channels() const { return color_type == 0 || color_type == 3 ? 1 : color_type == 4 ? 2 : color_type == 2 ? 3 : 4; }
    uint16_t sample(int x, int y, int c) const { return samples[(static_cast<size_t>(y) * width + x) * channels() + c]; }

    /// The RGBA floats the image means: samples / (2^depth - 1), palette entries / 255.
    std::array<float, 4> expected(int x, int y) const {
        const float max = static_cast<float>((1 << depth) - 1);
        auto f = [&](int c) { return static_cast<float>(sample(x, y, c)) / max; };
        switch (color_type) {
            case 0: {
                float alpha = trns_grey == sample(x, y, 0) ? 0.0f : 1.0f;
                return {f(0), f(0), f(0), alpha};
            }
            case 4: return {f(0), f(0), f(0), f(1)};
            case 2: {
                bool clear = trns_rgb[0] == sample(x, y, 0) && trns_rgb[1] == sample(x, y, 1) && trns_rgb[2] == sample(x, y, 2);
                return {f(0), f(1), f(2), clear ? 0.0f : 1.0f};
            }
            case 6: return {f(0), f(1), f(2), f(3)};
            default: {
                uint16_t i = sample(x, y, 0);
                float a = i < trns_alpha.size() ? trns_alpha[i] / 255.0f : 1.0f;
                return {palette[i][0] / 255.0f, palette[i][1] / 255.0f, palette[i][2] / 255.0f, a};
            }
        }
    }
};

/// Packs pixels [x0, x1) step dx of row y with filter type 0 (none).
inline void pack_row(const RawPng& p, int y, int x0, int dx, Bytes& out) {
    out.push_back(0);
    int bits = 0, acc = 0;
    for (int x = x0; x < p.width; x += dx)
        for (int c = 0; c < p.channels(); ++c) {
            uint16_t v = p.sample(x, y, c);
            if (p.depth == 16) {
                out.push_back(static_cast<uint8_t>(v >> 8));
                out.push_back(static_cast<uint8_t>(v));
            } else if (p.depth == 8) {
                out.push_back(static_cast<uint8_t>(v));
            } else {
                acc = (acc << p.depth) | v;
                bits += p.depth;
                if (bits == 8) {
                    out.push_back(static_cast<uint8_t>(acc));
                    bits = acc = 0;
                }
            }
        }
    if (bits) out.push_back(static_cast<uint8_t>(acc << (8 - bits)));
}

/// The filtered scanlines (all Adam7 passes when interlaced), uncompressed.
inline Bytes scanlines(const RawPng& p) {
    Bytes raw;
    if (!p.interlace) {
        for (int y = 0; y < p.height; ++y) pack_row(p, y, 0, 1, raw);
        return raw;
    }
    const int pass[7][4] = {{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4}, {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}};
    for (auto& q : pass)
        if (q[0] < p.width)  // a pass with no columns has no rows either
            for (int y = q[1]; y < p.height; y += q[3]) pack_row(p, y, q[0], q[2], raw);
    return raw;
}

/// The scanlines of a non-interlaced image of 8 or 16 bits with row y filtered by type
/// types[(y + first) % types.size()] (0 none, 1 Sub, 2 Up, 3 Average, 4 Paeth), as the
/// specification defines them; by default every type in turn.
inline Bytes filtered_scanlines(const RawPng& p, int first, const std::vector<int>& types = {0, 1, 2, 3, 4}) {
    const size_t bpp = static_cast<size_t>(p.channels() * p.depth / 8);
    Bytes raw, prev, cur;
    for (int y = 0; y < p.height; ++y) {
        cur.clear();
        pack_row(p, y, 0, 1, cur);
        cur.erase(cur.begin());  // pack_row's filter byte
        if (prev.empty()) prev.assign(cur.size(), 0);
        const int type = types[static_cast<size_t>(y + first) % types.size()];
        raw.push_back(static_cast<uint8_t>(type));
        for (size_t i = 0; i < cur.size(); ++i) {
            const int a = i >= bpp ? cur[i - bpp] : 0, b = prev[i], c = i >= bpp ? prev[i - bpp] : 0;
            int predictor = 0;
            if (type == 1) predictor = a;
            if (type == 2) predictor = b;
            if (type == 3) predictor = (a + b) / 2;
            if (type == 4) {
                const int q = a + b - c, pa = std::abs(q - a), pb = std::abs(q - b), pc = std::abs(q - c);
                predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
            }
            raw.push_back(static_cast<uint8_t>(cur[i] - predictor));
        }
        prev = cur;
    }
    return raw;
}

inline Bytes zlib_compress(const Bytes& raw) {
    uLongf size = compressBound(static_cast<uLong>(raw.size()));
    Bytes z(size);
    compress2(z.data(), &size, raw.data(), static_cast<uLong>(raw.size()), 6);
    z.resize(size);
    return z;
}

inline Bytes encode(const RawPng& p) {
    Bytes out = signature();
    chunk(out, "IHDR", ihdr(static_cast<uint32_t>(p.width), static_cast<uint32_t>(p.height), p.depth, p.color_type, p.interlace));
    if (p.color_type == 3) {
        Bytes plte;
        for (auto& c : p.palette) plte.insert(plte.end(), c.begin(), c.end());
        chunk(out, "PLTE", plte);
        if (!p.trns_alpha.empty()) chunk(out, "tRNS", p.trns_alpha);
    }
    if (p.trns_grey >= 0) chunk(out, "tRNS", {static_cast<uint8_t>(p.trns_grey >> 8), static_cast<uint8_t>(p.trns_grey)});
    if (p.trns_rgb[0] >= 0) {
        Bytes t;
        for (int v : p.trns_rgb) t.insert(t.end(), {static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v)});
        chunk(out, "tRNS", t);
    }
    chunk(out, "IDAT", zlib_compress(scanlines(p)));
    chunk(out, "IEND", {});
    return out;
}

/// A random image of the given type; tRNS entries are chosen so that some pixels hit them.
inline RawPng random_png(int width, int height, int color_type, int depth, bool interlace, bool trns, unsigned seed) {
    RawPng p;
    p.width = width;
    p.height = height;
    p.color_type = color_type;
    p.depth = depth;
    p.interlace = interlace;
    std::mt19937 rng(seed);
    const int max = color_type == 3 ? (1 << depth) - 1 : (1 << depth) - 1;
    if (color_type == 3) {
        for (int i = 0; i <= max; ++i)
            p.palette.push_back({static_cast<uint8_t>(rng()), static_cast<uint8_t>(rng()), static_cast<uint8_t>(rng())});
        if (trns)
            for (int i = 0; i <= max / 2; ++i) p.trns_alpha.push_back(static_cast<uint8_t>(rng()));
    }
    p.samples.resize(static_cast<size_t>(width) * height * p.channels());
    for (auto& s : p.samples) s = static_cast<uint16_t>(rng() % (max + 1));
    if (trns && color_type == 0) p.trns_grey = p.samples[0];
    if (trns && color_type == 2) p.trns_rgb = {p.samples[0], p.samples[1], p.samples[2]};
    return p;
}

inline bool write_file(const std::string& path, const Bytes& bytes) {
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) return false;
    bool ok = bytes.empty() || std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    return std::fclose(f) == 0 && ok;
}

}  // namespace fixture
