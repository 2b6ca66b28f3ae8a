#include "fft/plan.h"

#include <cstdio>
#include <stdexcept>
#include <tuple>

namespace gpufft {

const char* program_name(Program p) {
    switch (p) {
        case Program::Fft: return "fft";
        case Program::Untangle: return "untangle";
        case Program::Scale: return "scale";
        case Program::Tangle: return "tangle";
        case Program::Pass: return "pass";
        case Program::Multiply: return "multiply";
    }
    return "?";
}

std::string Variant::describe() const {
    std::string s = program_name(program);
    s += "[";
    for (size_t i = 0; i < defines.size(); ++i) s += (i ? " " : "") + defines[i];
    return s + "]";
}

bool Variant::operator<(const Variant& o) const {
    return std::tie(program, defines) < std::tie(o.program, o.defines);
}

bool is_power_of_two(long long n) { return n > 0 && (n & (n - 1)) == 0; }

int log2_exact(long long n) {
    int k = 0;
    while ((1LL << k) < n) ++k;
    return k;
}

void check_fft_size(int width, int height) {
    if (width < 2 || height < 2 || !is_power_of_two(width) || !is_power_of_two(height))
        throw std::invalid_argument("FFT size " + std::to_string(width) + "x" + std::to_string(height) +
                                    " is not two powers of two of at least 2");
}

namespace {

struct Range {
    int lo = 0, hi = 0;  // [lo, hi)
};

/// One axis of the 2D transform in (along, across) terms. Along the axis runs the 1D transform of
/// length L; across it the complex values are split over a real and an imaginary half.
struct Axis {
    bool rows;                 // true: along x (the row transforms); false: along y (the columns)
    int length;                // L: M for rows, N for columns
    Range tangled[2];          // across ranges of the real and imaginary halves of tangled pairs (Eq. 7)
    Range mirrored[2];         // across ranges of the complex columns (Eq. 10); empty for rows

