// The compute backend (programs/fft_line.comp): workgroups of G lines, each line whole in shared
// memory and registers, so an axis is one dispatch and a filter three: rows, columns (forward,
// multiply, inverse), rows. Lines longer than shared memory holds take two dispatches per
// transform (four-step). Same textures in and out, same compressed layout (Eq. 10) as the
// fragment chain.
#pragma once

#include "fft/fft2d.h"
#include "fft/sizes.h"
#include "gl/buffer.h"

#include <array>
#include <deque>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace gpufft {

struct ComputeTuning;

class ComputeFft : public Fft2D {
public:
    ComputeFft(ProgramCache& programs, int width, int height, const FftOptions& options = {});

    void forward(const Texture& image, RenderTarget& spectrum, Profile* profile = nullptr) override;
    void inverse(const Texture& spectrum, RenderTarget& image, Profile* profile = nullptr) override;
    void filter(const Texture& image, const Texture& kernel_spectrum, bool real_kernel, RenderTarget& out,
                Profile* profile = nullptr) override;
    /// Each dispatch of the filter for every image, then one barrier: the images' workgroups fill
    /// each other's sparse last rounds (1920x1080's 1080-point column filter: 960 lines, 7.3 rounds
    /// of one workgroup an SM on 132 SMs). Each image past the first has intermediates of its own,
    /// made on first use. Folded lines (one parts buffer) filter one image after the other.
    void filter_batch(const std::vector<const Texture*>& images, const Texture& kernel_spectrum, bool real_kernel,
                      const std::vector<RenderTarget*>& outs, Profile* profile = nullptr) override;
    /// True where a filter's columns take the four-step route with one sub-line a workgroup in
    /// step B (Shape::bands): its multiply then reads the kernel's rows in step B's order.
    /// Also true where filters run transposed (transposed()): the kernel's spectrum is then the
    /// transposed problem's, made from the impulse response by its forward.
    bool reorders_kernel() const override;
    void prepare_filter(bool real_kernel) override;
    std::vector<ProgramSpec> filter_programs(bool real_kernel) override;
    /// False where filters run transposed: the kernel is then the transposed problem's forward of
    /// the impulse response, not a reordering of this transform's.
    bool kernel_reads_spectrum() const override { return transposed_ == nullptr; }
    void reorder_kernel(const Texture& impulse, const Texture* spectrum, RenderTarget& kernel) override;
    std::array<int, 2> kernel_size() const override;
    /// Whether filters run as the transposed problem (FftOptions::compute_transpose): a transform
    /// of N x M whose rows are the image's columns, fetched from the image and stored into the
    /// output transposed, with H (the rows' results) stored transposed too. Every dispatch then
    /// stores its lines down its target's columns: on the H200 a copy along rows storing down
    /// columns moved 2.3x the bytes a second of one storing along rows at 4096^2 and 8192^2
    /// (src/README.md, "Transposed filters").
    bool transposed() const { return transposed_ != nullptr; }
    /// The device row's rule (ComputeTuning::transpose_columns_above: `above`, 0 never): filters
    /// of images `height` tall run transposed where those columns, the transposed problem's rows,
    /// are longer than `above` and channel pairs (channel_line()) with lines up to `most` whole.
    static bool transposes_columns(int height, int most, int above);
    std::string name() const override { return "compute"; }
    using Fft2D::forward;
    using Fft2D::inverse;

