// fftfilter: batch filtering of PNG files: decoding and encoding on worker threads, the filter on
// the GPU (samples converted, padded and packed there) or through FFTW on the workers.
#include "app/batch.h"
#include "app/cli.h"
#include "app/options.h"
#include "app/resources.h"
#include "base/core_pool.h"
#include "gl/program.h"
#include "image/colour.h"
#include "image/convolve.h"
#include "image/convolve_fftw.h"
#include "image/files.h"
#include "image/kernels.h"
#include "image/png_io.h"
#include "image/spectral.h"
#include "image/strips.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <future>
#include <iostream>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

using namespace gpufft;

namespace {

const char* kTool = "fftfilter";

// Level 4: rows filtered by Paeth, then coded by runs and Huffman codes where a sample of them says
// that is no larger, else compressed by libdeflate's level 4 (png_io.cpp, deflate.h). Measured
// (README, "Batch throughput") on the bundled images filtered by gaussian:8 and disk:30: 4.4-4.8x
// faster to encode than libpng's default (zlib level 6, every filter tried per row), files 2.5%
// larger; on 2048x2048 photograph-like images 6% smaller than libdeflate's level 4 alone, and
// 2.3x faster to encode in a batch on the H200 machine.
constexpr int kDefaultCompression = 4;

// The smallest tiles a GPU allocation failure retries down to, and the longest tile side strips
// take on each kind of backend (the sizes they run well at: README, "Images larger than memory").
constexpr int kSmallestRetryTile = 64;
constexpr int kStripTileGl = 4096, kStripTileFftw = 2048;
// Rows of tiles from which a file filtered alone on the GPU streams (FilterBatch::streams_alone).
constexpr int kStreamAloneStrips = 4;
// FFTW's transforms take any image whole.
constexpr int kMaxFftwSide = 1 << 24;

enum class StreamMode { Auto, Always, Never };

struct Options {
    std::string kernel = "gaussian:2";
    std::string output;
    Boundary boundary = Boundary::Reflect;
    bool spectrum = false;
    std::string synth;
    bool force = false;
    bool skip_existing = false;  // leave the inputs whose output exists (a batch resumed)
    bool update = false;  // leave the inputs whose output is newer; filter the others again
    bool dry_run = false;  // say what would be filtered; read and write nothing
    bool directory_inputs = false;  // an operand was a directory: outputs go to one directory
    bool recursive = false;  // directories' subdirectories too
    bool null_separated = false;  // `-` reads paths ended by NUL bytes (find -print0), not lines
    int verbosity = 1;  // 0 quiet, 1 normal, 2 verbose
    bool normalize = true;
    bool linear = false;
    bool premultiply = false;
    int max_fft = 0;
    bool exact_grids = false;  // each file its own best grid, not lengths shared across the batch
    long long max_pixels = PngLimits().max_pixels;
    long long max_memory = 0;  // 0: default_max_memory()
    StreamMode stream = StreamMode::Auto;
    int depth = 0;  // of the outputs: 0, the input's (--synth: 8)
    bool report_resources = false;
    int jobs = 0;              // 0: every hardware thread
    int compression = -1;      // -1: kDefaultCompression
    int shard = 1, shards = 1;
    bool gpu_convert = true;   // --convert gpu|cpu
    ContextOptions gl;
    FftOptions fft;
    std::vector<std::string> inputs;
    // Each input's folder under the directory operand it came from ("" for the others): where
    // its output goes under -o's directory.
    std::vector<std::string> subdirectories;
};

void print_help();

/// Every option of fftfilter, written once: the parser and --help both read this table.
std::vector<OptionSpec> option_specs(Options& o) {
    std::vector<OptionSpec> specs = {
        {"kernel", 'k', "SPEC", "impulse response (default gaussian:2), see Kernels below", [&o](const std::string& v) { o.kernel = v; }},
        {"output", 'o', "PATH",
         "output file for one input (- for standard output); a directory for several\n"
         "(created if missing). Default: NAME.filtered.png (NAME.spectrum.png) beside\n"
         "each input",
         [&o](const std::string& v) { o.output = v; }},
        {"boundary", 'b', "MODE",
         "reflect (default) | clamp | zero | wrap: what lies beyond the edges.\n"
         "wrap is circular convolution (the paper's); the others pad the image",
         [&o](const std::string& v) { o.boundary = parse_boundary(v); }},
        {"spectrum", 0, "", "write the centred log-magnitude spectrum (Figure 4b) instead of filtering", set_flag(o.spectrum)},
        {"synth", 0, "SPEC",
         "no input: a texture from random phases (Figure 5), |F| ~ f^-power,\n"
         "e.g. --synth 512x512:power=2:seed=7 (add :colour for RGB)",
         [&o](const std::string& v) { o.synth = v; }},
        {"depth", 0, "8|16",
         "bit depth of the outputs (default: the input's; --synth 8): 16 keeps what an\n"
         "8-bit input's filter adds between its steps, which 8 bits round away",
         [&o](const std::string& v) {
             o.depth = parse_int(v, "--depth", 8, 16);
             if (o.depth != 8 && o.depth != 16) throw UsageError("--depth must be 8 or 16");
         }},
        {"force", 'f', "", "replace existing outputs (never an input)", set_flag(o.force)},
        {"null", '0', "",
         "- reads paths ended by NUL bytes (find -print0), not lines: names with\n"
         "newlines in them",
         set_flag(o.null_separated)},
        {"recursive", 'r', "",
         "directories' subdirectories too (not hidden ones or links to directories);\n"
         "under -o their outputs keep the same subdirectories",
         set_flag(o.recursive)},
        {"skip-existing", 0, "",
         "leave out the inputs whose output already exists: resumes a batch that was\n"
         "stopped (an output is whole or absent); the summary counts them",
         set_flag(o.skip_existing)},
        {"update", 'u', "",
         "leave out the inputs whose output is newer than they are (modification\n"
         "times) and was made with the same options and kernel (each output records\n"
         "them in its 'fftfilter' text), and filter the others again, replacing their\n"
         "outputs: a folder kept up to date as its inputs and options change",
         set_flag(o.update)},
        {"dry-run", 'n', "",
         "say what would be filtered, a line 'INPUT -> OUTPUT' each (after -r, --shard,\n"
         "--skip-existing and -u have chosen), and what would fail; reads no image,\n"
         "writes nothing, makes no directory, starts no GL",
         set_flag(o.dry_run)},
        {"no-normalize", 0, "", "PNG kernels keep their raw values (8/16-bit mapped to [0, 1])", set_flag(o.normalize, false)},
        {"linear", 0, "",
         "filter in linear light: decode sRGB (or the file's gAMA) first, encode\n"
         "after. Default: filter the stored values",
         set_flag(o.linear)},
        {"premultiply", 0, "", "filter colour premultiplied by alpha (no dark fringes at transparent edges)",
         set_flag(o.premultiply)},
        {"max-fft", 0, "N",
         "largest FFT side; larger images are filtered in overlap-save tiles\n"
         "(default: the GPU's texture limit). On a GPU, axes that tiles of a measured\n"
         "length filter faster than one grid take them too (-v prints the tiles)",
         [&o](const std::string& v) {
             int n = parse_int(v, "--max-fft", 2, 1 << 16);
             if (n & (n - 1)) throw UsageError("--max-fft " + v + " is not a power of two");
             o.max_fft = n;
         }},
        {"exact-grids", 0, "",
         "each file on the best grid for its own size. Default: a batch of many sizes\n"
         "shares a few FFT lengths (each file's grid at most 1.25x its own best by the\n"
         "backend's model), since the compute backend compiles programs for each length\n"
         "(seconds the first time); outputs may then differ from a file filtered alone in\n"
         "their last bits",
         set_flag(o.exact_grids)},
        {"max-memory", 0, "BYTES",
         "memory one image may take (e.g. 2G, 512M; default a quarter of physical\n"
         "memory, " + format_bytes(default_max_memory()) + " here). Images that do not fit whole\n"
         "are streamed: rows decoded, filtered in strips and encoded as they go",
         [&o](const std::string& v) { o.max_memory = parse_bytes(v, "--max-memory"); }},
        {"stream", 0, "MODE",
         "auto (default): stream what does not fit --max-memory or --max-pixels whole,\n"
         "and a file filtered alone on the GPU whose tiles make 4 rows or more (its\n"
         "decoding, filtering and encoding then overlap; the same samples);\n"
         "always; never (refuse it). Interlaced (Adam7) PNGs cannot be read by rows:\n"
         "they are decoded whole at their stored depth (within --max-pixels) and\n"
         "filtered in strips from memory; streamed outputs are never interlaced.\n"
         "--spectrum needs the whole image",
         [&o](const std::string& v) {
             if (v == "auto") o.stream = StreamMode::Auto;
             else if (v == "always") o.stream = StreamMode::Always;
             else if (v == "never") o.stream = StreamMode::Never;
             else throw UsageError("--stream " + v + ": auto, always or never");
         }},
        {"max-pixels", 0, "N",
         "refuse images with more pixels that must be held whole (interlaced, --stream\n"
         "never, --spectrum); default " + std::to_string(PngLimits().max_pixels),
         [&o](const std::string& v) { o.max_pixels = static_cast<long long>(parse_double(v, "--max-pixels", 1, 1e15)); }},
        {"jobs", 'j', "N",
         "threads decoding and encoding PNGs (and filtering, with fftw);\n"
         "default: every hardware thread (" + std::to_string(hardware_threads()) + " here)",
         [&o](const std::string& v) { o.jobs = parse_int(v, "--jobs", 1, 1024); }},
        {"compression", 0, "L",
         "deflate level of the outputs, 0 (none, fastest) to 9 (smallest); levels\n"
         "1-4 filter rows with Paeth alone and code them by runs and Huffman codes\n"
         "where a sample says that is no larger (photographs, smooth images), else\n"
         "by libdeflate or zlib at that level (drawings, text); a file alone and\n"
         "streamed images in parts on every core; 5-9 try every PNG filter per row\n"
         "(libpng and zlib).\n"
         "Default " + std::to_string(kDefaultCompression) + " (measured: 4.5x faster than libpng's 6, files 2.5% larger)",
         [&o](const std::string& v) { o.compression = parse_int(v, "--compression", 0, 9); }},
        {"shard", 0, "K/N",
         "filter only the K-th of N parts of the input list (K = 1..N; every Nth\n"
         "file from the K-th): N machines, one part each, do every file once",
         [&o](const std::string& v) {
             size_t slash = v.find('/');
             if (slash == std::string::npos) throw UsageError("--shard " + v + ": K/N, e.g. 3/8");
             o.shards = parse_int(v.substr(slash + 1), "--shard N", 1, 1 << 20);
             o.shard = parse_int(v.substr(0, slash), "--shard K", 1, o.shards);
         }},
        {"convert", 0, "gpu|cpu",
         "GL backends: convert, pad and pack samples on the GPU (default; only the\n"
         "8- or 16-bit samples cross the bus) or on the CPU as float images (the\n"
         "reference path; both give identical files)",
         [&o](const std::string& v) {
             if (v != "gpu" && v != "cpu") throw UsageError("--convert " + v + ": gpu or cpu");
             o.gpu_convert = v == "gpu";
         }},
    };
    return specs + fft_option_specs(o.fft) +
           std::vector<OptionSpec>{
               gl_device_spec(o.gl),
               {"report-resources", 0, "",
                "print resident memory and live GL objects after the first and the\n"
                "last file (a batch should leave both flat)",
                set_flag(o.report_resources)},
               {"quiet", 'q', "", "only errors", [&o](const std::string&) { o.verbosity = 0; }},
               {"verbose", 'v', "", "a line per file: format, FFT size, tiles, GPU time", [&o](const std::string&) { o.verbosity = 2; }},
           } +
           help_and_version_specs("fftfilter", print_help);
}

void print_help() {
    Options defaults;
    std::printf(
        "Usage: fftfilter [options] INPUT.png|DIR...   (- reads a list of paths from standard input)\n"
        "       fftfilter --synth WxH[:power=P][:seed=S][:colour] -o OUT.png\n"
        "\n"
        "A directory stands for the PNG files in it, in name order: not its subdirectories (unless\n"
        "-r), hidden files or the names this tool gives its outputs by default (NAME.filtered.png\n"
        "and NAME.spectrum.png); -o then names a directory.\n"
        "\n"
        "Filters PNG images on the GPU: forward 2D FFT, multiply by the kernel's spectrum, inverse FFT\n"
        "(Moreland & Angel, \"The FFT on a GPU\"), all four channels at once.\n"
        "\n"
        "Options:\n%s"
        "\n"
        "Kernels:\n%s"
        "\n"
        "Outputs keep the input's colour type and bit depth (palette images come out RGB(A), tRNS\n"
        "transparency as an alpha channel), rounded to nearest and clamped. Files are written under a\n"
        "temporary name and renamed, so an output is whole or absent. Stopped by Ctrl-C (SIGINT),\n"
        "SIGTERM or SIGHUP, it removes the temporary files of the outputs it had not finished, keeps\n"
        "those it had, and ends by that signal.\n"
        "\n"
        "Exit status: 0 all files done, 1 some file failed (the others are still done), 2 usage error,\n"
        "3 no usable OpenGL.\n",
        options_help(option_specs(defaults)).c_str(), kernel_help().c_str());
}


/// A PNG file that a directory operand stands for: its path, and its folder under the operand.
struct FoundFile {
    std::string path, subdirectory;
    bool operator<(const FoundFile& f) const { return path < f.path; }
};

/// The inputs a directory operand stands for: the PNG files in it (a link to one too), with
/// `recursive` those of its subdirectories too (not hidden ones, not links to directories, so
/// never a cycle, nor `output`, -o's directory, where a run before may have written), sorted by
/// path, leaving out hidden names (our temporary files among them) and the names of this tool's
/// default outputs, so that filtering a folder twice does not filter its outputs.
std::vector<FoundFile> png_files_in(const std::string& dir, bool recursive, const std::string& output) {
    namespace fs = std::filesystem;
    const std::string top = dir.back() == '/' ? dir : dir + "/";
    std::vector<FoundFile> files;
    std::error_code error;
    for (fs::recursive_directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
        const std::string name = it->path().filename().string();
        std::error_code kind;
        if (it->is_directory(kind)) {
            if (!recursive || name[0] == '.' || (!output.empty() && fs::equivalent(it->path(), output, kind)))
                it.disable_recursion_pending();
            continue;
        }
        if (name[0] == '.' || !ends_with(name, ".png", true) || ends_with(name, ".filtered.png", true) || ends_with(name, ".spectrum.png", true) ||
            !it->is_regular_file(kind))
            continue;
        const fs::path relative = it->path().lexically_relative(dir);
        files.push_back({top + relative.string(), relative.parent_path().string()});
    }
    if (error) throw UsageError(dir + ": cannot read the directory: " + error.message());
    if (files.empty()) throw UsageError(dir + ": a directory with no PNG files" + (recursive ? " in it or under it" : ""));
    std::sort(files.begin(), files.end());
    return files;
}

Options parse_options_or_throw(int argc, char** argv) {
    Options o;
    const std::vector<std::string> operands = parse_command_line(argc, argv, option_specs(o));
    auto add = [&o](const std::string& path) {
        if (!is_directory(path)) {
            o.inputs.push_back(path);
            o.subdirectories.emplace_back();
            return;
        }
        for (FoundFile& file : png_files_in(path, o.recursive, o.output)) {
            o.inputs.push_back(std::move(file.path));
            o.subdirectories.push_back(std::move(file.subdirectory));
        }
        o.directory_inputs = true;
    };
    for (const std::string& operand : operands) {
        if (operand == "-") {
            std::string line;
            while (std::getline(std::cin, line, o.null_separated ? '\0' : '\n'))
                if (!line.empty()) add(line);
        } else {
            add(operand);
        }
    }
    if (int(o.force) + int(o.skip_existing) + int(o.update) > 1)
        throw UsageError("--force, --skip-existing and --update exclude one another");
    if ((o.skip_existing || o.update) && o.output == kStandardOutput)
        throw UsageError("-o - writes to standard output, where --skip-existing and --update have no output to look at");
    if (o.synth.empty() && o.inputs.empty()) throw UsageError("no input files");
    if (!o.synth.empty() && !o.inputs.empty()) throw UsageError("--synth takes no input files");
    if (!o.synth.empty() && o.spectrum) throw UsageError("--synth and --spectrum exclude each other");
    if (!o.synth.empty() && o.dry_run) throw UsageError("--dry-run takes input files, not --synth");
    return o;
}

/// Any problem with the command line, a kernel spec or a name included, is a usage error.
Options parse_options(int argc, char** argv) {
    return parse_or_usage([&] { return parse_options_or_throw(argc, argv); });
}

struct Job {
    std::string input, output;
    std::string problem;  // refused before any work: the output is an input, or taken twice
    bool in_subdirectory = false;  // -r: the output lies in a subdirectory of -o's, made before the batch
    bool replace = false;  // --update: the output is there but older than the input, and is replaced
};

/// Every input's output, checked before any file is read: a directory that cannot be made or
/// written is one error for the batch, `-o NAME.png` with several inputs a usage error.
std::vector<Job> plan_outputs(const Options& o) {
    const bool to_stdout = o.output == kStandardOutput;
    if (to_stdout && (o.inputs.size() > 1 || o.directory_inputs))
        throw UsageError("-o -: standard output takes one file's output, but there are " +
                         (o.directory_inputs ? std::string("a directory's files") : std::to_string(o.inputs.size()) + " inputs") +
                         " (give a directory)");
    if (to_stdout && !o.dry_run && isatty(STDOUT_FILENO))
        throw UsageError("-o -: standard output is a terminal, not a place for a PNG (redirect it to a file or a pipe)");
    const bool directory = !to_stdout && (o.inputs.size() > 1 || o.directory_inputs ||
                                          (!o.output.empty() && (is_directory(o.output) || o.output.back() == '/')));
    const char* suffix = o.spectrum ? ".spectrum.png" : ".filtered.png";
    if (directory && !o.output.empty()) {
        if (!is_directory(o.output) && o.output.back() != '/' && ends_with(o.output, ".png", true))
            throw UsageError("-o " + o.output + ": names one file, but " +
                             (o.directory_inputs ? std::string("a directory's files go into a directory")
                                                 : "there are " + std::to_string(o.inputs.size()) + " inputs") +
                             " (give a directory)");
        // (A dry run makes no directory: the nearest one there must let it be made.)
        std::string made = o.output;
        if (o.dry_run) {
            while (!is_directory(made) && !file_exists(made) && parent_directory(made) != made) made = parent_directory(made);
            if (!is_directory(made)) throw Error(o.output + ": cannot create: " + std::strerror(ENOTDIR));
        } else {
            make_directories(o.output);
        }
        if (access(made.c_str(), W_OK | X_OK) != 0)
            throw Error(o.output + (made == o.output ? ": cannot create files: " : ": cannot create: ") + std::strerror(errno));
    } else if (!o.output.empty() && !to_stdout) {
        // The words AtomicFile would use when the file is written.
        std::string parent = parent_directory(o.output);
        struct stat st;
        int problem = stat(parent.c_str(), &st) != 0 ? errno : !S_ISDIR(st.st_mode) ? ENOTDIR
                    : access(parent.c_str(), W_OK | X_OK) != 0 ? errno : 0;
        if (problem) throw Error(o.output + ": cannot create: " + std::strerror(problem));
    }
    // An output is refused where it names an input, or an existing file that is one (a link, the
    // same file by another path). Each input is looked up once (its name and its device and inode
    // in sets), each output once: a folder of 3000 files took 14.9 s here comparing every output
    // with every input by stat().
    const std::set<std::string> input_names(o.inputs.begin(), o.inputs.end());
    std::set<FileIdentity> input_files;
    for (const std::string& in : o.inputs)
        if (std::optional<FileIdentity> id = file_identity(in)) input_files.insert(*id);
    // Standard output may be a file too (`>> in.png`, `1<> in.png`).
    struct stat out_stat;
    const std::optional<FileIdentity> standard_output =
        to_stdout && fstat(STDOUT_FILENO, &out_stat) == 0 && S_ISREG(out_stat.st_mode)
            ? std::optional<FileIdentity>(FileIdentity(out_stat.st_dev, out_stat.st_ino))
            : std::nullopt;
    std::vector<Job> jobs;
    std::set<std::string> taken;
    for (size_t i = 0; i < o.inputs.size(); ++i) {
        const std::string& in = o.inputs[i];
        const std::string& under = o.subdirectories[i];
        Job job;
        job.input = in;
        if (o.output.empty()) job.output = parent_directory(in) + "/" + strip_extension(base_name(in)) + suffix;
        else if (directory) job.output = o.output + (o.output.back() == '/' ? "" : "/") + (under.empty() ? "" : under + "/") + base_name(in);
        else job.output = o.output;
        const std::optional<FileIdentity> out = to_stdout ? standard_output : file_identity(job.output);
        struct stat st;
        if (stat(in.c_str(), &st) == 0 && !S_ISREG(st.st_mode))  // (a missing file is its reader's to report)
            job.problem = in + ": a pipe or a device, not a file: fftfilter reads an input more than once (save it to a file first)";
        else if ((!to_stdout && input_names.count(job.output)) || (out && input_files.count(*out)))
            job.problem = (to_stdout ? "standard output" : job.output) + ": is an input file; refusing to overwrite it";
        if (job.problem.empty() && !taken.insert(job.output).second)
            job.problem = job.output + ": another input already writes this output";
        job.in_subdirectory = directory && !o.output.empty() && !under.empty();
        jobs.push_back(job);
    }
    return jobs;
}

/// The summary's words for the inputs --skip-existing or --update left out.
std::string skipped_note(size_t skipped, bool update) {
    if (!skipped) return "";
    return ", " + std::to_string(skipped) + " skipped (their outputs " + (update ? "are up to date)" : "exist)");
}

/// The keyword of the text chunk in which an output records how it was made.
constexpr const char* kRecipeKey = "fftfilter";

/// Every output, filtered or --synth, names the program that made it (PNG's "Software" text),
/// in place of the input's.
void sign(PngFormat& f) { f.set_text("Software", tool_version(kTool)); }

/// `text` with every byte outside printable ASCII written as \xNN (and '\' as \\): a tEXt
/// chunk's text is Latin-1, and a kernel file's name may be anything. (one_line(), which error
/// messages take, escapes control characters alone: UTF-8 names stay readable there.)
std::string printable(const std::string& text) {
    std::string out;
    for (unsigned char c : text) {
        char code[8];
        std::snprintf(code, sizeof code, "\\x%02x", c);
        out += c == '\\' ? "\\\\" : c >= 32 && c < 127 ? std::string(1, static_cast<char>(c)) : std::string(code);
    }
    return out;
}

/// 64-bit FNV-1a of a kernel as built: its size, origin, channels and every weight's bits. A kernel
/// file whose contents changed has another; so does a built-in kernel made differently.
uint64_t kernel_digest(const Kernel& k) {
    uint64_t h = 14695981039346656037ull;
    auto add = [&h](const void* data, size_t bytes) {
        for (size_t i = 0; i < bytes; ++i) h = (h ^ static_cast<const unsigned char*>(data)[i]) * 1099511628211ull;
    };
    const int head[] = {k.weights.width, k.weights.height, k.cx, k.cy, k.per_channel ? 1 : 0};
    add(head, sizeof head);
    add(k.weights.rgba.data(), k.weights.rgba.size() * sizeof(float));
    return h;
}

/// What an output records in its kRecipeKey text: the options that decide its pixels, as the
/// command line gives them, and for a filter the kernel's size and digest, e.g. "-k gaussian:8 -b
/// reflect --linear; kernel 33x33, digest 3f0c...". Options that change only the last bits or the
/// file's coding (backend, tiles, grids, compression, threads, streaming) are not in it. --update
/// filters again an output whose text differs (ninja's rule for a changed command), so a batch run
/// again with another kernel, or after a kernel file changed, does not leave old outputs behind.
std::string recipe(const Options& o, const Kernel& k) {
    std::string r = o.spectrum ? "--spectrum" : "-k " + printable(o.kernel) + " -b " + boundary_name(o.boundary);
    if (o.linear) r += " --linear";
    if (o.premultiply && !o.spectrum) r += " --premultiply";
    if (!o.normalize && !o.spectrum) r += " --no-normalize";
    if (o.depth) r += " --depth " + std::to_string(o.depth);
    if (!o.spectrum) {
        char digest[20];
        std::snprintf(digest, sizeof digest, "%016llx", static_cast<unsigned long long>(kernel_digest(k)));
        r += "; kernel " + std::to_string(k.weights.width) + "x" + std::to_string(k.weights.height) + ", digest " + digest;
    }
    return r;
}

/// The text `path` (an output) records how it was made by (kRecipeKey), or "" (none there, or not a PNG).
std::string recorded_recipe(const std::string& path) {
    struct stat st;
    if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return "";  // (a FIFO would block the open)
    try {
        PngReader reader(path, PngLimits{0});
        const std::string* text = reader.format().find_text(kRecipeKey);
        return text ? *text : "";
    } catch (const Error&) {
        return "";
    }
}

/// Whether a's modification time is at least b's (both there).
bool modified_no_earlier(const struct stat& a, const struct stat& b) {
    return a.st_mtim.tv_sec != b.st_mtim.tv_sec ? a.st_mtim.tv_sec > b.st_mtim.tv_sec : a.st_mtim.tv_nsec >= b.st_mtim.tv_nsec;
}

/// --skip-existing: takes out the jobs whose output is already there (an output is whole or absent,
/// so one there is finished); --update: those whose output is no older than the input and was made
/// as this run would make it (`recipe`), the others replacing theirs. Before any file is read;
/// says which with -v. Returns how many it took out.
size_t skip_finished(std::vector<Job>& jobs, bool update, const std::string& recipe, int verbosity) {
    size_t skipped = 0;
    std::vector<Job> left;
    for (Job& job : jobs) {
        struct stat out, in;
        const bool there = job.problem.empty() && stat(job.output.c_str(), &out) == 0 && !S_ISDIR(out.st_mode);
        const bool newer = there && update && stat(job.input.c_str(), &in) == 0 && modified_no_earlier(out, in);
        const std::string recorded = newer ? recorded_recipe(job.output) : "";
        if (there && (!update || (newer && recorded == recipe))) {
            ++skipped;
            if (verbosity > 1)
                std::fprintf(stderr, "%s: %s: skipped, %s %s\n", kTool, job.input.c_str(), job.output.c_str(),
                             update ? "is up to date" : "exists");
        } else {
            if (verbosity > 1 && newer)
                std::fprintf(stderr, "%s: %s: filtered again, %s was made otherwise (its %s text: \"%s\")\n", kTool,
                             job.input.c_str(), job.output.c_str(), kRecipeKey, printable(recorded).c_str());
            job.replace = there && update;
            left.push_back(std::move(job));
        }
    }
    jobs = std::move(left);
    return skipped;
}

/// -r: makes the subdirectories under -o's that the jobs write into (those that --shard and
/// --skip-existing left), before any file is read; a job whose directory cannot be made fails.
void make_output_subdirectories(std::vector<Job>& jobs) {
    for (Job& job : jobs) {
        if (!job.in_subdirectory || !job.problem.empty()) continue;
        try {
            make_directories(parent_directory(job.output));
        } catch (const Error& e) {
            job.problem = e.what();
        }
    }
}

/// Whether a job's output may replace a file there: --force, --update's older output, or standard
/// output (a file named "-" is not it).
bool may_replace(const Job& job, bool force) { return force || job.replace || job.output == kStandardOutput; }

/// What fails a job before its input is read: the problem its plan found, or an output there that
/// it may not replace; "" when nothing does.
std::string job_problem(const Job& job, bool force) {
    if (!job.problem.empty()) return job.problem;
    if (!may_replace(job, force) && file_exists(job.output)) return job.output + ": already exists (use --force to replace it)";
    return "";
}

/// --dry-run: each job's line on standard output ("INPUT -> OUTPUT", and where it replaces an output
/// --update found made otherwise, " (replacing it)"), and the problems that would fail a job as
/// lines on standard error, with the summary; nothing is read or written. The tool's exit status.
int dry_run(const std::vector<Job>& jobs, size_t skipped, const Options& o) {
    size_t failing = 0;
    for (const Job& job : jobs) {
        const std::string problem = job_problem(job, o.force);
        if (!problem.empty()) {
            ++failing;
            std::fprintf(stderr, "%s: %s\n", kTool, problem.c_str());
            continue;
        }
        std::printf("%s -> %s%s\n", job.input.c_str(), job.output.c_str(), job.replace || (o.force && file_exists(job.output)) ? " (replacing it)" : "");
    }
    std::fflush(stdout);
    if (o.verbosity > 0)
        std::fprintf(stderr, "%s: dry run: %zu file%s to filter, %zu would fail%s\n", kTool, jobs.size() - failing,
                     jobs.size() - failing == 1 ? "" : "s", failing, skipped_note(skipped, o.update).c_str());
    return failing ? kExitFailed : kExitOk;
}

/// The K-th of N parts: every N-th job from the K-th, so that N parts take each job once and the
/// parts get files of every kind (lists are often sorted by size or source).
std::vector<Job> shard(std::vector<Job> jobs, int k, int n) {
    std::vector<Job> part;
    for (size_t i = static_cast<size_t>(k - 1); i < jobs.size(); i += static_cast<size_t>(n)) part.push_back(std::move(jobs[i]));
    return part;
}

/// The GL context (the GPU work itself goes through the public API: gpufft::ImageFilter).
struct Gpu {
    HeadlessContext context;
    explicit Gpu(const ContextOptions& options) : context(options) { require_fragment_chain_support(); }
};

class Progress {
public:
    Progress(size_t total, bool show) : total_(total), tty_(show && isatty(2)), start_(std::chrono::steady_clock::now()) {
        // A test hook: the rate from this many seconds on (test_streaming's terminal test: 0).
        if (const char* after = std::getenv("GPUFFT_TEST_PROGRESS_RATE_AFTER")) rate_after_ = std::atof(after);
    }
    /// A batch's files done (batches of two files or more), at most ten times a second but always
    /// the last; after two seconds with the rate and the time left at that rate.
    void update(size_t done, const std::string& name) {
        if (total_ < 2 || !tty_) return;
        const auto now = std::chrono::steady_clock::now();
        const double seconds = std::chrono::duration<double>(now - start_).count();
        if (done < total_ && now - last_ < std::chrono::milliseconds(100)) return;
        last_ = now;
        std::string line = "[" + std::to_string(done) + "/" + std::to_string(total_);
        if (seconds >= rate_after_ && done > 0 && done < total_) {
            const double rate = done / seconds;
            const long left = std::lround((total_ - done) / rate);
            char text[64];
            std::snprintf(text, sizeof text, ", %.3g files/s, %ld:%02ld left", rate, left / 60, left % 60);
            line += text;
        }
        print(line + "] " + name);
    }
    /// A streamed image's strips filtered (alone or in a batch: a large image may take minutes).
    void strip(const std::string& name, int done, int strips) {
        print(name + ": strip " + std::to_string(done) + "/" + std::to_string(strips));
    }
    void clear() {
        std::lock_guard<std::mutex> lock(mutex_);
        if (tty_) std::fprintf(stderr, "\r\033[K");
    }

private:
    void print(const std::string& line) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!tty_) return;
        std::fprintf(stderr, "\r\033[K%s", line.c_str());
        std::fflush(stderr);
    }
    size_t total_;
    bool tty_;
    std::chrono::steady_clock::time_point start_, last_;
    double rate_after_ = 2;  // seconds
    std::mutex mutex_;  // streamed strips and finished files report from different threads
};

