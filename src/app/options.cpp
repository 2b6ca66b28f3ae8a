#include "app/options.h"

#include "app/cli.h"
#include "fft/compute_fft.h"

#include <getopt.h>

#include <cstdio>
#include <cstdlib>

namespace gpufft {

namespace {
constexpr int kLongCode = 1000;  // getopt_long returns kLongCode + i for specs[i] without a short name
constexpr size_t kHelpColumn = 24;
}  // namespace

std::vector<std::string> parse_command_line(int argc, char** argv, const std::vector<OptionSpec>& specs) {
    std::vector<option> longs;
    std::string shorts = ":";  // a leading ':' tells a missing value from an unknown option
    for (size_t i = 0; i < specs.size(); ++i) {
        const OptionSpec& s = specs[i];
        const int code = s.short_name ? s.short_name : kLongCode + static_cast<int>(i);
        longs.push_back({s.name.c_str(), s.value.empty() ? no_argument : required_argument, nullptr, code});
        if (s.short_name) shorts += std::string(1, s.short_name) + (s.value.empty() ? "" : ":");
    }
    longs.push_back({nullptr, 0, nullptr, 0});
    opterr = 0;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, shorts.c_str(), longs.data(), nullptr)) != -1) {
        const OptionSpec* spec = nullptr;
        if (c >= kLongCode && c < kLongCode + static_cast<int>(specs.size())) spec = &specs[static_cast<size_t>(c - kLongCode)];
        for (const OptionSpec& s : specs)
            if (!spec && s.short_name && s.short_name == c) spec = &s;
        if (!spec) throw_option_error(c, argv, optind);
        spec->apply(optarg ? std::string(optarg) : std::string());
    }
    return std::vector<std::string>(argv + optind, argv + argc);
}

std::string options_help(const std::vector<OptionSpec>& specs) {
    std::string out;
    for (const OptionSpec& s : specs) {
        if (s.help.empty()) continue;
        std::string left = "  ";
        if (!s.display.empty()) {
            left += s.display;
        } else {
            if (s.short_name) left += std::string("-") + s.short_name + ", ";
            left += "--" + s.name;
            if (!s.value.empty()) left += " " + s.value;
        }
        size_t start = 0;
        bool first = true;
        do {
            const size_t end = s.help.find('\n', start);
            const std::string line = s.help.substr(start, end == std::string::npos ? std::string::npos : end - start);
            if (first) {
                out += left;
                out += std::string(left.size() + 2 > kHelpColumn ? 2 : kHelpColumn - left.size(), ' ');
            } else {
                out += std::string(kHelpColumn, ' ');
            }
            out += line + "\n";
            first = false;
            start = end == std::string::npos ? std::string::npos : end + 1;
        } while (start != std::string::npos);
    }
    return out;
}