    enum class Axis { Rows, Columns };
    /// Whether this context runs compute shaders with image load/store.
    static bool supported();
    /// The registers a thread may take in a workgroup of `threads` on NVIDIA (read from the
    /// machine code: 65536 over the warps rounded up to a multiple of 4, rounded down to a
    /// multiple of 8, at most 255; src/README.md, "Any FFT size").
    static int register_cap(int threads);
    /// How a line is transformed in one workgroup: its stages' radices in the forward transform, in
    /// the inverse and in the filter's inverse (which starts with the forward's last radix, its
    /// inputs still in registers), the threads per line and the registers (elements) per thread.
    struct LinePlan {
        std::vector<int> forward, inverse, filter_inverse;
        int threads = 0, registers = 0;
        long long slots = 0;  ///< the forward's thread-rounds times radix, idle threads included
    };
    /// The plan of a line of `length` (any fast size, sizes.h) with stage radices near `max_radix`
    /// (4, 8 or 16) and at most `max_threads` threads: powers of two as `max_radix` allows, then
    /// 3, 5 and 7, the small ones merged (2 x 3 = 6, 3 x 3 = 9, 2 x 5 = 10, 4 x 3 = 12: at most 12
    /// elements a thread) where `max_radix` is at least 8; below it the stray 2 of a mixed line
    /// whose power of two is 8 or more and which has no 7 takes a 3 into a 6, else a 4 into an 8
    /// (3000 as 6 4 5 5 5, 1000 as 8 5 5 5; line_radices()). Every transform starts
    /// and the inverses end with an even radix: the columns' untangle and tangle pair elements y
    /// and y + N/2 in one butterfly.
    static LinePlan plan_line(int length, int max_radix, int max_threads);
    /// The plan of these forward radices (the first even) with `threads` threads a line, or (0) as
    /// many as the stage with the most butterflies has, so that every stage runs one round and
    /// the threads past a stage's butterflies (whole warps) wait at its barriers.
    static LinePlan plan_with(const std::vector<int>& forward, int threads);
    /// Plans chosen over the planner's (FftOptions::compute_plan, for tuning): per line length on
    /// both axes (`lines`) or on one (`rows`, `columns`: over `lines` there), and whether lines
    /// with factors 3, 5 or 7 take composite_radices().
    struct PlanChoice {
        std::map<int, LinePlan> lines, rows, columns;
        bool composite = false;
    };
    /// FftOptions::compute_plan read: items "[rows:|columns:]LENGTH:RxRx...[/THREADS]" (e.g.
    /// "1920:8x8x6x5/384", "columns:1080:4x2x5x3x3x3/360") and "composite", comma-separated.
    /// Throws UsageError naming the item.
    static PlanChoice parse_plans(const std::string& text);
    /// The plans line_plan() takes over the planner's: the option's, and for the lengths it does
    /// not name (on either axis), where no --compute-radix is given, the device row's
    /// (ComputeTuning::line_plans).
    static PlanChoice chosen_plans(const FftOptions& options, const ComputeTuning& tuning);
    /// The fewest stages of radices 2-10 and 12 (at most kMaxRegisters elements a thread) for a
    /// line of `length`, then the fewest threads with one round a stage, the first radix even:
    /// 1920 as 8 8 6 5 (384 threads), 1080 as 12 10 9 (120), 1000 as 10 10 10.
    static std::vector<int> composite_radices(int length);
    /// The plan of a line of `length` on `axis`: `choice`'s for it where it has one (for that axis
    /// first), else plan_line()'s.
    static LinePlan line_plan(int length, int max_radix, const PlanChoice& choice, Axis axis);
    /// The forward radices of plan_line().
    static std::vector<int> line_radices(int length, int max_radix);
    /// The option value checked: 4, 8, 16, or 0 (auto: by line length).
    static int radix_for(int option);
    /// The auto tail of a whole-row pass (row_tail()) of `line_count` row pairs in workgroups of
    /// `lines` lines of `threads` threads on a GPU of `sm_count` multiprocessors (0: unknown, no
    /// tail): 1920x1080's 540 row pairs, two lines of 480 threads, on 132 SMs: 24.
    static int auto_row_tail(int line_count, int lines, int threads, int sm_count);
    /// Whether the rows run as channel pairs (one image row, R + iG and B + iA, in two folded
    /// halves: fft_line.comp's CHANNEL_PAIRS) instead of row pairs: where a row pair would fill a
    /// workgroup alone, or not fit one at all (one dispatch a row pass then, not the four-step
    /// route's two).
    bool channel_rows() const { return channel_rows_; }
    /// channel_rows() for rows of `length` with lines up to `most` whole: longer than `most` / 2,
    /// a multiple of 4, and half of it at most `most`.
    static bool channel_line(int length, int most);
    /// Whether a filter's last column step, the two-point step A inverse of columns in fused
    /// halves, runs in the inverse rows' loads instead of a dispatch of its own
    /// (FftOptions::compute_fuse_tail, ComputeTuning::fuse_column_tail): where the rows are channel
    /// pairs, whose tangle (Eq. 7 across channels) is one element's alone, so step B can store
    /// it, and the butterfly's real coefficients pass through it. `column_parts`: the columns'
    /// split (axis_split()), which the caller holds.
    bool fuses_column_tail(const std::vector<int>& column_parts) const;
    /// fuses_column_tail() but for the columns' split: asked for (or measured so) and rows as
    /// channel pairs.
    bool tail_in_rows_wanted() const;
    /// fold_line() with this transform's options, where the GL has room for the parts buffer.
    int fold(int length) const;
    /// The parts buffer of lines folded `fold` times.
    long long parts_bytes(int fold) const;
    /// Channel phases of a line of `length` (FftOptions::compute_fold): `option` (2 or 4) where
    /// the line is longer than `most` and length / option is at most `most` and even (the
    /// columns' untangle pairs y and y + N/2); else 1 (whole, or the four-step route).
    static int fold_line(int length, int most, int option);
    /// split() for lines up to `most` whole, longer ones in the four-step split F = L1 L2: halves
    /// (L1 = 2) where they fit, quarters (L1 = 4) where they fit and `quarters` (step A in step B's
    /// loads where fused_step_a() says), else L1 >= L2 as near sqrt(F) as F's factors allow, both
    /// even (the columns' untangle and tangle pair elements y and y + N/2 within each step's
    /// sub-lines); else (F = 2 x odd) an even L1 of at least 6 and an odd L2, which a column
    /// inverse takes the other way round (pass_split()); empty where none fits.
    static std::vector<int> split_line(int length, int most, bool quarters);
    /// The columns' split where the device's row limits step B's sub-lines
    /// (ComputeTuning::column_step_b_longest): lines up to `most` whole, lengths in `halves`
    /// (column_halves()) as 2 x L/2 where L/2 fits and is even,
    /// longer ones as L1 x L2 with L2 the longest even length up to `step_b_longest` (and `most`)
    /// whose L1 is even and fits; empty where none is.
    static std::vector<int> column_split(int length, int most, int step_b_longest, const std::vector<int>& halves = {});
    /// column_split()'s `halves` for a tuning, parsed: its column_halves, and where the filter's
    /// last column step runs in the inverse rows' loads (`tail_in_rows`) its
    /// column_halves_fused_tail too.
    static std::vector<int> column_halves(const ComputeTuning& tuning, bool tail_in_rows);
    /// The lengths this backend takes on this context (every fast size, multiples of 4 where a
    /// line takes two dispatches) and their cost: the measured time of an L x L filter where the
    /// device's row has it and the options are the defaults, else the memory traffic of one
    /// dispatch per step plus the threads' butterfly work (src/README.md, "Any FFT size").
    static LengthModel lengths(const FftOptions& options = {});
    /// The same under a given row of the tuning table (no GL context needed).
    static LengthModel lengths(const FftOptions& options, const ComputeTuning& tuning);
    /// One line per dispatch description, for --pass-costs and tests.
    std::vector<std::string> describe_dispatches() const;

private:
    /// The transposed problem's transform (transposed()): `transposed_io` marks its image side
    /// and H as stored transposed (stored_transposed()).
    ComputeFft(ProgramCache& programs, int width, int height, const FftOptions& options, bool transposed_io);
    /// Whether `t`, read or written by a dispatch along `axis`, holds texel (x, y) at (y, x)
    /// (fft_line.comp's SOURCE_TRANSPOSED, TARGET_TRANSPOSED): in the transposed problem's
    /// transform, H and the rows' image side (the caller's image and output); else never.
    bool stored_transposed(const Texture* t, Axis axis) const;
    /// The filter of each image into its output, the batch checked by the caller.
    void filter_images(const std::vector<const Texture*>& images, const Texture& kernel_spectrum, bool real_kernel,
                       const std::vector<RenderTarget*>& outs, Profile* profile);
    /// How fft_line.comp reads its lines (LOAD_*): row pairs of a real image, the untangled row
    /// spectra's columns, a spectrum's columns, or the four-step intermediates (row or column pairs).
    /// RowChannels: one image row as two complex channel pairs (channel_rows()).
    enum class Load { RowPair, Untangled, Spectrum, ColumnPair, RowChannels };
    enum class Transform { Forward, Inverse, Filter };
    /// How it writes them (STORE_*): row pairs, the compressed spectrum (Eq. 10), the row pairs an
    /// inverse column pass leaves, or the four-step intermediates.
    /// Tangled: a filter's step B whose step A inverse the inverse rows take in their loads
    /// (fuses_column_tail()), each element tangled alone into H's channel-pair layout.
    enum class Store { RowPair, Spectrum, RowPairs, ColumnPair, RowChannels, Tangled };
    static const char* define_of(Load l);
    static const char* define_of(Transform t);
    static const char* define_of(Store s);
    /// One logical pass of a transform, before it becomes dispatches.
    struct Pass {
        Axis axis;
        Load load;
        Transform transform;
        Store store;
        const Texture* source;
        const Texture* target;
        float scale, gain;
        const char* label;
        int slot = 0;  ///< whose intermediates (slots_): the image's place in a filter batch
        bool real_kernel = false;  ///< a filter's columns: the kernel's spectrum is real (Fft2D::filter)
    };
    /// One dispatch: a pass whole, or one step of its four-step route; columns twice (pair 0 and
    /// pairs 1 .. M/2 - 1).
    struct Dispatch {
        Axis axis;
        bool pair0 = false;
        int step = 0;            ///< 0: whole lines; 1, 2: steps A and B of the four-step route
        Load load;
        Transform transform;
        Store store;
        const Texture* source;
        const Texture* target;
        float scale, gain;
        std::string label;
        bool filter_tail = false;  ///< step A inverse after a filter's step B (fft_line.comp's FILTER_TAIL)
        /// Whole rows: the dispatch's row pairs [line_begin, line_end) (line_end 0: all). A pass
        /// whose last round of workgroups would be sparse leaves its last row pairs to a tail
        /// dispatch of one a workgroup, run beside it (row_tail()).
        int line_begin = 0, line_end = 0;
        /// A row tail's parts a row pair (tail_parts()): > 1, the tail takes its row pairs as that
        /// many sub-lines each, step A in step B's loads (step 2), one workgroup a sub-line.
        int tail_parts = 1;
        /// Inverse rows that do a filter's last column step in their loads (fuses_column_tail()):
        /// row a is y_0 + y_1 or y_0 - y_1 of step B's sub-lines at rows a mod N/2 and that + N/2.
        bool tail_in_loads = false;
        /// A multiply by a real kernel spectrum (fft_line.comp's KERNEL_REAL): its imaginary half,
        /// K(M - p, v), is not read (pair 0: the untangled columns 0 and M/2 taken as real).
        bool real_kernel = false;
    };
    /// Geometry of a dispatch's program: lengths, threads, lines per workgroup, shared memory.
    struct Shape {
        int full = 0, length = 0, sublines = 1, line_count = 0, groups = 0;
        int fold = 1;             ///< channel phases (fft_line.comp's FOLD): length = full / fold
        bool fused_a = false;     ///< step B with step A in its loads (fft_line.comp's FUSED_A)
        bool channel_pairs = false;  ///< rows as channel pairs, folded in two, one phase (fft_line.comp's CHANNEL_PAIRS)
        int radix = 0, lines = 1, components = 0, pad_every = 0;
        int neighbour_pairs = 1;  ///< four-step steps (rows' A and B; columns' A, B, a filter's tails): row or column pairs side by side in a workgroup
        /// A filter's columns' four-step step B of one line a workgroup: workgroups along the column
        /// pairs of one band of rows (sub-line) first, not along one pair's sub-lines (fft_line.comp's BANDS)
        bool bands = false;
        LinePlan line;
        unsigned forward_buffer = 0, inverse_buffer = 0;  ///< stages (bit i: stage i) whose twiddles come from the buffer
        bool shared_twiddles = false;  ///< the line's twiddle table copied to shared memory (whole mixed columns in large workgroups, where it fits)
    };

