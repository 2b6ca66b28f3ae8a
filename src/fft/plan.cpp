#include "fft/plan.h"

#include "fft/sizes.h"

#include <algorithm>
#include <cstdio>
#include <functional>
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

std::string Variant::file_name() const { return file.empty() ? std::string(program_name(program)) + ".frag" : file; }

std::string Variant::describe() const {
    std::string s = file.empty() ? program_name(program) : file.substr(0, file.find('.'));
    s += "[";
    for (size_t i = 0; i < defines.size(); ++i) s += (i ? " " : "") + defines[i];
    return s + "]";
}

bool Variant::operator<(const Variant& o) const {
    return std::tie(program, defines, file) < std::tie(o.program, o.defines, o.file);
}

void check_fast_size(int width, int height) {
    check_fft_size(width, height);
    if (!fast_chain_size(width, height))
        throw std::invalid_argument("the fast chain needs sides of at least 4, not " + std::to_string(width) + "x" + std::to_string(height));
}

bool fast_chain_length(long long length) { return length >= 4 && is_fast_size(length); }

int plane_blocks(long long length) { return length % 4 == 0 ? 4 : 2; }

int butterfly_outputs(int radix, int blocks) { return blocks == 4 && radix % 4 == 0 ? 4 : radix % 2 == 0 ? 2 : 1; }

bool fast_chain_size(int width, int height) { return fast_chain_length(width) && fast_chain_length(height); }

bool is_power_of_two(long long n) { return n > 0 && (n & (n - 1)) == 0; }

int log2_exact(long long n) {
    int k = 0;
    while ((1LL << k) < n) ++k;
    return k;
}

void check_fft_size(int width, int height) {
    if (!is_fast_size(width) || !is_fast_size(height))
        throw std::invalid_argument("FFT size " + std::to_string(width) + "x" + std::to_string(height) +
                                    " is not two even sizes with prime factors 2, 3, 5 and 7 only");
}

void check_power_of_two_size(int width, int height) {
    if (width < 2 || height < 2 || !is_power_of_two(width) || !is_power_of_two(height))
        throw std::invalid_argument("FFT size " + std::to_string(width) + "x" + std::to_string(height) +
                                    " is not two powers of two of at least 2 (the paper's radix-2 chain takes no other)");
}

namespace {

/// The #defines that tell the programs the planes' layouts (common.glsl): "ROW_BLOCKS B", "COLUMN_BLOCKS B".
std::vector<std::string> block_defines(int row_blocks, int column_blocks) {
    return {"ROW_BLOCKS " + std::to_string(row_blocks), "COLUMN_BLOCKS " + std::to_string(column_blocks)};
}
std::vector<std::string> plane_block_defines(int width, int height) { return block_defines(plane_blocks(width), plane_blocks(height)); }

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

/// The radix-2 chain reads the caller's input first, ping-pongs, and ends in the caller's output.
Plan& connect(Plan& plan) {
    for (Pass& p : plan.passes) p.source = p.target = Surface::Pair;
    plan.passes.front().source = Surface::Input;
    plan.passes.back().target = Surface::Output;
    return plan;
}

}  // namespace

Plan forward_plan(int width, int height) {
    check_power_of_two_size(width, height);
    Plan plan{width, height, {}};
    Axis rows = row_axis(width, height), columns = column_axis(width, height);
    add_fft_passes(plan, rows, false);
    add_pair_pass(plan, rows, true, 1.0f / static_cast<float>(width));
    add_fft_passes(plan, columns, false);
    add_pair_pass(plan, columns, true, 1.0f / static_cast<float>(height));
    return connect(plan);
}

Plan inverse_plan(int width, int height) {
    check_power_of_two_size(width, height);
    Plan plan{width, height, {}};
    Axis rows = row_axis(width, height), columns = column_axis(width, height);
    add_pair_pass(plan, columns, false, 1.0f);
    add_fft_passes(plan, columns, true);
    add_pair_pass(plan, rows, false, 1.0f);
    add_fft_passes(plan, rows, true);
    return connect(plan);
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
    using Partner = MultiplyVariant::Partner;
    using Part = MultiplyVariant::Part;
    for (int x : {0, m / 2}) {
        for (int y : {0, n / 2}) add(multiply, Variant(MultiplyVariant{Partner::None, Part::RealOnly}), {x, y, x + 1, y + 1});
        add(multiply, Variant(MultiplyVariant{Partner::Row, Part::Real}), {x, 1, x + 1, n / 2});
        add(multiply, Variant(MultiplyVariant{Partner::Row, Part::Imag}), {x, n / 2 + 1, x + 1, n});
    }
    add(multiply, Variant(MultiplyVariant{Partner::Column, Part::Real}), {1, 0, m / 2, n});
    add(multiply, Variant(MultiplyVariant{Partner::Column, Part::Imag}), {m / 2 + 1, 0, m, n});
    plan.passes.push_back(std::move(multiply));
    Plan inverse = inverse_plan(width, height);
    for (Pass& p : inverse.passes) plan.passes.push_back(std::move(p));
    return connect(plan);
}

