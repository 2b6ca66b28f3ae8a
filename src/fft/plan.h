// Plans: the fragment-program chain of Moreland & Angel (Figure 3) as data. A plan is a list of
// passes; a pass draws one quad per region that needs a different program variant, all reading the
// same source texture and writing one render target. Printing or counting a plan (Table 1) reads
// this data; the executor runs it; nothing re-derives it.
#pragma once

#include "gl/quad.h"

#include <array>
#include <optional>
#include <utility>
#include <string>
#include <vector>

namespace gpufft {

/// The paper's fragment programs (Table 1), one file each in programs/.
enum class Program { Fft, Untangle, Scale, Tangle, Pass, Multiply };
constexpr int kProgramCount = 6;

/// "fft", "untangle", ...: the program's name in the paper and its file programs/<name>.frag.
const char* program_name(Program p);

/// What a pass reads its data from and draws into.
enum class Surface {
    Input,         ///< the caller's source texture, M x N
    Output,        ///< the caller's destination, M x N
    Pair,          ///< the radix-2 chain's two M x N render targets, alternately
    RowPlanes,     ///< the fast chain's row-stage planes: 2B layers of (M/B) x (N/2), B = plane_blocks(M), two sets alternately
    ColumnPlanes,  ///< the fast chain's column-stage planes: 2B layers of (N/B) x (M/2), B = plane_blocks(N), likewise
};

/// The fast chain's one program, fft_radix.frag, as data: which axis and radix, how its first
/// stage loads (LOAD_*) and its last stores (STORE_*), and the column pair 0 cases. defines()
/// writes its #defines; everything that asks about a variant reads these fields.
struct FastVariant {
    enum class Load { Image, UntangleRows, Spectrum, Multiply, Planes, RowPairs };
    enum class Store { Planes, Image, RowPairs };
    enum class Pair { Any, Tangled, Mirror };  ///< column pair 0 (columns 0 and M/2) or the others
    bool rows = true;
    int radix = 0;
    Load load = Load::Planes;
    Store store = Store::Planes;
    bool inverse = false;
    bool multiply_between = false;  ///< forward stage, multiply, first inverse stage in one pass
    bool computed_twiddles = false;
    Surface source = Surface::Input;
    Pair pair = Pair::Any;
    int row_blocks = 4, column_blocks = 4;  ///< plane_blocks() of M and N: the planes' layouts (common.glsl)
    std::vector<std::string> defines() const;
};
const char* define_of(FastVariant::Load l);   ///< "LOAD_IMAGE", ...
const char* define_of(FastVariant::Store s);  ///< "STORE_PLANES", ...

/// multiply.frag's cases of the compressed layout (Eq. 10): where a texel's partner (the other part
/// of its complex value) lies, and which part it writes. defines() writes its #defines.
struct MultiplyVariant {
    enum class Partner { None, Row, Column };  ///< None: the four purely real texels
    enum class Part { RealOnly, Real, Imag };
    Partner partner = Partner::None;
    Part part = Part::RealOnly;
    std::vector<std::string> defines() const;
};

/// A program with its variant #defines (Figure 3's cases), e.g. fft + {AXIS_ROWS, PAIR_TANGLED, PART_REAL}.
struct Variant {
    Variant() = default;
    Variant(Program p, std::vector<std::string> d, std::string f = {}) : program(p), defines(std::move(d)), file(std::move(f)) {}
    /// The fast chain's fft_radix.frag variant `v`.
    explicit Variant(const FastVariant& v);
    /// multiply.frag's case `v`.
    explicit Variant(const MultiplyVariant& v);
    Program program = Program::Pass;
    std::vector<std::string> defines;
    std::string file;              ///< the source in programs/; empty: <program name>.frag
    std::optional<FastVariant> fast;  ///< set for fft_radix.frag: the fields its defines came from
    std::optional<MultiplyVariant> multiply;  ///< set for multiply.frag
    std::string file_name() const;
    std::string describe() const;  ///< "fft[AXIS_ROWS PAIR_TANGLED PART_REAL]"
    bool operator<(const Variant& o) const;
    bool operator==(const Variant& o) const { return program == o.program && defines == o.defines && file == o.file; }
};

/// One quad: a variant drawn over a region.
struct Draw {
    Variant variant;
    Region region;
};

/// One full-screen pass: every texel of the destination is written by exactly one draw.
struct Pass {
    std::string label;        ///< "row FFT, P = 4" etc., for listings and profiles
    std::vector<Draw> draws;
    float stride = 0;         ///< fft: the partition stride P = L / 2^i of Eq. 6
    float axis_length = 0;    ///< fft: L, the length of the transformed axis
    float scale = 1;          ///< untangle / scale: the normalisation factor (1/M or 1/N); multiply: gain
    bool reads_kernel = false;///< multiply: the second operand is the kernel spectrum
    Surface source = Surface::Pair, target = Surface::Pair;
    int radix = 0;            ///< fft_radix.frag: R, with the radix twiddle table of axis_length
};

struct Plan {
    int width = 0, height = 0;  ///< M columns, N rows
    std::vector<Pass> passes;
};

/// Forward 2D FFT of an M x N real RGBA image into the compressed layout of Eq. 10, scaled 1/(MN):
/// tangled row FFT (log M passes), untangle + scale 1/M, column FFT (log N passes), untangle + scale 1/N.
Plan forward_plan(int width, int height);
/// The inverse: tangle columns, inverse column FFT, tangle rows, inverse row FFT; no scaling.
Plan inverse_plan(int width, int height);
/// Filtering: forward, multiply by the kernel spectrum (times M*N, see filter.h), inverse.
Plan filter_plan(int width, int height);

/// The fast chain (fft_radix.frag): radix-16 stages (then one of 8 or 4) over eight render targets
/// (four along an axis of 2 mod 4),
/// with untangle, multiply and tangle folded into the neighbouring passes: a filter of 1024^2 is
/// 12 passes instead of 45. Needs M, N >= 4. `computed_twiddles` makes the programs compute W in the
/// shader instead of reading the table (for measuring the difference).
Plan fast_forward_plan(int width, int height, bool computed_twiddles = false);
Plan fast_inverse_plan(int width, int height, bool computed_twiddles = false);
Plan fast_filter_plan(int width, int height, bool computed_twiddles = false);

/// The radices of the fast chain's stages along an axis of length L (even, at least 4, prime
/// factors 2, 3, 5 and 7), largest first: each odd prime times 4 (or 2) while the power of two
/// lasts, then as many 16s as fit, then 8 or 4 (or 8 and 4). Powers of two: 16s, then 8 or 4.
/// L of 2 mod 4: twice the smallest odd prime first, then the other primes alone, largest first.
std::vector<int> radices(int length);
/// The blocks B the fast chain cuts an axis of length L into (common.glsl's planes): 4 where 4
/// divides L, else 2. Each fragment of a stage along the axis computes B outputs, L/B apart.
int plane_blocks(long long length);
/// Of a fragment's `blocks` outputs at radix R, how many are one butterfly's (fft_radix.frag's G):
/// 4 where 4 divides R and blocks, else 2 where R is even, else 1 (a butterfly an output).
int butterfly_outputs(int radix, int blocks);
/// Whether the fast chain transforms an axis of `length`: a fast size (sizes.h) of at least 4.
bool fast_chain_length(long long length);
/// Whether the fast chain transforms width x height: fast_chain_length() of both.
bool fast_chain_size(int width, int height);
/// Throws std::invalid_argument (saying why) unless fast_chain_size().
void check_fast_size(int width, int height);

/// Throws std::invalid_argument unless width and height are fast sizes (sizes.h: even, factors 2,
/// 3, 5 and 7), what the fast chain and the compute backend transform.
void check_fft_size(int width, int height);
/// Throws std::invalid_argument unless width and height are powers of two, at least 2: the
/// paper's radix-2 chain.
void check_power_of_two_size(int width, int height);
bool is_power_of_two(long long n);
int log2_exact(long long n);

/// Fragment invocations per program in a plan: the sum of its draws' areas.
std::array<long long, kProgramCount> count_invocations(const Plan& plan);

/// Table 1 of the paper: invocations per program for filtering an M x N image.
long long table1_invocations(Program p, int width, int height);

/// Per-fragment cost of a variant: RGBA texels fetched (16 bytes each, the twiddle table included),
/// texels written, and floating-point operations on the data path for all four channels (a
/// multiply-add counts 2).
struct Cost {
    int fetches = 0;
    int flops = 0;
    int writes = 1;
};
Cost cost_of(const Variant& v);

/// Table 2 for a plan: per program, operations and bytes moved.
struct Totals {
    std::array<long long, kProgramCount> invocations{};
    std::array<double, kProgramCount> flops{}, bytes_read{}, bytes_written{};
};
Totals plan_totals(const Plan& plan);

/// Table 1's instruction counts (arithmetic, texture) per fragment of the paper's Cg programs.
struct PaperInstructions {
    int arithmetic, texture;
};
PaperInstructions paper_instructions(Program p);

}  // namespace gpufft
