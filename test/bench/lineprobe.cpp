// lineprobe: what the memory system gives each line dispatch's access pattern, apart from its
// arithmetic. Times test/bench/lineprobe.comp (loads then stores of the texels a dispatch of
// fft_line.comp touches, the same lanes, workgroups and order, nothing computed) on a square
// RGBA32F texture, with GL timer queries, and prints each pattern's GB/s against the chip's peak.
// Usage:
//   lineprobe SIZE [PEAK_GB/S] [PATTERN ...]
// A PATTERN is NAME:key=value,... with keys axis (rows|columns), len (elements a sub-line),
// stride, step (sub-line spacing), subs (sub-lines a line), lines (a workgroup's), pairs
// (neighbouring lines among them), elems (a thread's), order (0: workgroups along lines first,
// 1: along sub-lines), mirror (0|1: also the mirror column M - x or row y + N/2), count (lines
// across the axis), buffer (1: linear storage buffers instead of the textures; bin and bout: the
// source's and the target's alone), tw and th (with
// buffer=1: the buffers in tiles of tw x th texels, each tile's rows one after another), shared (an
// occupancy of that many KB of shared memory a workgroup), il (K > 1: the textures interleaved, texel
// (x, y) at (x / K, y K + x % K) of a SIZE / K x SIZE K texture; ilin and ilout: the source's and
// the target's alone), aligned (1: columns from 0, mirrored at SIZE - 1 - x), tin and tout (1: the
// source or the target holds texel (x, y) at (y, x)), fmt (4: RGBA32F; 2: RG32F, a complex
// channel a texel; 1: R32F, the texels of planar intermediates, one texture a channel or channel
// pair). Without patterns: the four-step, whole-line and channel-row patterns of SIZE, and whole
// rows and columns of RG32F.
#include "app/cli.h"
#include "base/parse.h"
#include "gl/buffer.h"
#include "gl/context.h"
#include "gl/program.h"
#include "gl/texture.h"
#include "probes.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace gpufft;

