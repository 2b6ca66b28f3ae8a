// bin/fftcompare on a small instance: the tolerances hold, every output format parses, and a
// corrupted GPU spectrum makes it fail (issue: "fftcompare: side by side with FFTW").
#include "check.h"
#include "tool.h"

#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <vector>

using test::TempDir;

namespace {

std::string fftcompare() { return test::bin_dir() + "/fftcompare"; }
const std::string kSmall = " --sizes 64,128,256,128x32,16x256 --repeat 3 --warm-up 0 -q";

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::istringstream in(s);
    for (std::string item; std::getline(in, item, sep);) out.push_back(item);
    return out;
}

}  // namespace

TEST(small_instance_is_within_tolerance) {
    test::Result r = test::run(fftcompare() + kSmall);
    EXPECT(r.status == 0, "exit ", r.status, ": ", r.err, r.out);
    EXPECT(r.out.find("Accuracy against FFTW in double precision") != std::string::npos &&
               r.out.find("Speed of the whole filter") != std::string::npos && r.out.find("16x256") != std::string::npos,
           r.out);
}

TEST(csv_parses_and_holds_the_bounds) {
    test::Result r = test::run(fftcompare() + kSmall + " --csv");
    EXPECT(r.status == 0, r.err);
    std::vector<std::string> lines = split(r.out, '\n');
    EXPECT(lines.size() == 16, lines.size(), " lines (a header and 5 sizes x 3 implementations): ", r.out);
    if (lines.size() < 2) return;
    std::vector<std::string> header = split(lines[0], ',');
    auto col = [&](const char* name) {
        for (size_t i = 0; i < header.size(); ++i)
            if (header[i] == name) return i;
        check::fail(std::string("no column ") + name);
        return size_t{0};
    };
    std::set<std::string> implementations;
    for (size_t i = 1; i < lines.size(); ++i) {
        std::vector<std::string> cells = split(lines[i], ',');
        EXPECT(cells.size() == header.size(), "row ", i, ": ", lines[i]);
        if (cells.size() != header.size()) continue;
        double gpu = std::stod(cells[col("gpu_filter_rel_rms")]), cpu = std::stod(cells[col("fftwf_filter_rel_rms")]);
        EXPECT(gpu > 0 && gpu <= 1e-6 && gpu <= 3 * cpu, cells[0], " ", cells[1], ": GPU filter error ", gpu, " vs fftwf ", cpu);
        EXPECT(std::stod(cells[col("gpu_ms")]) > 0 && std::stod(cells[col("fftwf_1t_ms")]) > 0 && std::stod(cells[col("gpu_queued_ms")]) > 0,
               cells[0], " ", cells[1], ": no timings");
        implementations.insert(cells[col("implementation")]);
    }
    EXPECT(implementations == std::set<std::string>({"fragment radix-2", "fragment radix-16", "compute"}), "implementations side by side");
}

TEST(json_parses) {  // (the CSV test above also checks both implementations ran)
    test::Result r = test::run(fftcompare() + kSmall + " --json --no-speed");
    EXPECT(r.status == 0, r.err);
    // A structural check without a JSON library: balanced brackets outside strings, 5 sizes x 3 rows.
    int depth = 0, rows = 0;
    bool in_string = false, balanced = true;
    for (char c : r.out) {
        if (c == '"') in_string = !in_string;
        if (in_string) continue;
        if (c == '{' || c == '[') ++depth;
        if (c == '}' || c == ']') balanced &= --depth >= 0;
    }
    for (size_t p = 0; (p = r.out.find("\"size\":", p)) != std::string::npos; ++p) ++rows;
    EXPECT(balanced && depth == 0 && !in_string && rows == 15, "rows ", rows, ": ", r.out);
    EXPECT(r.out.find("\"gpu_rel_rms\"") != std::string::npos && r.out.find("\"fftw\": \"fftw-3") != std::string::npos, r.out);
}

// --plot draws through gnuplot (a dependency the README installs); where it is missing (the
// device machine), the one-line error that says so, and nothing left behind.
TEST(plot_is_written) {
    TempDir dir;
    const bool gnuplot = test::run("command -v gnuplot").status == 0;
    test::Result r = test::run(fftcompare() + " --sizes 32,64 --repeat 2 --warm-up 0 -q --plot " + dir / "plot.png");
    if (!gnuplot) {
        EXPECT(r.status == 1 && test::count_lines(r.err) == 1 && r.err.find("is gnuplot installed?") != std::string::npos,
               "without gnuplot: exit ", r.status, ": ", r.err);
        EXPECT(dir.list().empty(), "files left behind without gnuplot");
        return;
    }
    EXPECT(r.status == 0, r.err);
    std::string png = test::read_bytes(dir / "plot.png");
    EXPECT(png.size() > 8 && png.compare(1, 3, "PNG") == 0, "no PNG written");
    EXPECT(dir.list() == std::vector<std::string>{"plot.png"}, "temporary files left behind");
}

