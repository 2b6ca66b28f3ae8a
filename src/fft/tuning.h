// The compute backend's device tuning in one place: the constants that shape its dispatches, one
// row per kind of device (GLFFT's static wisdom, VkFFT's vendor switch).
// The measurements behind each value are in src/README.md ("The compute backend").
#pragma once

namespace gpufft {

/// One L x L filter's GPU time (whole four-channel filter, queued, microseconds) under the default
/// options: what the lengths' cost model (ComputeFft::lengths) takes where a device row has them.
struct MeasuredSquare {
    int length;
    double us;
};

struct ComputeTuning {
    const char* device;               ///< the kind of device the row is for
    int radix_short = 4;              ///< largest stage radix for lines up to `radix_switch` ...
    int radix_long = 8;               ///< ... and above it
    int radix_switch = 1024;
    int radix_mixed = 4;              ///< largest radix of power-of-two stages in lines with factors 3, 5, 7
    int row_lines = 4;                ///< lines per workgroup: rows (a warp covers a 2D texture patch)
    int row_step_pairs = 2;           ///< the rows' four-step steps: that many neighbouring row pairs side by side, lines / pairs sub-lines each
    int column_lines = 2;             ///< columns
    int mixed_column_lines = 2;       ///< whole columns longer than `short_column_length` with factors 3, 5 or 7, where their registers fit (compute_fft.cpp)
    int column_step_lines = 32;       ///< the four-step column steps (neighbouring sub-lines: a warp's rows adjacent)
    int column_step_a_pairs = 2;      ///< step A (and a classic filter's A inverse): that many neighbouring column pairs side by side
    int column_step_b_pairs = 2;      ///< step B: that many neighbouring column pairs side by side, lines / pairs sub-lines each
    int short_column_length = 1024;   ///< whole column lines up to this length run one per workgroup,
    int short_column_components = 4;  ///< with at most this many floats per shared-memory round
    int max_components = 8;           ///< floats per shared-memory exchange round
    int max_elements = 4096;          ///< complex RGBA elements a workgroup holds before registers spill
    bool row_twiddles_from_buffer = true;   ///< row dispatches: every stage's twiddles from the storage buffer
    int column_forward_buffer_above = 1024; ///< column lines longer than this: forward stages' twiddles from it (the rest from the texture)
    /// Line plans measured faster than the planner's, as --compute-plan writes them (taken where
    /// neither --compute-plan nor --compute-radix says otherwise).
    const char* line_plans = "";
    /// Whole mixed columns whose workgroup holds more threads than this read their twiddles from a
    /// copy of the table in shared memory, where it fits beside the exchange (compute_fft.cpp).
    int shared_twiddles_above = 512;
    /// A filter's last column step where step A runs in step B's loads (lines of 2 or 4, a thread
    /// each: FILTER_TAIL): that many neighbouring column pairs side by side in a workgroup.
    int column_tail_pairs = 4;
    /// Columns longer than a whole line: step B's sub-lines at most this long (the longest even L2
    /// with an even L1; ComputeFft::column_split()); 0: the halves, quarters or square root of
    /// ComputeFft::split_line().
    int column_step_b_longest = 0;
    /// Column lengths (comma-separated) that take the halves where they fit (step A, one radix-2
    /// butterfly, in step B's loads) over `column_step_b_longest`'s split: measured per length,
    /// no rule found (ComputeFft::column_split()).
    const char* column_halves = "";
    /// Filters run as the transposed problem (ComputeFft::transposed(): every dispatch stores down
    /// its target's columns) where the image's columns, the transposed problem's rows, are longer
    /// than this and whole channel-pair lines (one a workgroup: 6000, 8192); 0: never.
    int transpose_columns_above = 0;
    /// A filter's last column step (the halves' two-point step A inverse) in the inverse rows'
    /// loads where the rows are channel pairs (ComputeFft::fuses_column_tail()).
    bool fuse_column_tail = false;
    /// Column lengths (comma-separated) that take the halves only where their filter's last column
    /// step runs in the inverse rows' loads (fuse_column_tail), besides `column_halves`
    /// (ComputeFft::column_halves()).
    const char* column_halves_fused_tail = "";
    /// L x L filters timed on such a device, lengths ascending (`square_count` of them; none: the
    /// lengths' cost model rates every length by its plan). Where given, the model rates a measured
    /// length by its time, leaves the fast lengths between the first and the last that were not
    /// measured to wrap alone, and scales the plans' rating to the measured ends beyond them.
    const MeasuredSquare* squares = nullptr;
    int square_count = 0;
    /// Steps A of six or eight points, a thread a line (columns of 8194 to 16384, split as 6 or 8
    /// x L2 up to 2048), forward and a filter's inverse: that many lines a workgroup, in blocks of
    /// `column_tail_pairs` neighbouring column pairs; the two- and four-point steps take 128.
    int long_tiny_step_lines = 128;
};

/// The row for a software rasterizer (software_renderer() in fft2d.h) or for a GPU.
const ComputeTuning& compute_tuning(bool software_rasterizer);

}  // namespace gpufft