/// How a file goes through the filter.
enum class Path {
    Samples,   // GL: stored samples up, converted, filtered and packed on the GPU, samples down
    Float,     // float images converted on the CPU, filtered on the GPU (--convert cpu, or a case
               // the GPU conversion leaves to the CPU: see read())
    Cpu,       // float images filtered through FFTW on the worker
    Spectrum,  // --spectrum on the GPU
    Stream,    // rows decoded, filtered in strips and encoded as they go (strips.h): on the GL
               // thread (GPU backends) or the worker (FFTW), with threads of its own for the PNGs
};

struct Work : FileWork {
    const Job* job = nullptr;
    Path path = Path::Float;
    PngFormat in_format, out_format;
    Transfer transfer;
    Samples samples;  // the input's samples; after the GPU, the output's
    // Samples: the input's samples where a worker placed them for the GPU's copy, then the
    // output's where the GPU copied them for a worker (samples.data empty while they are there).
    HostArea area, result;
    size_t decode_bytes = 0;  // the room its decoding takes (PngReader::image_bytes())
    DeflatedRows deflated;  // after the GPU, the output's image data, where deflated there
    Image image;      // Float, Cpu and Spectrum: the image, filtered in place or replaced
    SampleConversion conversion;
    TileCaps caps;  // the tiling's largest FFT per axis (plan_memory), lowered by GPU memory retries
    int width = 0, height = 0;
    std::string detail;
    double gpu_ms = 0;
};