std::vector<int> radices(int length) {
    if (!fast_chain_length(length))
        throw std::invalid_argument("the fast chain needs even axes of at least 4 with prime factors 2, 3, 5 and 7, not " +
                                    std::to_string(length));
    const std::vector<int> factors = prime_factors(length);
    const int twos = static_cast<int>(std::count(factors.begin(), factors.end(), 2));
    if (twos == 1) {
        // 2 mod 4: planes of two blocks, where an odd radix R costs a fragment two butterflies: R
        // inputs and R - 1 twiddles fetched an output (R/2 and R/2 for an even one). Passes are
        // bound by those fetches, so small radices in more passes win (src/README.md: at 1050^2
        // on the H200 radix 15 took 2245 us untangling rows, radix 14 560 us, 5 404 us): the 2
        // joins the smallest odd prime in the first stage (whose loads untangle, multiply or
        // gather row pairs, each input dearer), the other primes stand alone, largest first.
        std::vector<int> r(factors.begin() + 1, factors.end());  // odd primes, ascending
        r.front() *= 2;
        std::stable_sort(r.begin() + 1, r.end(), std::greater<int>());
        return r;
    }
    int two = 1 << twos;
    // Each odd prime, largest first, takes a factor 4 of the power of two while one is left (radix
    // 12, 20, 28: the four outputs of a fragment are one butterfly's), else a 2 (6, 10, 14: two
    // butterflies'), else stands alone: a lone 3 or 5 is a pass bound by its write, while 9 or 15
    // would cost a fragment four butterflies of 9 or 15 fetched inputs (as 2 mod 4 above).
    std::vector<int> r;
    for (auto p = factors.rbegin(); p != factors.rend() && *p > 2; ++p) {
        if (two >= 4) r.push_back(4 * *p), two /= 4;
        else if (two == 2) r.push_back(2 * *p), two = 1;
        else r.push_back(*p);
    }
    // The rest of the power of two: as many 16s as fit, then 8 or 4 (or 8 and 4); a lone 2 joins the
    // smallest radix-4p stage (24 = 8 x 3) or stands alone.
    if (two == 2) {
        auto small = std::min_element(r.begin(), r.end());
        if (small != r.end() && *small % 4 == 0 && 2 * *small <= 32) *small *= 2;
        else r.push_back(2);
    } else if (two >= 4) {
        const int n = log2_exact(two);
        r.insert(r.end(), static_cast<size_t>(n / 4), 16);
        switch (n % 4) {
            case 1: r.erase(r.end() - 1); r.insert(r.end(), {8, 4}); break;  // 16 = 2^4 gives way to 8 x 4 = 2^5
            case 2: r.push_back(4); break;
            case 3: r.push_back(8); break;
            default: break;
        }
    }
    std::stable_sort(r.begin(), r.end(), std::greater<int>());
    return r;
}

const char* define_of(FastVariant::Load l) {
    using Load = FastVariant::Load;
    switch (l) {
        case Load::Image: return "LOAD_IMAGE";
        case Load::UntangleRows: return "LOAD_UNTANGLE_ROWS";
        case Load::Spectrum: return "LOAD_SPECTRUM";
        case Load::Multiply: return "LOAD_MULTIPLY";
        case Load::Planes: return "LOAD_PLANES";
        case Load::RowPairs: return "LOAD_ROW_PAIRS";
    }
    return "";
}

const char* define_of(FastVariant::Store s) {
    using Store = FastVariant::Store;
    switch (s) {
        case Store::Planes: return "STORE_PLANES";
        case Store::Image: return "STORE_IMAGE";
        case Store::RowPairs: return "STORE_ROW_PAIRS";
    }
    return "";
}