std::vector<OptionSpec> fft_option_specs(FftOptions& fft, bool* chosen) {
    // Each action sets its field, and marks that an implementation was chosen.
    auto set = [chosen](std::function<void(const std::string&)> apply) {
        return [chosen, apply](const std::string& v) {
            apply(v);
            if (chosen) *chosen = true;
        };
    };
    // --compute-transpose and --compute-fuse-tail: on 1, off -1 (0, auto, is the default).
    auto set_on_off = [&set](int& field, const std::string& name) {
        return set([&field, name](const std::string& v) {
            if (v != "on" && v != "off") throw UsageError(name + " must be on or off");
            field = v == "on" ? 1 : -1;
        });
    };
    // --compute-fold and --compute-fuse: 0, 1, 2 or 4.
    auto set_power = [&set](int& field, const std::string& name) {
        return set([&field, name](const std::string& v) {
            field = parse_int(v, name.c_str(), 0, 4);
            if (field == 3) throw UsageError(name + " must be 0, 1, 2 or 4");
        });
    };
    return {
        {"backend", 0, "NAME",
         "auto (default: the fastest here: compute on a GPU, fftw or fragment on a\n"
         "software renderer), fragment, compute, or fftw (CPU; fftfilter only)",
         set([&fft](const std::string& v) { fft.backend = parse_backend(v); })},
        {"radix", 0, "2|auto",
         "2: the paper's radix-2 chain; auto (default): radix 16 over eight\n"
         "render targets where the GPU allows",
         set([&fft](const std::string& v) {
             if (v == "2") fft.radix = 2;
             else if (v == "auto" || v == "16") fft.radix = 0;
             else throw UsageError("--radix " + v + ": 2 (the paper's chain) or auto");
         })},
        {"twiddles", 0, "KIND", "table (default: computed in double on the CPU) or computed (in the shader)",
         set([&fft](const std::string& v) {
             if (v != "table" && v != "computed") throw UsageError("--twiddles " + v + ": table or computed");
             fft.computed_twiddles = v == "computed";
         })},
        {"half", 0, "", "RGBA16F intermediate targets (faster, ~1e-3 accurate; never the default)",
         set([&fft](const std::string&) { fft.storage = Storage::Float16; })},
        {"compute-radix", 0, "R", "compute backend: largest stage radix 4, 8 or 16 (default: by size)",
         set([&fft](const std::string& v) {
             fft.compute_radix = parse_int(v, "--compute-radix", 4, 16);
             if (fft.compute_radix != 4 && fft.compute_radix != 8 && fft.compute_radix != 16)
                 throw UsageError("--compute-radix must be 4, 8 or 16");
         })},
        {"compute-lines", 0, "G", "compute backend: lines per workgroup, 1 to 32 (default: by size)",
         set([&fft](const std::string& v) { fft.compute_lines = parse_int(v, "--compute-lines", 1, 32); })},
        {"compute-plan", 0, "PLANS",
         "compute backend, for tuning: line plans by hand,\n"
         "[rows:|columns:]LENGTH:RxRx...[/THREADS] comma-separated, e.g.\n"
         "1920:8x8x6x5/384 (both axes) or columns:1080:6x6x6x5 (one axis), or\n"
         "composite: mixed lines in the fewest stages of radices up to 12\n"
         "(default: the planner's, and the GPU's measured plans)",
         set([&fft](const std::string& v) {
             ComputeFft::parse_plans(v);  // refuses a bad plan here, with its item named
             fft.compute_plan = v;
         })},
        {"compute-max-line", 0, "L",
         "compute backend: longer lines take two dispatches (four-step);\n"
         "default 4096 (longer spills registers); up to 16384",
         set([&fft](const std::string& v) {
             fft.compute_max_line = parse_int(v, "--compute-max-line", 4, 1 << 16);
             if (fft.compute_max_line & (fft.compute_max_line - 1)) throw UsageError("--compute-max-line must be a power of two");
         })},
        {"compute-fold", 0, "F",
         "compute backend: 2 or 4: lines longer than --compute-max-line, up to\n"
         "F times, take their channels in F phases of one dispatch instead of\n"
         "the four-step route's two; 0 or 1 (default): never",
         set_power(fft.compute_fold, "--compute-fold")},
        {"compute-fuse", 0, "F",
         "compute backend: the four-step route's step A done in step B's loads\n"
         "(one dispatch a line pass instead of two) up to F points: 2\n"
         "(halves; 0, the default, means 2), 4 (halves, or quarters in the\n"
         "columns), 1: never",
         set_power(fft.compute_fuse, "--compute-fuse")},
        {"compute-row-tail", 0, "N|off",
         "compute backend: whole row passes leave their last N row pairs to a\n"
         "dispatch of one a workgroup beside them (default: twice those of a\n"
         "sparse last round of workgroups, where the GPU tells its multiprocessors)",
         set([&fft](const std::string& v) {
             fft.compute_row_tail = v == "off" ? -1 : parse_int(v, "--compute-row-tail", 1, 1 << 16);
         })},
        {"compute-tail-split", 0, "S",
         "compute backend, for tuning: a row tail's row pairs in S workgroups\n"
         "each, 2 (halves) or 4 (quarters), step A in step B's loads; 0 or 1\n"
         "(default): whole",
         set_power(fft.compute_tail_split, "--compute-tail-split")},
        {"compute-transpose", 0, "on|off",
         "compute backend: filters as the transposed problem, every dispatch\n"
         "storing its lines down the columns of its target (on), or never (off);\n"
         "default: as measured on the device",
         set_on_off(fft.compute_transpose, "--compute-transpose")},
        {"compute-fuse-tail", 0, "on|off",
         "compute backend: a filter's last column step (the two-point step A\n"
         "inverse of columns split in halves, rows as channel pairs) in the inverse\n"
         "rows' loads, three dispatches a filter (on), or a dispatch of its own\n"
         "(off); default: as measured on the device (on a GPU)",
         set_on_off(fft.compute_fuse_tail, "--compute-fuse-tail")},
        {"compute-split", 0, "[AXIS:]L1",
         "compute backend, for tuning: lines longer than --compute-max-line split\n"
         "as L1 x L2 (step A's length first, even) where L2 fits, on both axes or,\n"
         "comma-separated, rows:L1 and columns:L1; default: the planner's split",
         set([&fft](const std::string& v) {
             for (const std::string& item : split_list(v, ',')) {
                 const size_t colon = item.find(':');
                 const std::string axis = colon == std::string::npos ? "" : item.substr(0, colon);
                 if (colon != std::string::npos && axis != "rows" && axis != "columns")
                     throw UsageError("--compute-split " + v + ": expected L1, rows:L1 or columns:L1");
                 const int l1 = parse_int(item.substr(colon + 1), "--compute-split", 0, 1 << 16);
                 if (l1 % 2) throw UsageError("--compute-split must be even");
                 if (axis != "columns") fft.compute_row_split = l1;
                 if (axis != "rows") fft.compute_column_split = l1;
             }
         })},
    };
}

OptionSpec gl_device_spec(ContextOptions& gl, const char* help) {
    return {"gl-device", 0, "N", help,
            [&gl](const std::string& v) { gl.device = parse_int(v, "--gl-device", 0, 1024); }};
}

std::vector<OptionSpec> help_and_version_specs(const char* tool, const std::function<void()>& help, const char* help_text) {
    return {
        {"help", 'h', "", help_text, [help](const std::string&) { help(); std::exit(kExitOk); }},
        {"version", 0, "", "the version",
         [tool](const std::string&) {
             std::printf("%s\n", tool_version(tool).c_str());
             std::exit(kExitOk);
         }},
    };
}

std::vector<OptionSpec> operator+(std::vector<OptionSpec> a, const std::vector<OptionSpec>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

}  // namespace gpufft
