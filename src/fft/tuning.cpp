#include "fft/tuning.h"

#include <iterator>

namespace gpufft {

// L x L filters on the H200 (driver 580.159.04, 2026-11-26): every even fast length from 128 to
// 8192. `fftcompare --backend compute --race default --repeat 3` with the random kernel: queued us,
// the median of three rounds, 2-30 lengths a process with 1024 and 2048 in each, their programs
// compiled before (test/device.sh squares; src/README.md, "Lengths by measured time"). 124 lengths
// up to 4096 in one session (13 processes, two machines: 1024 and 2048 took 56.5-56.7 and
// 221.1-223.4 us in every process); the other 31 up to 4096 and the 58 above it in the next, on
// one machine (56.2-58.3 and 220.6-228.1 us in its 32 processes, medians 56.4 and 221.8; the
// first session's 1024 and 2048 are kept).
constexpr MeasuredSquare kH200Squares[] = {
    {128, 15.8}, {140, 19.8}, {144, 16.5}, {150, 19.4}, {160, 20.8}, {162, 16.5}, {168, 20.3}, {180, 17.9}, {192, 17.3},
    {196, 22.8}, {200, 20.6}, {210, 22.8}, {216, 20.8}, {224, 26.2}, {240, 19.1}, {250, 20.5}, {252, 20.0}, {256, 17.2},
    {270, 23.7}, {280, 22.1}, {288, 22.2}, {294, 23.7}, {300, 22.4}, {320, 20.7}, {324, 21.1}, {336, 23.3}, {350, 25.1},
    {360, 27.0}, {378, 24.3}, {384, 22.1}, {392, 30.7}, {400, 25.2}, {420, 30.0}, {432, 24.5}, {448, 29.9}, {450, 28.9},
    {480, 26.2}, {486, 29.2}, {490, 33.9}, {500, 28.1}, {504, 29.5}, {512, 24.2}, {540, 30.2}, {560, 30.2}, {576, 30.9},
    {588, 35.2}, {600, 31.0}, {630, 38.9}, {640, 35.5}, {648, 42.1}, {672, 41.7}, {686, 53.3}, {700, 48.4}, {720, 45.1},
    {750, 54.4}, {756, 49.1}, {768, 42.1}, {784, 68.0}, {800, 66.7}, {810, 65.6}, {840, 75.6}, {864, 75.0}, {882, 73.0},
    {896, 80.5}, {900, 70.8}, {960, 65.4}, {972, 68.9}, {980, 81.2}, {1000, 69.2}, {1008, 74.7}, {1024, 56.6},
    {1050, 89.1}, {1080, 100.2}, {1120, 110.2}, {1134, 112.5}, {1152, 103.0}, {1176, 141.5}, {1200, 120.6},
    {1250, 124.4}, {1260, 127.4}, {1280, 121.0}, {1296, 130.3}, {1344, 144.5}, {1350, 166.2}, {1372, 132.2},
    {1400, 146.3}, {1440, 146.4}, {1458, 166.2}, {1470, 172.5}, {1500, 156.9}, {1512, 177.1}, {1536, 150.8},
    {1568, 178.3}, {1600, 199.3}, {1620, 250.5}, {1680, 252.3}, {1728, 270.8}, {1750, 240.1}, {1764, 262.0},
    {1792, 230.3}, {1800, 241.3}, {1890, 304.1}, {1920, 246.8}, {1944, 282.3}, {1960, 341.6}, {2000, 268.8},
    {2016, 322.6}, {2048, 222.6}, {2058, 377.7}, {2100, 315.6}, {2160, 335.9}, {2240, 355.3}, {2250, 427.4},
    {2268, 379.8}, {2304, 403.3}, {2352, 397.7}, {2400, 394.6}, {2430, 553.7}, {2450, 452.9}, {2500, 396.0},
    {2520, 464.1}, {2560, 439.9}, {2592, 457.6}, {2646, 681.8}, {2688, 509.3}, {2700, 585.0}, {2744, 492.7},
    {2800, 539.4}, {2880, 584.0}, {2916, 577.8}, {2940, 628.8}, {3000, 595.3}, {3024, 755.8}, {3072, 637.0},
    {3136, 658.4}, {3150, 804.0}, {3200, 793.1}, {3240, 984.4}, {3360, 867.9}, {3402, 1031.4}, {3430, 995.7},
    {3456, 1077.1}, {3500, 855.8}, {3528, 1009.5}, {3584, 915.7}, {3600, 1013.7}, {3750, 1126.2}, {3780, 1167.9},
    {3840, 1021.9}, {3888, 1198.6}, {3920, 1365.5}, {4000, 1241.9}, {4032, 1377.6}, {4050, 1405.9}, {4096, 892.9},
    {4116, 1659.5}, {4200, 1568.4}, {4320, 1605.4}, {4374, 2403.0}, {4410, 2713.4}, {4480, 1769.1}, {4500, 1848.2},
    {4536, 1871.1}, {4608, 1820.0}, {4704, 2079.2}, {4800, 1861.4}, {4802, 2817.9}, {4860, 2170.1}, {4900, 2433.3},
    {5000, 1957.6}, {5040, 2272.6}, {5120, 2156.8}, {5184, 2225.3}, {5250, 3913.7}, {5292, 2606.8}, {5376, 2565.2},
    {5400, 2842.4}, {5488, 2483.7}, {5600, 2762.1}, {5670, 4335.4}, {5760, 2897.4}, {5832, 3004.2}, {5880, 3189.8},
    {6000, 2759.4}, {6048, 3568.7}, {6144, 3133.7}, {6174, 5002.1}, {6250, 5112.6}, {6272, 3433.4}, {6300, 3577.9},
    {6400, 3601.9}, {6480, 3904.4}, {6720, 4406.4}, {6750, 5830.4}, {6804, 4329.0}, {6860, 4531.6}, {6912, 4203.1},
    {7000, 4326.2}, {7056, 5160.4}, {7168, 4546.4}, {7200, 4975.0}, {7290, 7283.8}, {7350, 7226.9}, {7500, 5046.9},
    {7560, 5573.8}, {7680, 5291.6}, {7776, 6029.0}, {7840, 6533.8}, {7938, 8262.6}, {8000, 6035.6}, {8064, 6769.6},
    {8100, 6811.2}, {8192, 4887.8}
};

const ComputeTuning& compute_tuning(bool software_rasterizer) {
    static const ComputeTuning software = {
        // Mesa's llvmpipe and the like: a JIT for which big unrolled programs are slow to compile
        // (radix 16: 10-20 s; radix 4 with 2 components: about 1 s), while the CPU gains nothing
        // from fewer exchange rounds: at most 2 components. (4 components a round compiled
        // 1024^2, 120x72, 28x24, 8x2048 and 18x14's programs in 43 s against 61 s, but
        // test_core's composite radices (12 x 10, 6 x 15 and the like), 231 s in all with 2,
        // were still in Mesa's GLSL compile after 10 minutes, at 2.6 GB: 2026-11-29, Mesa 22.3.)
        "software rasterizer", 4, 8, 1024, 4, 4, 2, 2, 2, 16, 2, 2, 1024, 2, 2, 4096, true, 1024, "", 0, 4, 0};
    static const ComputeTuning gpu = {
        // Measured on NVIDIA's H200 and H100 (src/README.md); the default for other GPUs too.
        // 1000 as 8 5 5 5 (200 threads) against the planner's 4 2 5 5 5: 0.0936-0.0943 against
        // 0.1002-0.1006 ms at 1000^2 in three races (H100, 2026-11-24). 1080 as 6 6 6 5 (216
        // threads; its columns four lines a workgroup then, one since the rule below) and
        // 1152 as 6 6 8 4 (288, two lines): 1920x1080 0.1837 against 0.1928-0.1934 ms, 2000x1152
        // 0.2018 against 0.2098-0.2100 (H100, 2026-11-24, the builds alternating, two rounds). 1920 as
        // 6 4 4 4 5 (480 threads) against the planner's 4 4 4 2 5 3: 0.949x and 0.951x in two
        // races, 1920x1080 0.1751-0.1756 against 0.1836-0.1848 ms with the builds alternating.
        // Shared-memory twiddles above 512 threads a workgroup (then the 1080 and 1152 column filters):
        // 2000x1152 0.1979 against 0.2034-0.2037 ms, 1920x1080 0.1739 against 0.1757-0.1762; on
        // every mixed line, 1000^2 (400-thread columns) ran 1.06x slower.
        // 1152 as 4 4 4 6 3 (384 threads), and whole columns up to 1152 one line a workgroup with
        // four components a round, as the 1024-point ones: 2000x1152 0.1898-0.1903 against
        // 0.1951-0.1961 ms (6 6 8 4, two lines), the builds alternating, three rounds; 1920x1080
        // (its 1080 columns one line of 216 instead of four) the same (H100, 2026-11-24).
        // A fused four-step filter's last step (lines of 2) with 4 column pairs side by side: 8192^2
        // 0.977 against 2.279 ms a dispatch (8 and 16 pairs the same as 4), the filter 7.97 against
        // 9.30 ms; 6000^2 0.533 against 0.719, 4.69 against 4.87 (H100, 2026-11-24, two rounds).
        // The classic four-step column steps (16384^2) with 32 sub-lines a workgroup and step A as 2
        // neighbouring column pairs of 16 (the fastest copy pattern of bin/bench/lineprobe): 38.05
        // and 38.09 ms against 41.03 twice for 16 sub-lines with A one column pair (steps A / B / A'
        // 6.35 / 7.73 / 6.70 against 7.49 / 8.29 / 7.90 ms); 8192^2 (fused) unchanged; step B as 4
        // or 8 pairs slower, 41.4 and 48.5 ms (H200, 2026-11-25, processes alternating, two rounds).
        // The rows' four-step steps (16384^2) as 2 neighbouring row pairs of 2 sub-lines: rows a and
        // a + 1 in neighbouring lanes fill the image's and the output's 32-byte sectors: 35.17 ms
        // twice against 37.97 (row steps 4.54 + 4.08 -> 4.17 + 3.42 ms forward, 3.74 + 4.88 -> 3.54
        // + 3.30 inverse); 4 pairs 38.67; 8 lines of 2 pairs 37.35, 16 of 2 36.55, 16 of 4 34.97
        // (H200, 2026-11-25, processes alternating, two rounds).
        // The 1080 columns as 4 2 5 3 3 3 with 360 threads, the rows as 6 6 6 5: 1920x1080 0.974x,
        // 0.978x and 0.987x in three races, but 1080x1920 (1080 rows) 1.030x (H200, 2026-11-25).
        // Long columns with step B's sub-lines at most 2048 (classic, in bands): 16384 as 8 x 2048
        // 0.954x the quarters (4 x 4096), 8192 as 4 x 2048 0.983x the fused halves, 12000 as 6 x
        // 2000 0.717x 120 x 100, 6000 as 4 x 1500 1.005x and 0.987x the fused halves (H200,
        // 2026-11-25, one race each, two at 6000; 16384 as 16 x 1024 1.50x, its rows as 4 x 4096
        // or 16 x 1024 1.6x and more).
        // The forward stages' twiddles from the storage buffer in columns over 1152, not 1024: the
        // 1152 and 1080 column filters (one line a workgroup) then take every twiddle from the
        // texture, 2000x1152 0.971x and 1920x1080 0.996x in three rounds of processes alternating;
        // 1536^2 and 3000^2 so took 1.000x and 0.991x, 3840x2160 1.011x, so longer columns keep the
        // split (H200, 2026-11-25).
        // The 3000 columns as 6 5 5 5 4 (750 threads) against the planner's 6 4 5 5 5 (600): 3000^2
        // 0.958x in one race, 0.975x against 6 4 5 5 5 with 750 in another; 6000's rows (3000-point
        // channel pairs) lost 5% so, its columns gained 2%: the columns alone (H200, 2026-11-26).
        // Filters transposed where the image's columns are whole channel-pair lines of more than
        // 4096 (one a workgroup): 8192^2 0.912x, 6000^2 0.911x, 2048x8192 0.829x; elsewhere they
        // lost or tied (4096^2 1.023x, 2048x1024 1.206x, 1920x1080 1.117x, 8192x2048 0.987x,
        // 3000^2 0.974x; 16384^2, its rows four-step, 2.34x) (H200, 2026-11-26, one race each).
        // With filters transposed, columns of 6000 and 4800 as fused halves (step A in step B's
        // loads; 2 x 3000, 2 x 2400) against 4 x 1500 and 4 x 1200: 6000^2 0.911x and 0.912x,
        // 6000x4800 0.932x, 4800x6000 0.915x and 0.926x; the other lengths raced lost or tied:
        // 4320 0.967x then 0.995x, 4608 1.017x, 5000 1.026x, 5120 0.985x, 5400 1.026x, 5760
        // 0.981x, 6144 0.994x, 6400 1.126x, 7200 1.073x, 7680 1.046x, 8000 1.075x, 8192 1.014x
        // (H200, 2026-11-26, one race each, 3-5 rounds).
        // A filter's last column step (the halves' two-point step A inverse) in the inverse rows'
        // loads, three dispatches instead of four: 6000^2 0.959x, 4800x6000 0.983x and 0.970x
        // (the tail's 310 us dispatch gone, the inverse rows 712 -> 913 us); with it the halves
        // beat 4 x L/4 at 4320 0.960x, 5000 0.958x, 5120 0.971x and 5760 0.981x, but not at 4608
        // 1.011x, 5400 1.012x, 6144 1.020x, 6400 1.164x, 7200 1.056x, 7680 1.035x, 8000 1.037x,
        // 8192 1.020x (the rows' second read there costs what the tail did) (H200, 2026-11-26,
        // a later session, one race each, 5 rounds; fftcompare --race
        // "default;default+split=columns:2+fuse-tail=on").
        // The six- and eight-point steps A (columns of 16384, 12000, 10000) as 32 lines a workgroup
        // (one warp: 4 column pairs of 8 sub-lines) against 128: 16384^2 0.954x (steps A 2729 ->
        // 2217 us, A' 3520 -> 2778), 12000^2 0.979x, 10000^2 0.940x; 64 lines 0.959x, 0.983x,
        // 0.957x; 16 lines 0.961x, 0.984x, 0.940x; 512 at 16384^2 0.991x. bin/bench/timeline had
        // found 16384's 128-line steps one workgroup an SM, idle 17-19% of their time between
        // workgroups. 8192's four-point steps: 512 lines 0.993x, 64 1.000x, so they keep 128
        // (H200, 2026-11-26, processes alternating, two rounds).
        "GPU", 4, 8, 1024, 4, 4, 2, 2, 4, 32, 2, 2, 1152, 4, 8, 4096, true, 1152,
        "1000:8x5x5x5,1080:6x6x6x5,columns:1080:4x2x5x3x3x3/360,1152:4x4x4x6x3,1920:6x4x4x4x5,columns:3000:6x5x5x5x4", 512, 4, 2048,
        "4800,6000", 4096, true, "4320,5000,5120,5760", kH200Squares, static_cast<int>(std::size(kH200Squares)), 32};
    return software_rasterizer ? software : gpu;
}

}  // namespace gpufft