std::vector<std::string> FastVariant::defines() const {
    std::vector<std::string> d = {rows ? "AXIS_ROWS" : "AXIS_COLUMNS", "RADIX " + std::to_string(radix), define_of(load), define_of(store)};
    if (inverse && !multiply_between) d.push_back("INVERSE");
    if (multiply_between) d.push_back("MULTIPLY_BETWEEN");
    if (computed_twiddles) d.push_back("TWIDDLE_COMPUTED");
    if (source == Surface::RowPlanes) d.push_back("SRC_ROW_PLANES");
    if (source == Surface::ColumnPlanes) d.push_back("SRC_COLUMN_PLANES");
    if (pair == Pair::Tangled) d.push_back("PAIR_TANGLED");
    if (pair == Pair::Mirror) d.push_back("PAIR_MIRROR");
    for (std::string& b : block_defines(row_blocks, column_blocks)) d.push_back(std::move(b));
    return d;
}

Variant::Variant(const FastVariant& v) : program(Program::Fft), defines(v.defines()), file("fft_radix.frag"), fast(v) {}

std::vector<std::string> MultiplyVariant::defines() const {
    std::vector<std::string> d;
    if (partner == Partner::Row) d.push_back("PARTNER_ROW");
    if (partner == Partner::Column) d.push_back("PARTNER_COLUMN");
    d.push_back(part == Part::RealOnly ? "PART_REAL_ONLY" : part == Part::Real ? "PART_REAL" : "PART_IMAG");
    return d;
}

Variant::Variant(const MultiplyVariant& v) : program(Program::Multiply), defines(v.defines()), multiply(v) {}

namespace {

struct FastStage {
    int radix, stride;
};

/// Stages for radices applied in this order along an axis of `length`.
std::vector<FastStage> stages_of(const std::vector<int>& order, int length) {
    std::vector<FastStage> stages;
    int size = 1;
    for (int radix : order) {
        size *= radix;
        stages.push_back({radix, length / size});
    }
    return stages;
}

/// How one pass of the fast chain reads, computes and writes.
struct FastPass {
    bool rows, inverse;
    FastStage stage;
    FastVariant::Load load;
    FastVariant::Store store;
    Surface source;
    bool multiply_between = false;
};

void add_fast_pass(Plan& plan, const FastPass& f, float scale, bool computed_twiddles) {
    const int m = plan.width, n = plan.height;
    Pass pass;
    pass.label = std::string(f.rows ? "row " : "column ") + (f.multiply_between ? "FFT, multiply, inverse FFT" : f.inverse ? "inverse FFT" : "FFT") +
                 ", radix " + std::to_string(f.stage.radix) + ", P = " + std::to_string(f.stage.stride);
    pass.stride = static_cast<float>(f.stage.stride);
    pass.axis_length = static_cast<float>(f.rows ? m : n);
    pass.radix = f.stage.radix;
    pass.scale = scale;
    pass.source = f.source;
    pass.target = f.store == FastVariant::Store::Image ? Surface::Output : (f.rows ? Surface::RowPlanes : Surface::ColumnPlanes);
    pass.reads_kernel = f.multiply_between;
    FastVariant v;
    v.rows = f.rows;
    v.radix = f.stage.radix;
    v.load = f.load;
    v.store = f.store;
    v.inverse = f.inverse;
    v.multiply_between = f.multiply_between;
    v.computed_twiddles = computed_twiddles;
    v.source = f.source;
    v.row_blocks = plane_blocks(m);
    v.column_blocks = plane_blocks(n);
    // Plane targets: the transformed axis along x, the lines (row pairs, column pairs) along y.
    const Region target = pass.target == Surface::Output ? Region{0, 0, m, n}
                          : f.rows                      ? Region{0, 0, m / v.row_blocks, n / 2}
                                                        : Region{0, 0, n / v.column_blocks, m / 2};
    // Column pair 0 (columns 0 and M/2, tangled) is read, multiplied or stored unlike the others.
    bool split = !f.rows && (f.load != FastVariant::Load::Planes || f.multiply_between);
    if (split) {
        FastVariant tangled = v, mirror = v;
        tangled.pair = FastVariant::Pair::Tangled;
        mirror.pair = FastVariant::Pair::Mirror;
        add(pass, Variant(tangled), {0, 0, target.x1, 1});
        add(pass, Variant(mirror), {0, 1, target.x1, target.y1});
    } else {
        add(pass, Variant(v), target);
    }
    plan.passes.push_back(std::move(pass));
}

/// A run of stages along one axis: the first pass loads with `first_load` from `first_source`, the
/// last stores with `last_store`, the passes between read and write the axis's planes.
void add_fast_stages(Plan& plan, bool rows, bool inverse, const std::vector<FastStage>& stages, FastVariant::Load first_load,
                     Surface first_source, FastVariant::Store last_store, float scale, bool computed_twiddles) {
    for (size_t i = 0; i < stages.size(); ++i) {
        FastPass f{rows, inverse, stages[i], i == 0 ? first_load : FastVariant::Load::Planes,
                   i + 1 == stages.size() ? last_store : FastVariant::Store::Planes,
                   i == 0 ? first_source : (rows ? Surface::RowPlanes : Surface::ColumnPlanes)};
        add_fast_pass(plan, f, scale, computed_twiddles);
    }
}

/// The row planes to the M x N image: what the last inverse row stage writes when its radix is
/// above 4 (one output per fragment would then cost too many fetches).
void add_unplane(Plan& plan) {
    Pass pass;
    pass.label = "row planes to the image";
    pass.source = Surface::RowPlanes;
    pass.target = Surface::Output;
    std::vector<std::string> defines = {"SRC_ROW_PLANES"};
    for (std::string& d : plane_block_defines(plan.width, plan.height)) defines.push_back(std::move(d));
    add(pass, {Program::Pass, defines}, {0, 0, plan.width, plan.height});
    plan.passes.push_back(std::move(pass));
}

/// The inverse row stage, from the row pairs the inverse column stage stored, smallest radix last:
/// it writes the image directly when that radix is at most 4, else planes and a copy pass.
void add_fast_inverse_rows(Plan& plan, bool computed_twiddles) {
    std::vector<int> order = radices(plan.width);  // descending: smallest last
    bool direct = order.back() == 4 || order.back() == 2;
    add_fast_stages(plan, true, true, stages_of(order, plan.width), FastVariant::Load::RowPairs, Surface::ColumnPlanes,
                    direct ? FastVariant::Store::Image : FastVariant::Store::Planes, 1.0f, computed_twiddles);
    if (!direct) add_unplane(plan);
}

}  // namespace

