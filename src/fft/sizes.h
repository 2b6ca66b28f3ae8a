// FFT lengths: which sizes the transforms take and which of them are fast.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace gpufft {

/// The smallest even length >= `need` (and >= 2) whose prime factors are 2, 3, 5 and 7 only:
/// FFTW transforms these at nearly the speed of powers of two (scipy.fft.next_fast_len, restricted
/// to even lengths so that row pairs pack real-to-complex). 0 if none fits in an int.
long long next_fast_size(long long need);

/// Whether `n` is such a length: even, at least 2, no prime factor above 7.
bool is_fast_size(long long n);

/// The prime factors of `n` (2, 3, 5, 7 and whatever else), smallest first.
std::vector<int> prime_factors(long long n);

/// The smallest power of two >= `need` and >= 2.
long long next_power_of_two(long long need);

/// The power of two nearest `n` (n >= 1) on a log scale: 1920 -> 2048, 1080 -> 1024, 1536 -> 2048
/// (issue 15's yardstick for a mixed size; no integer lies halfway).
long long nearest_power_of_two(long long n);

/// The forward transform's normalisation 1/(MN) in two factors: 1/2^k on the row transforms (the
/// largest power of two 2^k <= M: exact, and it keeps the columns' values near the image's), and
/// the rest, rounded once, on the column transforms. Scaling by 1/M and then 1/N rounds twice and
/// biases every value by up to 2^-23 (1.0e-7 at 120x120, against fftwf's 1.3e-7 error there).
struct Normalisation {
    float rows, columns;
    float filter_gain;  ///< 2^k: what the filter's multiply gives back for the image's row factor (exact)
};
Normalisation normalisation(int width, int height);

/// Which FFT lengths a transform takes and what each costs: what the tiler chooses grids by.
struct LengthModel {
    std::function<bool(long long)> allowed;  ///< lengths the transform takes
    std::function<double(long long)> cost;   ///< relative time per element of one transform along an axis
    bool any_whole = false;                  ///< wrap takes any length whole (FFTW), not only allowed ones
    std::string name;                        ///< for -v: "compute", "fast chain", ...
    /// Overlap-save tiles of lengths in [tile_from, tile_to] (a measured model's range; 0: none)
    /// serve an axis that one transform would cover where they cost it kTilesPay of that transform
    /// or less.
    long long tile_from = 0, tile_to = 0;

    /// The allowed lengths up to `tabled_to` with their costs, ascending (tabulate()), or none.
    std::shared_ptr<const std::vector<std::pair<long long, double>>> table = nullptr;
    long long tabled_to = 0;
    /// Each length of this transform compiles programs of its own (the compute backend's lines,
    /// seconds a length cold): a batch of many sizes then shares a few lengths (share()).
    bool programs_per_length = false;
    /// Needs from..to (ascending, disjoint) that best() answers with one length along an axis
    /// (0: rows, the width; 1: columns, the height), by share(); none where null.
    struct SharedLength {
        long long from, to, length;
    };
    std::shared_ptr<const std::vector<SharedLength>> shared[2] = {nullptr, nullptr};

    /// The allowed length in [max(need, 4), limit] with the least cost per axis (length times
    /// cost), the smaller one on ties; 0 if none. Along an axis (0 or 1) whose needs share()
    /// grouped, a need in a group: the group's length, where that is within `limit`.
    long long best(long long need, long long limit, int axis = -1) const;
    /// The length share() grouped `need` under along `axis`, where that is within `limit`; 0 if
    /// none (no grouping, or the need in no group).
    long long shared_length(long long need, long long limit, int axis) const;
    /// The least cost per axis any length for `need` has (best()'s, not shared): 0 if none.
    double best_cost(long long need, long long limit) const;
    /// Groups the needs a batch will ask best() for along `axis` (its programs are that axis's
    /// alone), so that few lengths serve them: from the smallest need up, a group takes every need
    /// whose own best length costs at most `within` times the group's first need's, and answers
    /// them all with the best length for its largest (which costs each need at most `within` times
    /// its own best: a need alone keeps its best). Replaces the axis's earlier grouping; needs
    /// with no length within `limit` are left out.
    void share(int axis, std::vector<long long> needs, long long limit, double within);
    /// The smallest allowed length in [n, limit]; 0 if none.
    long long next_allowed(long long n, long long limit) const;
    /// Rates every length up to `up_to` now, into `table`, and answers allowed() and cost() there
    /// from it: the tiler asks them of thousands of lengths for each image, and the compute
    /// backend's rating builds line plans (0.5 ms an image on the H200 machine's host, the GL
    /// thread's time for a small file; src/README.md, "Small images, thousands of files").
    void tabulate(long long up_to);
};

/// What tiles must cost an axis against one transform covering it for the tiler to take them
/// (LengthModel::tile_to): 5% less, beyond the measured squares' noise, which leaves out the
/// tiles' own small dispatches (unpack, pack).
constexpr double kTilesPay = 0.95;

/// The lengths a model that the tiler asks for every image rates ahead (LengthModel::tabulate):
/// up to the largest --max-fft. 3-6 ms once (498 lengths under the compute backend's model).
constexpr long long kTabulatedLengths = 1 << 16;

/// How much more a shared length may cost an axis than its own best (LengthModel::share): a
/// batch of images of many sizes on the compute backend then compiles a program set for each of a
/// few lengths (48 needs between 264 and 864 points: 3 under the H200's measured model, 5 under
/// the software row's), where each size's best would compile one a size (src/README.md,
/// "Programs keyed by the line, lengths shared").
constexpr double kSharedLengthsWithin = 1.25;

/// FFTW: every even fast size at its length (the smallest that fits is the cheapest), any length
/// whole for wrap.
LengthModel fftw_lengths();

}  // namespace gpufft
