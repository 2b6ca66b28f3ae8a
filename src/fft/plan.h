// Plans: the fragment-program chain of Moreland & Angel (Figure 3) as data. A plan is a list of
// passes; a pass draws one quad per region that needs a different program variant, all reading the
// same source texture and writing one render target. Printing or counting a plan (Table 1) reads
// this data; the executor runs it; nothing re-derives it.
#pragma once

#include "gl/quad.h"

#include <array>
#include <string>
#include <vector>

namespace gpufft {

/// The paper's fragment programs (Table 1), one file each in programs/.
enum class Program { Fft, Untangle, Scale, Tangle, Pass, Multiply };
constexpr int kProgramCount = 6;

/// "fft", "untangle", ...: the program's name in the paper and its file programs/<name>.frag.
const char* program_name(Program p);

/// A program with its variant #defines (Figure 3's cases), e.g. fft + {AXIS_ROWS, PAIR_TANGLED, PART_REAL}.
struct Variant {
    Program program = Program::Pass;
    std::vector<std::string> defines;
    std::string describe() const;  ///< "fft[AXIS_ROWS PAIR_TANGLED PART_REAL]"
    bool operator<(const Variant& o) const;
    bool operator==(const Variant& o) const { return program == o.program && defines == o.defines; }
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

/// Throws std::invalid_argument unless width and height are powers of two, at least 2.
void check_fft_size(int width, int height);
bool is_power_of_two(long long n);
int log2_exact(long long n);

/// Fragment invocations per program in a plan: the sum of its draws' areas.
std::array<long long, kProgramCount> count_invocations(const Plan& plan);

/// Table 1 of the paper: invocations per program for filtering an M x N image.
long long table1_invocations(Program p, int width, int height);

/// Per-fragment cost of a variant: RGBA texels fetched (16 bytes each, the twiddle table included)
/// and floating-point operations on the data path for all four channels (a multiply-add counts 2).
struct Cost {
    int fetches = 0;
    int flops = 0;
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

/// The plan, one line per pass and draw (what `--list-passes` prints).
std::string describe_plan(const Plan& plan);

}  // namespace gpufft