    std::vector<Pass> forward_passes(const Texture& image, RenderTarget& spectrum) const;
    std::vector<Pass> inverse_passes(const Texture& spectrum, RenderTarget& image) const;
    std::vector<Pass> filter_passes(const Texture& image, RenderTarget& out, int slot = 0, bool real_kernel = false) const;
    std::vector<Dispatch> dispatches(const std::vector<Pass>& passes) const;
    /// What a caller runs. Each use's programs compile together on its first use (or
    /// prepare_filter()), side by side, and not before: a filter by a point-symmetric kernel
    /// never compiles the complex multiply, nor a filter the inverse's columns.
    enum class Use { Forward, Inverse, Filter, RealFilter };
    static unsigned use_bit(Use u) { return 1u << static_cast<unsigned>(u); }
    /// Compiles the programs of the uses not compiled yet, side by side (ProgramCache::prepare).
    void prepare(std::initializer_list<Use> uses);
    /// The programs of these uses' passes (none compiled here).
    std::vector<ProgramSpec> use_programs(const std::vector<Use>& uses);
    Shape shape(const Dispatch& d) const;
    ProgramSpec spec(const Dispatch& d) const;
    /// How a line of `length` along `axis` is transformed: {length} whole (folded or not), or
    /// {L1, L2} (four-step; quarters in the columns only). Rows taken as channel pairs
    /// (channel_rows()) are whole whatever this says.
    std::vector<int> split(int length, Axis axis) const;
    /// split() of the axis's lines: rows as channel pairs whole.
    std::vector<int> axis_split(Axis axis) const;
    /// axis_split() as dispatch `d`'s pass takes it: an inverse pass of columns with an odd step B
    /// takes its two lengths the other way round (a filter's last step, `filter_tail`, keeps the
    /// filter's order).
    std::vector<int> pass_split(const Dispatch& d) const;
    /// Whether `t` is one of the textures between dispatches (slots_), or with `h_only` an H.
    bool intermediate(const Texture* t, bool h_only = false) const;
    /// How the rows lie in `t` (fft_line.comp's H_SOURCE and H_TARGET): 0 as row pairs N/2 apart
    /// (the image, the output, and everything where rows are whole); in the textures between
    /// dispatches, 1 row pairs in neighbouring rows where the rows take the four-step route, 2
    /// channel pairs where the rows are channel pairs.
    int rows_layout(const Texture* t) const;
    /// The row pairs a whole-row dispatch of shape `s` leaves to a tail of one a workgroup (0:
    /// none): FftOptions::compute_row_tail where set, else twice the row pairs of a sparse last
    /// round of its workgroups, where the GL tells the GPU's multiprocessors (sm_count_).
    int row_tail(const Shape& s) const;
    /// The parts a row tail takes each of its row pairs in (FftOptions::compute_tail_split): 1,
    /// 2 or 4 where they are even lengths.
    int tail_parts(int length) const;
    /// Whether `d` reads or writes row pairs of those textures (so in neighbouring rows).
    bool neighbouring_rows(const Dispatch& d) const;
    /// A dispatch's shape and program, worked out once: shape() and spec() build the program's
    /// text, about 25 us a filter's dispatches on a 2-core Xeon, against 2 for dispatches() (the
    /// H200's queued filters took the same time either way: its GPU, not the CPU, bounds them).
    struct Prepared {
        Shape shape;
        const GlProgram* program = nullptr;
    };
    const Prepared& prepared(const Dispatch& d);
    /// The glMemoryBarrier after a dispatch: texture fetches of what it stored (the next dispatch
    /// reads it as a texture), and after the last, the caller's framebuffer, texture-update and
    /// pixel-buffer accesses too; the storage bit where the parts buffer is in use (`parts`).
    /// Not the image bit: no dispatch here loads an image, and within a run each dispatch fetches
    /// what the one before it stored, so it waits for those stores, which every invocation makes
    /// after its own fetches: its stores cannot overtake that one's fetches. (That the wait
    /// covers every dispatch before, as on NVIDIA's GL and llvmpipe, is what the GL does, not
    /// what its barrier promises.) Only a run's first dispatches start
    /// beside the run before it (what the image bit would forbid, at 7-37 us a filter on the
    /// H200: src/README.md, "Barriers without the image bit"); run() gives them the image bit
    /// where they store into what that run's last dispatches read (unfinished_reads_).
    static GLbitfield barrier_bits(bool last, bool parts);
    /// The global-memory bytes a dispatch reads and writes (Profile::pass_bytes).
    static double bytes_moved(const Dispatch& d, const Shape& s);
    /// Runs the passes of each image (one list each, alike but for their textures): every
    /// dispatch for all of them, then the barrier.
    void run(const std::vector<std::vector<Pass>>& batch, const Texture* kernel, Profile* profile);