namespace {

struct Pattern {
    std::string name, text;  // text: the whole NAME:key=value,... as given
    std::map<std::string, int> v;  // axis: 0 rows, 1 columns
};

Pattern parse_pattern(const std::string& text, int size) {
    Pattern p;
    const size_t colon = text.find(':');
    if (colon == std::string::npos) throw UsageError("pattern '" + text + "': NAME:key=value,... expected");
    p.name = text.substr(0, colon);
    p.text = text;
    p.v = {{"axis", 1}, {"len", size}, {"stride", 1}, {"step", size}, {"subs", 1}, {"lines", 1}, {"pairs", 1},
           {"elems", 4}, {"order", 1}, {"mirror", 1}, {"count", -1}, {"buffer", 0}, {"bin", -1}, {"bout", -1}, {"tw", 0}, {"th", 0}, {"shared", 0}, {"il", 1}, {"ilin", 0}, {"ilout", 0}, {"aligned", 0}, {"tin", 0}, {"tout", 0}, {"fmt", 4}};
    std::stringstream items(text.substr(colon + 1));
    std::string item;
    while (std::getline(items, item, ',')) {
        const size_t eq = item.find('=');
        const std::string key = item.substr(0, eq);
        if (eq == std::string::npos || !p.v.count(key)) throw UsageError("pattern '" + text + "': unknown item '" + item + "'");
        const std::string value = item.substr(eq + 1);
        p.v[key] = key == "axis" ? (value == "rows" ? 0 : value == "columns" ? 1 : throw UsageError("axis: rows or columns"))
                                 : parse_int(value, key.c_str(), 0, 1 << 20);
    }
    for (const char* key : {"bin", "bout"})
        if (p.v[key] < 0) p.v[key] = p.v["buffer"];
    p.v["buffer"] = p.v["bin"] || p.v["bout"];
    if ((p.v["tw"] > 0) != (p.v["th"] > 0) || (p.v["tw"] > 0 && (!p.v["bin"] || !p.v["bout"] || size % p.v["tw"] || size % p.v["th"])))
        throw UsageError("pattern '" + text + "': tw and th together, with buffer=1, each dividing the size");
    for (const char* key : {"ilin", "ilout"})
        if (!p.v[key]) p.v[key] = p.v["il"];
    for (const char* key : {"ilin", "ilout"})
        if (p.v[key] < 1 || size % p.v[key] || (p.v[key] > 1 && p.v["buffer"]))
            throw UsageError("pattern '" + text + "': il, ilin and ilout dividing the size, without buffer=1");
    if ((p.v["fmt"] != 4 && p.v["fmt"] != 2 && p.v["fmt"] != 1) || (p.v["fmt"] != 4 && p.v["buffer"]))
        throw UsageError("pattern '" + text + "': fmt 4, 2 or 1, and 4 with buffer=1");
    if (p.v["count"] < 0) p.v["count"] = p.v["axis"] ? size / 2 - 1 + p.v["aligned"] : (p.v["mirror"] ? size / 2 : size);
    return p;
}

std::vector<std::string> default_patterns(int size) {
    const std::string mirrored_rows = "axis=rows,mirror=1";
    std::vector<std::string> out;
    if (size > 4096) {
        // The classic four-step split's steps at F = size: sub-lines of 128 (16384) or 128 / 64.
        const int l2 = size == 16384 ? 128 : 64, l1 = size / l2;
        const std::string a = "len=" + std::to_string(l1) + ",stride=" + std::to_string(l2) + ",step=1,subs=" + std::to_string(l2);
        const std::string b = "len=" + std::to_string(l2) + ",stride=1,step=" + std::to_string(l2) + ",subs=" + std::to_string(l1);
        const int threads_a = l1 / 4;
        for (int lines : {16, 32})
            for (int pairs : {1, 2, 4, 8, 16})
                if (lines * threads_a <= 1024)
                    out.push_back("colA_g" + std::to_string(lines) + "c" + std::to_string(pairs) + ":" + a + ",lines=" + std::to_string(lines) +
                                  ",pairs=" + std::to_string(pairs));
        out.push_back("colA_g16c1_o0:" + a + ",lines=16,order=0");
        out.push_back("colA_g16c16_o0:" + a + ",lines=16,pairs=16,order=0");
        for (int pairs : {1, 2, 4, 8})
            out.push_back("colB_g16c" + std::to_string(pairs) + ":" + b + ",lines=16,pairs=" + std::to_string(pairs));
        out.push_back("rowA_g4:" + mirrored_rows + "," + a + ",lines=4");
        out.push_back("rowB_g4:" + mirrored_rows + "," + b + ",lines=4");
    }
    // Whole lines of 4096 texels: channel-pair rows (a texel an element, one or two rows a
    // workgroup) and column pairs (two texels an element).
    const int whole = std::min(size, 8192), per_thread = std::max(whole / 1024, 1);
    for (int lines : {1, 2})
        out.push_back("rowCh" + std::to_string(whole) + "_g" + std::to_string(lines) + ":axis=rows,mirror=0,len=" + std::to_string(whole) +
                      ",lines=" + std::to_string(lines) + ",elems=" + std::to_string(per_thread * lines));
    out.push_back("col" + std::to_string(whole) + "_g1:len=" + std::to_string(whole) + ",lines=1,elems=" + std::to_string(per_thread));
    // Planar intermediates: a complex channel a texel (RG32F), a fourth of an RGBA line's
    // registers, so that a workgroup may hold several rows or columns side by side (at most 32
    // elements a thread, 1024 threads a workgroup).
    for (int lines : {1, 2, 4, 8}) {
        const int threads = std::min(1024 / lines, whole), elems = whole / threads;
        if (elems > 32) continue;
        const std::string g = std::to_string(lines), shape = ",len=" + std::to_string(whole) + ",lines=" + g + ",elems=" + std::to_string(elems);
        out.push_back("rowRG" + std::to_string(whole) + "_g" + g + ":fmt=2,axis=rows,mirror=0" + shape);
        out.push_back("colRG" + std::to_string(whole) + "_g" + g + ":fmt=2,mirror=0,count=" + std::to_string(size - 1) + ",pairs=" + g + shape);
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const int size = argc > 1 ? parse_int(argv[1], "size", 256, 16384) : 4096;
        const double peak = argc > 2 ? parse_double(argv[2], "peak", 1, 1e5) : 3350;
        std::vector<std::string> texts(argv + std::min(argc, 3), argv + argc);
        if (texts.empty()) texts = default_patterns(size);
        std::vector<Pattern> patterns;
        for (const std::string& text : texts) patterns.push_back(parse_pattern(text, size));
        bench::add_probe_programs();
        HeadlessContext context;
        ProgramCache programs;
        std::printf("lineprobe on %s: %dx%d RGBA32F (fmt=2: RG32F, fmt=1: R32F), median of timer queries, GB/s against %.0f\n", describe_gl().c_str(), size, size, peak);
        // One pair of textures per interleave the patterns ask for (il: SIZE / K x SIZE K).
        std::map<int, std::pair<Texture, RenderTarget>> textures;
        for (Pattern& p : patterns)
            for (int k : {p.v["ilin"], p.v["ilout"]})
                if (!textures.count(k)) textures.try_emplace(k, Texture(size / k, size * k), RenderTarget(size / k, size * k));
        // Every texel distinct, so that a check (sizes up to 1024) sees each pattern copy what its
        // bytes count, each texel once.
        std::vector<float> texels(static_cast<size_t>(size) * size * 4);
        for (size_t k = 0; k < texels.size(); ++k) texels[k] = static_cast<float>(k / 4 + 1);
        for (auto& [k, pair] : textures) pair.first.upload(texels.data());
        // RG32F and R32F textures (fmt 2 and 1), a source and a target each, the same texels' first
        // floats.
        std::map<int, std::pair<TextureHandle, TextureHandle>> narrow;
        auto narrow_texels = [&](int fmt) {
            std::vector<float> out(static_cast<size_t>(size) * size * fmt);
            for (size_t k = 0; k < out.size(); ++k) out[k] = texels[k / fmt * 4 + k % fmt];
            return out;
        };
        for (Pattern& p : patterns) {
            const int fmt = p.v["fmt"];
            if (fmt == 4 || narrow.count(fmt)) continue;
            if (p.v["ilin"] != 1 || p.v["ilout"] != 1) throw UsageError("pattern '" + p.text + "': fmt 2 and 1 without interleaving");
            narrow[fmt] = {bench::narrow_texture(size, size, fmt, narrow_texels(fmt).data()), bench::narrow_texture(size, size, fmt)};
        }
        // The same texels in linear storage buffers, where a pattern asks for them (buffer=1) and
        // the GL's largest storage block holds a whole texture.
        const bool wanted = std::any_of(patterns.begin(), patterns.end(), [](Pattern& p) { return p.v["buffer"] != 0; });
        const size_t bytes_all = texels.size() * sizeof(float);
        GLint64 max_block = 0;
        glGetInteger64v(GL_MAX_SHADER_STORAGE_BLOCK_SIZE, &max_block);
        StorageBuffer src_buffer, dst_buffer;
        const bool buffers = wanted && static_cast<GLint64>(bytes_all) <= max_block;
        if (buffers) {
            src_buffer = StorageBuffer(texels.data(), bytes_all);
            dst_buffer.reserve(bytes_all, "target buffer");
        }
        std::printf("%-18s %9s %9s %8s %6s  pattern\n", "name", "us", "MB", "GB/s", "peak");
        for (Pattern& p : patterns) {
            auto& v = p.v;
            const std::string& text = p.text;
            const int threads = v["len"] / v["elems"];
            if (threads * v["elems"] != v["len"] || threads * v["lines"] > 1024 || v["lines"] % v["pairs"])
                throw UsageError("pattern '" + text + "': len / elems threads a line, at most 1024 a workgroup, pairs dividing lines");
            const std::vector<std::string> defines = {
                "COLUMNS " + std::to_string(v["axis"]), "WIDTH " + std::to_string(size), "HEIGHT " + std::to_string(size),
                "AXIS_LINES " + std::to_string(v["count"]), "SUBLINES " + std::to_string(v["subs"]), "SUB_STEP " + std::to_string(v["step"]),
                "STRIDE " + std::to_string(v["stride"]), "LINES " + std::to_string(v["lines"]), "PAIRS " + std::to_string(v["pairs"]),
                "THREADS " + std::to_string(threads), "ELEMENTS " + std::to_string(v["elems"]), "ORDER " + std::to_string(v["order"]),
                "MIRROR " + std::to_string(v["mirror"]), "GROUP_SIZE " + std::to_string(threads * v["lines"]),
                "BUFFER_SRC " + std::to_string(v["bin"]), "BUFFER_DST " + std::to_string(v["bout"]), "TILE_W " + std::to_string(v["tw"]), "TILE_H " + std::to_string(v["th"]), "SHARED_VEC4S " + std::to_string(v["shared"] * 64),
                "INTERLEAVE_SRC " + std::to_string(v["ilin"]),
                "INTERLEAVE_DST " + std::to_string(v["ilout"]), "ALIGNED " + std::to_string(v["aligned"]),
                "TRANSPOSE_SRC " + std::to_string(v["tin"]), "TRANSPOSE_DST " + std::to_string(v["tout"]), "FORMAT " + std::to_string(v["fmt"])};
            const GlProgram& prog = programs.get({"", "lineprobe.comp", defines, false});
            const long long line_blocks = (v["count"] + v["pairs"] - 1) / v["pairs"];
            const int per_group = v["lines"] / v["pairs"];
            const long long groups = line_blocks * ((v["subs"] + per_group - 1) / per_group);
            if (v["buffer"] && !buffers) {
                std::printf("%-18s skipped: %zu bytes, the GL's largest storage block %lld\n", p.name.c_str(), bytes_all, static_cast<long long>(max_block));
                continue;
            }
            const int fmt = v["fmt"];
            const GLuint src = fmt == 4 ? textures.at(v["ilin"]).first.id() : narrow.at(fmt).first.get();
            const GLuint dst = fmt == 4 ? textures.at(v["ilout"]).second.texture().id() : narrow.at(fmt).second.get();
            prog.use();
            glActiveTexture(GL_TEXTURE0);
            glBindTexture(GL_TEXTURE_RECTANGLE, src);
            glBindImageTexture(0, dst, 0, GL_FALSE, 0, GL_WRITE_ONLY, fmt == 4 ? GL_RGBA32F : fmt == 2 ? GL_RG32F : GL_R32F);
            if (buffers) {
                src_buffer.bind(0);
                dst_buffer.bind(1);
            }
            auto dispatch = [&] {
                glDispatchCompute(static_cast<GLuint>(groups), 1, 1);
                glMemoryBarrier(GL_TEXTURE_FETCH_BARRIER_BIT | GL_SHADER_IMAGE_ACCESS_BARRIER_BIT | GL_SHADER_STORAGE_BARRIER_BIT);
            };
            if (fmt == 4) textures.at(v["ilout"]).second.texture().clear();
            else glClearTexImage(dst, 0, bench::narrow_format(fmt), GL_FLOAT, nullptr);
            if (v["bout"]) {
                const std::vector<float> zeros(texels.size(), 0.0f);
                dst_buffer.write(zeros.data(), bytes_all);
            }
            dispatch();
            const double elements = (v["mirror"] + 1) * double(v["count"]) * v["subs"] * v["len"];
            if (size <= 1024 && v["ilin"] == v["ilout"] && v["tin"] == v["tout"]) {
                std::vector<float> out = fmt == 4 ? textures.at(v["ilout"]).second.download() : bench::download_narrow(dst, size, size, fmt);
                const std::vector<float> in = fmt == 4 ? texels : narrow_texels(fmt);
                if (v["bout"]) dst_buffer.read(out.data(), bytes_all);
                long long copied = 0;
                for (size_t k = 0; k < out.size(); k += fmt) {
                    if (out[k] == 0) continue;
                    if (out[k] != in[k]) throw GlError(p.name + ": texel " + std::to_string(k / fmt) + " stored in the wrong place");
                    ++copied;
                }
                if (copied != static_cast<long long>(elements))
                    throw GlError(p.name + ": " + std::to_string(copied) + " texels copied, " + std::to_string(static_cast<long long>(elements)) + " counted");
            }
            const double t = bench::time_us(dispatch, 5);
            check_gl(p.name.c_str());
            const double bytes = 2.0 * 4 * fmt * elements;
            std::printf("%-18s %9.1f %9.1f %8.0f %5.0f%%  %s\n", p.name.c_str(), t, bytes * 1e-6, bytes / t * 1e-3, bytes / t * 1e-3 / peak * 100,
                        text.substr(text.find(':') + 1).c_str());
        }
        return kExitOk;
    } catch (const std::exception& e) {
        return report("lineprobe", e.what(), kExitFailed);
    }
}