Plan fast_forward_plan(int width, int height, bool computed_twiddles) {
    check_fast_size(width, height);
    Plan plan{width, height, {}};
    add_fast_stages(plan, true, false, stages_of(radices(width), width), FastVariant::Load::Image, Surface::Input, FastVariant::Store::Planes, 1.0f,
                    computed_twiddles);
    add_fast_stages(plan, false, false, stages_of(radices(height), height), FastVariant::Load::UntangleRows, Surface::RowPlanes, FastVariant::Store::Planes,
                    normalisation(width, height).rows, computed_twiddles);
    // Untangle columns 0 and M/2, scale by 1/N, and leave the planes for the layout of Eq. 10:
    // the radix-2 chain's last pass, reading planes.
    Plan tail{width, height, {}};
    add_pair_pass(tail, column_axis(width, height), true, normalisation(width, height).columns);
    Pass& last = tail.passes.back();
    for (Draw& d : last.draws) {
        d.variant.defines.push_back("SRC_COLUMN_PLANES");
        for (std::string& b : plane_block_defines(width, height)) d.variant.defines.push_back(std::move(b));
    }
    last.source = Surface::ColumnPlanes;
    last.target = Surface::Output;
    plan.passes.push_back(std::move(last));
    return plan;
}

Plan fast_inverse_plan(int width, int height, bool computed_twiddles) {
    check_fast_size(width, height);
    Plan plan{width, height, {}};
    add_fast_stages(plan, false, true, stages_of(radices(height), height), FastVariant::Load::Spectrum, Surface::Input, FastVariant::Store::RowPairs, 1.0f,
                    computed_twiddles);
    add_fast_inverse_rows(plan, computed_twiddles);
    return plan;
}