/// Channels of the float image the output uses: grey takes R alone unless a per-channel kernel
/// may give it colour; alpha only where there is alpha.
unsigned channels_used(const PngFormat& f, bool per_channel_kernel) {
    unsigned mask = f.is_grey() && !per_channel_kernel ? 1u : 7u;
    return f.has_alpha() ? mask | 8u : mask;
}

/// An environment variable set to "off" (GPUFFT_GPU_DEFLATE, GPUFFT_HOST_AREAS: the batch's
/// routes that A/B runs switch off).
bool turned_off(const char* variable) {
    const char* v = std::getenv(variable);
    return v && std::string(v) == "off";
}

/// Where a batch's outputs are deflated: GPUFFT_GPU_DEFLATE=off on the workers, =on on the GPU,
/// else by size (deflates_on_gpu).
enum class GpuDeflate { Off, On, BySize };
GpuDeflate gpu_deflate_setting() {
    const char* v = std::getenv("GPUFFT_GPU_DEFLATE");
    const std::string setting = v ? v : "";
    return setting == "off" ? GpuDeflate::Off : setting == "on" ? GpuDeflate::On : GpuDeflate::BySize;
}

/// Deflating an output on the GPU takes it nearly the same GPU time however small it is (H200, 1024
/// chunks a block: 0.80 ms at 1024x1024 RGB, 1.48 at 2048x2048; each 128 KiB block counted and
/// coded by one workgroup, side by side), where the workers' run coder takes time in proportion to
/// the bytes. Measured on the H200 with 16 workers, to /dev/shm, MP/s by size / forced on the GPU /
/// forced on the workers, two rounds: 3000 256x256 files 132.7, 151.0 / 83.3, 83.4 / 147.1, 144.6;
/// 1000 512x512 283.8, 256.9 / 213.6, 239.0 / 246.5, 287.0; 600 768x768 (then on the workers)
/// 312.0, 354.0 / 392.0, 439.6 / 366.2, 346.2; 300 1024x1024 473.0, 491.7 / 499.4, 479.3 / 346.0,
/// 349.7 (src/README.md, "Small images"). So the GPU codes outputs from 64 KiB a worker (1 MiB
/// with 16 workers: 768x768 RGB and up; 512x512 RGB, 48 KiB a worker, on the workers).
constexpr size_t kGpuDeflateBytesAWorker = 64 * 1024;