TEST(a_corrupted_spectrum_fails) {
    test::Result r = test::run(fftcompare() + " --sizes 64,128x32 --no-speed -q --test-corrupt-spectrum");
    EXPECT(r.status == 1, "exit ", r.status, " with a corrupted spectrum: ", r.err);
    for (const char* impl : {"fragment radix-2", "fragment radix-16"})
        EXPECT(r.err.find(std::string(impl) + " 64x64: forward spectrum relative RMS error") != std::string::npos &&
                   r.err.find(std::string(impl) + " 64x64: filtered image relative RMS error") != std::string::npos,
               impl, ": ", r.err);
}

TEST(bad_options) {
    for (const char* args : {" --sizes 22", " --sizes 64x", " --sizes 12x9", " --kernel nosuch", " --max-error x", " --warm-up -1",
                         " --compute-lines 33", " --plot /nonexistent/dir/p.png", " --compute-plan 64:8x4", " --compute-plan 12:3x4",
                         " --peak-bandwidth 0", " --race 'default;'", " --race default+radix=5", " --race default+lines=0", " --compute-fold 3", " --race default+fold=8",
                         " --compute-fuse 3", " --race default+fuse=3", " --compute-split 3", " --race default+split=3", " --compute-split diagonal:4", " --compute-split rows:4,columns:5", " --race default+max-line=100",
                         " --race nosuch", " --race 'default;64:8x4'", " --race default --sizes 64", " --race default+foo=3", " --race default+lines",
                         " --sizes 65536", " --sizes 2x65536 --pass-costs", " --sizes 65536 --race default"}) {
        test::Result r = test::run(fftcompare() + args);
        EXPECT(r.status == 2 && test::count_lines(r.err) == 1 && r.err.rfind("fftcompare: ", 0) == 0, "'", args, "': exit ",
               r.status, ": ", r.err);
    }
}

// A size the host's memory cannot hold fails in one line naming it (it was "std::bad_alloc"), here
// under an address-space limit; sizes past the GPU's texture limit are usage errors (bad_options).
TEST(sizes_past_memory_fail_in_one_line) {
#ifndef GPUFFT_SANITIZE  // (AddressSanitizer reserves terabytes of address space for its shadow)
    test::Result r = test::run("prlimit --as=2000000000 " + fftcompare() + " --sizes 8192 --backend compute --no-speed -q");
    EXPECT(r.status == 1 && test::count_lines(r.err) == 1 &&
               r.err.find("fftcompare: 8192x8192: not enough memory for its images and FFTW's references") != std::string::npos,
           "exit ", r.status, ": ", r.err);
#endif
}

// --compute-fuse: 20 x 64's columns of 64 split in quarters (lines of 16) take three column
// dispatches (A, B, A') as they are, two with step A in step B's loads (--compute-fuse 4).
TEST(compute_fuse_takes_the_fused_route) {
    for (const char* fuse : {"", " --compute-fuse 4"}) {
        test::Result r = test::run(fftcompare() + " --pass-costs --backend compute --compute-max-line 16 --sizes 20x64 --repeat 1 --warm-up 0 -q" + fuse);
        EXPECT(r.status == 0, "exit ", r.status, ": ", r.err, r.out);
        int columns = 0;
        for (const std::string& line : split(r.out, '\n')) columns += line.rfind("  columns filter ", 0) == 0;
        EXPECT(columns == (*fuse ? 2 : 3), "'", fuse, "': ", columns, " column dispatches: ", r.out);
    }
}

// --race: each (size, plan) pair in one process, a row each with its setup time, the queued ms
// per filter (with the minimum), ns per pixel, the ratio to the size's first plan, the ratio a
// pixel to its nearest power of two's first plan where the race holds it (60x30: 64x32's; 32x32,
// whose is itself, 1.000x; 12x12, nearest 16x16, which the race lacks: "-"), one filter's ms and
// each of the three dispatches' us.
TEST(race_times_each_plan_in_one_process) {
    const std::vector<std::string> plans = {"default", "composite+lines=1", "default+batch=2+images=2"};
    test::Result r = test::run(fftcompare() + " --backend compute --sizes 64x32,32,60x30,12 --race '" + plans[0] + ";" + plans[1] + ";" +
                               plans[2] + "' --repeat 2 --queue 2 --warm-up 0 -q");
    EXPECT(r.status == 0, "exit ", r.status, ": ", r.err, r.out);
    std::vector<std::string> rows;
    for (const std::string& line : split(r.out, '\n'))
        for (const char* size : {"64x32 ", "32x32 ", "60x30 ", "12x12 "})
            if (line.rfind(size, 0) == 0) rows.push_back(line);
    EXPECT(rows.size() == 12, rows.size(), " rows: ", r.out);
    std::map<std::string, double> ns_of;  // size and plan: ns a pixel
    for (size_t i = 0; i < rows.size(); ++i) {
        std::istringstream in(rows[i]);
        std::string size, plan, min, ratio, power, bar;
        double setup = -1, queued = -1, ns = -1, single = -1;
        in >> size >> plan >> setup >> queued >> min >> ns >> ratio >> power >> single >> bar;
        std::vector<double> us;
        for (double v; in >> v;) us.push_back(v);
        EXPECT(plan == plans[i % 3], "row ", i, ": ", rows[i]);
        EXPECT(setup >= 0 && queued > 0 && ns > 0 && single > 0 && bar == "|" && us.size() == 3, "row ", i, ": ", rows[i]);
        if (i % 3 == 0) EXPECT(ratio == "1.000x", "a size's first plan is its own yardstick: ", rows[i]);
        ns_of[size + plan] = ns;
        if (size == "12x12") {
            EXPECT(power == "-", "12x12's power of two (16x16) is not in the race: ", rows[i]);
        } else if (size != "60x30") {
            EXPECT(power == "1.000x", "a power of two under each plan is its own yardstick: ", rows[i]);
        } else {
            // Against 64x32 under the same plan (a batch against a batch).
            const double want = ns / ns_of["64x32" + plan];
            const double got = std::atof(power.c_str());
            EXPECT(power.back() == 'x' && std::fabs(got - want) <= 0.002 + 1e-3 * want, size, " against its power of two: ", power,
                   ", its ns/px give ", want, ": ", rows[i]);
        }
    }
    for (const char* key : {"batch", "images"}) {
        test::Result bad = test::run(fftcompare() + " --backend compute --sizes 32 --race 'default+" + key + "=0' -q");
        EXPECT(bad.status == 2 && bad.err.find(key) != std::string::npos, key, "=0: exit ", bad.status, ": ", bad.err);
    }
}