Plan fast_filter_plan(int width, int height, bool computed_twiddles) {
    check_fast_size(width, height);
    Plan plan{width, height, {}};
    add_fast_stages(plan, true, false, stages_of(radices(width), width), FastVariant::Load::Image, Surface::Input, FastVariant::Store::Planes, 1.0f,
                    computed_twiddles);
    // Columns. The last forward stage (stride 1) and the first inverse stage (stride N/R) share
    // their R elements, so where R <= 8 one pass does both with the multiply between them; at
    // radix 16 the multiply rides on the first inverse stage's load instead. The last inverse stage
    // stores row pairs for the inverse row stage.
    std::vector<int> forward = radices(height);
    std::vector<FastStage> forward_stages = stages_of(forward, height);
    const float row_scale = normalisation(width, height).rows;
    // The kernel spectrum carries 1/(MN) and the image's transform only the row factor, which the
    // multiply's gain gives back (normalisation(): powers of two, exact).
    const float gain = normalisation(width, height).filter_gain;
    if (forward.back() == 4 || forward.back() == 8) {
        std::vector<int> inverse = {forward.back()};
        inverse.insert(inverse.end(), forward.begin(), forward.end() - 1);
        std::vector<FastStage> inverse_stages = stages_of(inverse, height);
        add_fast_stages(plan, false, false, std::vector<FastStage>(forward_stages.begin(), forward_stages.end() - 1),
                        FastVariant::Load::UntangleRows, Surface::RowPlanes, FastVariant::Store::Planes, row_scale, computed_twiddles);
        const bool first = forward.size() == 1, last = inverse.size() == 1;
        FastPass between{false, true, inverse_stages.front(), first ? FastVariant::Load::UntangleRows : FastVariant::Load::Planes,
                         last ? FastVariant::Store::RowPairs : FastVariant::Store::Planes, first ? Surface::RowPlanes : Surface::ColumnPlanes, true};
        // When this pass also untangles the rows (one column stage) it needs their factor as well;
        // it and the gain meet on the same values and cancel, so both uniforms are 1.
        add_fast_pass(plan, between, first ? 1.0f : gain, computed_twiddles);
        add_fast_stages(plan, false, true, std::vector<FastStage>(inverse_stages.begin() + 1, inverse_stages.end()), FastVariant::Load::Planes,
                        Surface::ColumnPlanes, FastVariant::Store::RowPairs, 1.0f, computed_twiddles);
    } else {
        add_fast_stages(plan, false, false, forward_stages, FastVariant::Load::UntangleRows, Surface::RowPlanes, FastVariant::Store::Planes, row_scale,
                        computed_twiddles);
        add_fast_stages(plan, false, true, forward_stages, FastVariant::Load::Multiply, Surface::ColumnPlanes, FastVariant::Store::RowPairs, gain,
                        computed_twiddles);
    }
    add_fast_inverse_rows(plan, computed_twiddles);
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

int radix_of(const Variant& v) { return v.fast ? v.fast->radix : 0; }

Cost cost_of(const Variant& v) {
    if (v.fast) {
        // fft_radix.frag: R inputs, each some fetches and flops for its load; R - 1 twiddle
        // multiplies (6 flops), the sums Z_s (R - 4 complex adds) and the radix-4 outputs (8 complex adds).
        using Load = FastVariant::Load;
        const FastVariant& f = *v.fast;
        const int r = f.radix;
        const bool tangled = f.pair == FastVariant::Pair::Tangled;
        int fetches = 2, load_flops = 0;
        if (f.load == Load::UntangleRows) fetches = 4, load_flops = tangled ? 2 : 6;
        if (f.load == Load::Spectrum && tangled) fetches = 4, load_flops = 6;
        if (f.load == Load::Multiply) fetches = tangled ? 8 : 4, load_flops = tangled ? 40 : 8;
        if (f.multiply_between) fetches = tangled ? 10 : 4, load_flops = tangled ? 40 : 8;
        Cost c;
        c.fetches = r * fetches + (f.computed_twiddles ? 0 : r / 2);
        c.flops = 4 * (r * load_flops + 6 * (r - 1) + 2 * (r - 4) + 16);
        c.writes = f.store == FastVariant::Store::Image ? 1 : 2 * (f.rows ? f.row_blocks : f.column_blocks);
        return c;
    }
    switch (v.program) {
        case Program::Fft: return {4, 16, 1};       // E, O, O's other part, twiddle; E + Wr O -+ Wi O'
        case Program::Untangle: return {2, 8, 1};   // (a +- b) * s
        case Program::Scale: return {1, 4, 1};
        case Program::Tangle: return {2, 4, 1};
        case Program::Pass: return {1, 0, 1};
        case Program::Multiply:  // (ab -+ a'b') * gain
            return v.multiply && v.multiply->part == MultiplyVariant::Part::RealOnly ? Cost{2, 8, 1} : Cost{4, 16, 1};
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
            t.bytes_written[p] += n * c.writes * 16.0;
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

}  // namespace gpufft