    const char* axis_define() const { return rows ? "AXIS_ROWS" : "AXIS_COLUMNS"; }
    Region region(Range along, Range across) const {
        return rows ? Region{along.lo, across.lo, along.hi, across.hi} : Region{across.lo, along.lo, across.hi, along.hi};
    }
};

const char* kPart[2] = {"PART_REAL", "PART_IMAG"};

/// Rows: row y < N/2 is the real half, row y + N/2 its imaginary partner.
Axis row_axis(int m, int n) { return Axis{true, m, {{0, n / 2}, {n / 2, n}}, {{0, 0}, {0, 0}}}; }

/// Columns, after the row stage (Figure 1 layout in every row): columns 0 and M/2 are real
/// sequences, tangled as one complex column; column x in (0, M/2) holds the real part and column
/// M - x the imaginary part of one complex column.
Axis column_axis(int m, int n) {
    return Axis{false, n, {{0, 1}, {m / 2, m / 2 + 1}}, {{1, m / 2}, {m / 2 + 1, m}}};
}

void add(Pass& pass, Variant v, Region r) {
    if (!r.empty()) pass.draws.push_back(Draw{std::move(v), r});
}

std::string stride_label(const char* what, const Axis& axis, int stride) {
    return std::string(axis.rows ? "row " : "column ") + what + ", P = " + std::to_string(stride);
}

/// log L iterations of Eq. 6; iteration i has partitions of size 2^i at stride P = L / 2^i.
void add_fft_passes(Plan& plan, const Axis& axis, bool inverse) {
    for (int stride = axis.length / 2; stride >= 1; stride /= 2) {
        Pass pass;
        pass.label = stride_label(inverse ? "inverse FFT" : "FFT", axis, stride);
        pass.stride = static_cast<float>(stride);
        pass.axis_length = static_cast<float>(axis.length);
        for (int part = 0; part < 2; ++part) {
            std::vector<std::string> defs = {axis.axis_define(), "PAIR_TANGLED", kPart[part]};
            if (inverse) defs.push_back("INVERSE");
            add(pass, {Program::Fft, defs}, axis.region({0, axis.length}, axis.tangled[part]));
        }
        for (int part = 0; part < 2; ++part) {
            std::vector<std::string> defs = {axis.axis_define(), "PAIR_MIRROR", kPart[part]};
            if (inverse) defs.push_back("INVERSE");
            add(pass, {Program::Fft, defs}, axis.region({0, axis.length}, axis.mirrored[part]));
        }
        plan.passes.push_back(std::move(pass));
    }
}

/// The untangle (forward) or tangle (inverse) step of one axis. Indices k = 0 and L/2 of a tangled
/// pair need no untangling (H(0) = F(0) + jG(0) with both real), and the complex columns are not
/// tangled at all: those texels are only scaled (forward) or copied (inverse).
void add_pair_pass(Plan& plan, const Axis& axis, bool forward, float scale) {
    Program pair_program = forward ? Program::Untangle : Program::Tangle;
    Program rest_program = forward ? Program::Scale : Program::Pass;
    int half = axis.length / 2;
    Pass pass;
    pass.label = std::string(axis.rows ? "row " : "column ") + (forward ? "untangle + scale" : "tangle");
    pass.scale = scale;
    pass.axis_length = static_cast<float>(axis.length);
    for (int part = 0; part < 2; ++part) {
        Range across = axis.tangled[part];
        add(pass, {pair_program, {axis.axis_define(), "PAIR_TANGLED", kPart[part], "HALF_LOW"}}, axis.region({1, half}, across));
        add(pass, {pair_program, {axis.axis_define(), "PAIR_TANGLED", kPart[part], "HALF_HIGH"}},
            axis.region({half + 1, axis.length}, across));
        add(pass, {rest_program, {}}, axis.region({0, 1}, across));
        add(pass, {rest_program, {}}, axis.region({half, half + 1}, across));
    }
    for (int part = 0; part < 2; ++part) add(pass, {rest_program, {}}, axis.region({0, axis.length}, axis.mirrored[part]));
    plan.passes.push_back(std::move(pass));
}

}  // namespace

Plan forward_plan(int width, int height) {
    check_fft_size(width, height);
    Plan plan{width, height, {}};
    Axis rows = row_axis(width, height), columns = column_axis(width, height);
    add_fft_passes(plan, rows, false);
    add_pair_pass(plan, rows, true, 1.0f / static_cast<float>(width));
    add_fft_passes(plan, columns, false);
    add_pair_pass(plan, columns, true, 1.0f / static_cast<float>(height));
    return plan;
}

Plan inverse_plan(int width, int height) {
    check_fft_size(width, height);
    Plan plan{width, height, {}};
    Axis rows = row_axis(width, height), columns = column_axis(width, height);
    add_pair_pass(plan, columns, false, 1.0f);
    add_fft_passes(plan, columns, true);
    add_pair_pass(plan, rows, false, 1.0f);
    add_fft_passes(plan, rows, true);
    return plan;
}

Plan filter_plan(int width, int height) {
    Plan plan = forward_plan(width, height);
    int m = width, n = height;
    Pass multiply;
    multiply.label = "multiply";
    multiply.reads_kernel = true;
    // Both spectra carry the forward scaling 1/(MN); their product needs one factor MN back
    // (convolution theorem with the paper's normalisation). A power of two: exact.
    multiply.scale = static_cast<float>(static_cast<double>(m) * n);
    for (int x : {0, m / 2}) {
        for (int y : {0, n / 2}) add(multiply, {Program::Multiply, {"PART_REAL_ONLY"}}, {x, y, x + 1, y + 1});
        add(multiply, {Program::Multiply, {"PARTNER_ROW", "PART_REAL"}}, {x, 1, x + 1, n / 2});
        add(multiply, {Program::Multiply, {"PARTNER_ROW", "PART_IMAG"}}, {x, n / 2 + 1, x + 1, n});
    }
    add(multiply, {Program::Multiply, {"PARTNER_COLUMN", "PART_REAL"}}, {1, 0, m / 2, n});
    add(multiply, {Program::Multiply, {"PARTNER_COLUMN", "PART_IMAG"}}, {m / 2 + 1, 0, m, n});
    plan.passes.push_back(std::move(multiply));
    Plan inverse = inverse_plan(width, height);
    for (Pass& p : inverse.passes) plan.passes.push_back(std::move(p));
    return plan;
}

std::array<long long, kProgramCount> count_invocations(const Plan& plan) {
    std::array<long long, kProgramCount> count{};
    for (const Pass& pass : plan.passes)
        for (const Draw& d : pass.draws) count[static_cast<size_t>(d.variant.program)] += d.region.area();
    return count;
}

long long table1_invocations(Program p, int width, int height) {
    long long m = width, n = height;
    switch (p) {
        case Program::Fft: return 2 * m * n * (log2_exact(n) + log2_exact(m));
        case Program::Untangle: return m * n - 4;
        case Program::Scale: return m * n + 2 * n;
        case Program::Tangle: return m * n - 4;
        case Program::Pass: return m * n + 2 * n;
        case Program::Multiply: return m * n;
    }
    return 0;
}

namespace {
bool has(const Variant& v, const char* define) {
    for (const std::string& d : v.defines)
        if (d == define) return true;
    return false;
}
}  // namespace

Cost cost_of(const Variant& v) {
    switch (v.program) {
        case Program::Fft: return {4, 16};       // E, O, O's other part, twiddle; E + Wr O -+ Wi O'
        case Program::Untangle: return {2, 8};   // (a +- b) * s
        case Program::Scale: return {1, 4};
        case Program::Tangle: return {2, 4};
        case Program::Pass: return {1, 0};
        case Program::Multiply: return has(v, "PART_REAL_ONLY") ? Cost{2, 8} : Cost{4, 16};  // (ab -+ a'b') * gain
    }
    return {};
}

Totals plan_totals(const Plan& plan) {
    Totals t;
    for (const Pass& pass : plan.passes)
        for (const Draw& d : pass.draws) {
            size_t p = static_cast<size_t>(d.variant.program);
            Cost c = cost_of(d.variant);
            double n = static_cast<double>(d.region.area());
            t.invocations[p] += d.region.area();
            t.flops[p] += n * c.flops;
            t.bytes_read[p] += n * c.fetches * 16.0;
            t.bytes_written[p] += n * 16.0;
        }
    return t;
}

PaperInstructions paper_instructions(Program p) {
    switch (p) {
        case Program::Fft: return {27, 3};
        case Program::Untangle: return {4, 2};
        case Program::Scale: return {1, 1};
        case Program::Tangle: return {1, 2};
        case Program::Pass: return {0, 1};
        case Program::Multiply: return {66, 4};
    }
    return {0, 0};
}

std::string describe_plan(const Plan& plan) {
    std::string out;
    char line[256];
    for (size_t i = 0; i < plan.passes.size(); ++i) {
        const Pass& pass = plan.passes[i];
        std::snprintf(line, sizeof line, "pass %2zu  %s\n", i + 1, pass.label.c_str());
        out += line;
        for (const Draw& d : pass.draws) {
            std::snprintf(line, sizeof line, "          %-52s x %d..%d, y %d..%d\n", d.variant.describe().c_str(),
                          d.region.x0, d.region.x1 - 1, d.region.y0, d.region.y1 - 1);
            out += line;
        }
    }
    return out;
}

}  // namespace gpufft