// --pass-costs on the compute backend: each dispatch's time, the bytes it moves (two texels of 16
// bytes read and two written per complex element, two of the kernel's read where it multiplies),
// the rate, and its share of the peak bandwidth given.
TEST(pass_costs_count_each_dispatchs_bytes) {
    test::Result r = test::run(fftcompare() + " --pass-costs --backend compute --sizes 64x32 --repeat 2 --warm-up 0 -q --peak-bandwidth 100");
    EXPECT(r.status == 0, "exit ", r.status, ": ", r.err, r.out);
    std::map<std::string, std::vector<double>> rows;  // label: us, MB, GB/s, % of peak
    for (const std::string& line : split(r.out, '\n')) {
        const size_t at = 2 + 44;  // the label's column
        if (line.rfind("  ", 0) != 0 || line.size() <= at || line.find("dispatch") != std::string::npos) continue;
        std::string label = line.substr(2, at - 2);
        label.erase(label.find_last_not_of(' ') + 1);
        std::istringstream in(line.substr(at));
        std::vector<double> v(4, -1);
        in >> v[0] >> v[1] >> v[2] >> v[3];
        rows[label] = v;
    }
    const double texels = 64.0 * 32;  // 64 x 32: every dispatch touches each texel of its image once
    struct Want {
        const char* label;
        double mb;
    };
    for (const Want& w : {Want{"rows forward", texels * 32e-6}, Want{"columns filter (with pair 0)", texels * 48e-6},
                          Want{"rows inverse", texels * 32e-6}, Want{"filter", texels * 112e-6}}) {
        auto it = rows.find(w.label);
        EXPECT(it != rows.end(), "no row ", w.label, ": ", r.out);
        if (it == rows.end()) continue;
        const std::vector<double>& v = it->second;
        EXPECT(v[0] > 0 && std::abs(v[1] - w.mb) < 1e-3 && std::abs(v[2] - w.mb * 1e3 / v[0]) <= 0.05 + 0.01 * v[2] &&
                   std::abs(v[3] - v[2]) <= 1,
               w.label, ": ", v[0], " us, ", v[1], " MB (want ", w.mb, "), ", v[2], " GB/s, ", v[3], "% of 100 GB/s");
    }
    // Then how each dispatch runs (ComputeFft::describe_dispatches): a line each, rows of 64 and
    // columns of 32, pair 0 in one workgroup of its own.
    const size_t how = r.out.find("\n  how each dispatch runs:\n");
    EXPECT(how != std::string::npos, "no dispatch shapes: ", r.out);
    if (how == std::string::npos) return;
    std::vector<std::string> shapes;
    for (const std::string& line : split(r.out.substr(how + 1), '\n'))
        if (line.rfind("    ", 0) == 0) shapes.push_back(line.substr(4));
    EXPECT(shapes.size() == 4, shapes.size(), " dispatch shapes: ", r.out);
    const std::vector<std::pair<std::string, std::string>> want = {{"rows forward: ", "lines of 64 ("},
                                                                   {"columns filter (pair 0): 1 workgroup of 1 x ", "lines of 32 ("},
                                                                   {"columns filter: ", "lines of 32 ("},
                                                                   {"rows inverse: ", "lines of 64 ("}};
    for (size_t i = 0; i < want.size() && i < shapes.size(); ++i)
        EXPECT(shapes[i].rfind(want[i].first, 0) == 0 && shapes[i].find(want[i].second) != std::string::npos &&
                   shapes[i].find("bytes of shared memory") != std::string::npos,
               "shape ", i, ": ", shapes[i]);
}
