#include "fft/compute_fft.h"

#include "base/error.h"
#include "base/parse.h"

#include "fft/plan.h"
#include "fft/sizes.h"
#include "fft/tuning.h"
#include "fft/twiddle.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <limits>
#include <stdexcept>

namespace gpufft {

namespace {

GLint gl_integer(GLenum what) {
    GLint v = 0;
    glGetIntegerv(what, &v);
    return v;
}

/// Floats per shared-memory element for COMPONENTS (8 is two vec4 arrays).
int width_of(int components) { return components == 8 ? 4 : components; }

/// One element of padding per this many (0: none): a 128-byte row of banks per G lines' elements.
/// Lines of a power-of-two length only: their stages' strides are powers of two, which meet in one
/// bank without it. A length with factors 3, 5 or 7 has strides that spread over the banks, and the
/// padding's index arithmetic cost more than it saved (H100, 2026-11-24, 200 filters queued: 1920x1080
/// 0.193 against 0.196 ms, 2000x1152 0.209 against 0.219, 3840x2160 0.711 against 0.731, 1536^2,
/// 3000^2 and 3072^2 the same or 0.5% faster; src/README.md, "Any FFT size").
int pad_every(int components, int lines, int length) {
    if (!is_power_of_two(length)) return 0;
    int per_row = 32 / (width_of(components) * lines);
    return per_row >= 2 ? per_row : 0;
}

/// The register slots a workgroup of `threads` takes of an SM's file: its warps rounded up to a
/// multiple of 4, 32 threads each (ComputeFft::register_cap, auto_row_tail).
int register_slots(int threads) {
    const int warps = (threads + 31) / 32;
    return 32 * ((warps + 3) / 4 * 4);
}

/// Whether `lines` lines of a plan fit one workgroup's registers without spilling: the elements a
/// thread holds (8 floats each) and 24 more, within the cap. Measured on the H100 (test/nv_isa.py):
/// the 1080 column filter as 6 6 6 5 (216 threads, 6 elements) fits four lines at the cap of 72;
/// 1152 as 6 6 8 4 with 192 threads (8 elements) spilled 30 loads a thread at four lines' 80 and
/// ran 1.024x slower than two lines of the planner's plan.
bool registers_fit(const ComputeFft::LinePlan& plan, int lines) {
    return 8 * plan.registers + 24 <= ComputeFft::register_cap(lines * plan.threads);
}

/// Shared memory of a workgroup of `lines` lines of `length`, COMPONENTS floats per round.
long long shared_bytes(int length, int lines, int components, int pad) {
    long long slots = length + (pad > 0 ? (length - 1) / pad : 0);
    return static_cast<long long>(lines) * slots * width_of(components) * 4 * (components == 8 ? 2 : 1);
}

/// Shared memory of a line's twiddle table copied there (fft_line.comp's s_twiddle: a vec2 an element).
long long twiddle_table_bytes(int length) { return 8LL * length; }

/// The stages of a transform as literal calls: butterflies(r, P, dir, from_buffer), and between
/// stages exchange(r_out, r_in, P_in), P the output stride L / S; stage i takes its twiddles from
/// the storage buffer where bit i of `buffer_stages` is set.
std::string stage_calls(const std::vector<int>& radices, int length, const char* dir, unsigned buffer_stages) {
    std::string s;
    int size = 1;
    for (size_t i = 0; i < radices.size(); ++i) {
        size *= radices[i];
        const bool from_buffer = (buffer_stages >> i) & 1u;
        s += "butterflies(" + std::to_string(radices[i]) + ", " + std::to_string(length / size) + ", " + dir + ", " +
             (from_buffer ? "true" : "false") + "); ";
        if (i + 1 < radices.size())
            s += "exchange(" + std::to_string(radices[i]) + ", " + std::to_string(radices[i + 1]) + ", " +
                 std::to_string(length / (size * radices[i + 1])) + "); ";
    }
    return s;
}

bool half(const Texture& t) { return t.storage() == Storage::Float16; }

/// The GPU's streaming multiprocessors where the GL tells them (GL_NV_shader_thread_group), else 0.
int sm_count(ProgramCache& programs) {
    if (!GLEW_NV_shader_thread_group) return 0;
    const GlProgram& p = programs.get({"", "sm_count.comp", {}, false});
    const GLuint none = 0;
    StorageBuffer count(&none, sizeof none);
    count.bind(0);
    p.use();
    glDispatchCompute(1, 1, 1);
    glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
    GLuint n = 0;
    count.read(&n, sizeof n);
    StorageBuffer::unbind(0);
    glUseProgram(0);
    check_gl("counting the GPU's multiprocessors");
    return static_cast<int>(n);
}

void bind(int unit, const Texture* t) {
    glActiveTexture(GL_TEXTURE0 + static_cast<GLenum>(unit));
    glBindTexture(GL_TEXTURE_RECTANGLE, t ? t->id() : 0);
}

constexpr int kMaxThreads = 1024;  // GL's guaranteed minimum of invocations per workgroup
// The longest line whose programs take the grid's other side and line counts as uniforms, and so
// serve every grid of that line (ComputeFft::spec): above, on the H200, 8192^2's rows as channel
// pairs ran 4% slower so, the four-step steps' column step B 10%.
constexpr int kUniformGridLines = 4096;
/// Complex RGBA elements a thread holds at most: on the H100 a line plan holding 15 or 16 (radix
/// 15 or 16 stages, or two rounds of 8) spills and runs 10-20x slower, while 12 does not
/// (src/README.md, "Any FFT size").
constexpr int kMaxRegisters = 12;
/// A stage's butterfly work per element against a dispatch's memory traffic (LengthModel; src/README.md).
constexpr double kButterflyCost = 0.05;
/// A folded line's each further channel phase against one dispatch's memory traffic (LengthModel):
/// on the H100 at 8192^2 two phases cost 0.97x the four-step route's two dispatches, four phases
/// 2.5x (src/README.md, "Folded long lines").
constexpr double kFoldCost = 1.0;
/// Step A done in step B's loads (fft_line.comp's FUSED_A): two points (one radix-2 butterfly)
/// where a line's halves fit a workgroup, else, in the columns, four (one radix-4 butterfly; where
/// pair 0's mirror fits, split()); each of the L1 workgroups of a line reads all its texels. By
/// default (kDefaultFused) halves only: the quarters take the classic route, step B in bands of
/// rows with the kernel's spectrum reordered (Shape::bands, reorder_kernel), 16384^2 28.26 ms
/// against 33.32 fused (H200, 2026-11-25, one race; columns A 2.25, B 8.31, A' 3.17 ms against B
/// 15.75, A' 3.09); classic halves so lost (8192^2 5.91 against 5.52, 6000^2 3.60 against 3.54).
/// The rows fuse halves only: quarters there took 9.91 ms a pass against the classic 128 x 128's
/// 7.60 (src/README.md, "The four-step route", "Bands").
constexpr int kFusedStepA[] = {2, 4};
constexpr int kDefaultFused = kFusedStepA[0];
/// Each further read of a fused step A's texels against one dispatch's memory traffic (LengthModel):
/// on the H100 the fused rows of 8192^2 took 2.12 ms a dispatch, 1.36x four of 4096^2's whole rows
/// (0.39 ms).
constexpr double kFusedReadCost = 0.35;

/// Whether a split line's step A runs in its step B's loads (split_line() puts it first), with
/// step A's length at most FftOptions::compute_fuse (0: kDefaultFused).
bool fused_step_a(const std::vector<int>& parts, const FftOptions& options) {
    const int most = options.compute_fuse ? options.compute_fuse : kDefaultFused;
    return parts.size() == 2 && parts[0] <= most && std::find(std::begin(kFusedStepA), std::end(kFusedStepA), parts[0]) != std::end(kFusedStepA);
}

/// fft_line.comp's table of W_n^m = exp(-2 pi i m / n), n = 1 .. 16, entry n (n - 1) / 2 + m, as a
/// GLSL array constructor: float rounding of the double values (unit_root).
const std::string& unit_roots() {
    static const std::string table = [] {
        std::string s = "vec2[](";
        char buf[64];
        for (int n = 1; n <= 16; ++n)
            for (int m = 0; m < n; ++m) {
                const std::complex<double> w = unit_root(m, n);
                std::snprintf(buf, sizeof buf, "%svec2(%.9g, %.9g)", n == 1 ? "" : ", ", static_cast<double>(static_cast<float>(w.real())),
                              static_cast<double>(static_cast<float>(w.imag())));
                s += buf;
            }
        return s + ")";
    }();
    return table;
}

/// A line's largest stage radix: `option` (--compute-radix), else the device's, for powers of two
/// by length and `radix_mixed` for lengths with factors 3, 5 or 7; raised where a line would need
/// more than kMaxThreads threads.
int line_radix(const ComputeTuning& t, int option, int length) {
    int radix = option ? option : !is_power_of_two(length) ? t.radix_mixed : length <= t.radix_switch ? t.radix_short : t.radix_long;
    while (length / radix > kMaxThreads && radix < 16) radix *= 2;
    return radix;
}

/// The longest line a workgroup takes whole: the device's max_elements by default; with
/// --compute-max-line up to 1024 threads of 16 elements.
int longest_line(const FftOptions& options, const ComputeTuning& t) {
    return options.compute_max_line ? std::min(options.compute_max_line, 16 * kMaxThreads) : t.max_elements;
}

/// "8 x 8 x 6 x 5"
std::string radix_list(const std::vector<int>& radices) {
    std::string s;
    for (int r : radices) s += (s.empty() ? "" : " x ") + std::to_string(r);
    return s;
}

}  // namespace

int ComputeFft::register_cap(int threads) { return std::min(255, 65536 / register_slots(threads) / 8 * 8); }

std::vector<int> ComputeFft::line_radices(int length, int max_radix) {
    std::vector<int> factors = prime_factors(length);
    const int twos = static_cast<int>(std::count(factors.begin(), factors.end(), 2));
    // Odd lengths only as a four-step split's step B (split_line()): no even radix to start with.
    if (length < 2 || factors.back() > 7) throw std::invalid_argument("no line plan for a length of " + std::to_string(length));
    // The power of two: as many of `max_radix` as fit, then the rest (the fast chain's 16s, then 8
    // and/or 4, at 16); none in an odd length.
    std::vector<int> r;
    const int two = 1 << twos;
    if (two == 2) {
        r = {2};
    } else if (two > 2 && max_radix >= 16) {
        r = radices(two);
    } else if (two > 2) {
        const int k = log2_exact(max_radix);
        r.assign(static_cast<size_t>(twos / k), max_radix);
        if (twos % k) r.push_back(1 << (twos % k));
    }
    // The odd primes, largest first; with max_radix >= 8 a power of two below it takes the
    // smallest that keeps the product within kMaxRegisters (2 x 3, 2 x 5, 4 x 3), then pairs of
    // odd primes merge (3 x 3).
    std::vector<int> odd(factors.begin() + twos, factors.end());
    // Below radix 8 an odd power of two leaves a 2, a radix-2 stage of its own in a mixed line:
    // where the power of two is 8 or more and the line has no 7, it takes a 3 into a 6, first, else
    // joins a 4 into an 8, first. Every such plan measured beat the stray 2 (H200, 2026-11-26:
    // 3000^2 0.87-0.91x with its columns as 6 5 5 5 4 or 6 4 5 5 5 instead of 4 2 5 5 5 3, 1536^2
    // 0.94-0.96x, 1800^2 0.88x; before that the device row's 1000 as 8 5 5 5, 1152 as 4 4 4 6 3 and
    // 1920 as 6 4 4 4 5). Lines with a single 2 or with 7s keep it: merged, the lengths' cost model
    // rated them below what they ran and picked grids that ran slower (2250^2 0.412 ms against
    // 2240^2's 0.353, 3750^2 0.988 against 4096^2's 0.877, 2048x1176 0.160 against 2048x1152's
    // 0.139: src/README.md, "A radix-2 stage of its own").
    if (max_radix < 8 && r.size() > 1 && r.back() == 2 && !odd.empty() && odd.back() < 7) {
        const auto three = std::find(odd.begin(), odd.end(), 3);
        r.pop_back();
        if (three != odd.end()) {
            odd.erase(three);
            r.insert(r.begin(), 6);
        } else {
            r.front() = 2 * r.front();
        }
    }
    const int most = max_radix >= 8 ? kMaxRegisters : max_radix;
    if (!odd.empty() && !r.empty() && r.back() < max_radix && r.back() * odd.front() <= most) {
        r.back() *= odd.front();
        odd.erase(odd.begin());
    }
    std::vector<int> merged;
    for (size_t i = 0; i < odd.size(); ++i) {
        if (i + 1 < odd.size() && odd[i] * odd[i + 1] <= most) {
            merged.push_back(odd[i] * odd[i + 1]);
            ++i;
        } else {
            merged.push_back(odd[i]);
        }
    }
    std::sort(merged.rbegin(), merged.rend());
    r.insert(r.end(), merged.begin(), merged.end());
    return r;
}

ComputeFft::LinePlan ComputeFft::plan_with(const std::vector<int>& forward, int threads) {
    LinePlan p;
    p.forward = forward;
    int length = 1;
    for (int r : forward) length *= r;
    // The inverses end with an even radix (the forward's first); the filter's starts with the
    // forward's last.
    auto even_last = [](std::vector<int> r) {
        if (!r.empty() && r.back() % 2) std::reverse(r.begin(), r.end());
        return r;
    };
    p.inverse = even_last(p.forward);
    p.filter_inverse = even_last(std::vector<int>(p.forward.begin(), p.forward.end() - 1));
    p.filter_inverse.insert(p.filter_inverse.begin(), p.forward.back());
    if (threads == 0)
        for (int r : forward) threads = std::max(threads, length / r);
    p.threads = threads;
    for (int r : forward) {
        const int count = (length / r + threads - 1) / threads;
        p.slots += static_cast<long long>(count) * r * threads;
        p.registers = std::max(p.registers, count * r);
    }
    return p;
}

ComputeFft::LinePlan ComputeFft::plan_line(int length, int max_radix, int max_threads) {
    const std::vector<int> forward = line_radices(length, max_radix);
    // Threads: one of L / r per stage radix r, the one that wastes least (threads times the
    // butterfly rounds each runs, summed over the stages), within 2 max_radix (at most
    // kMaxRegisters) registers where any is; ties to fewer registers.
    const int limit = std::min(2 * max_radix, kMaxRegisters);
    LinePlan best;
    for (int r : forward) {
        if (length / r > max_threads) continue;
        const LinePlan p = plan_with(forward, length / r);
        const bool fits = p.registers <= limit, best_fits = best.registers <= limit;
        if (best.threads == 0 || (fits && !best_fits) ||
            (fits == best_fits && (p.slots < best.slots || (p.slots == best.slots && p.registers < best.registers))))
            best = p;
    }
    if (best.threads == 0) throw std::invalid_argument("a line of " + std::to_string(length) + " needs more than " + std::to_string(max_threads) + " threads");
    return best;
}

ComputeFft::PlanChoice ComputeFft::parse_plans(const std::string& text) {
    PlanChoice plans;
    if (text.empty()) return plans;
    for (const std::string& item : split_list(text, ',')) {
        if (item == "composite") {
            plans.composite = true;
            continue;
        }
        // [rows:|columns:]LENGTH:RxRx...[/THREADS]
        const std::string what = "compute plan \"" + item + "\"";
        auto bad = [&what](const std::string& why) { return UsageError(what + ": " + why); };
        std::map<int, LinePlan>* to = &plans.lines;
        std::string plan = item;
        for (auto [axis, lines] : {std::pair{"rows:", &plans.rows}, std::pair{"columns:", &plans.columns}})
            if (plan.rfind(axis, 0) == 0) {
                plan = plan.substr(std::string(axis).size());
                to = lines;
                break;  // one axis at most: "rows:columns:..." fails as a length below
            }
        const size_t colon = plan.find(':'), slash = plan.find('/');
        if (colon == std::string::npos) throw bad("expected [rows:|columns:]LENGTH:RADIXxRADIX...[/THREADS]");
        const int length = parse_int(plan.substr(0, colon), what + " length", 2, 1 << 20);
        const int threads = slash == std::string::npos ? 0 : parse_int(plan.substr(slash + 1), what + " threads", 1, kMaxThreads);
        std::vector<int> forward;
        long long product = 1;
        for (const std::string& radix : split_list(plan.substr(colon + 1, slash == std::string::npos ? std::string::npos : slash - colon - 1), 'x')) {
            const int r = parse_int(radix, what + " radix", 2, 16);
            if (r == 11 || r == 13) throw bad("radix " + radix + ": fft_line.comp takes 2-10, 12, 14, 15 and 16");
            forward.push_back(r);
            product *= r;
        }
        if (product != length) throw bad("the radices multiply to " + std::to_string(product) + ", not " + std::to_string(length));
        if (forward.front() % 2) throw bad("the first radix must be even (the columns' untangle pairs y and y + N/2)");
        const LinePlan p = plan_with(forward, threads);
        if (p.threads > kMaxThreads) throw bad(std::to_string(p.threads) + " threads a line; at most " + std::to_string(kMaxThreads));
        if (p.registers > 32) throw bad(std::to_string(p.registers) + " elements a thread; at most 32");
        if (!to->emplace(length, p).second) throw bad("a second plan for a line of " + std::to_string(length));
    }
    return plans;
}

ComputeFft::PlanChoice ComputeFft::chosen_plans(const FftOptions& options, const ComputeTuning& tuning) {
    PlanChoice plans = parse_plans(options.compute_plan);
    if (options.compute_radix != 0) return plans;
    // The row's, for the lengths the option names on neither axis: a length chosen by hand takes
    // its plan there, not the row's plan for one axis.
    const PlanChoice option = plans, row = parse_plans(tuning.line_plans);
    auto named = [&option](int length) { return option.lines.count(length) || option.rows.count(length) || option.columns.count(length); };
    for (auto [from, to] : {std::pair{&row.lines, &plans.lines}, std::pair{&row.rows, &plans.rows}, std::pair{&row.columns, &plans.columns}})
        for (const auto& [length, plan] : *from)
            if (!named(length)) to->emplace(length, plan);
    return plans;
}

std::vector<int> ComputeFft::composite_radices(int length) {
    // Every multiset of radices up to kMaxRegisters (largest first) whose product is `length`;
    // kept: the fewest stages, then the fewest threads (length over the smallest radix), then the
    // smallest largest radix (registers).
    static const int kRadices[] = {12, 10, 9, 8, 7, 6, 5, 4, 3, 2};
    std::vector<int> best, current;
    auto better = [](const std::vector<int>& a, const std::vector<int>& b) {
        if (b.empty()) return true;
        if (a.size() != b.size()) return a.size() < b.size();
        if (a.back() != b.back()) return a.back() > b.back();  // largest first: back() is the smallest
        return a.front() < b.front();
    };
    std::function<void(int, size_t)> search = [&](int rest, size_t from) {
        if (rest == 1) {
            if (!current.empty() && length / current.back() <= kMaxThreads && better(current, best)) best = current;
            return;
        }
        if (!best.empty() && current.size() >= best.size()) return;
        for (size_t i = from; i < std::size(kRadices); ++i)
            if (rest % kRadices[i] == 0) {
                current.push_back(kRadices[i]);
                search(rest / kRadices[i], i);
                current.pop_back();
            }
    };
    search(length, 0);
    if (best.empty()) throw std::invalid_argument("no composite line plan for a length of " + std::to_string(length));
    // The first radix even (the columns' untangle pairs y and y + N/2 in one butterfly).
    auto even = std::find_if(best.begin(), best.end(), [](int r) { return r % 2 == 0; });
    std::rotate(best.begin(), even, even + 1);
    return best;
}

ComputeFft::LinePlan ComputeFft::line_plan(int length, int max_radix, const PlanChoice& choice, Axis axis) {
    for (const std::map<int, LinePlan>* lines : {axis == Axis::Rows ? &choice.rows : &choice.columns, &choice.lines}) {
        const auto hand = lines->find(length);
        if (hand != lines->end()) return hand->second;
    }
    if (choice.composite && !is_power_of_two(length)) return plan_with(composite_radices(length), 0);
    return plan_line(length, max_radix, kMaxThreads);
}

int ComputeFft::radix_for(int option) {
    if (option == 0 || option == 4 || option == 8 || option == 16) return option;
    throw std::invalid_argument("the compute radix must be 4, 8 or 16");
}

bool ComputeFft::supported() { return GLEW_VERSION_4_3 || GLEW_ARB_compute_shader; }

ComputeFft::ComputeFft(ProgramCache& programs, int width, int height, const FftOptions& options)
    : ComputeFft(programs, width, height, options, false) {}

ComputeFft::ComputeFft(ProgramCache& programs, int width, int height, const FftOptions& options, bool transposed_io)
    : Fft2D(width, height, options.storage), programs_(programs), options_(options), transposed_io_(transposed_io) {
    radix_for(options.compute_radix);
    parse_plans(options.compute_plan);  // a bad option fails before any GL call (plans_ below)
    check_fft_size(width, height);
    check_texture_size(width, height);
    if (!supported()) throw GlError("the compute backend needs OpenGL 4.3 compute shaders");
    shared_bytes_ = gl_integer(GL_MAX_COMPUTE_SHARED_MEMORY_SIZE);
    sm_count_ = sm_count(programs_);
    tuning_ = &compute_tuning(software_renderer());
    plans_ = chosen_plans(options, *tuning_);
    buffers_ = GLEW_VERSION_4_3 || GLEW_ARB_shader_storage_buffer_object;
    if (buffers_) glGetInteger64v(GL_MAX_SHADER_STORAGE_BLOCK_SIZE, &max_storage_block_);
    // Rows as channel pairs where they fit so and the columns do not fold (a folded column's phases
    // hold some channels of a texel, its tangle needs all four).
    channel_rows_ = fold(width) == 1 && fold(height) == 1 && channel_line(width, longest_line(options, *tuning_)) &&
                    shared_bytes(width / 2, 1, 1, 0) <= shared_bytes_;
    column_halves_ = column_halves(*tuning_, tail_in_rows_wanted());
    // Filters as the transposed problem where asked or measured faster (its rows, our columns,
    // whole channel pairs one a workgroup), and no line folds (a folded phase's parts lie along
    // its lines).
    const bool measured = transposes_columns(height, longest_line(options, *tuning_), tuning_->transpose_columns_above) &&
                          shared_bytes(height / 2, 1, 1, 0) <= shared_bytes_;
    const bool transpose = !transposed_io && fold(width) == 1 && fold(height) == 1 &&
                           (options.compute_transpose > 0 || (options.compute_transpose == 0 && measured));
    // Filtering transposed, the transform has intermediates and programs of its own; this one's
    // forward and inverse make theirs on first use.
    if (transpose) transposed_.reset(new ComputeFft(programs, height, width, options, true));
    else slot(0);
    // Folded lines: the phases before the last keep 4 / F floats a texel each, F - 1 planes of M x N.
    for (int length : {width, height})
        if (const int f = fold(length); f > 1) {
            parts_.reserve(parts_bytes(f), "the folded lines' parts");
        }
    for (int length : {width, height})
        if (!twiddles_.count(length)) {
            const std::vector<float> table = twiddle_table(length);
            twiddles_.emplace(length, Texture::table(length, table.data()));
            if (buffers_) {
                std::vector<float> pairs(2 * static_cast<size_t>(length));
                for (size_t k = 0; k < static_cast<size_t>(length); ++k) {
                    pairs[2 * k] = table[4 * k];
                    pairs[2 * k + 1] = table[4 * k + 1];
                }
                twiddle_buffers_.emplace(length, StorageBuffer(pairs.data(), pairs.size() * sizeof(float)));
            }
        }
    // No program is compiled yet: each use compiles its own on first use, side by side (prepare()),
    // so a filter compiles neither the inverse's columns nor the multiply it does not run.
    check_gl("setting up the compute FFT");
}

void ComputeFft::prepare(std::initializer_list<Use> uses) {
    std::vector<Use> missing;
    for (Use u : uses)
        if (!(prepared_uses_ & use_bit(u))) missing.push_back(u);
    if (missing.empty()) return;
    programs_.prepare(use_programs(missing));  // a driver that rejects one fails here with its log
    for (Use u : missing) prepared_uses_ |= use_bit(u);
}

std::vector<ProgramSpec> ComputeFft::use_programs(const std::vector<Use>& uses) {
    // The passes as forward, inverse and filter run them, into an RGBA32F result (the programs
    // depend on neither the textures nor the slot).
    slot(0);
    RenderTarget result(1, 1);
    std::vector<ProgramSpec> specs;
    for (Use u : uses) {
        const std::vector<Pass> passes = u == Use::Forward   ? forward_passes(result.texture(), result)
                                         : u == Use::Inverse ? inverse_passes(result.texture(), result)
                                                             : filter_passes(result.texture(), result, 0, u == Use::RealFilter);
        for (const Dispatch& d : dispatches(passes)) specs.push_back(spec(d));
    }
    return specs;
}


int ComputeFft::fold_line(int length, int most, int option) {
    // Only where asked for: on the H100 at 8192^2, 0.97x the four-step route's time, but its
    // programs took 59 s to compile against 4 s (src/README.md, "Folded long lines").
    if (length <= most || option < 2) return 1;
    return length % (2 * option) == 0 && length / option <= most ? option : 1;
}

int ComputeFft::fold(int length) const {
    const int most = longest_line(options_, *tuning_);
    const int f = fold_line(length, most, options_.compute_fold);
    // One float per element in shared memory at a time at the least, and the parts in one
    // storage buffer.
    return f > 1 && shared_bytes(length / f, 1, 1, 0) <= shared_bytes_ && buffers_ && parts_bytes(f) <= max_storage_block_ ? f : 1;
}

long long ComputeFft::parts_bytes(int fold) const {
    // F - 1 planes of M x N, 4 / F floats a texel.
    return static_cast<long long>(fold - 1) * width_ * height_ * (16 / fold);
}

std::vector<int> ComputeFft::split(int length, Axis axis) const {
    // Whole where one line fits a workgroup, or its channel phases do (fold()); one float per
    // element in shared memory at a time at the least.
    if (fold(length) > 1) return {length};
    const int most = longest_line(options_, *tuning_);
    const bool fits = shared_bytes(length, 1, 1, 0) <= shared_bytes_;
    const int longest = fits ? most : std::min(most, length - 1);
    std::vector<int> parts = split_line(length, longest, axis == Axis::Columns);
    // Long columns on a device whose row limits step B's sub-lines: the longest such, classic.
    if (axis == Axis::Columns && tuning_->column_step_b_longest > 0)
        if (std::vector<int> short_b = column_split(length, longest, tuning_->column_step_b_longest, column_halves_); !short_b.empty())
            parts = short_b;
    // The option's split where it is one (an even L1 and an even L2 that fits).
    const int l1 = axis == Axis::Rows ? options_.compute_row_split : options_.compute_column_split;
    if (l1 && length > longest && length % l1 == 0 && length / l1 <= longest && (length / l1) % 2 == 0) parts = {l1, length / l1};
    // In the columns, L1 > 2 only where pair 0's step B holds its mirror sub-lines k1 and L1 - k1
    // as two lines of one workgroup (mirror_of()): within the threads and, a float an element, the
    // shared memory (quarters of 12000 and 12288 do not).
    if (axis == Axis::Columns && parts.size() == 2 && parts[0] > 2) {
        const LinePlan p = line_plan(parts[1], line_radix(*tuning_, options_.compute_radix, parts[1]), plans_, axis);
        if (2 * p.threads > kMaxThreads || shared_bytes(parts[1], 2, 1, 0) > shared_bytes_) parts = split_line(length, longest, false);
    }
    if (parts.empty())
        throw std::invalid_argument("a line of " + std::to_string(length) + " is longer than " + std::to_string(most) +
                                    " and not a product of two lengths up to that, one even (not 2): the compute backend cannot take it");
    return parts;
}

std::vector<int> ComputeFft::axis_split(Axis axis) const {
    if (axis == Axis::Rows) return channel_rows_ ? std::vector<int>{width_} : split(width_, axis);
    return split(height_, axis);
}

std::vector<int> ComputeFft::pass_split(const Dispatch& d) const {
    std::vector<int> parts = axis_split(d.axis);
    // A column inverse pass (not a filter's last step, which keeps its filter's split) ends storing
    // tangled row pairs, its last stage's outputs y and y + N/2 in one thread (STORE_ROW_PAIRS):
    // an even last radix in its step B. Where step B is odd (lines of 2 x an odd length,
    // split_line()), the inverse takes the odd length first: its step A loads the spectrum
    // element by element, and the forward's step A untangles, as before, with the even one.
    const bool inverse_pass = d.transform == Transform::Inverse && !d.filter_tail;
    if (d.axis == Axis::Columns && inverse_pass && parts.size() == 2 && parts[1] % 2) std::swap(parts[0], parts[1]);
    return parts;
}

bool ComputeFft::channel_line(int length, int most) {
    // Row pairs where two of them fit a workgroup: its warps then store two rows together (lines
    // a and a + 1 in neighbouring lanes), whole 32-byte sectors of NVIDIA's tiling. A row pair
    // alone in its workgroup stores one row a warp, half of every sector; one row as channel
    // pairs, half the registers, runs two a workgroup. H100, 2026-11-24, every row as channel
    // pairs against row pairs, queued ms: 4096^2 0.963 against 1.223, 3840x2160 0.600 / 0.719,
    // 3000^2 0.729 / 0.829, 2560x1440 0.304 / 0.357, 8192^2 6.37 / 7.98 (rows in one dispatch
    // instead of fused halves); but 2048^2 0.287 / 0.276, 2000x1152 0.203 / 0.192, 1024^2 0.084 /
    // 0.082 (src/README.md, "Rows as channel pairs").
    return 2 * length > most && length % 4 == 0 && length / 2 <= most;
}

std::vector<int> ComputeFft::column_split(int length, int most, int step_b_longest, const std::vector<int>& halves) {
    if (length <= most) return {length};
    // Halves where measured faster (H200, 2026-11-26, transposed filters: 6000 0.911x and 0.932x
    // 4 x 1500, 4800 0.915x 4 x 1200; with the filter's tail in the inverse rows 4320, 5000, 5120
    // and 5760 too; but 8192 1.020x, 8000 1.037x, 6400 1.164x: tuning.cpp).
    if (length % 4 == 0 && length / 2 <= most && std::find(halves.begin(), halves.end(), length) != halves.end()) return {2, length / 2};
    // Step B's sub-lines of 2048 points ran faster than longer ones and than shorter ones (H200,
    // 2026-11-25: 16384 as 8 x 2048 0.954x 4 x 4096, 16 x 1024 1.50x; tuning.cpp).
    for (int l2 = std::min(most, step_b_longest) & ~1; l2 >= 2; l2 -= 2)
        if (length % l2 == 0 && (length / l2) % 2 == 0 && length / l2 <= most) return {length / l2, l2};
    return {};
}

std::vector<int> ComputeFft::column_halves(const ComputeTuning& tuning, bool tail_in_rows) {
    std::vector<int> halves;
    for (const char* list : {tuning.column_halves, tail_in_rows ? tuning.column_halves_fused_tail : ""})
        for (const std::string& item : split_list(list, ','))
            if (!item.empty()) halves.push_back(std::stoi(item));
    return halves;
}

std::vector<int> ComputeFft::split_line(int length, int most, bool quarters) {
    if (length <= most) return {length};
    // Halves, else quarters, that fit: step A one radix-2 or radix-4 butterfly, done in step B's
    // loads where fused_step_a() says, else a dispatch of its own.
    for (int l1 : kFusedStepA) {
        const int part = length / l1;
        if (length % l1 == 0 && part <= most && part % 2 == 0 && (l1 == 2 || quarters)) return {l1, part};
    }
    for (int l1 = 2; l1 < length; l1 += 2)
        if (length % l1 == 0 && static_cast<long long>(l1) * l1 >= length && (length / l1) % 2 == 0) return {l1, length / l1};
    // Else (a length with one factor of 2, 2 x odd) an even step A and an odd step B: the
    // smallest even L1 from the square root up that fits, else the largest below it. Never a
    // fused length (kFusedStepA): those untangle in step B's loads, which pair the elements of an
    // even first radix; the forward's step A untangles instead, and an inverse of columns takes
    // the odd length first (pass_split()).
    int l1_odd = 0;
    for (int l1 = 6; l1 <= std::min(most, length - 1); l1 += 2) {
        if (length % l1 != 0 || length / l1 > most) continue;
        l1_odd = l1;
        if (static_cast<long long>(l1) * l1 >= length) break;
    }
    if (l1_odd) return {l1_odd, length / l1_odd};
    return {};
}

LengthModel ComputeFft::lengths(const FftOptions& options) { return lengths(options, compute_tuning(software_renderer())); }

LengthModel ComputeFft::lengths(const FftOptions& options, const ComputeTuning& t) {
    const int most = longest_line(options, t), fold_option = options.compute_fold;
    auto allowed = [most, fold_option](long long n) {
        return is_fast_size(n) && (fold_line(static_cast<int>(n), most, fold_option) > 1 || !split_line(static_cast<int>(n), most, false).empty());
    };
    auto planned = [&t, most, fold_option, options, radix = options.compute_radix, plans = chosen_plans(options, t)](long long n) {
        // A folded line: one dispatch's traffic, its phases reading the same texels again
        // (kFoldCost each) and writing each texel's channels in turn.
        const int f = fold_line(static_cast<int>(n), most, fold_option);
        // Rated as the rows split it (the model rates a length alike on both axes; the columns'
        // quarters, where they differ, are the faster: kFusedStepA, Shape::bands).
        const std::vector<int> parts = f > 1 ? std::vector<int>{static_cast<int>(n) / f} : split_line(static_cast<int>(n), most, false);
        // A fused step A: step B's dispatch alone, reading its texels L1 times.
        const bool fused = fused_step_a(parts, options);
        double c = fused ? (parts[0] - 1) * kFusedReadCost : 0;
        for (int part : fused ? std::vector<int>{parts[1]} : parts) {
            const LinePlan p = line_plan(part, line_radix(t, radix, part), plans, Axis::Rows);
            c += 1 + (f - 1) * kFoldCost + kButterflyCost * static_cast<double>(p.slots) / part;
        }
        return c;
    };
    // The device's measured squares hold for the programs its defaults make (the fragment
    // chain's options change none of them).
    FftOptions defaults;
    defaults.backend = options.backend;
    defaults.storage = options.storage;
    defaults.radix = options.radix;
    defaults.computed_twiddles = options.computed_twiddles;
    LengthModel model{allowed, planned, false, "compute"};
    model.programs_per_length = true;  // a line's programs serve every grid of that length, no other
    if (t.square_count == 0 || !(options == defaults)) return model;
    // Measured: an axis of length L costs sqrt(t(L x L)), so that an M x N grid costs
    // sqrt(t(M x M) t(N x N)) (LengthModel::best() minimises length times cost per axis). Beyond
    // the measured ends, the plans' rating scaled to the end's time; between them, a length not
    // measured is left to wrap (allowed, never the cheapest).
    const MeasuredSquare *first = t.squares, *end = t.squares + t.square_count, *last = end - 1;
    auto measured = [](const MeasuredSquare& s) { return std::sqrt(s.us) / s.length; };
    const double below = measured(*first) / planned(first->length), above = measured(*last) / planned(last->length);
    auto cost = [planned, measured, first, end, last, below, above](long long n) {
        if (n < first->length) return below * planned(n);
        if (n > last->length) return above * planned(n);
        const MeasuredSquare* s = std::lower_bound(first, end, n, [](const MeasuredSquare& a, long long v) { return a.length < v; });
        return s->length == n ? measured(*s) : std::numeric_limits<double>::infinity();
    };
    model.cost = cost;
    model.tile_from = first->length;
    model.tile_to = last->length;
    return model;
}

ComputeFft::Shape ComputeFft::shape(const Dispatch& d) const {
    Shape s;
    const bool rows = d.axis == Axis::Rows;
    s.full = rows ? width_ : height_;
    s.channel_pairs = rows && channel_rows_;
    // A row tail in parts: step B of the split into that many sub-lines, step A fused.
    const std::vector<int> parts = d.tail_parts > 1 ? std::vector<int>{d.tail_parts, s.full / d.tail_parts} : pass_split(d);
    s.fold = s.channel_pairs ? 2 : d.step == 0 ? fold(s.full) : 1;
    s.fused_a = d.step == 2 && (d.tail_parts > 1 || fused_step_a(parts, options_));
    s.length = d.step == 0 ? s.full / s.fold : d.step == 1 ? parts[0] : parts[1];
    s.sublines = s.full / (s.length * s.fold);
    // The axis's lines: N/2 row pairs (N rows as channel pairs); M/2 - 1 column pairs, or pair 0.
    const int axis_lines = rows ? (s.channel_pairs ? height_ : height_ / 2) : d.pair0 ? 1 : width_ / 2 - 1;
    s.line_count = (d.line_end ? d.line_end - d.line_begin : axis_lines) * s.sublines;
    const ComputeTuning& t = *tuning_;
    s.radix = line_radix(t, options_.compute_radix, s.length);
    s.line = line_plan(s.length, s.radix, plans_, d.axis);
    // Whole short column lines take one line per workgroup and fewer components.
    const bool short_columns = !rows && d.step == 0 && s.length <= t.short_column_length && options_.compute_lines == 0;
    const int most = std::min(t.max_components, short_columns ? t.short_column_components : 8);
    // Components per exchange round: as many as fit (at most `most`), padded where the padding
    // fits too; 0 if not even one fits.
    auto fit = [&](int lines, int& pad) {
        for (int c : {8, 4, 2, 1}) {
            if (c > most) continue;
            pad = pad_every(c, lines, s.length);
            if (shared_bytes(s.length, lines, c, pad) > shared_bytes_) pad = 0;
            if (shared_bytes(s.length, lines, c, pad) <= shared_bytes_) return c;
        }
        return 0;
    };
    // Lines per workgroup: the option, else the device's for rows and columns, where that still
    // leaves two components per exchange round (one component, eight rounds an exchange, is far
    // slower). Pair 0's mirror in step B needs two (one where the line has two sub-lines, each
    // its own mirror).
    // Whole mixed columns: as many lines as their registers fit (the elements-a-workgroup limit
    // is the power-of-two lines' measure).
    const bool mirror_b = d.pair0 && d.step == 2 && (d.store == Store::Spectrum || d.transform == Transform::Filter) && s.sublines > 2;
    const bool chosen = options_.compute_lines != 0 || mirror_b;
    const bool whole_mixed_column = !rows && d.step == 0 && !is_power_of_two(s.length);
    const bool mixed_columns = whole_mixed_column && !chosen && !short_columns;
    // Steps A of up to eight points (the halves' and quarters' two- and four-point steps and
    // tails, the six- and eight-point steps of columns from 8194 to 16384): a thread or a few a
    // line, many lines a workgroup, where the steps' lines a workgroup would leave a few threads
    // (rows: 4 lines); steps of six and eight points as the device's row says.
    const bool tiny_step = d.step == 1 && s.length <= 8;
    int lines = mirror_b                ? 2
                : d.line_begin > 0       ? 1
                : options_.compute_lines ? options_.compute_lines
                : tiny_step              ? (s.length > 4 ? t.long_tiny_step_lines : 128)
                : rows                   ? t.row_lines
                : short_columns          ? 1
                : d.step                 ? t.column_step_lines
                : mixed_columns          ? t.mixed_column_lines
                                         : t.column_lines;
    auto too_many = [&](int g) {
        if (mixed_columns && g > t.column_lines) return !registers_fit(s.line, g);
        return !chosen && g * s.length > t.max_elements;
    };
    int pad = 0;
    while (lines > 1 && (lines * s.line.threads > kMaxThreads || too_many(lines) ||
                         (!mirror_b && lines > s.line_count) || fit(lines, pad) < (chosen ? 1 : 2)))
        lines /= 2;
    if (mirror_b && lines < 2)  // split() takes a route whose mirror fits; never a wrong mirror
        throw GlError("pair 0's step B: two lines of " + std::to_string(s.length) + " do not fit a workgroup");
    s.lines = lines;
    s.components = fit(lines, pad);
    s.pad_every = pad;
    if (!s.components) throw GlError("a line of " + std::to_string(s.length) + " does not fit the GL's shared memory");
    // Whole mixed columns in large workgroups (alone on an SM): their twiddle table (8 bytes an
    // element) in shared memory beside the exchange's, where both fit (src/README.md, "Any FFT size").
    s.shared_twiddles = whole_mixed_column && lines * s.line.threads > t.shared_twiddles_above &&
                        shared_bytes(s.length, lines, s.components, s.pad_every) + twiddle_table_bytes(s.full) <= shared_bytes_;
    // The four-step steps (rows' A and B; columns' A, B, a classic filter's A inverse and a fused
    // one's two- or four-point tail): neighbouring row or column pairs side by side too (tuning),
    // blocks of lines / pairs sub-lines each, the last one partial where that does not divide the
    // step's sub-lines.
    const int pairs = tiny_step ? t.column_tail_pairs
                      : rows    ? t.row_step_pairs
                      : d.step == 2 ? t.column_step_b_pairs
                                    : t.column_step_a_pairs;
    if (d.step && !d.pair0 && pairs > 1 && lines % pairs == 0) s.neighbour_pairs = pairs;
    // A filter's classic step B of one sub-line a column pair (one a workgroup, or column pairs
    // side by side, which go along a band already: fft_line.comp): the workgroups in flight then
    // read one band of rows of many column pairs, not every band of a few (bin/bench/lineprobe on
    // the H200, 2026-11-25, 4096-point sub-lines copied: 16384^2 3864 us against 8305, 8192^2 646
    // against 1042; src/README.md, "Bands"), and multiply by the kernel's spectrum reordered to
    // match (reorder_kernel). A fused step B keeps a pair's sub-lines together: they read the same
    // texels. A forward step B keeps them together too: it stores the spectrum's natural order,
    // every L1-th row of the column a sub-line.
    s.bands = !rows && d.step == 2 && d.transform == Transform::Filter && !d.pair0 && !s.fused_a && lines == s.neighbour_pairs;
    const int block = lines / s.neighbour_pairs;
    s.groups = mirror_b                  ? s.sublines / 2 + 1
               : s.neighbour_pairs > 1 ? (axis_lines + s.neighbour_pairs - 1) / s.neighbour_pairs * ((s.sublines + block - 1) / block)
                                       : (s.line_count + lines - 1) / lines;
    // Twiddle paths (whole lines; the four-step steps read the texture): the texture unit or the
    // storage buffer, split between them as the device's row says.
    if (buffers_ && (d.step == 0 || s.fused_a)) {
        s.forward_buffer = s.inverse_buffer = rows && t.row_twiddles_from_buffer ? ~0u : 0u;
        if (!rows && s.length > t.column_forward_buffer_above) s.forward_buffer = ~0u;
    }
    return s;
}

bool ComputeFft::intermediate(const Texture* t, bool h_only) const {
    return std::any_of(slots_.begin(), slots_.end(), [t, h_only](const Intermediates& i) {
        return t == &i.rows_out.texture() || (!h_only && (t == &i.columns_out.texture() || t == &i.scratch.texture()));
    });
}

int ComputeFft::rows_layout(const Texture* t) const {
    if (!intermediate(t)) return 0;
    if (channel_rows_) return 2;
    // Neighbouring rows only where the rows take the four-step route: its row steps' warps each
    // cover one row (their lanes neighbouring sub-lines, along x). Whole rows of up to 2048 already
    // write two rows a warp (lines a and a + 1 in neighbouring lanes), and the columns read a row
    // pair's rows faster where they lie N/2 apart: H100, 2026-11-24, every texture between
    // dispatches so laid out: 8192^2 12.53 -> 11.31 ms, but 4096^2 1.203 -> 1.236, 3840x2160
    // 0.711 -> 0.756, 2048x1024 0.134 -> 0.155 (src/README.md, "What bounds a line dispatch").
    return axis_split(Axis::Rows).size() > 1 ? 1 : 0;
}

int ComputeFft::row_tail(const Shape& s) const {
    if (s.fold > 1 || options_.compute_row_tail < 0) return 0;
    if (options_.compute_row_tail > 0) return options_.compute_row_tail < s.line_count ? options_.compute_row_tail : 0;
    // Powers of two gained nothing so (2048x1080 1.013x with 24 of its 540 row pairs in a tail,
    // H200, 2026-11-25) and keep one dispatch. The rule's own gains there: 1920x1080 0.95-0.96x,
    // 2000x1152 0.97-0.98x, 2000x1080 0.992x, 1800x1080 1.00x, 1920x1152 1.010x (src/README.md,
    // "Row tails").
    return is_power_of_two(s.length) ? 0 : auto_row_tail(s.line_count, s.lines, s.line.threads, sm_count_);
}

int ComputeFft::tail_parts(int length) const {
    // Whole unless asked: halves or quarters lost at most sizes (src/README.md, "A row tail in
    // halves or quarters").
    const int parts = options_.compute_tail_split;
    return parts > 1 && length % (2 * parts) == 0 ? parts : 1;
}

int ComputeFft::auto_row_tail(int line_count, int lines, int threads, int sm_count) {
    // Workgroups at their register cap, as the row programs compile (src/README.md, "Any FFT
    // size"), so that a round of them holds this many row pairs. A last round a quarter full or
    // less leaves twice its row pairs to the tail, which takes them one a workgroup and more
    // workgroups an SM: the best measured (H200, 2026-11-25: 1920x1080 24 of 540, 2000x1152 96
    // of 576).
    if (sm_count <= 0) return 0;
    const int group = lines * threads;
    const int round = sm_count * std::max(1, 65536 / (register_slots(group) * register_cap(group))) * lines;
    const int last = line_count % round;
    return line_count > round && last > 0 && 4 * last <= round ? 2 * last : 0;
}

bool ComputeFft::neighbouring_rows(const Dispatch& d) const {
    const bool reads = (d.load == Load::RowPair || d.load == Load::Untangled) && rows_layout(d.source) == 1;
    const bool writes = (d.store == Store::RowPair || d.store == Store::RowPairs) && rows_layout(d.target) == 1;
    return reads || writes;
}

ProgramSpec ComputeFft::spec(const Dispatch& d) const {
    const Shape s = shape(d);
    const bool literal = d.step != 0 || s.full > kUniformGridLines;  // the grid's sizes as literals (below)
    const std::vector<int>& forward = s.line.forward;
    const std::vector<int>& inverse = d.transform == Transform::Filter ? s.line.filter_inverse : s.line.inverse;
    std::vector<std::string> defines = {
        d.axis == Axis::Rows ? "ROWS" : "COLUMNS",
        define_of(d.load),
        define_of(d.transform),
        define_of(d.store),
        "LENGTH " + std::to_string(s.length),
        "FOLD " + std::to_string(s.fold),
        "REGISTERS " + std::to_string(s.line.registers),
        "THREADS " + std::to_string(s.line.threads),
        "LINES " + std::to_string(s.lines),
        "GROUP_SIZE " + std::to_string(s.lines * s.line.threads),
        "UNIT_ROOTS " + unit_roots(),
        "COMPONENTS " + std::to_string(s.components),
        "PAD_EVERY " + std::to_string(s.pad_every),
        "SUBLINES " + std::to_string(s.sublines),
        "NEIGHBOUR_PAIRS " + std::to_string(s.neighbour_pairs),
        "BANDS " + std::to_string(s.bands ? 1 : 0),
        "KERNEL_STEP_ORDER " + std::to_string(d.transform == Transform::Filter && d.step == 2 && reorders_kernel() ? 1 : 0),
        "KERNEL_REAL " + std::to_string(d.real_kernel ? 1 : 0),
        // Lines up to 4096: the line's own axis only; the other and the dispatch's lines are
        // uniforms (u_grid, u_lines), so that one program serves every grid of this width (rows)
        // or height (columns), and a folder of many sizes compiles a program set a length, not
        // one a grid (src/README.md, "Programs keyed by the line, lengths shared"). Longer lines
        // (the four-step steps, 8192's rows as channel pairs) keep all four literal: as uniforms
        // they cost 8192^2 filters 1-4% on the H200.
        d.axis == Axis::Rows || literal ? "WIDTH " + std::to_string(width_) : "",
        d.axis == Axis::Columns || literal ? "HEIGHT " + std::to_string(height_) : "",
        literal ? "LINE_COUNT " + std::to_string(s.line_count) : "",
        literal ? "LINE_OFFSET " + std::to_string(d.line_begin) : "",
        "TWIDDLE_BUFFER " + std::to_string(buffers_ ? 1 : 0),
        "SHARED_TWIDDLES " + std::to_string(s.shared_twiddles ? 1 : 0),
        "H_SOURCE " + std::to_string(rows_layout(d.source)),
        "H_TARGET " + std::to_string(rows_layout(d.target)),
        "SOURCE_TRANSPOSED " + std::to_string(stored_transposed(d.source, d.axis) ? 1 : 0),
        "TARGET_TRANSPOSED " + std::to_string(stored_transposed(d.target, d.axis) ? 1 : 0),
        "FORWARD_TRANSFORM " + stage_calls(forward, s.length, "-1.0", s.forward_buffer),
        "FORWARD_FIRST " + std::to_string(forward.front()),
        "FORWARD_LAST " + std::to_string(forward.back()),
        "INVERSE_TRANSFORM " + stage_calls(inverse, s.length, "1.0", s.inverse_buffer),
        "INVERSE_FIRST " + std::to_string(inverse.front()),
        "INVERSE_LAST " + std::to_string(inverse.back()),
        std::string("IMAGE_FORMAT ") + (half(*d.target) ? "rgba16f" : "rgba32f"),
    };
    defines.erase(std::remove(defines.begin(), defines.end(), std::string()), defines.end());
    if (d.step == 1) defines.push_back("STEP_A");
    if (d.step == 2) defines.push_back("STEP_B");
    if (d.filter_tail) defines.push_back("FILTER_TAIL");
    if (d.tail_in_loads) defines.push_back("TAIL_IN_LOADS");
    if (s.fused_a) defines.push_back("FUSED_A");
    if (d.pair0) defines.push_back("PAIR0");
    if (s.channel_pairs) defines.push_back("CHANNEL_PAIRS");
    // Profiling only: every workgroup's multiprocessor and clocks into the storage buffer at this
    // binding (test/bench/timeline.cpp binds it; fft_line.comp's TIMELINE).
    if (const char* timeline = std::getenv("GPUFFT_TIMELINE"); timeline && *timeline) defines.push_back(std::string("TIMELINE ") + timeline);
    return ProgramSpec{"", "fft_line.comp", defines, false};
}

bool ComputeFft::tail_in_rows_wanted() const {
    return channel_rows_ && (options_.compute_fuse_tail > 0 || (options_.compute_fuse_tail == 0 && tuning_->fuse_column_tail));
}

bool ComputeFft::fuses_column_tail(const std::vector<int>& column_parts) const {
    return tail_in_rows_wanted() && column_parts.size() == 2 && column_parts[0] == 2 && fused_step_a(column_parts, options_);
}

bool ComputeFft::transposes_columns(int height, int most, int above) {
    return above > 0 && height > above && channel_line(height, most);
}

bool ComputeFft::stored_transposed(const Texture* t, Axis axis) const {
    return transposed_io_ && (intermediate(t, true) || (axis == Axis::Rows && !intermediate(t)));
}

bool ComputeFft::reorders_kernel() const {
    if (transposed_) return true;
    if (axis_split(Axis::Columns).size() != 2) return false;  // whole columns: no step B
    const Dispatch b{Axis::Columns, false, 2, Load::ColumnPair, Transform::Filter, Store::ColumnPair, nullptr, nullptr, 1, 1, "B"};
    return shape(b).bands;
}

std::array<int, 2> ComputeFft::kernel_size() const { return transposed_ ? std::array<int, 2>{height_, width_} : Fft2D::kernel_size(); }

void ComputeFft::reorder_kernel(const Texture& impulse, const Texture* spectrum, RenderTarget& kernel) {
    if (transposed_) {
        // The transposed problem's spectrum of the impulse response (its forward fetches the image
        // transposed), reordered for its own filter where that reads it so.
        if (!transposed_->reorders_kernel()) return transposed_->forward(impulse, kernel);
        RenderTarget plain(height_, width_, Storage::Float32);
        transposed_->forward(impulse, plain);
        return transposed_->reorder_kernel(impulse, &plain.texture(), kernel);
    }
    if (!reorders_kernel()) return;
    if (!spectrum) throw std::invalid_argument("reordering the kernel needs the impulse response's spectrum");
    const std::vector<int> parts = axis_split(Axis::Columns);
    const GlProgram& p = programs_.get({"", "kernel_order.comp",
                                        {"WIDTH " + std::to_string(width_), "L1 " + std::to_string(parts[0]), "L2 " + std::to_string(parts[1])},
                                        false});
    // The spectrum was written by image stores (forward()).
    glMemoryBarrier(GL_TEXTURE_FETCH_BARRIER_BIT);
    p.use();
    bind(0, spectrum);
    glBindImageTexture(0, kernel.texture().id(), 0, GL_FALSE, 0, GL_WRITE_ONLY, GL_RGBA32F);
    glDispatchCompute(static_cast<GLuint>((width_ + 15) / 16), static_cast<GLuint>((height_ + 15) / 16), 1);
    glMemoryBarrier(GL_TEXTURE_FETCH_BARRIER_BIT | GL_SHADER_IMAGE_ACCESS_BARRIER_BIT);
    glUseProgram(0);
    glBindImageTexture(0, 0, 0, GL_FALSE, 0, GL_WRITE_ONLY, GL_RGBA32F);
    bind(0, nullptr);
    check_gl("reordering the kernel's spectrum");
}

std::vector<ComputeFft::Dispatch> ComputeFft::dispatches(const std::vector<Pass>& passes) const {
    std::vector<Dispatch> out;
    const Texture* tail_for = nullptr;  // a filter's column output whose last step the inverse rows take (fuses_column_tail())
    for (const Pass& p : passes) {
        const bool rows = p.axis == Axis::Rows;
        std::vector<Dispatch> steps;
        Dispatch whole{p.axis, false, 0, p.load, p.transform, p.store, p.source, p.target, p.scale, p.gain, p.label};
        if (rows && channel_rows_) {  // the row passes' row pairs as channel pairs
            whole.load = Load::RowChannels;
            whole.store = Store::RowChannels;
        }
        if (rows && tail_for != nullptr && p.source == tail_for) {  // step B's sub-lines, step A inverse in the loads
            whole.source = &slots_.at(static_cast<size_t>(p.slot)).scratch.texture();
            whole.tail_in_loads = true;
            tail_for = nullptr;
        }
        const std::vector<int> parts = pass_split(whole);
        // The four-step route's steps: complex lines as row or column pairs between them.
        const Load load_pair = rows ? Load::RowPair : Load::ColumnPair;
        const Store store_pair = rows ? Store::RowPair : Store::ColumnPair;
        const Texture* scratch = &slots_.at(static_cast<size_t>(p.slot)).scratch.texture();
        auto step = [&](int n, Load load, Transform transform, Store store, const Texture* from, const Texture* to, float scale,
                        float gain, const std::string& label) {
            return Dispatch{p.axis, false, n, load, transform, store, from, to, scale, gain, std::string(p.label) + label};
        };
        if (parts.size() == 1) {
            steps.push_back(whole);
        } else if (fused_step_a(parts, options_)) {
            // Step A in step B's loads: one dispatch from the pass's source to its target; a
            // filter's ends with step A inverse (FILTER_TAIL), through the scratch target, or
            // leaves it to the inverse rows' loads (fuses_column_tail()).
            const bool filter = p.transform == Transform::Filter;
            if (filter && !rows && fuses_column_tail(parts)) {
                steps.push_back(step(2, p.load, p.transform, Store::Tangled, p.source, scratch, p.scale, p.gain, " B"));
                tail_for = p.target;
            } else {
                steps.push_back(step(2, p.load, p.transform, filter ? store_pair : p.store, p.source, filter ? scratch : p.target, p.scale,
                                     p.gain, " B"));
            }
            if (filter && tail_for == nullptr) {
                steps.push_back(step(1, load_pair, Transform::Inverse, p.store, scratch, p.target, 1, 1, " A'"));
                steps.back().filter_tail = true;
            }
        } else {
            // Four-step: A from the pass's source into the scratch target, B from there to the
            // pass's target. A filter's column pass runs A, then B forward, the multiply and B
            // inverse in one dispatch (the inverse's route backwards, fft_line.comp), then A
            // inverse: three dispatches, not four.
            if (p.transform == Transform::Filter) {
                // B's output: the pass's source, read by step A already.
                steps.push_back(step(1, p.load, Transform::Forward, store_pair, p.source, scratch, p.scale, 1, " A"));
                steps.push_back(step(2, load_pair, Transform::Filter, store_pair, scratch, p.source, 1, p.gain, " B"));
                steps.push_back(step(1, load_pair, Transform::Inverse, p.store, p.source, p.target, 1, 1, " A'"));
                steps.back().filter_tail = true;
            } else {
                steps.push_back(step(1, p.load, p.transform, store_pair, p.source, scratch, p.scale, 1, " A"));
                steps.push_back(step(2, load_pair, p.transform, p.store, scratch, p.target, 1, p.gain, " B"));
            }
        }
        for (Dispatch d : steps) {
            d.real_kernel = p.real_kernel && d.transform == Transform::Filter;
            if (rows) {
                // Whole rows (not channel pairs, which fold): the pass and its tail, if any.
                const bool whole = d.step == 0 && !channel_rows_;
                const Shape whole_rows = whole ? shape(d) : Shape{};
                const int count = whole_rows.line_count, tail = whole ? row_tail(whole_rows) : 0;
                if (tail == 0) {
                    out.push_back(d);
                    continue;
                }
                Dispatch last = d;
                d.line_end = count - tail;
                last.line_begin = count - tail;
                last.line_end = count;
                last.tail_parts = tail_parts(whole_rows.full);
                if (last.tail_parts > 1) last.step = 2;
                last.label += " (tail)";
                out.push_back(d);
                out.push_back(last);
                continue;
            }
            // Pair 0 first: one workgroup (or a few), started before the others fill the GPU and
            // run alongside them (no barrier in between).
            Dispatch pair0 = d;
            pair0.pair0 = true;
            pair0.label += " (pair 0)";
            out.push_back(pair0);
            if (width_ / 2 > 1) out.push_back(d);
        }
    }
    if (tail_for != nullptr) throw std::logic_error("a filter's last column step was left to inverse rows that do not follow");
    return out;
}

std::vector<std::string> ComputeFft::describe_dispatches() const {
    std::vector<std::string> lines;
    if (transposed_) {
        for (const std::string& line : transposed_->describe_dispatches()) lines.push_back("transposed " + line);
        return lines;
    }
    RenderTarget result(1, 1);
    for (const Dispatch& d : dispatches(filter_passes(result.texture(), result))) {
        Shape s = shape(d);
        lines.push_back(d.label + ": " + std::to_string(s.groups) + (s.groups == 1 ? " workgroup of " : " workgroups of ") +
                        std::to_string(s.lines) + " x " +
                        std::to_string(s.line.threads) + " threads, lines of " + std::to_string(s.length) + " (radices " +
                        radix_list(s.line.forward) + "), " + std::to_string(s.components) + " components per exchange round, " +
                        std::to_string(shared_bytes(s.length, s.lines, s.components, s.pad_every) + (s.shared_twiddles ? twiddle_table_bytes(s.full) : 0)) +
                        " bytes of shared memory" +
                        (s.shared_twiddles                    ? ", twiddles from shared memory"
                         : s.forward_buffer || s.inverse_buffer ? ", twiddles partly from the storage buffer"
                                                                : "") +
                        (s.neighbour_pairs > 1 ? ", " + std::to_string(s.neighbour_pairs) + (d.axis == Axis::Rows ? " row" : " column") + " pairs side by side" : "") +
                        (s.bands ? ", column pairs of a band first" : "") +
                        (s.fold > 1 && !s.channel_pairs ? ", folded: " + std::to_string(s.fold) + " channel phases" : "") +
                        (neighbouring_rows(d) ? ", row pairs in neighbouring rows" : "") +
                        (s.channel_pairs ? ", rows as channel pairs" : "") +
                        (s.fused_a ? ", step A (" + std::to_string(s.sublines) + " points) in its loads" : "") +
                        (d.tail_in_loads ? ", the columns' step A inverse (2 points) in its loads" : ""));
    }
    return lines;
}

const ComputeFft::Prepared& ComputeFft::prepared(const Dispatch& d) {
    const auto key = std::make_tuple(static_cast<int>(d.axis), d.pair0, d.step, static_cast<int>(d.load), static_cast<int>(d.transform),
                                     static_cast<int>(d.store), d.filter_tail, d.tail_in_loads, d.real_kernel, d.line_begin, d.line_end, rows_layout(d.source),
                                     rows_layout(d.target), half(*d.target), stored_transposed(d.source, d.axis),
                                     stored_transposed(d.target, d.axis));
    auto at = prepared_.find(key);
    if (at == prepared_.end()) at = prepared_.emplace(key, Prepared{shape(d), &programs_.get(spec(d))}).first;
    return at->second;
}

void ComputeFft::run(const std::vector<std::vector<Pass>>& batch, const Texture* kernel, Profile* profile) {
    std::vector<std::vector<Dispatch>> images;
    for (const std::vector<Pass>& passes : batch) images.push_back(dispatches(passes));
    const std::vector<Dispatch>& steps = images.front();
    // A column step's pair-0 dispatch and the next (pairs 1 .. M/2 - 1) read the same source and
    // write different texels: no barrier, and no timestamp, between them.
    // Likewise a row pass and its tail (row_tail()).
    auto twin_follows = [&](size_t i) {
        if (i + 1 >= steps.size()) return false;
        return (steps[i].pair0 && !steps[i + 1].pair0 && steps[i + 1].axis == Axis::Columns) || steps[i + 1].line_begin > 0;
    };
    // The last barrier before this run had no image bit (barrier_bits()), so the previous run's
    // last dispatches may still be fetching: where this run's first ones store into what those
    // read (a forward's rows, then a filter's; a filter's column pairs, then an inverse's), the
    // image bit makes the stores wait for those reads.
    bool overwrites = false;
    for (size_t i = 0; i < steps.size(); ++i) {
        for (const std::vector<Dispatch>& image : images)
            overwrites = overwrites || std::count(unfinished_reads_.begin(), unfinished_reads_.end(), image.at(i).target->id()) > 0;
        if (!twin_follows(i)) break;
    }
    if (overwrites) glMemoryBarrier(GL_SHADER_IMAGE_ACCESS_BARRIER_BIT);
    unfinished_reads_.clear();
    if (profile) timestamps_.start();
    bind(1, kernel);
    std::vector<size_t> timed;  // the step after which each timestamp was taken
    std::vector<double> bytes;  // moved since the last timestamp
    double since = 0;
    for (size_t i = 0; i < steps.size(); ++i) {
        const Shape& s = prepared(steps[i]).shape;
        const bool parts = s.fold > 1 && !s.channel_pairs;
        // The same step of every image (the same program: their dispatches differ in textures only).
        for (const std::vector<Dispatch>& image : images) {
            const Dispatch& d = image.at(i);
            if (d.source->id() == d.target->id()) throw std::logic_error("a dispatch would overwrite its own source");
            const Prepared& ready = prepared(d);
            const GlProgram& program = *ready.program;
            program.use();
            program.set(Uniform::Scale, d.scale);
            program.set(Uniform::Gain, d.gain);
            program.set(Uniform::Phases, s.fold);
            program.set_ivec2(Uniform::Grid, width_, height_);
            program.set_ivec2(Uniform::Lines, s.line_count, d.line_begin);
            bind(0, d.source);
            bind(2, &twiddles_.at(s.full));
            if (buffers_) twiddle_buffers_.at(s.full).bind(0);
            if (parts) parts_.bind(1);
            glBindImageTexture(0, d.target->id(), 0, GL_FALSE, 0, GL_WRITE_ONLY, half(*d.target) ? GL_RGBA16F : GL_RGBA32F);
            const int x = std::min(s.groups, 32768), y = (s.groups + x - 1) / x;
            glDispatchCompute(static_cast<GLuint>(x), static_cast<GLuint>(y), 1);
            since += bytes_moved(d, s);
            unfinished_reads_.push_back(d.source->id());
        }
        if (twin_follows(i)) continue;
        // What one dispatch wrote, the next reads as a texture; the last one's output the caller
        // may also draw from, render to or read back; the next folded dispatch writes the parts
        // buffer this one read. Not the image bit (barrier_bits()): without it the next filter's
        // first dispatch starts beside this one's last (H200, 1024^2 filters queued 0.0647 ->
        // 0.0563 ms).
        glMemoryBarrier(barrier_bits(i + 1 == steps.size(), parts));
        if (i + 1 < steps.size()) unfinished_reads_.clear();  // the next dispatch fetches what these stored: they have finished
        if (profile) {
            timed.push_back(i);
            bytes.push_back(since);
            timestamps_.mark();
        }
        since = 0;
    }
    glUseProgram(0);
    glBindImageTexture(0, 0, 0, GL_FALSE, 0, GL_WRITE_ONLY, GL_RGBA32F);
    for (int unit : {2, 1, 0}) bind(unit, nullptr);
    if (buffers_) {
        StorageBuffer::unbind(0);
        StorageBuffer::unbind(1);
    }
    check_gl("running the compute FFT");
    if (profile) {
        *profile = Profile{};
        const std::vector<double> step_ms = timestamps_.intervals_ms();
        for (size_t i = 0; i < timed.size(); ++i) {
            const double ms = step_ms[i];
            const Dispatch& d = steps[timed[i]];
            profile->pass_ms.push_back(ms);
            profile->pass_labels.push_back(d.axis == Axis::Columns && !d.pair0 ? d.label + " (with pair 0)" : d.label);
            profile->pass_bytes.push_back(bytes[i]);
            profile->program_ms[static_cast<size_t>(Program::Fft)] += ms;
            profile->total_ms += ms;
        }
    }
}

GLbitfield ComputeFft::barrier_bits(bool last, bool parts) {
    GLbitfield bits = GL_TEXTURE_FETCH_BARRIER_BIT;
    if (last) bits |= GL_FRAMEBUFFER_BARRIER_BIT | GL_TEXTURE_UPDATE_BARRIER_BIT | GL_PIXEL_BUFFER_BARRIER_BIT;
    if (parts) bits |= GL_SHADER_STORAGE_BARRIER_BIT;
    return bits;
}

double ComputeFft::bytes_moved(const Dispatch& d, const Shape& s) {
    // Every line element is one complex RGBA value: two texels read (a row pair, a column pair, or
    // the four texels of Eq. 8 for two elements), two written, two of the kernel's spectrum read
    // where the dispatch multiplies (one where that spectrum is real); as channel pairs, one texel
    // a position of a row, in and out.
    const double elements = static_cast<double>(s.line_count) * s.length * s.fold / (s.channel_pairs ? 2 : 1);
    auto texel = [](const Texture& t) { return half(t) ? 8.0 : 16.0; };
    const double kernel = d.transform != Transform::Filter ? 0.0 : d.real_kernel ? 8.0 : 16.0;
    return elements * 2 * ((d.tail_in_loads ? 2 : 1) * texel(*d.source) + texel(*d.target) + kernel);
}

const char* ComputeFft::define_of(Load l) {
    switch (l) {
        case Load::RowPair: return "LOAD_ROW_PAIR";
        case Load::Untangled: return "LOAD_UNTANGLED";
        case Load::Spectrum: return "LOAD_SPECTRUM";
        case Load::ColumnPair: return "LOAD_COLUMN_PAIR";
        case Load::RowChannels: return "LOAD_ROW_CHANNELS";
    }
    return "";
}

const char* ComputeFft::define_of(Transform t) {
    switch (t) {
        case Transform::Forward: return "FORWARD";
        case Transform::Inverse: return "INVERSE";
        case Transform::Filter: return "FILTER";
    }
    return "";
}

const char* ComputeFft::define_of(Store s) {
    switch (s) {
        case Store::RowPair: return "STORE_ROW_PAIR";
        case Store::Spectrum: return "STORE_SPECTRUM";
        case Store::RowPairs: return "STORE_ROW_PAIRS";
        case Store::ColumnPair: return "STORE_COLUMN_PAIR";
        case Store::RowChannels: return "STORE_ROW_CHANNELS";
        case Store::Tangled: return "STORE_TANGLED";
    }
    return "";
}

const ComputeFft::Intermediates& ComputeFft::slot(size_t i) {
    while (slots_.size() <= i) {
        // H stored transposed in a transposed problem's transform (stored_transposed()).
        Intermediates made{RenderTarget(transposed_io_ ? height_ : width_, transposed_io_ ? width_ : height_, options_.storage),
                           RenderTarget(width_, height_, options_.storage), {}};
        if (axis_split(Axis::Rows).size() > 1 || axis_split(Axis::Columns).size() > 1)
            made.scratch = RenderTarget(width_, height_, options_.storage);
        slots_.push_back(std::move(made));
    }
    return slots_[i];
}

std::vector<ComputeFft::Pass> ComputeFft::forward_passes(const Texture& image, RenderTarget& spectrum) const {
    const Normalisation scale = normalisation(width_, height_);
    const Texture& h = slots_.front().rows_out.texture();
    return {{Axis::Rows, Load::RowPair, Transform::Forward, Store::RowPair, &image, &h, 1, 1, "rows forward"},
            {Axis::Columns, Load::Untangled, Transform::Forward, Store::Spectrum, &h, &spectrum.texture(), scale.rows, scale.columns,
             "columns forward"}};
}

std::vector<ComputeFft::Pass> ComputeFft::inverse_passes(const Texture& spectrum, RenderTarget& image) const {
    const Texture& pairs = slots_.front().columns_out.texture();
    return {{Axis::Columns, Load::Spectrum, Transform::Inverse, Store::RowPairs, &spectrum, &pairs, 1, 1, "columns inverse"},
            {Axis::Rows, Load::RowPair, Transform::Inverse, Store::RowPair, &pairs, &image.texture(), 1, 1, "rows inverse"}};
}

std::vector<ComputeFft::Pass> ComputeFft::filter_passes(const Texture& image, RenderTarget& out, int slot, bool real_kernel) const {
    // The kernel's spectrum carries 1/(MN); the image's carries only the row factor, which the
    // multiply's gain gives back (normalisation()).
    const Normalisation scale = normalisation(width_, height_);
    const Intermediates& own = slots_.at(static_cast<size_t>(slot));
    const Texture &h = own.rows_out.texture(), &pairs = own.columns_out.texture();
    return {{Axis::Rows, Load::RowPair, Transform::Forward, Store::RowPair, &image, &h, 1, 1, "rows forward", slot},
            {Axis::Columns, Load::Untangled, Transform::Filter, Store::RowPairs, &h, &pairs, scale.rows, scale.filter_gain,
             "columns filter", slot, real_kernel},
            {Axis::Rows, Load::RowPair, Transform::Inverse, Store::RowPair, &pairs, &out.texture(), 1, 1, "rows inverse", slot}};
}

void ComputeFft::forward(const Texture& image, RenderTarget& spectrum, Profile* profile) {
    prepare({Use::Forward});  // and slot 0, made on first use where filters run transposed
    run({forward_passes(image, spectrum)}, nullptr, profile);
}

void ComputeFft::inverse(const Texture& spectrum, RenderTarget& image, Profile* profile) {
    prepare({Use::Inverse});
    run({inverse_passes(spectrum, image)}, nullptr, profile);
}

void ComputeFft::prepare_filter(bool real_kernel) {
    // Filtering transposed, the transposed problem's transform filters and makes the kernel.
    if (transposed_) return transposed_->prepare_filter(real_kernel);
    prepare({Use::Forward, real_kernel ? Use::RealFilter : Use::Filter});
}

std::vector<ProgramSpec> ComputeFft::filter_programs(bool real_kernel) {
    if (transposed_) return transposed_->filter_programs(real_kernel);
    std::vector<Use> missing;
    for (Use u : {Use::Forward, real_kernel ? Use::RealFilter : Use::Filter})
        if (!(prepared_uses_ & use_bit(u))) missing.push_back(u);
    return use_programs(missing);
}

void ComputeFft::filter(const Texture& image, const Texture& kernel_spectrum, bool real_kernel, RenderTarget& out, Profile* profile) {
    filter_images({&image}, kernel_spectrum, real_kernel, {&out}, profile);
}

void ComputeFft::filter_batch(const std::vector<const Texture*>& images, const Texture& kernel_spectrum, bool real_kernel,
                              const std::vector<RenderTarget*>& outs, Profile* profile) {
    // Folded lines share one parts buffer: one image after the other (the base checks the batch).
    if (fold(width_) > 1 || fold(height_) > 1) return Fft2D::filter_batch(images, kernel_spectrum, real_kernel, outs, profile);
    check_batch(images, outs, width_, height_);
    filter_images(images, kernel_spectrum, real_kernel, outs, profile);
}

void ComputeFft::filter_images(const std::vector<const Texture*>& images, const Texture& kernel_spectrum, bool real_kernel,
                               const std::vector<RenderTarget*>& outs, Profile* profile) {
    if (transposed_) {
        transposed_->filter_images(images, kernel_spectrum, real_kernel, outs, profile);
        // Its rows are the image's columns: say so (--pass-costs, the race's dispatches).
        if (profile)
            for (std::string& label : profile->pass_labels) label = "transposed " + label;
        return;
    }
    prepare({real_kernel ? Use::RealFilter : Use::Filter});
    std::vector<std::vector<Pass>> batch;
    for (size_t i = 0; i < images.size(); ++i) {
        slot(i);
        batch.push_back(filter_passes(*images[i], *outs[i], static_cast<int>(i), real_kernel));
    }
    run(batch, &kernel_spectrum, profile);
}

}  // namespace gpufft