    ProgramCache& programs_;
    FftOptions options_;
    PlanChoice plans_;                      // chosen_plans(): by hand (FftOptions::compute_plan) and the device row's
    int shared_bytes_;
    int sm_count_ = 0;  ///< the GPU's multiprocessors where the GL tells them (sm_count.comp), else 0
    bool channel_rows_ = false;             // channel_rows()
    std::vector<int> column_halves_;        // column_halves() for this transform, set with channel_rows_
    const ComputeTuning* tuning_ = nullptr;  // fft/tuning.h: this device's constants
    /// The textures between dispatches: H (tangled row transforms), the row pairs for the
    /// inverse, and between the steps of the four-step route, where it runs.
    struct Intermediates {
        RenderTarget rows_out, columns_out, scratch;
    };
    std::deque<Intermediates> slots_;       // one per image of a filter batch (slot()); a deque: textures stay put
    /// The intermediates of slot `i`, made where missing.
    const Intermediates& slot(size_t i);
    StorageBuffer parts_;                   // folded lines: the channels of the phases before the last (fft_line.comp)
    std::map<int, Texture> twiddles_;       // W_F^k, k < F, per line length
    std::map<int, StorageBuffer> twiddle_buffers_;   // the same tables as storage buffers (GL 4.3)
    bool buffers_ = false;                  // whether storage buffers are available
    GLint64 max_storage_block_ = 0;         // GL_MAX_SHADER_STORAGE_BLOCK_SIZE
    GpuTimestamps timestamps_;
    /// The textures the last run's last dispatches read (barrier_bits(): they may still run when
    /// the next run starts).
    std::vector<GLuint> unfinished_reads_;
    /// prepared(), by what shape() and spec() read of a dispatch: its fields, and its textures'
    /// row layouts and storage (rows_layout(), half()).
    std::map<std::tuple<int, bool, int, int, int, int, bool, bool, bool, int, int, int, int, bool, bool, bool>, Prepared> prepared_;
    bool transposed_io_ = false;             // this is a transposed problem's transform (stored_transposed())
    std::unique_ptr<ComputeFft> transposed_;  // transposed(): the transform that filters
    unsigned prepared_uses_ = 0;  // use_bit() of each Use prepare() has compiled
};

}  // namespace gpufft
