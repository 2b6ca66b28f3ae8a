// The fuzzers' seed corpus, made by the project (no downloaded files): every PNG colour type and
// bit depth, interlaced or not, with and without tRNS, with colour metadata chunks; truncated
// copies and copies with broken CRCs and broken zlib data; and kernel specs of every kind. Written
// to files by make_corpus.cpp for `make fuzz`, replayed in memory by test/test_fuzz_inputs.cpp.
#pragma once

#include "../png_fixture.h"

#include <string>
#include <utility>
#include <vector>

namespace fuzz {

using Seed = std::pair<std::string, fixture::Bytes>;  // a file name and its bytes

inline fixture::Bytes with_chunk_after_ihdr(const fixture::Bytes& png, const char* type, const fixture::Bytes& data) {
    fixture::Bytes out(png.begin(), png.begin() + 33);  // signature (8) + IHDR (25)
    fixture::chunk(out, type, data);
    out.insert(out.end(), png.begin() + 33, png.end());
    return out;
}

inline uint32_t chunk_length(const fixture::Bytes& png, size_t at) {
    return (uint32_t(png[at]) << 24) | (uint32_t(png[at + 1]) << 16) | (uint32_t(png[at + 2]) << 8) | png[at + 3];
}

/// Where the first chunk of this type starts (its length field).
inline size_t chunk_offset(const fixture::Bytes& png, const char* type) {
    size_t at = 8;
    while (at + 8 <= png.size() && std::string(png.begin() + at + 4, png.begin() + at + 8) != type)
        at += 12 + chunk_length(png, at);
    return at;
}

inline std::vector<Seed> png_seeds() {
    std::vector<Seed> seeds;
    const std::vector<std::pair<int, std::vector<int>>> types = {
        {0, {1, 2, 4, 8, 16}}, {2, {8, 16}}, {3, {1, 2, 4, 8}}, {4, {8, 16}}, {6, {8, 16}}};
    unsigned seed = 1;
    for (const auto& [type, depths] : types)
        for (int depth : depths)
            for (bool interlace : {false, true})
                for (bool trns : {false, true}) {
                    if (trns && (type == 4 || type == 6)) continue;
                    fixture::Bytes png = fixture::encode(fixture::random_png(7, 5, type, depth, interlace, trns, seed++));
                    std::string name = "type" + std::to_string(type) + "-" + std::to_string(depth) + "bit" +
                                       (interlace ? "-adam7" : "") + (trns ? "-trns" : "");
                    seeds.push_back({name + ".png", png});
                    if (type == 2 && depth == 8 && !interlace && !trns) {
                        // Colour metadata: gAMA, sRGB, pHYs, and an iCCP with a tiny (invalid) profile.
                        seeds.push_back({name + "-gama.png", with_chunk_after_ihdr(png, "gAMA", {0, 0, 0xb1, 0x8f})});
                        seeds.push_back({name + "-srgb.png", with_chunk_after_ihdr(png, "sRGB", {0})});
                        seeds.push_back({name + "-phys.png", with_chunk_after_ihdr(png, "pHYs", {0, 0, 0x0b, 0x13, 0, 0, 0x0b, 0x13, 1})});
                        fixture::Bytes iccp = {'x', 0, 0};
                        fixture::Bytes profile = fixture::zlib_compress(fixture::Bytes(132, 0));
                        iccp.insert(iccp.end(), profile.begin(), profile.end());
                        seeds.push_back({name + "-iccp.png", with_chunk_after_ihdr(png, "iCCP", iccp)});
                        // What outputs copy besides: text of each kind, cHRM, eXIf, a private chunk
                        // safe to copy and one that is not.
                        fixture::Bytes meta = with_chunk_after_ihdr(png, "tEXt", {'T', 'i', 't', 'l', 'e', 0, 'a'});
                        fixture::Bytes ztxt = {'C', 0, 0};
                        const fixture::Bytes comment = fixture::zlib_compress({'c', 'o', 'm', 'm', 'e', 'n', 't'});
                        ztxt.insert(ztxt.end(), comment.begin(), comment.end());
                        meta = with_chunk_after_ihdr(meta, "zTXt", ztxt);
                        meta = with_chunk_after_ihdr(meta, "iTXt", {'A', 0, 0, 0, 'e', 'n', 0, 'a', 0, 'Z', 'o', 0xc3, 0xab});
                        meta = with_chunk_after_ihdr(meta, "eXIf", {'M', 'M', 0, 42, 0, 0, 0, 8, 0, 0});
                        fixture::Bytes chrm;
                        for (uint32_t v : {31270u, 32900u, 64000u, 33000u, 30000u, 60000u, 15000u, 6000u}) fixture::put32(chrm, v);
                        meta = with_chunk_after_ihdr(meta, "cHRM", chrm);
                        meta = with_chunk_after_ihdr(meta, "prVt", {1, 2, 3});
                        seeds.push_back({name + "-metadata.png", with_chunk_after_ihdr(meta, "prVT", {4})});
                    }
                    if (depth == 8 && !trns) {
                        // Truncated inside IDAT and just before IEND; a broken CRC; broken zlib data.
                        seeds.push_back({name + "-cut-idat.png", fixture::Bytes(png.begin(), png.begin() + png.size() * 2 / 3)});
                        seeds.push_back({name + "-cut-iend.png", fixture::Bytes(png.begin(), png.end() - 12)});
                        fixture::Bytes crc = png;
                        crc[png.size() - 16] ^= 0x01;  // a byte of the IDAT chunk's CRC
                        seeds.push_back({name + "-crc.png", crc});
                        // Damage inside the deflate stream, then rebuild the IDAT chunk with a
                        // correct CRC, so that zlib (not the CRC check) finds the problem.
                        size_t idat = chunk_offset(png, "IDAT");
                        fixture::Bytes data(png.begin() + idat + 8, png.begin() + idat + 8 + chunk_length(png, idat));
                        data[2] |= 0x06;  // the first deflate block's type: 3, which is reserved
                        fixture::Bytes fixed(png.begin(), png.begin() + idat);
                        fixture::chunk(fixed, "IDAT", data);
                        fixture::chunk(fixed, "IEND", {});
                        seeds.push_back({name + "-zlib.png", fixed});
                    }
                }
    // Rows under every filter type (the readers' own unfiltering), the data over two IDAT chunks
    // and a tEXt after them.
    for (const auto& [type, depths] : types) {
        if (type == 3) continue;
        for (int depth : depths) {
            if (depth < 8) continue;
            const fixture::RawPng p = fixture::random_png(7, 5, type, depth, false, false, seed++);
            const fixture::Bytes z = fixture::zlib_compress(fixture::filtered_scanlines(p, type));
            fixture::Bytes png = fixture::signature();
            fixture::chunk(png, "IHDR", fixture::ihdr(7, 5, depth, type, false));
            fixture::chunk(png, "IDAT", fixture::Bytes(z.begin(), z.begin() + static_cast<long>(z.size() / 2)));
            fixture::chunk(png, "IDAT", fixture::Bytes(z.begin() + static_cast<long>(z.size() / 2), z.end()));
            fixture::chunk(png, "tEXt", {'a', 0, 'b'});
            fixture::chunk(png, "IEND", {});
            seeds.push_back({"type" + std::to_string(type) + "-" + std::to_string(depth) + "bit-filters.png", png});
        }
    }
    // Headers that lie: huge dimensions, zero width, a bad colour type / depth pair.
    auto header_only = [](uint32_t w, uint32_t h, int depth, int type) {
        fixture::Bytes out = fixture::signature();
        fixture::chunk(out, "IHDR", fixture::ihdr(w, h, depth, type, false));
        fixture::chunk(out, "IDAT", fixture::zlib_compress(fixture::Bytes(64, 0)));
        fixture::chunk(out, "IEND", {});
        return out;
    };
    seeds.push_back({"huge.png", header_only(1000000, 1000000, 8, 6)});
    seeds.push_back({"zero-width.png", header_only(0, 5, 8, 2)});
    seeds.push_back({"bad-depth.png", header_only(4, 4, 3, 2)});
    seeds.push_back({"signature-only.png", fixture::signature()});
    seeds.push_back({"not-a-png.png", fixture::Bytes{'h', 'e', 'l', 'l', 'o', '\n'}});
    return seeds;
}

inline std::vector<Seed> kernel_seeds() {
    std::vector<Seed> seeds;
    int i = 0;
    for (const char* spec : {"identity", "gaussian:2", "gaussian:0.5", "box:3", "box:5x9", "disk:4", "motion:9",
                             "motion:15,30", "laplacian", "sharpen:1.5", "lowpass:0.1", "highpass:0.05", "gaussian:",
                             "box:0x0", "disk:-1", "motion:1e9,nan", "lowpass:inf", "gaussian:1e-300"}) {
        std::string s = spec;
        seeds.push_back({"spec" + std::to_string(i++) + ".txt", fixture::Bytes(s.begin(), s.end())});
    }
    return seeds;
}

}  // namespace fuzz