/// "1 tile", "2 tiles": a count and its noun.
std::string counted(long long n, const char* noun) {
    return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

/// "1 tile of 4096x4096": how a file went through the GPU filter.
std::string tiles_detail(const FilterStats& s) {
    return counted(s.tiles, "tile") + " of " + std::to_string(s.fft_width) + "x" + std::to_string(s.fft_height);
}

std::string milliseconds(double seconds) {
    // Two decimals below 10 ms: a GPU's filter of a file takes tenths of a millisecond.
    char buf[32];
    std::snprintf(buf, sizeof buf, seconds < 0.01 ? "%.2f" : "%.1f", seconds * 1e3);
    return buf;
}

/// One run of fftfilter over its files: the per-file stages that the batch pipeline puts on
/// threads (read, cpu_filter and write on the workers; gpu_submit and gpu_flush on the GL thread),
/// with the backend, kernel and outputs chosen before any file is read, and the report.
class FilterBatch {
public:
    FilterBatch(const Options& o, Kernel kernel, std::string recipe, std::vector<Job> jobs, size_t skipped, std::unique_ptr<Gpu> gpu,
                Backend backend, std::chrono::steady_clock::time_point start)
        : o_(o), kernel_(std::move(kernel)), jobs_(std::move(jobs)), skipped_(skipped), gpu_(std::move(gpu)), backend_(backend), start_(start),
          compression_(o.compression < 0 ? kDefaultCompression : o.compression),
          workers_(o.jobs > 0 ? o.jobs : hardware_threads()), progress_(jobs_.size(), o.verbosity > 0), recipe_(std::move(recipe)) {
        fft_ = o.fft;
        fft_.backend = backend_ == Backend::Fftw ? Backend::Auto : backend_;
        sample_limits_ = gpu_ && o.gpu_convert ? ImageFilter::sample_limits() : SampleLimits{};
        limits_.max_pixels = o.max_pixels;
        if (!o.spectrum && backend_ == Backend::Fftw) fftw_ = std::make_unique<FftwConvolver>(kernel_, o.boundary);
        if (sample_limits_.supported && jobs_.size() > 1 && !turned_off("GPUFFT_HOST_AREAS"))
            areas_ = std::make_unique<HostAreas>();  // (a file alone: its copies are the GL thread's either way)
        // What plan_memory() tiles by: the transform's lengths and largest side, as the filter's.
        memory_.max_memory = o.max_memory > 0 ? o.max_memory : default_max_memory();
        memory_.max_pixels = o.max_pixels;
        if (backend_ == Backend::Fftw || !gpu_) {
            lengths_ = fftw_lengths();
            memory_.max_fft = o.max_fft > 0 ? o.max_fft : kMaxFftwSide;
            memory_.max_tile = kStripTileFftw;
        } else {
            lengths_ = fft_lengths(fft_);
            lengths_.tabulate(kTabulatedLengths);  // each file's plan asks thousands
            memory_.max_fft = o.max_fft > 0 ? o.max_fft : gpu_max_fft();
            memory_.max_tile = kStripTileGl;
        }
    }

    int workers() const { return workers_; }

    /// Runs every file through the pipeline, then prints the summary; the tool's exit status.
    int run();

private:
    /// The format of an input's output (output_format(): the result in colour or not), at --depth
    /// where given.
    PngFormat output_of(const PngFormat& input, bool colour) const {
        PngFormat f = output_format(input, colour);
        if (o_.depth) f.bit_depth = o_.depth;
        sign(f);
        f.set_text(kRecipeKey, recipe_);
        return f;
    }

    /// The file's format and size, and the conversions of its samples, from its header.
    void describe(Work& w, const PngReader& reader) const {
        const PngFormat& format = reader.format();
        w.in_format = format;
        w.width = reader.width();
        w.height = reader.height();
        w.transfer = transfer_of(format);
        const PngFormat out_format = output_of(format, false);
        SampleConversion& c = w.conversion;
        c.in_channels = reader.channels();
        c.in_depth = reader.depth();
        c.out_channels = channels_of(out_format.color_type);
        c.out_depth = out_format.bit_depth;
        c.linear = o_.linear;
        c.transfer = w.transfer;
    }

    /// Plans the file's memory (plan_memory): where it does not fit whole, its tiles are capped so
    /// that strips do (whichever path then takes it, so that all tile it alike). True then.
    bool plan(Work& w) const {
        const SampleConversion& c = w.conversion;
        const MemoryPlan p = plan_memory(w.width, w.height, c.in_channels * (c.in_depth == 16 ? 2 : 1),
                                         c.out_channels * (c.out_depth == 16 ? 2 : 1), kernel_, o_.boundary, lengths_, memory_);
        w.caps = {p.max_fft_x, p.max_fft_y};
        return p.strips;
    }

    /// A file filtered alone on the GPU streams where it fits whole too, if its tiles make
    /// kStreamAloneStrips rows or more: its decoding, filtering and encoding then overlap, strip by
    /// strip, where whole they follow one another (the same bits either way). On the H200 machine
    /// an 8192x8192 file (nine rows of tiles) took 1.4x less time so, 4096x4096 (three) the same,
    /// 6000x6000 (two) more (src/README.md, "A file alone, streamed"). Not where streaming would
    /// refuse the file or gain nothing: interlaced, a grey image under a per-channel kernel,
    /// premultiplied alpha.
    bool streams_alone(const Work& w, const PngFormat& format) const {
        if (!alone() || !gpu_ || backend_ == Backend::Fftw || format.interlaced || (format.is_grey() && kernel_.per_channel) ||
            (o_.premultiply && format.has_alpha()))
            return false;
        return planned_tiling(w).second.tiles(w.height) >= kStreamAloneStrips;
    }

    /// The tiling the file is filtered by (the convolver's: its lengths and largest FFT are the plan's).
    std::pair<AxisTiling, AxisTiling> planned_tiling(const Work& w) const {
        return tile_image(w.width, w.height, kernel_, o_.boundary, w.caps, lengths_);
    }

    /// Worker: decodes file i and decides its path.
    std::unique_ptr<FileWork> read(size_t i) {
        auto w = std::make_unique<Work>();
        w->job = &jobs_[i];
        const Job& job = jobs_[i];
        if (const std::string problem = job_problem(job, o_.force); !problem.empty()) throw Error(problem);
        // The header first: how the image is planned (whole, or in strips) decides whether it is
        // read whole now or streamed later. The pixel limit binds only what is held whole.
        PngReader reader(job.input, PngLimits{0});
        describe(*w, reader);
        const PngFormat& format = reader.format();
        const bool alpha = format.has_alpha();
        const PngFormat out_format = output_of(format, false);
        SampleConversion& c = w->conversion;
        const bool strips = !o_.spectrum && plan(*w);
        const bool stream = !o_.spectrum && (o_.stream == StreamMode::Always ||
                                             (o_.stream == StreamMode::Auto && (strips || streams_alone(*w, format))));
        const long long pixels = static_cast<long long>(w->width) * w->height;
        if ((!stream || format.interlaced) && pixels > limits_.max_pixels)
            throw Error(job.input + ": " + std::to_string(w->width) + "x" + std::to_string(w->height) + " is " +
                        std::to_string(pixels) + " pixels, above the limit of " + std::to_string(limits_.max_pixels) +
                        (stream ? " for an interlaced PNG, which is decoded whole (--max-pixels)" : " (--max-pixels)"));
        if (stream) {
            const std::string whole = std::to_string(w->width) + "x" + std::to_string(w->height) + " does not fit --max-memory whole: ";
            if (format.is_grey() && kernel_.per_channel)
                throw Error(whole + "a per-channel kernel on a grey image needs the whole result to choose a grey or colour output");
            if (o_.premultiply && alpha && backend_ != Backend::Fftw)
                throw Error(whole + "--premultiply with alpha streams through --backend fftw only");
            w->path = Path::Stream;
            w->on_gpu = backend_ != Backend::Fftw;
            w->out_format = out_format;
            w->out_format.interlaced = false;
            c.premultiply = o_.premultiply && alpha;
            // Adam7 cannot be read by rows: held whole at its stored depth, filtered in strips.
            if (format.interlaced) w->samples = reader.read_image().samples;
            return std::unique_ptr<FileWork>(std::move(w));
        }
        // The GPU conversion covers every case but two, which the CPU converts: premultiplied
        // alpha divided back (a division, which GLSL does not round exactly), and a grey image
        // under a per-channel kernel (whether it comes out grey depends on the whole result).
        const bool on_samples = !o_.spectrum && backend_ != Backend::Fftw && !(o_.premultiply && alpha) &&
                                !(format.is_grey() && kernel_.per_channel) &&
                                sample_limits_.fits(w->width, w->height, reader.channels(), reader.depth(),
                                                   channels_of(out_format.color_type), out_format.bit_depth);
        if (on_samples) {
            w->path = Path::Samples;
            w->on_gpu = true;
            w->out_format = out_format;
            // A batch's outputs deflated on the GPU too (42% of the workers' time was encoding):
            // the workers write the stream, the bytes they would have made (GpuRunCoder), where
            // that pays (deflates_on_gpu()).
            c.deflate = !alone() && writes_runs(out_format, compression_) && deflates_on_gpu(c.output_bytes(w->width, w->height));
            // ...and where the GPU codes it, the output's samples stay there: the worker writes the
            // stream, choosing it by the filtered rows' bands, which come back instead.
            c.samples_if_needed = c.deflate && areas_;
            // Decoded straight into a free host area (memory the GPU copies from itself), where
            // there is one: the GL thread then queues a copy on the GPU instead of copying the
            // samples itself (on a busy H200 host, 2.5-3.5 ms a 2048x2048 file: it bounded the batch).
            w->decode_bytes = reader.image_bytes();
            if (areas_) w->area = areas_->take(w->decode_bytes);
            if (w->area) {
                reader.read_image_to(w->area.data(), w->area.capacity(), alone());
                w->samples.width = w->width, w->samples.height = w->height;  // the shape; the samples are in the area
                w->samples.channels = reader.channels(), w->samples.depth = reader.depth();
                ++areas_in_;
            } else {
                w->samples = reader.read_image(alone(), spare_.take()).samples;
            }
            return std::unique_ptr<FileWork>(std::move(w));
        }
        PngSamples png = reader.read_image(alone(), spare_.take());
        w->image = samples_to_image(png.samples);
        if (o_.linear) to_linear(w->image, w->transfer);
        if (o_.spectrum) {
            w->path = Path::Spectrum;
            w->on_gpu = true;
        } else {
            if (o_.premultiply && alpha) premultiply(w->image);
            w->path = backend_ == Backend::Fftw ? Path::Cpu : Path::Float;
            w->on_gpu = w->path == Path::Float;
        }
        return std::unique_ptr<FileWork>(std::move(w));
    }

    /// How many host areas a batch keeps: one for each file the pipeline holds (BatchOptions::
    /// in_flight's default, at most the batch's files), which holds its samples from its decoding
    /// to its collect() and its output from there to its writing, and one more for each of the
    /// three images the GPU holds (those hold two). At most an eighth of --max-memory.
    size_t host_area_count() const {
        return std::min(2 * static_cast<size_t>(workers_) + 2, jobs_.size()) + 3;
    }

    /// The bytes the host areas may hold together: an eighth of --max-memory.
    size_t host_area_limit() const { return static_cast<size_t>(memory_.max_memory / 8); }

    /// GL thread, after a file found no host area large enough (its samples came without one, or
    /// its output found none): one more, or a free smaller one made that large.
    bool add_host_area(size_t bytes) {
        return areas_->add(bytes, host_area_count(), host_area_limit()) || areas_->grow(bytes, host_area_limit());
    }

    /// Worker: the FFTW backend's filter.
    void cpu_filter(FileWork& fw) {
        auto& w = static_cast<Work&>(fw);
        if (w.path == Path::Stream) {
            stream(w, nullptr);
            return;
        }
        // A file alone takes every worker (its tiles' channels at once), where they would wait.
        thread_local FftwConvolver::Workspace workspace;
        FftwConvolver::Stats s =
            fftw_->apply(w.image, channels_used(w.in_format, kernel_.per_channel), workspace, w.caps, alone() ? workers_ : 1);
        w.detail = std::to_string(s.fft_width) + "x" + std::to_string(s.fft_height) + " FFTW, " +
                   counted(s.channels, "channel");
    }

    /// The first file's size and plan, from its header (false where it is not filtered on the
    /// GPU or cannot be read: its own read meets the problem), and the room its decoding takes
    /// (0 where it is not filtered whole).
    bool first_file(Work& w, size_t& sample_bytes) const {
        if (!gpu_ || o_.spectrum || backend_ == Backend::Fftw || jobs_.empty() || !jobs_[0].problem.empty()) return false;
        try {
            PngReader reader(jobs_[0].input, PngLimits{0});
            describe(w, reader);
            const bool strips = plan(w);
            if (!strips && static_cast<long long>(w.width) * w.height > limits_.max_pixels) return false;
            sample_bytes = strips ? 0 : reader.image_bytes();
            return true;
        } catch (const Error&) {
            return false;
        }
    }

    /// Before the batch, on the tool's context: the batch's host areas, all of the first file's
    /// size (so that a batch holds as many GL objects after ten files as after five hundred), and
    /// before any worker reads a file, so that the first files are decoded into areas too (made
    /// as the workers started, the first 34 2048x2048 files went the GL thread's way; made on a
    /// thread of their own beside the GL thread's setup, they took three times as long:
    /// src/README.md, "GL threads measured, areas before the batch, outputs left on the GPU"). A
    /// file that finds none large enough makes a free one larger (add_host_area()).
    void make_host_areas() {
        if (!areas_ || !first_known_ || first_sample_bytes_ == 0) return;
        const auto t0 = std::chrono::steady_clock::now();
        for (size_t i = 0; i < host_area_count(); ++i)
            if (!areas_->add(first_sample_bytes_, host_area_count(), host_area_limit())) break;
        areas_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }

    /// GL thread, as the workers start reading: the programs of every size the batch's headers
    /// gave (share_batch_lengths), compiled side by side, then the transform and kernel spectrum
    /// of the first file's size and plan (from its header), so that the first file does not wait
    /// for them. A failure here is the first GPU file's: it is rethrown there, as if that file had
    /// met it (and retried with smaller tiles where memory ran out).
    void gpu_prepare() {
        if (!first_known_) return;
        try {
            if (batch_sizes_.size() > 1) convolver_ready().prepare_programs(batch_sizes_);  // every grid's, side by side
            convolver_ready().prepare(first_.width, first_.height, first_.caps);
        } catch (const GlError&) {
            prepare_error_ = std::current_exception();
            convolver_.reset();
        }
    }

    /// GL thread: queues a file's GPU work; appends the files whose GPU work is complete.
    void gpu_submit(std::unique_ptr<FileWork> fw, std::vector<std::unique_ptr<FileWork>>& done) {
        auto& w = static_cast<Work&>(*fw);
        auto t0 = std::chrono::steady_clock::now();
        try {
            if (w.path == Path::Samples) {
                const size_t out_bytes = w.conversion.output_bytes(w.width, w.height);
                if (areas_) w.result = areas_->take(out_bytes);
                retrying_smaller_tiles(w, done, [&] {
                    convolver_ready().submit(w.samples, w.area ? &w.area : nullptr, w.result ? &w.result : nullptr, w.conversion,
                                             w.caps);
                });
                if (areas_ && !w.area) add_host_area(w.decode_bytes);
                if (areas_ && !w.result) add_host_area(out_bytes);
                spare_.give(std::move(w.samples.data));  // uploaded: for a later file's samples
                ImageFilter& c = *convolver_;
                w.times.setup += c.last().setup_ms * 1e-3;
                w.times.upload += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() -
                                  c.last().setup_ms * 1e-3;
                w.detail = tiles_detail(c.last()) + w.detail;
                queued_.push_back(std::move(fw));
                // Two images on the GPU while the next is uploaded: the oldest's work (its filter
                // and, deflated there, its coding) is then done when it is collected.
                while (convolver_->pending() > 2) collect_one(done);
                if (o_.report_resources && first_gl_objects_ < 0) first_gl_objects_ = measure_resources().gl_objects;
                return;
            }
            gpu_flush(done);  // in order, and the synchronous paths below share the GPU
            if (w.path == Path::Spectrum) {
                w.image = convolver_ready().spectrum(w.image);
                w.detail = std::to_string(w.image.width) + "x" + std::to_string(w.image.height) + " FFT";
            } else if (w.path == Path::Stream) {
                retrying_smaller_tiles(w, done, [&] { stream(w, &convolver_ready()); });
            } else {
                Image filtered;
                retrying_smaller_tiles(w, done, [&] { filtered = convolver_ready().apply(w.image, w.caps); });
                w.image = std::move(filtered);
                const FilterStats& s = convolver_->last();
                w.gpu_ms = s.gpu_ms;
                w.times.setup += s.setup_ms * 1e-3;
                w.detail = tiles_detail(s) + " (converted on the CPU)" + w.detail;
            }
            double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            w.times.gpu += w.gpu_ms * 1e-3;
            // transfers and float conversion on the GL thread (streams count their own stages)
            if (w.path != Path::Stream) w.times.upload += std::max(0.0, wall - w.gpu_ms * 1e-3 - w.times.setup);
            if (o_.report_resources && first_gl_objects_ < 0) first_gl_objects_ = measure_resources().gl_objects;
        } catch (...) {
            w.error = std::current_exception();
            try {
                std::rethrow_exception(w.error);
            } catch (const GlError&) {
                // GPU memory may be short: complete what is queued, then start afresh.
                gpu_flush(done);
                convolver_.reset();
            } catch (...) {
            }
        }
        done.push_back(std::move(fw));
    }

    /// GL thread: runs `submit` (the file's GPU work); where the GPU runs out of memory, completes
    /// what is queued, starts afresh and tries again with tiles of half the side, down to
    /// kSmallestRetryTile, before the file fails with the error (and the smallest tiles tried).
    template <typename F>
    void retrying_smaller_tiles(Work& w, std::vector<std::unique_ptr<FileWork>>& done, F submit) {
        for (;;) {
            try {
                // gpu_prepare()'s failure is the first file's, whichever file reaches the GPU first.
                if (prepare_error_ && w.index == 0) std::rethrow_exception(std::exchange(prepare_error_, nullptr));
                submit();
                return;
            } catch (const GlError& e) {
                if (std::string(e.what()).find("out of GPU memory") == std::string::npos) throw;
                gpu_flush(done);
                convolver_.reset();
                const auto [tx, ty] = planned_tiling(w);  // the tiling that failed
                auto half = [](int fft) {
                    int p = kSmallestRetryTile;
                    while (p * 2 < fft) p *= 2;
                    return p;
                };
                const TileCaps smaller{half(tx.fft), half(ty.fft)};
                if (tx.fft <= kSmallestRetryTile && ty.fft <= kSmallestRetryTile)
                    throw GlError(std::string(e.what()) + ", with tiles down to " + std::to_string(tx.fft) + "x" +
                                  std::to_string(ty.fft));
                w.caps = smaller;
                w.detail = ", tiles of at most " + std::to_string(smaller.x) + "x" + std::to_string(smaller.y) +
                           " after running out of GPU memory";
            }
        }
    }

    /// The file through the strips (strips.h): rows decoded on a thread of their own, strips
    /// filtered on this thread by the GPU (`gpu`) or FFTW, output rows encoded on a thread of their
    /// own into the hidden temporary file, renamed into place at the end. One file at a time.
    void stream(Work& w, ImageFilter* gpu) {
        std::lock_guard<std::mutex> one_at_a_time(stream_mutex_);
        const Job& job = *w.job;
        std::unique_ptr<RowSource> source;
        if (w.samples.data.empty()) source = std::make_unique<PngRowSource>(job.input, PngLimits{0});
        else source = std::make_unique<SamplesRowSource>(w.samples);
        std::unique_ptr<StripFilter> filter;
        std::pair<AxisTiling, AxisTiling> tiling;
        if (gpu) {
            tiling = gpu->tiling(w.width, w.height, w.caps);
            filter = std::make_unique<GpuStrips<ImageFilter>>(*gpu, w.width, w.height, w.conversion, w.caps);
        } else {
            tiling = fftw_->tiling(w.width, w.height, w.caps);
            filter = std::make_unique<FftwStrips>(*fftw_, w.width, w.height, w.conversion,
                                                  channels_used(w.in_format, kernel_.per_channel), w.caps, workers_);
        }
        PngWriter out(job.output, w.width, w.height, w.out_format, replaces(job), compression_);
        const StripStats st = run_strips(*source, *filter, out, tiling.second, o_.boundary,
                                         [&](int done, int strips) { progress_.strip(job.input, done, strips); });
        out.commit();
        w.times.decode += st.decode;
        w.times.encode += st.encode;
        w.times.stream_decode += st.decode;
        w.times.stream_encode += st.encode;
        if (gpu) {  // (on a worker, the batch times the whole stream as its filter stage)
            w.times.upload += st.filter;
            w.gpu_ms = static_cast<GpuStrips<ImageFilter>&>(*filter).gpu_ms();
            w.times.setup += gpu->last().setup_ms * 1e-3;
        }
        const AxisTiling& y = tiling.second;
        w.detail = "streamed: " + counted(st.strips, "strip") + " of " + counted(y.block, "row") + ", tiles of " +
                   std::to_string(tiling.first.fft) + "x" + std::to_string(y.fft) + (gpu ? "" : " FFTW") + ", at most " +
                   counted(st.rows_held, "input row") + " held" +
                   (st.passes > 1 ? ", two decoding passes (wrap reads the last rows first)" : "") +
                   (w.in_format.interlaced ? "; interlaced input decoded whole, output written non-interlaced" : "") + w.detail;
    }

    /// GL thread: completes every queued file. If the GPU fails to give one back, it and every
    /// file queued after it fail with that error, and the next file starts afresh.
    void gpu_flush(std::vector<std::unique_ptr<FileWork>>& done) {
        try {
            while (!queued_.empty()) collect_one(done);
        } catch (...) {
            for (auto& q : queued_) {
                q->error = std::current_exception();
                done.push_back(std::move(q));
            }
            queued_.clear();
            convolver_.reset();
        }
    }

    void collect_one(std::vector<std::unique_ptr<FileWork>>& done) {
        auto& w = static_cast<Work&>(*queued_.front());
        auto t0 = std::chrono::steady_clock::now();
        w.deflated.data = spare_streams_.take();
        w.samples = convolver_->collect(&w.gpu_ms, spare_.take(), w.deflated);
        w.area = HostArea();  // the GPU's copy from it is done
        if (w.deflated.without_samples) {
            w.result = HostArea();  // (the samples were not needed)
            ++outputs_unread_;
        } else if (w.result) {
            ++areas_out_;
        }
        w.times.download += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        w.times.gpu += w.gpu_ms * 1e-3;
        done.push_back(std::move(queued_.front()));
        queued_.pop_front();
    }

    /// Worker: encodes and writes a filtered file.
    void write(FileWork& fw) {
        auto& w = static_cast<Work&>(fw);
        if (w.path == Path::Stream) return;  // written as it was filtered
        if (w.path == Path::Samples) {
            if (w.result) {  // the output's samples, from the host area the GPU copied them to
                w.samples.data.assign(w.result.data(), w.result.data() + w.samples.row_bytes() * static_cast<size_t>(w.samples.height));
                w.result = HostArea();
            }
            write_png_samples(w.job->output, w.samples, w.out_format, replaces(*w.job), compression_, alone(), &w.deflated);
            spare_.give(std::move(w.samples.data));
            spare_streams_.give(std::move(w.deflated.data));
            w.deflated = DeflatedRows{};
            return;
        }
        if (w.path == Path::Spectrum) {
            w.out_format = output_of(w.in_format, false);
            w.out_format.color_type = w.in_format.is_grey() ? 0 : 2;  // a spectrum has no alpha
            w.out_format.srgb = false;
            w.out_format.gamma = 0;
            w.out_format.icc_profile.clear();
            if (w.out_format.bit_depth < 8) w.out_format.bit_depth = 8;
        } else {
            if (o_.premultiply && w.in_format.has_alpha()) unpremultiply(w.image);
            if (o_.linear) from_linear(w.image, w.transfer);
            bool colour = w.in_format.is_grey() && kernel_.per_channel && has_colour(w.image, 16);
            w.out_format = output_of(w.in_format, colour);
        }
        write_png(w.job->output, w.image, w.out_format, replaces(*w.job), compression_, alone());
    }

    /// Whether the job's output may replace a file there (may_replace()).
    bool replaces(const Job& job) const { return may_replace(job, o_.force); }

    /// A file filtered alone is compressed in parts on every core, which would otherwise wait;
    /// files of a batch by libdeflate on their worker, the faster a core (png_io.h, write_image).
    bool alone() const { return jobs_.size() == 1; }
    bool deflates_on_gpu(size_t out_bytes) const {
        return gpu_deflate_ == GpuDeflate::On ||
               (gpu_deflate_ == GpuDeflate::BySize && out_bytes >= static_cast<size_t>(workers_) * kGpuDeflateBytesAWorker);
    }

    /// Any thread, one at a time: reports a finished file.
    void finish(size_t i, FileWork* fw, std::exception_ptr error) {
        const Job& job = jobs_[i];
        ++done_count_;
        if (o_.report_resources && done_count_ == 1) {
            first_use_.resident_mib = measure_resources().resident_mib;
            first_use_.gl_objects = first_gl_objects_;
        }
        if (error) {
            progress_.clear();
            std::string message;
            try {
                std::rethrow_exception(error);
            } catch (const std::exception& e) {
                message = e.what();
            }
            // Every message names its file: those from reading and writing do already.
            if (message.rfind(job.input + ":", 0) != 0 && message.rfind(job.output + ":", 0) != 0)
                message = job.input + ": " + message;
            report(kTool, message, kExitFailed);
            ++failed_;
        } else {
            auto& w = static_cast<Work&>(*fw);
            megapixels_ += static_cast<double>(w.width) * static_cast<double>(w.height) * 1e-6;
            if (o_.verbosity > 1) {
                progress_.clear();
                const StageTimes& t = w.times;
                std::string gpu_part = w.on_gpu ? ", GPU " + milliseconds(w.gpu_ms * 1e-3) + " ms" : "";
                std::fprintf(stderr, "%s: %s (%s, %dx%d) -> %s (%s): %s%s; decode %s, %s, encode %s ms\n", kTool,
                             job.input.c_str(), w.in_format.describe().c_str(), w.width, w.height, job.output.c_str(),
                             w.out_format.describe().c_str(), w.detail.c_str(), gpu_part.c_str(),
                             milliseconds(t.decode).c_str(),
                             w.on_gpu ? ("upload " + milliseconds(t.upload) + ", download " + milliseconds(t.download)).c_str()
                                      : ("filter " + milliseconds(t.cpu_filter)).c_str(),
                             milliseconds(t.encode).c_str());
            }
        }
        progress_.update(done_count_, job.input);
    }

    ImageFilter& convolver_ready() {
        if (!convolver_) {
            convolver_ = std::make_unique<ImageFilter>(kernel_, fft_, o_.boundary, o_.max_fft);
            if (!batch_sizes_.empty() && !o_.exact_grids) convolver_->share_lengths(batch_sizes_);
        }
        return *convolver_;
    }

    /// Before the batch: where the transform compiles programs for each FFT length (the compute
    /// backend) and several files come, their sizes from their headers (read on the CorePool), so
    /// that their grids share few lengths (share_lengths, unless --exact-grids), the plan's and
    /// the filter's alike, and gpu_prepare() compiles all their programs at once. A file whose
    /// header cannot be read is left out (its own read reports the problem).
    void share_batch_lengths() {
        if (!gpu_ || o_.spectrum || backend_ == Backend::Fftw || jobs_.size() < 2 || !lengths_.programs_per_length) return;
        std::vector<std::array<int, 2>> sizes(jobs_.size(), {0, 0});
        const size_t parts = std::min<size_t>(jobs_.size(), CorePool::get().size());
        std::vector<std::future<void>> done;
        for (size_t part = 0; part < parts; ++part)
            done.push_back(CorePool::get().run([&, part] {
                for (size_t i = part; i < jobs_.size(); i += parts)
                    if (jobs_[i].problem.empty()) png_dimensions(jobs_[i].input, sizes[i][0], sizes[i][1]);
            }));
        for (std::future<void>& f : done) f.get();
        sizes.erase(std::remove(sizes.begin(), sizes.end(), std::array<int, 2>{0, 0}), sizes.end());
        std::sort(sizes.begin(), sizes.end());
        sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
        if (!o_.exact_grids) share_lengths(lengths_, sizes, kernel_, o_.boundary, memory_.max_fft);
        if (o_.verbosity > 1)
            for (int axis : {0, 1}) {
                if (!lengths_.shared[axis]) continue;
                std::string list;
                for (const LengthModel::SharedLength& g : *lengths_.shared[axis])
                    list += (list.empty() ? "" : ", ") + std::to_string(g.length) + " (" + std::to_string(g.from) + "-" + std::to_string(g.to) + ")";
                std::fprintf(stderr, "%s: %zu sizes, %s shared: %zu lengths for their needs: %s\n", kTool, sizes.size(),
                             axis ? "heights" : "widths", lengths_.shared[axis]->size(), list.c_str());
            }
        batch_sizes_ = std::move(sizes);
    }

    const Options& o_;
    const Kernel kernel_;
    const std::vector<Job> jobs_;
    const size_t skipped_;  // inputs left out, their outputs there (--skip-existing)
    std::unique_ptr<Gpu> gpu_;
    // Host areas (gpufft.h) where the GPU filters stored samples: the inputs' and outputs' samples
    // cross between workers and the GPU there, not through the GL thread; GPUFFT_HOST_AREAS=off:
    // none.
    // Destroyed before the context, after every file.
    std::unique_ptr<HostAreas> areas_;
    std::atomic<size_t> areas_in_{0};
    size_t areas_out_ = 0;  // GL thread
    size_t outputs_unread_ = 0;  // GL thread: outputs whose samples stayed on the GPU
    double areas_seconds_ = 0;  // make_host_areas()'s
    // The first file's size and plan (first_file(), read before the batch): what
    // make_host_areas() and gpu_prepare() make things for.
    Work first_;
    size_t first_sample_bytes_ = 0;
    bool first_known_ = false;
    std::vector<std::array<int, 2>> batch_sizes_;  // the files' sizes (share_batch_lengths), else none
    const Backend backend_;
    const std::chrono::steady_clock::time_point start_;
    const int compression_;
    const GpuDeflate gpu_deflate_ = gpu_deflate_setting();
    const int workers_;
    FftOptions fft_;
    SampleLimits sample_limits_;
    PngLimits limits_;
    MemoryLimits memory_;
    LengthModel lengths_;     // the filter's, for plan_memory()
    std::mutex stream_mutex_;  // one streamed file at a time
    // Samples' memory, from uploads and writes to reads and collects: four 2048x2048 RGB images'
    // worth, two of 6000x6000; larger images' memory is freed as before.
    SpareBuffers spare_{4, size_t(256) << 20};
    // The same for the outputs' image data deflated on the GPU (a 2048x2048 file's: 1.5 MB), which
    // the GL thread's collect copies out.
    SpareBuffers spare_streams_{8, size_t(64) << 20};
    std::exception_ptr prepare_error_;  // gpu_prepare()'s, for file 0
    std::unique_ptr<ImageFilter> convolver_;  // the public API's (gpufft/gpufft.h)
    std::unique_ptr<FftwConvolver> fftw_;
    // GL thread: submitted, in order, samples not yet collected; --report-resources counts GL
    // objects there.
    std::deque<std::unique_ptr<FileWork>> queued_;
    std::atomic<int> first_gl_objects_{-1};
    // finish() (one call at a time):
    Progress progress_;
    const std::string recipe_;  // what each output records in its kRecipeKey text (recipe())
    size_t failed_ = 0, done_count_ = 0;
    double megapixels_ = 0;
    ResourceUse first_use_;
};

int FilterBatch::run() {
    BatchStages stages;
    stages.read = [this](size_t i) { return read(i); };
    stages.gpu_prepare = [this] { gpu_prepare(); };
    stages.cpu_filter = [this](FileWork& fw) { cpu_filter(fw); };
    stages.gpu_submit = [this](std::unique_ptr<FileWork> fw, std::vector<std::unique_ptr<FileWork>>& done) {
        gpu_submit(std::move(fw), done);
    };
    stages.gpu_flush = [this](std::vector<std::unique_ptr<FileWork>>& done) { gpu_flush(done); };
    stages.write = [this](FileWork& fw) { write(fw); };
    stages.finish = [this](size_t i, FileWork* fw, std::exception_ptr error) { finish(i, fw, error); };

    BatchOptions bo;
    bo.workers = workers_;
    share_batch_lengths();  // before the first file's plan
    first_known_ = first_file(first_, first_sample_bytes_);
    make_host_areas();
    const double before_batch = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    StageTimes totals = run_batch(jobs_.size(), stages, bo);
    progress_.clear();
    if (o_.report_resources)
        report_resources(kTool, "file 1", jobs_.size() > 1 ? first_use_ : measure_resources(), "file " + std::to_string(jobs_.size()),
                         measure_resources());
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const char* used = o_.spectrum ? "spectrum" : backend_name(backend_);
    if (o_.verbosity > 0 && (jobs_.size() > 1 || skipped_ > 0 || o_.verbosity > 1))
        std::fprintf(stderr, "%s: %zu file%s, %zu failed%s, %.1f MP in %.2f s, %.1f MP/s, backend %s\n", kTool, jobs_.size(),
                     jobs_.size() == 1 ? "" : "s", failed_, skipped_note(skipped_, o_.update).c_str(), megapixels_, seconds,
                     seconds > 0 ? megapixels_ / seconds : 0.0, used);
    if (o_.verbosity > 1 && seconds > 0) {
        // Each stage's share of what runs it: workers for decode, CPU filter and encode; the GL
        // thread for upload and download; the GPU for its own time; a streamed file's decoding
        // and encoding threads for theirs (streamed files go one at a time).
        struct Share {
            const char* name;
            double busy, capacity;
            std::string who;
            bool gl = false;  // the GL thread's or the GPU's: none on FFTW
        };
        const double worker_capacity = seconds * workers_;
        const std::string workers = std::to_string(workers_) + " workers";
        std::vector<Share> shares = {{"decode", totals.decode - totals.stream_decode, worker_capacity, workers},
                                     {"filter (FFTW)", totals.cpu_filter, worker_capacity, workers},
                                     {"encode", totals.encode - totals.stream_encode, worker_capacity, workers},
                                     // one thread's: its stages together (setup included)
                                     {"the GL thread (upload, download, setup)", totals.upload + totals.download + totals.setup,
                                      seconds, "its time", true},
                                     {"GPU", totals.gpu, seconds, "the GPU", true},
                                     {"decode (streamed)", totals.stream_decode, seconds, "its thread"},
                                     {"encode (streamed)", totals.stream_encode, seconds, "its thread"}};
        // On FFTW no GL stage can be the bottleneck: what its pipeline's GL-thread role times
        // (preparing the filter) is no GL work (under ThreadSanitizer it came out on top).
        if (backend_ == Backend::Fftw)
            shares.erase(std::remove_if(shares.begin(), shares.end(), [](const Share& s) { return s.gl; }), shares.end());
        const Share* top = &shares[0];
        for (const Share& s : shares)
            if (s.busy / s.capacity > top->busy / top->capacity) top = &s;
        if (backend_ == Backend::Fftw)  // no GL: the workers' stages alone
            std::fprintf(stderr,
                         "%s: setup (s): %.2f before the batch (kernel)\n"
                         "%s: stage totals (s): decode %.2f, filter %.2f, encode %.2f; waiting: workers %.2f; bottleneck: %s "
                         "(%.0f%% of %s)\n",
                         kTool, before_batch, kTool, totals.decode, totals.cpu_filter, totals.encode, totals.worker_wait, top->name,
                         100.0 * top->busy / top->capacity, top->who.c_str());
        else
            std::fprintf(stderr,
                         "%s: setup (s): %.2f before the batch (GL context, kernel, host areas), %.2f on the GL thread (transforms, "
                         "programs, kernel spectra; programs %.2f, %ld linked from their kept binaries)\n"
                         "%s: stage totals (s): decode %.2f, filter %.2f, upload %.2f, GPU %.2f, download %.2f, encode %.2f; "
                         "waiting: workers %.2f, GL thread %.2f; GPU busy %.1f%%; bottleneck: %s (%.0f%% of %s)\n"
                         "%s: the GL thread on a CPU (s): user %.2f, system %.2f; it gave up its core %ld times, had it taken %ld\n",
                         kTool, before_batch, totals.setup, ProgramCache::seconds(), ProgramBinaries::loaded(), kTool, totals.decode,
                         totals.cpu_filter, totals.upload, totals.gpu, totals.download, totals.encode, totals.worker_wait,
                         totals.gpu_thread_wait, 100.0 * totals.gpu / seconds, top->name, 100.0 * top->busy / top->capacity,
                         top->who.c_str(), kTool, totals.gpu_thread_user, totals.gpu_thread_system, totals.gpu_thread_waits,
                         totals.gpu_thread_preempted);
        if (areas_ && areas_->count() > 0)
            std::fprintf(stderr,
                         "%s: host areas: %zu files' samples copied to the GPU from them, %zu outputs' back (%zu more written "
                         "from the GPU's stream alone); %zu areas (%.0f MB, made in %.2f s before the batch)\n",
                         kTool, areas_in_.load(), areas_out_, outputs_unread_, areas_->count(), areas_->bytes() / 1e6,
                         areas_seconds_);
    }
    return failed_ ? kExitFailed : kExitOk;
}

int run(const Options& o) {
    KernelOptions ko;
    ko.normalize = o.normalize;
    std::unique_ptr<Gpu> gpu;
    auto gpu_ready = [&]() -> Gpu& {
        if (!gpu) gpu = std::make_unique<Gpu>(o.gl);
        return *gpu;
    };
    auto start = std::chrono::steady_clock::now();

    if (!o.synth.empty()) {
        SynthSpec spec = parse_synth(o.synth);
        std::string out = o.output.empty() ? "synth.png" : o.output;
        if (is_directory(out)) out += "/synth.png";
        gpu_ready();
        Image texture = synthesize(spec, o.fft);
        PngFormat f;
        f.color_type = spec.colour ? 2 : 0;
        f.bit_depth = o.depth ? o.depth : 8;
        sign(f);
        write_png(out, texture, f, o.force, o.compression < 0 ? kDefaultCompression : o.compression);
        if (o.verbosity > 0)
            std::fprintf(stderr, "%s: wrote %s (%dx%d)\n", kTool, out == kStandardOutput ? "standard output" : out.c_str(), spec.width,
                         spec.height);
        return kExitOk;
    }

    // The kernel and the outputs are checked before any file is touched.
    Kernel kernel;
    if (!o.spectrum) {
        try {
            kernel = parse_kernel(o.kernel, ko);
        } catch (const Error& e) {
            throw UsageError(e.what());
        }
    }
    std::vector<Job> jobs = shard(plan_outputs(o), o.shard, o.shards);
    std::string made_as = recipe(o, kernel);  // (its digest reads every weight: once)
    const size_t skipped = o.skip_existing || o.update ? skip_finished(jobs, o.update, made_as, o.verbosity) : 0;
    if (o.dry_run) return dry_run(jobs, skipped, o);
    make_output_subdirectories(jobs);
    if (jobs.empty()) {  // every output there: nothing to read, no GL to start
        if (o.verbosity > 0) std::fprintf(stderr, "%s: 0 files%s\n", kTool, skipped_note(skipped, o.update).c_str());
        return kExitOk;
    }

    // The backend: GL where asked for (or needed, for spectra); auto measures nothing at run time
    // but follows the measurements in the README: FFTW on all cores where the renderer is a
    // software rasterizer (or there is no usable GL), else the GPU's fastest backend.
    Backend backend = o.fft.backend;
    std::string backend_note;
    if (o.spectrum || backend != Backend::Fftw) {
        try {
            gpu_ready();
        } catch (const GlError& e) {
            if (backend != Backend::Auto || o.spectrum)
                return report(kTool, std::string("no usable OpenGL: ") + e.what(), kExitNoGl);
            backend = Backend::Fftw;
            backend_note = std::string(" (no usable OpenGL: ") + e.what() + ")";
        }
    }
    if (backend == Backend::Auto) {
        if (software_renderer()) {
            backend = Backend::Fftw;
            backend_note = " (the GL renderer is a software rasterizer)";
        } else {
            // Measured on an H100 (README, "Batch throughput"): the compute backend filters a
            // 2048x2048 batch image in 3.5 ms of GPU time, the fast fragment chain in 72 ms.
            backend = resolve_gl_backend(o.fft);
        }
    }
    if (backend == Backend::Fftw && !o.spectrum) gpu.reset();  // the context's memory is not needed
    const std::string gl = gpu ? ", " + describe_gl() : "";
    FilterBatch batch(o, std::move(kernel), std::move(made_as), std::move(jobs), skipped, std::move(gpu), backend, start);
    if (o.verbosity > 1)
        std::fprintf(stderr, "%s: backend %s%s, %d worker thread%s%s\n", kTool,
                     o.spectrum ? "spectrum (GL)" : backend_name(backend), backend_note.c_str(), batch.workers(),
                     batch.workers() == 1 ? "" : "s", gl.c_str());
    return batch.run();
}


}  // namespace

int main(int argc, char** argv) {
    return run_tool(kTool, [&] { return run(parse_options(argc, argv)); });
}
