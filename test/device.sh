#!/usr/bin/env bash
# The GPU figures of the README: run on the `device` machine (NVIDIA H100/H200, EGL device
# platform) from the repository root, with bin/ built here and the .gl runtime packages carried
# (../shared/tools/device-gl.sh, then libdeflate0 beside them, which that script does not fetch:
# `(cd .gl/lib && apt-get download libdeflate0)`). Writes logs under $OUT (or out/device). Usage:
#   test/device.sh [steps...]     steps: info tests api frames fourstep routes compare cufft peers peerkernels large variants bench passes dispatches probe lineprobe
#                                        timeline tinysteps rowsides gridtiles warpline smemline planar layouts batch batch_ab deflate_ab areas_ab glthreads alone sizes sizes_variants plans waves fuse split halves fusetail kernel bands tails builds pixels gap compile background isa sizes_batch compiletime grids grids_kernels stream all
#                                 (squares, never part of all: 20-30 minutes)
#                                 (plans_hd / plans_square: one of the two races of plans)
#                                 (batch also runs bin/bench/stageprobe where make bench built it)
#                                 (default: all)
set -uo pipefail
out=${OUT:-out/device}
mkdir -p "$out"
steps=${*:-all}
has() { [[ " $steps " == *" $1 "* || " $steps " == *" all "* || ( $1 == plans && " $steps " == *" plans_"* ) ]]; }
run() {  # run NAME COMMAND...: log to $out/NAME.txt, show the tail
    local name=$1; shift
    echo "== $name: $*"
    local start=$SECONDS
    "$@" > "$out/$name.txt" 2>&1
    local rc=$?
    echo "   exit $rc after $((SECONDS - start)) s"
    tail -n "${TAIL:-40}" "$out/$name.txt"
}
# The chip's memory bandwidth (GB/s) for --pass-costs' per-dispatch rates: from its name, or PEAK_GBS.
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
case "$gpu_name" in
    *H200*) peak=4800 ;;
    *H100*PCIe*) peak=2000 ;;
    *H100*) peak=3350 ;;
    *) peak=0 ;;
esac
peak=${PEAK_GBS:-$peak}
probe_peak=$peak
[ "$probe_peak" = 0 ] && probe_peak=3350  # lineprobe needs one; an unknown chip's rates are then against an H100's
costs=(bin/fftcompare --pass-costs --backend compute)
[ "$peak" != 0 ] && costs+=(--peak-bandwidth "$peak")
if has info; then
    run info bash -c 'nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv; nproc; date -u'
fi
if has tests; then
    TAIL=15 run test_core bin/test/test_core
    TAIL=8 run test_fftcompare bin/test/test_fftcompare
fi
if has api; then  # the public API on the GPU's driver: results, GL state, errors
    TAIL=8 run test_api bin/test/test_api
fi
if has frames; then  # the teapot's frames through the public API (TextureFilter), beside the build before
                    # it where carried as bin/old/teapot; interleaved, twice
    for i in 1 2; do
        [ -x bin/old/teapot ] && TAIL=5 run "frames_old_$i" bin/old/teapot --bench --backend compute --bench-sizes 1024,2048
        TAIL=5 run "frames_$i" bin/teapot --bench --backend compute --bench-sizes 1024,2048
    done
    TAIL=6 run frames_fragment bin/teapot --bench --backend fragment --bench-sizes 1024,2048
fi
if has fourstep; then  # the four-step lines (above 4096): GPU time per dispatch, beside the build before where
                      # carried as bin/old/fftcompare; then this build's accuracy against FFTW
    sizes=${FOURSTEP_SIZES:-4096,6000,8192,16384}
    [ -x bin/old/fftcompare ] && run fourstep_old bin/old/fftcompare --pass-costs --backend compute --sizes "$sizes"
    run fourstep "${costs[@]}" --sizes "$sizes"
    run fourstep_accuracy bin/fftcompare --backend compute --sizes 6000,8192
fi
if has routes; then  # accuracy (issue 15's 1.5x of fftwf) at sizes taking each route the GPU row picks:
                    # row tails, transposed filters, column halves with their tail in the rows' loads,
                    # quarters, the classic four-step split, an odd step B (4410, 13122), 7s;
                    # ROUTE_SIZES replaces the list; the fragment chain's planes of two blocks
                    # (axes of 2 mod 4: 1050, 2100x1470's columns) beside four (ROUTE_FRAGMENT_SIZES)
    sizes=${ROUTE_SIZES:-1920x1080,2000x1152,1000,2100,2520x1400,3840x2160,4200x2646,7000x1050,1050x7000,5000,4320x5760,6000,8192,9000x1200,2048x12288,2048x16384,4410x1050,1050x4410,13122x1024}
    run routes_compute bin/fftcompare --backend compute --no-speed --max-ratio 1.5 --threads "$(nproc)" --sizes "$sizes"
    run routes_fragment bin/fftcompare --backend fragment --no-speed --max-ratio 1.5 --threads "$(nproc)" \
        --sizes "${ROUTE_FRAGMENT_SIZES:-1920x1080,2100,4200x2520,1050,1050x1080,2100x1470}"
fi
if has compare; then
    run fftcompare bin/fftcompare --sizes 128,256,512,1024,2048,4096,1024x256,256x1024,2048x512
fi
if has cufft && [ -x bin/cufft_filter ]; then  # the peer: make cufft (needs nvcc)
    run cufft bin/cufft_filter 1024 2048 4096 8192
fi
# The peers' steps: CUDA's compiler and libraries on the path, and VkFFT's CUDA backend built from
# a program in out/peers (vkfft_build SOURCE BINARY; kernels compiled at run time with NVRTC).
if has peers || has peerkernels; then
    export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
fi
vkfft_build() {
    (cd out/peers && nvcc -O3 -arch=sm_90 -DVKFFT_BACKEND=1 -Ivkfft-headers "$1" -o "$2" -L/usr/local/nvidia/lib64 -lcuda -lnvrtc)
}
if has peers; then  # every side queued back to back (issue 17): VkFFT's fused convolution and cuFFT from
                   # ../shared/peers (copied here into the ignored out/peers with fftw3.h in out/peers/include,
                   # and carried; never into the project), test/cufft_filter.cu, and ours
    if [ -d out/peers ] && command -v nvcc >/dev/null; then
        (vkfft_build vkfft_filter.cu /tmp/vkfft_filter && cd out/peers && nvcc -O3 -arch=sm_90 cufft_queued.cu -o /tmp/cufft_queued -lcufft) \
            > "$out/peers_build.txt" 2>&1
        [ -f /opt/gl/usr/lib/x86_64-linux-gnu/libfftw3.so.3 ] && nvcc -O3 -std=c++17 -arch=sm_90 -Iout/peers/include test/cufft_filter.cu \
            -o /tmp/cufft_filter -lcufft -L/opt/gl/usr/lib/x86_64-linux-gnu -l:libfftw3.so.3 >> "$out/peers_build.txt" 2>&1
        peer() {  # peer NAME PROGRAM SIZE: its log kept only where it names the size it ran: the
                  # ../shared/peers programs take a square N (atoll reads 1920x1080 as 1920), so a WxH
                  # size (PEER_SIZES="1920x1080 ...") counts only from copies extended to read it
            [ -x "$2" ] || return 0
            TAIL=3 run "$1_$3" "$2" "$3" 200
            local named=$3; [[ $3 == *x* ]] || named="$3|${3}x$3"   # N may print as N x N
            if ! grep -Eq "[ =]($named)[: ]" "$out/$1_$3.txt"; then
                mv "$out/$1_$3.txt" "$out/$1_$3.wrong-size.txt"
                echo "   $1 did not run $3 (the copy in out/peers takes N only): log set aside"
            fi
        }
        for n in ${PEER_SIZES:-1024 2048 4096 8192 16384}; do
            peer vkfft /tmp/vkfft_filter "$n"
            peer cufft_queued /tmp/cufft_queued "$n"
        done
        # (its accuracy against FFTW in double: the five default sizes took 4.5 minutes on the H200 machine)
        [ -x /tmp/cufft_filter ] && run cufft_filter /tmp/cufft_filter ${PEER_SIZES:-1024 2048 4096 8192 16384}
    fi
    run peers_ours "${costs[@]}" --sizes $(echo ${PEER_SIZES:-1024 2048 4096 8192 16384} | tr ' ' ',')
fi
if has peerkernels; then  # VkFFT's fused convolution as it runs (CUDA lets it take up to 227 KB of shared memory
                         # a block) and held to the 48 KB that GL's compute shaders get on these chips
                         # (GL_MAX_COMPUTE_SHARED_MEMORY_SIZE), every side queued; then each of its kernels
                         # alone (Nsight Compute: one filter's launches), both ways. The limit is set in a
                         # copy of the peer that this step writes into the ignored out/peers, never into
                         # the project (src/README.md, "The peers' kernels under GL's 48 KB").
    if [ -d out/peers ] && command -v nvcc >/dev/null; then
        # with PEER_TRANSFORM_KERNEL (below) the copy also prints a checksum of the filtered image (its n
        # real samples a row of n + 2) after its last filter, so that the two settings can be seen to
        # compute the same filter
        cat > out/peers/checksum.inc <<'CHECKSUM'
    if (getenv("PEER_TRANSFORM_KERNEL")) {
        std::vector<float> out(bufferSize / sizeof(float));
        cudaMemcpy(out.data(), buffer, bufferSize, cudaMemcpyDeviceToHost);
        double s = 0, s2 = 0;
        for (size_t i = 0; i < out.size(); ++i) if (i % (n + 2) < n) { s += out[i]; s2 += (double)out[i] * out[i]; }
        printf("checksum n=%llu: sum %.9e, sum of squares %.9e\n", (unsigned long long)n, s, s2);
    }
CHECKSUM
        # With PEER_TRANSFORM_KERNEL the kernel is a real impulse response of sum 1 that VkFFT itself
        # transforms into the layout its plan multiplies by (the peer takes random values as given,
        # which each plan reads in its own order): then both settings must give the same image.
        cat > out/peers/kernel.inc <<'KERNEL'
    if (getenv("PEER_TRANSFORM_KERNEL")) {
        std::vector<float> k(host);
        for (float& v : k) v *= 2.0f / (float)(n * n);
        cudaMemcpy(kernel, k.data(), kernelSize, cudaMemcpyHostToDevice);
        VkFFTLaunchParams lk = {}; lk.buffer = &kernel;
        OK(VkFFTAppend(&appKernel, -1, &lk)); cudaDeviceSynchronize();
    }
KERNEL
        sed 's|c.device = &dev;|c.device = \&dev; if (getenv("PEER_SHARED_MEMORY")) c.sharedMemorySize = atoll(getenv("PEER_SHARED_MEMORY"));|' \
            out/peers/vkfft_filter.cu | awk '/deleteVkFFT\(&app\);/ { system("cat out/peers/checksum.inc") } { print }
            /OK\(initializeVkFFT\(&appKernel, c\)\);/ { system("cat out/peers/kernel.inc") }' > out/peers/vkfft_filter_capped.cu
        vkfft_build vkfft_filter_capped.cu /tmp/vkfft_capped > "$out/peerkernels_build.txt" 2>&1
        ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
        for n in ${PEER_SIZES:-1024 2048 4096 8192 16384}; do
            for cap in 0 49152; do
                PEER_SHARED_MEMORY=$cap TAIL=2 run "vkfft_smem${cap}_$n" /tmp/vkfft_capped "$n" 200
                # eleven filters of the same data and kernel both ways: the checksums must agree to rounding
                PEER_TRANSFORM_KERNEL=1 PEER_SHARED_MEMORY=$cap TAIL=1 run "vkfft_check_smem${cap}_$n" /tmp/vkfft_capped "$n" 1
                # 10 warm-up filters and one timed: the last filter's kernels are the last lines
                [ -n "$ncu" ] && PEER_SHARED_MEMORY=$cap TAIL=0 run "vkfft_kernels_smem${cap}_$n" "$ncu" --clock-control none \
                    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size,launch__block_size,launch__shared_mem_per_block,launch__registers_per_thread \
                    --csv --page raw /tmp/vkfft_capped "$n" 1 &&
                    python3 - "$out/vkfft_kernels_smem${cap}_$n.txt" <<'SUMMARY' | tee "$out/vkfft_kernels_smem${cap}_$n.summary.txt"
import csv, sys
# Nsight Compute's raw CSV of a run of 10 warm-up filters and one more: the last filter's kernels, a
# line each (time, launch shape, shared memory and registers, DRAM bytes).
rows = list(csv.reader(open(sys.argv[1])))
head = next((i for i, r in enumerate(rows) if r and r[0] == 'ID'), None)
if head is None:
    sys.exit(print(sys.argv[1] + ": no kernels recorded"))
col = {name: j for j, name in enumerate(rows[head])}
unit, launches = rows[head + 1], rows[head + 2:]
num = lambda r, name: float(r[col[name]].replace(',', ''))
scale = {'ns': 1e-3, 'nsecond': 1e-3, 'us': 1, 'usecond': 1, 'ms': 1e3, 'msecond': 1e3}[unit[col['gpu__time_duration.sum']]]
for r in launches[-(len(launches) // 11):]:
    print("%10.1f us  %s x %s threads, %.1f KB shared, %d registers; DRAM read %.0f MB, written %.0f MB" % (
        num(r, 'gpu__time_duration.sum') * scale, r[col['launch__grid_size']], r[col['launch__block_size']],
        num(r, 'launch__shared_mem_per_block') / 1024, num(r, 'launch__registers_per_thread'),
        num(r, 'dram__bytes_read.sum') / 1e6, num(r, 'dram__bytes_write.sum') / 1e6))
SUMMARY
            done
        done
    fi
fi
if has large; then  # the compute backend's four-step sizes: GPU time per dispatch (no FFTW)
    run large "${costs[@]}" --sizes 4096,8192,16384
fi
if has variants; then
    run twiddles_computed bin/fftcompare --sizes 256,1024,4096 --twiddles computed --max-ratio 0
    run half bin/fftcompare --sizes 256,1024,4096 --half --max-error 1 --max-ratio 0
fi
if has bench; then
    TAIL=12 run teapot_bench bin/teapot --bench
fi
if has passes; then
    run pass_costs bin/fftcompare --pass-costs --sizes 1024,4096
    run pass_costs_radix2 bin/fftcompare --pass-costs --radix 2 --sizes 1024
fi
if has dispatches; then  # README's per-dispatch table (issue 17): each size's dispatches timed, with their bytes
                        # and share of the chip's bandwidth, each size in a process of its own (run after a
                        # long size, single filters left the GPU at a low clock: 2048x1024 3.9x slower);
                        # the queued filters and 16384^2's dispatches from one race (its own --pass-costs
                        # ran 13-31% over the race's profiled filter)
    for s in ${DISPATCH_SIZES:-1024 2048 4096 8192 2048x1024 1920x1080}; do
        TAIL=12 run "dispatches_$s" "${costs[@]}" --sizes "$s"
    done
    TAIL=12 run dispatches_race timeout 300 bin/fftcompare --backend compute --race default --repeat 5 \
        --sizes "${DISPATCH_RACE_SIZES:-1024,2048,4096,8192,16384,2048x1024,1920x1080}"
fi
if has batch; then  # the batch pipeline end to end: bit-identity of the GPU conversion, then throughput
    TAIL=6 run batch_identity bin/test/test_fftfilter gpu_conversion sample_tables
    for b in compute fragment; do  # one image's stages alone, then submit/collect back to back (make bench)
        [ -x bin/bench/stageprobe ] && TAIL=30 run "stages_$b" bin/bench/stageprobe 2048x2048 gaussian:8 "$b" 9
    done
    OUT=/tmp/bench TAIL=30 run batch test/bench_batch.sh 48 2048x2048 gaussian:8 disk:60
    OUT=/tmp/bench FFTFILTER_ARGS="--backend fragment" TAIL=12 run batch_fragment test/bench_batch.sh 48 2048x2048 gaussian:8
    OUT=/tmp/bench-hd TAIL=12 run batch_hd test/bench_batch.sh 64 1920x1080 gaussian:8 disk:30
fi
if has batch_ab && [ -x bin/old/fftfilter ]; then  # the batch beside the build before it (bin/old/fftfilter),
                                                 # alternating, twice: BATCH_COUNT (192) 2048x2048 files,
                                                 # then BATCH_HD_COUNT (64) 1920x1080 files
    for i in 1 2; do
        BIN=bin/old OUT=/tmp/bench-ab PEERS= TAIL=4 run "batch_old_$i" test/bench_batch.sh "${BATCH_COUNT:-192}" 2048x2048 gaussian:8
        OUT=/tmp/bench-ab PEERS= TAIL=4 run "batch_new_$i" test/bench_batch.sh "${BATCH_COUNT:-192}" 2048x2048 gaussian:8
    done
    for i in 1 2; do
        BIN=bin/old OUT=/tmp/bench-ab-hd PEERS= TAIL=4 run "batch_hd_old_$i" test/bench_batch.sh "${BATCH_HD_COUNT:-64}" 1920x1080 gaussian:8
        OUT=/tmp/bench-ab-hd PEERS= TAIL=4 run "batch_hd_new_$i" test/bench_batch.sh "${BATCH_HD_COUNT:-64}" 1920x1080 gaussian:8
    done
fi
# env_ab NAME VAR: the same build with VAR=off and on, alternating, twice: BATCH_COUNT (192)
# 2048x2048 files and BATCH_HD_COUNT (256) 1920x1080 files (FFTFILTER_ARGS as given); then both
# ways' outputs compared byte for byte
env_ab() {
    local name=$1 var=$2
    for i in 1 2; do
        for way in on off; do
            (export "$var=$way"; OUT=/tmp/bench-ab PEERS= TAIL=4 run "${name}_${way}_$i" test/bench_batch.sh "${BATCH_COUNT:-192}" 2048x2048 gaussian:8)
        done
    done
    for i in 1 2; do
        for way in on off; do
            (export "$var=$way"; OUT=/tmp/bench-ab-hd PEERS= TAIL=4 run "${name}_hd_${way}_$i" test/bench_batch.sh "${BATCH_HD_COUNT:-256}" 1920x1080 gaussian:8)
        done
    done
    VAR=$var run "${name}_same" bash -c 'for d in /tmp/bench-ab /tmp/bench-ab-hd; do
        rm -rf $d/on $d/off && mkdir -p $d/on $d/off &&
        env $VAR=on bin/fftfilter -q -k gaussian:8 -o $d/on $d/in/*.png && env $VAR=off bin/fftfilter -q -k gaussian:8 -o $d/off $d/in/*.png &&
        n=0 && for f in $d/off/*; do cmp -s $f $d/on/${f##*/} && n=$((n + 1)); done && echo "$d: $n of $(ls $d/off | wc -l) outputs the same bytes"; done'
}
if has deflate_ab; then  # outputs deflated on the GPU (GpuRunCoder) against the workers
    env_ab deflate GPUFFT_GPU_DEFLATE
fi
if has areas_ab; then  # samples crossing to and from the GPU through host areas (fftfilter's workers fill and
                     # read them) against the GL thread's glBufferSubData and copies out
    env_ab areas GPUFFT_HOST_AREAS
fi
if has glthreads && [ -x bin/bench/glthreads ]; then  # GL threads of their own, each with a context: do they add up
                                                # (the batch's route; 14 threads loading memory, then none)?
    for l in 14 0; do
        TAIL=7 run "glthreads_2048_$l" bin/bench/glthreads 2048x2048 gaussian:8 60 "$l" 1 2 3 1 2
        TAIL=7 run "glthreads_hd_$l" bin/bench/glthreads 1920x1080 gaussian:8 80 "$l" 1 2 3 1 2
    done
fi
if has alone; then  # a file filtered alone: its whole stream inflated in parts on every core against
                  # libdeflate on one (bigpng read ... whole / parts), and fftfilter -v on it (streamed
                  # where its tiles make four rows) beside the build before (bin/old/fftfilter, where
                  # carried), alternating, three rounds each
    dir=/tmp/gpufft-bench-alone
    mkdir -p "$dir"
    run alone_inputs bash -c "bin/fftfilter -q --synth 6000x6000:power=2:seed=5:colour -o $dir/synth6000.png -f &&
        bin/bench/bigpng 8192x8192 rgb8 $dir/big8192.png 1 &&
        bin/fftfilter -q -k gaussian:3 $dir/big8192.png -o $dir/ours8192.png -f && ls -l $dir"
    for f in synth6000 big8192 ours8192; do
        for i in 1 2 3; do
            TAIL=2 run "alone_read_${f}_$i" bash -c "bin/bench/bigpng read $dir/$f.png whole && bin/bench/bigpng read $dir/$f.png parts"
        done
    done
    for f in synth6000 ours8192 big8192; do  # once untimed, so that the shader cache holds the programs
        for b in bin/fftfilter bin/old/fftfilter; do [ -x $b ] && $b -q -k gaussian:8 "$dir/$f.png" -o "$dir/warm.png" -f; done
    done
    for f in synth6000 ours8192 big8192; do
        for i in 1 2 3; do
            [ -x bin/old/fftfilter ] && TAIL=3 run "alone_old_${f}_$i" bash -c "time bin/old/fftfilter -v -k gaussian:8 $dir/$f.png -o $dir/out_old.png -f"
            TAIL=3 run "alone_new_${f}_$i" bash -c "time bin/fftfilter -v -k gaussian:8 $dir/$f.png -o $dir/out_new.png -f"
        done
        # the same samples (the files' bytes differ where the encoder changed), and their sizes
        [ -x bin/old/fftfilter ] && run "alone_same_$f" bash -c "ls -l $dir/out_old.png $dir/out_new.png &&
            bin/bench/bigpng read $dir/out_old.png 64 && bin/bench/bigpng read $dir/out_new.png 64"
    done
fi
if has sizes; then  # mixed-radix sizes beside their powers of two, and the fragment chain's passes by radix
    run sizes_compute bin/fftcompare --backend compute --max-ratio 1.5 \
        --sizes 1000,1024,1536,2048,1920x1080,2000x1152,2048x1024,3000,3072,4096,6000,6144
    run sizes_compute_large "${costs[@]}" --sizes 4096,6000,8192
    run sizes_fragment bin/fftcompare --backend fragment --max-ratio 1.5 --sizes 1000,1024,1050,1080,1920x1080,2000x1152,2048x1024,2048
    run sizes_fragment_passes bin/fftcompare --pass-costs --backend fragment --sizes 1000,1024,1050,1080,1920x1080,2048
fi
if has sizes_variants; then  # mixed lines under other radices and lines per workgroup, per dispatch
    for v in "" "--compute-radix 8" "--compute-lines 1" "--compute-lines 2" "--compute-lines 4" "--compute-lines 8"; do
        TAIL=30 run "sizes_variant${v// /_}" bin/fftcompare --pass-costs --backend compute $v --sizes 1024,1000,2048x1024,1920x1080,2000x1152
    done
fi
if has plans; then  # line plans raced against each other in one process (fftcompare --race: interleaved rounds,
                   # so the drift between processes that made earlier per-process comparisons unreliable falls
                   # on all alike): the planner's, the composite planner's (fewest stages of radices up to 12,
                   # one round a stage) and hand-chosen ones, beside powers of two of about the same size
    hand_a="1920:8x8x6x5,1080:6x6x6x5,2000:8x10x5x5,1152:8x12x12,1000:8x5x5x5,1536:8x8x8x3,3000:10x10x10x3,1024:8x8x4x4"
    hand_b="1920:8x8x6x5/240,1080:8x9x5x3,2000:8x10x5x5/250,1152:6x8x4x6"
    race() {  # race NAME SIZES PLANS
        TAIL=${RACE_TAIL:-30} run "race_$1" timeout "${RACE_TIMEOUT:-290}" bin/fftcompare --backend compute --sizes "$2" --race "$3"
    }
    [[ " $steps " == *" plans_square "* ]] ||
        race hd "${RACE_HD_SIZES:-2048x1024,1920x1080,2000x1152}" "${RACE_HD_PLANS:-default;composite;$hand_a;$hand_b}"
    [[ " $steps " == *" plans_hd "* ]] ||
        race square "${RACE_SQUARE_SIZES:-1024,1000,1536,2048,3072,3000}" "${RACE_SQUARE_PLANS:-default;composite;$hand_a}"
fi
if has waves; then  # a dispatch's time against its number of lines: the same line lengths with slightly more or
                   # fewer lines (2048 rows at 504-560 row pairs, 1920 rows at 512 and 540, 1080 columns at
                   # 511-1023 column pairs), one race, the planner's plans
    TAIL=14 run waves timeout 500 bin/fftcompare --backend compute --race default --repeat 11 \
        --sizes "${WAVES_SIZES:-2048x1008,2048x1024,2048x1050,2048x1080,2048x1120,1920x1024,1920x1080,1024x1080,1050x1080}"
fi
if has fuse; then  # the four-step route's step A in step B's loads: the default (halves; the columns'
                  # quarters classic, step B in bands) against never and halves or quarters
                  # (--compute-fuse 1, 4), one race
    TAIL=20 run fuse timeout 560 bin/fftcompare --backend compute --race "default;default+fuse=1;default+fuse=4" --repeat 5 \
        --sizes "${FUSE_SIZES:-8192,16384,6000}"
fi
if has split; then  # the columns' split (the GPU row's column_step_b_longest: step B's sub-lines at most 2048)
                   # against the splits before it, by option (--compute-split columns:L1), one race a size
    TAIL=6 run split_16384 timeout 300 bin/fftcompare --backend compute --race "default;default+split=columns:4;default+split=columns:16" \
        --repeat 5 --sizes 16384
    TAIL=6 run split_12000 timeout 150 bin/fftcompare --backend compute --race "default;default+split=columns:120" --repeat 5 --sizes 12000
    TAIL=8 run split_8192 timeout 150 bin/fftcompare --backend compute --race "default;default+split=columns:2" --repeat 5 --sizes 8192,6000
fi
if has halves; then  # long columns in fused halves (the GPU row's column_halves: 4800, 6000; 4320, 5000,
                     # 5120 and 5760 with the tail in the rows, column_halves_fused_tail) against the
                     # 2048-point step B, one race a size (the filters transposed where the rule says)
    for s in ${HALVES_SIZES:-6000 4800x6000 6000x4800 4320x6000 5760x6000 8192}; do
        TAIL=4 run "halves_$s" timeout 200 bin/fftcompare --backend compute --race "default;default+split=columns:2;default+split=columns:4" \
            --repeat 5 --sizes "$s"
    done
fi
if has fusetail; then  # a filter's last column step in the inverse rows' loads (--compute-fuse-tail, on
                       # by default on a GPU) against a dispatch of its own, and 8192 in halves so
    TAIL=10 run fusetail timeout 500 bin/fftcompare --backend compute \
        --race "default;default+fuse-tail=off;default+split=columns:2+fuse-tail=on" --repeat 5 \
        --sizes "${FUSETAIL_SIZES:-6000,5000,4800x6000,8192,6144,7680x4320}"
fi
if has kernel; then  # a point-symmetric kernel (gaussian:8: a real spectrum, KERNEL_REAL) against the random
                    # (complex) one, each in its own process, alternating, three rounds (queued ms)
    for i in 1 2 3; do
        for k in gaussian:8 random; do
            TAIL=8 run "kernel_${k//:/_}_$i" timeout 280 bin/fftcompare --backend compute --race default --repeat 5 \
                $([ $k != random ] && echo --kernel $k) --sizes "${KERNEL_SIZES:-1024,2048x1024,1920x1080,2048,4096,6000,8192}"
        done
    done
fi
if has tails; then  # whole row passes' tails (ComputeFft::row_tail): the auto rule against none and fixed
                   # tails, one race (queued ms, each dispatch's us)
    TAIL=30 run tails timeout 500 bin/fftcompare --backend compute --race "${TAILS_PLANS:-default;default+row-tail=off;default+row-tail=48;default+row-tail=96}" \
        --repeat 9 --sizes "${TAILS_SIZES:-1920x1080,2000x1152,2048x1080,2048x1024}"
fi
if has builds; then  # this build beside the build before (bin/old/fftcompare, where carried), each in its own
                    # process, alternating, two rounds: the planner's plans raced (queued ms, each dispatch's us)
    for i in 1 2; do
        for b in fftcompare $([ -x bin/old/fftcompare ] && echo old/fftcompare); do
            TAIL=8 run "builds_${b//\//_}_$i" timeout 280 bin/$b --backend compute --race default --repeat 7 \
                --sizes "${BUILDS_SIZES:-2048x1024,1920x1080,2000x1152,1080x1920,1536}"
        done
    done
fi
if has pixels; then  # issue 15's measure in one race: each mixed size's time a pixel against its nearest
                    # power of two's (the race's vs 2^k column; 3000 -> 4096, 1536 -> 2048, 1000 -> 1024)
    TAIL=14 run pixels timeout 500 bin/fftcompare --backend compute --race default --repeat 9 \
        --sizes "${PIXELS_SIZES:-2048x1024,1920x1080,2000x1152,1024,1000,1536,2048,3000,4096,6000,8192}"
fi
if has gap; then  # where 1920x1080's time a pixel goes against 2048x1024's: one race of the plans and
                 # lines tried against the default, the dispatches' costs, and bin/bench/lineprobe's
                 # copies of the same rows and columns (the memory pattern alone; textures and buffers)
    TAIL=16 run gap_race timeout 500 bin/fftcompare --backend compute --repeat 9 --sizes 2048x1024,1920x1080 \
        --race "default;default+lines=1;default+lines=2;rows:1920:8x8x6x5/384;rows:1920:6x8x8x5/320;columns:1080:10x12x9/120;columns:1080:6x4x5x9/270"
    TAIL=12 run gap_costs "${costs[@]}" --sizes 2048x1024,1920x1080
    if [ -x bin/bench/lineprobe ]; then
        rows() { echo "$1:axis=rows,len=$2,lines=2,pairs=2,elems=$3,count=$4,shared=$5${6:-}"; }
        TAIL=13 run gap_probe bin/bench/lineprobe 2048 "$probe_peak" "$(rows r2048 2048 8 512 32)" "$(rows r1920 1920 4 540 30)" \
            "$(rows r1920e8 1920 8 540 30)" "$(rows r2048e4 2048 4 512 32)" "$(rows r2048buf 2048 8 512 32 ,buffer=1)" \
            "$(rows r1920buf 1920 4 540 30 ,buffer=1)" "c1024:axis=columns,len=1024,lines=1,elems=4,count=1023,shared=16" \
            "c1080:axis=columns,len=1080,lines=1,elems=3,count=959,shared=17"
    fi
fi
if has compile; then  # first use of a size: its programs' setup with the driver's disk cache off, this build
                     # beside the build before where carried as bin/old/fftcompare, alternately, twice, with
                     # the random (complex) kernel and gaussian:8 (point symmetric: the real multiply)
    for i in 1 2; do
        for k in random gaussian:8; do
            for b in fftcompare $([ -x bin/old/fftcompare ] && echo old/fftcompare); do
                TAIL=2 __GL_SHADER_DISK_CACHE=0 run "compile_${k//:/_}_${b//\//_}_$i" timeout 200 bin/$b --backend compute \
                    --sizes "${COMPILE_SIZE:-1920x1080}" --race default --repeat 2 --warm-up 0 $([ $k != random ] && echo --kernel $k)
            done
        done
    done
fi
if has background; then  # a TextureFilter's first compile at once or in the background (gpufft::Compile): the
                        # constructor's time, the frames a renderer draws until ready(), the first apply();
                        # every cache off, alternately, twice (bin/bench/background: make bench); then the
                        # API's background test on this driver
    for i in 1 2; do
        for k in gaussian:8 motion:9; do
            for m in now background; do
                TAIL=2 __GL_SHADER_DISK_CACHE=0 GPUFFT_PROGRAM_CACHE=off run "background_${m}_${k//:/_}_$i" \
                    timeout 200 bin/bench/background $m "${BACKGROUND_SIZE:-1920x1080}" $k
            done
        done
    done
    TAIL=4 run background_api bin/test/test_api texture_filters_compile_in_the_background gl_state_is_left_as_found
fi
if has compiletime; then  # first use of a size, program by program (bin/bench/compiletime: make bench), every
                         # cache off: the built-in programs and each folder of COMPILETIME_DIRS (copies of
                         # programs/ made here and carried, read through GPUFFT_PROGRAMS_DIR), one process
                         # each, side by side; then each version's speed, its processes alternating, twice;
                         # COMPILETIME_PLAN: plans for every version (--compute-plan), COMPILETIME_RACE:
                         # the race's plans (default: default), COMPILETIME_UNTIMED: versions not raced
    sizes=${COMPILETIME_SIZES:-1920x1080,2048x1024,1024x1024}
    versions=(built-in ${COMPILETIME_DIRS:-})
    for v in "${versions[@]}"; do
        dir=$([ "$v" = built-in ] || echo "$v")
        GPUFFT_PROGRAMS_DIR=$dir __GL_SHADER_DISK_CACHE=0 GPUFFT_PROGRAM_CACHE=off \
            timeout "${COMPILETIME_S:-400}" bin/bench/compiletime "$sizes" real ${COMPILETIME_PLAN:+"$COMPILETIME_PLAN"} > "$out/compiletime_${v//\//_}.txt" 2>&1 &
    done
    wait
    for v in "${versions[@]}"; do echo "== compiletime $v"; cat "$out/compiletime_${v//\//_}.txt"; done
    for i in 1 2; do
        for v in "${versions[@]}" ; do
            [[ " ${COMPILETIME_UNTIMED:-} " == *" $v "* ]] && continue
            dir=$([ "$v" = built-in ] || echo "$v")
            TAIL=12 GPUFFT_PROGRAMS_DIR=$dir run "compiletime_speed_${v//\//_}_$i" timeout 300 bin/fftcompare --backend compute \
                --race "${COMPILETIME_RACE:-default}" --repeat 5 --sizes "$sizes"
        done
    done
fi
if has grids; then  # a folder of many sizes the first time (GRIDS_DIR, default out/mixed: made here and carried,
                   # never with --synth there, whose sizes would each compile too): every cache empty (the
                   # driver's, ours), this build's shared lengths, its --exact-grids, and the build before
                   # (bin/old/fftfilter, where carried; GRIDS_OLD_S limits it); then this build warm
    dir=${GRIDS_DIR:-out/mixed}
    variants=("fftfilter" "fftfilter --exact-grids")
    [ -x bin/old/fftfilter ] && variants+=("old/fftfilter")
    for v in "${variants[@]}"; do
        name=${v//[ \/-]/_}
        cache=/tmp/gpufft-grids-$name && rm -rf "$cache" /dev/shm/grids-out && mkdir -p "$cache" /dev/shm/grids-out
        limit=${GRIDS_S:-300}; [[ $v == old/* ]] && limit=${GRIDS_OLD_S:-200}
        TAIL=6 __GL_SHADER_DISK_CACHE_PATH=$cache GPUFFT_PROGRAM_CACHE=off run "grids_cold_$name" \
            timeout "$limit" bin/$v -v -v -k gaussian:8 -o /dev/shm/grids-out "$dir"/*.png
    done
    rm -rf /dev/shm/grids-out && mkdir -p /dev/shm/grids-out
    TAIL=6 __GL_SHADER_DISK_CACHE_PATH=/tmp/gpufft-grids-fftfilter GPUFFT_PROGRAM_CACHE=off run grids_warm \
        bin/fftfilter -v -v -k gaussian:8 -o /dev/shm/grids-out "$dir"/*.png
fi
if has grids_kernels; then  # what programs keyed by the line cost the kernels: this build and the one before
                           # (bin/old/fftcompare, where carried) alternately at GRIDS_SIZES, each build's
                           # driver cache empty the first time (setup s: the compiles), twice
    for i in 1 2; do
        for b in fftcompare $([ -x bin/old/fftcompare ] && echo old/fftcompare); do
            cache=/tmp/gpufft-kernels-${b//\//_}
            [ "$i" = 1 ] && rm -rf "$cache" && mkdir -p "$cache"
            TAIL=${GRIDS_TAIL:-10} __GL_SHADER_DISK_CACHE_PATH=$cache GPUFFT_PROGRAM_CACHE=off run "grids_kernels_${b//\//_}_$i" \
                bin/$b --backend compute --kernel gaussian:8 --race default --repeat 5 \
                --sizes "${GRIDS_SIZES:-1024,2048,1920x1080,2000x1152,4096,8192}"
        done
    done
fi
if has isa; then  # registers and machine code of the compute programs: ISA_SIZES' programs compiled into an
                 # empty driver cache, brought back as isa_cache.tgz; test/nv_isa.py reads it (here where
                 # python3 and zstd exist, else on the machine the tarball comes back to)
    cache=/tmp/gpufft-isa-cache
    rm -rf "$cache" && mkdir -p "$cache"
    __GL_SHADER_DISK_CACHE_PATH=$cache __GL_SHADER_DISK_CACHE_SKIP_CLEANUP=1 TAIL=4 run isa_compile \
        bin/fftcompare --backend compute --no-speed --sizes "${ISA_SIZES:-1920x1080,2048x1024,1000,1024}"
    tar czf "$out/isa_cache.tgz" -C "$cache" .
    if command -v python3 > /dev/null && command -v zstd > /dev/null; then TAIL=60 run isa test/nv_isa.py "$cache"; fi
fi
if has sizes_batch; then  # a 1920x1080 batch on the planner's grid beside the power-of-two grid of the
                          # build before (bin/old/fftfilter, where carried), and with -b wrap
    OUT=/tmp/bench-sizes PEERS=none TAIL=8 run sizes_batch_hd test/bench_batch.sh 64 1920x1080 gaussian:8
    [ -x bin/old/fftfilter ] && OUT=/tmp/bench-sizes-old BIN=bin/old PEERS=none TAIL=8 run sizes_batch_hd_before test/bench_batch.sh 64 1920x1080 gaussian:8
    OUT=/tmp/bench-sizes-wrap FFTFILTER_ARGS="-b wrap" PEERS=none TAIL=8 run sizes_batch_hd_wrap test/bench_batch.sh 64 1920x1080 gaussian:8
fi
if [[ " $steps " == *" squares "* ]]; then  # tuning.cpp's measured squares: an L x L filter at every even fast
    # length from SQUARES_FROM (128) to SQUARES_TO (4096), or at the lengths of SQUARES_LIST (commas),
    # queued. The programs compile first (SQUARES_STAGE compile), in 16 processes at once, each with a
    # shader cache of its own (processes sharing one lose each other's entries; SQUARES_COMPILE_S
    # limits each); then (SQUARES_STAGE time) each process's lengths are timed alone, cached, with
    # SQUARES_ANCHORS (1024,2048) beside them. A later call with the same lengths and SQUARES_TAG
    # finds the caches of an earlier one on the same machine.
    # squares.txt: the median us a length, as "{L, us}" for tuning.cpp.
    smooth() { local n=$1; for p in 2 3 5 7; do while (( n % p == 0 )); do n=$((n / p)); done; done; (( n == 1 )); }
    anchors=${SQUARES_ANCHORS:-1024,2048}
    lengths=()
    if [ -n "${SQUARES_LIST:-}" ]; then
        IFS=, read -ra lengths <<< "$SQUARES_LIST"
    else
        for ((n = ${SQUARES_FROM:-128}; n <= ${SQUARES_TO:-4096}; n += 2)); do
            [[ ",$anchors," != *",$n,"* ]] && smooth $n && lengths+=($n); done
    fi
    chunk() { local list=$anchors i; for ((i = $1; i < ${#lengths[@]}; i += 16)); do list+=,${lengths[$i]}; done; echo $list; }
    cached() {  # cached C COMMAND...: COMMAND with chunk C's shader cache
        local c=$1; shift
        mkdir -p "/tmp/squares_cache_${SQUARES_TAG:-}$c"
        __GL_SHADER_DISK_CACHE=1 __GL_SHADER_DISK_CACHE_PATH=/tmp/squares_cache_${SQUARES_TAG:-}$c __GL_SHADER_DISK_CACHE_SKIP_CLEANUP=1 "$@"
    }
    chunks=$(seq 0 $(( ${#lengths[@]} < 16 ? ${#lengths[@]} - 1 : 15 )))
    if [[ ${SQUARES_STAGE:-compile time} == *compile* ]]; then
        start=$SECONDS
        for c in $chunks; do
            cached $c timeout "${SQUARES_COMPILE_S:-0}" bin/fftcompare --backend compute --race default --sizes "$(chunk $c)" \
                --repeat 1 --queue 3 --warm-up 0 > "$out/squares_compile_$c.txt" 2>&1 &
        done
        wait
        echo "== squares: ${#lengths[@]} lengths compiled in $((SECONDS - start)) s"
    fi
    if [[ ${SQUARES_STAGE:-compile time} == *time* ]]; then
        for c in $chunks; do
            TAIL=3 cached $c run "squares_$c" bin/fftcompare --backend compute --race default --sizes "$(chunk $c)" --repeat 3 --warm-up 0.1
        done
        cat "$out"/squares_[0-9]*.txt | awk '$1 ~ /^[0-9]+x[0-9]+$/ { split($1, s, "x"); if (s[1] == s[2]) print s[1], $4 * 1000 }' |
            sort -k1,1n -k2,2g | awk 'function flush() { if (k) printf "{%d, %.1f}, ", n, k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2 }
                $1 != n { flush(); n = $1; k = 0 } { a[++k] = $2 } END { flush(); print "" }' > "$out/squares.txt"
        echo "== squares: $(grep -o '{' "$out/squares.txt" | wc -l) lengths in $out/squares.txt"
    fi
fi
if has stream; then  # images larger than memory (test/bench_stream.sh): the input written with zlib
                     # level STREAM_LEVEL (default 1), then filtered on the GPU in strips; beside the
                     # build before where carried as bin/old/fftfilter, alternating, twice
    size=${STREAM_SIZE:-65536x65536}
    mkdir -p /tmp/gpufft-bench-stream
    TAIL=12 run stream_rgb8 bash -c "bin/bench/bigpng $size rgb8 /tmp/gpufft-bench-stream/$size-rgb8.png ${STREAM_LEVEL:-1} &&
        test/bench_stream.sh $size rgb8 /tmp/gpufft-bench-stream -k gaussian:8"
    if [ -x bin/old/fftfilter ]; then
        for i in 1 2; do
            BIN=bin/old TAIL=12 run "stream_old_$i" test/bench_stream.sh "$size" rgb8 /tmp/gpufft-bench-stream -k gaussian:8
            TAIL=12 run "stream_$i" test/bench_stream.sh "$size" rgb8 /tmp/gpufft-bench-stream -k gaussian:8
        done
    fi
fi
if has probe; then
    [ -x bin/bench/passprobe ] && run probe bin/bench/passprobe 1024
fi
if has lineprobe && [ -x bin/bench/lineprobe ]; then  # each line dispatch's memory pattern alone (make bench)
    for n in ${LINEPROBE_SIZES:-4096 8192}; do TAIL=40 run "lineprobe_$n" bin/bench/lineprobe "$n" "$probe_peak"; done
fi
if has planar && [ -x bin/bench/planar ]; then  # a planar design's rows and filters (RG32F texels; make bench),
                                              # beside our rows and filters of the same bytes
    TAIL=60 run planar bin/bench/planar "$probe_peak"
    run planar_ours "${costs[@]}" --sizes 1024,2048,4096,8192
    run planar_ours_queued bin/fftcompare --backend compute --race default --sizes 1024,2048,4096,8192 --repeat 3
fi
if has warpline && [ -x bin/bench/warpline ]; then  # the 1024^2 column filter as one channel's line a warp
                                                  # (make bench), beside the column filter's own dispatch
    run warpline bin/bench/warpline "$probe_peak"
    run warpline_ours "${costs[@]}" --sizes 1024
fi
if has smemline && [ -x bin/bench/smemline ]; then  # rows resident in shared memory (make bench), beside our rows
    run smemline bin/bench/smemline "$probe_peak"
    run smemline_ours "${costs[@]}" --sizes 1920x1080,2048x1024,1024 -q
fi
if has layouts && [ -x bin/bench/lineprobe ]; then  # whole rows and columns through the textures, linear storage
                                                   # buffers and tiled ones (the layout between dispatches)
    for n in 2048 4096 8192; do
        case $n in
            2048) rows="axis=rows,mirror=1,len=2048,lines=2,elems=8" ;;  # row pairs, two a workgroup
            4096) rows="axis=rows,mirror=0,len=4096,lines=2,elems=8" ;;  # channel rows, one a workgroup (lines=2 without pairs=2)
            *) rows="axis=rows,mirror=0,len=8192,lines=1,elems=8" ;;
        esac
        pats="rows:$rows rows_linear:$rows,buffer=1"
        if [ $n != 8192 ]; then  # 8192's columns take the four-step route
            cols="len=$n,lines=1,elems=8" cols2="len=$n,lines=2,pairs=2,elems=8"
            pats="$pats columns:$cols columns2:$cols2 columns_linear:$cols,buffer=1 columns2_linear:$cols2,buffer=1"
            for t in 8x8 16x16 32x8 8x32 4x64; do
                pats="$pats rows_$t:$rows,buffer=1,tw=${t%x*},th=${t#*x} columns_$t:$cols,buffer=1,tw=${t%x*},th=${t#*x}"
                pats="$pats columns2_$t:$cols2,buffer=1,tw=${t%x*},th=${t#*x}"
            done
        fi
        TAIL=40 run "layouts_$n" bin/bench/lineprobe "$n" "$probe_peak" $pats
    done
fi
if has timeline && [ -x bin/bench/timeline ]; then  # where each multiprocessor waits in a queue of filters
                                                   # (src/README.md "Per-workgroup time lines")
    for s in ${TIMELINE_SIZES:-1024 2048x1024 1920x1080 2000x1152 2048 4096}; do TAIL=30 run "timeline_$s" bin/bench/timeline "$s" 20; done
    TAIL=30 run timeline_8192 bin/bench/timeline 8192 10
    TAIL=30 run timeline_16384 bin/bench/timeline 16384 5
fi
if has tinysteps; then  # the columns' six- and eight-point steps A (columns of 8194-16384), 32 lines a workgroup
    TAIL=6 run tinysteps bin/fftcompare --backend compute --race default --sizes 8192,10000,12000,16384 --repeat 3 --queue 20
fi
if has gridtiles; then  # one grid against the measured model's tiles (src/README.md "Tiles where one grid fits"):
                       # each grid's filter beside its tiles', then whole images both ways (bin/bench/stageprobe)
    TAIL=12 run gridtiles_filters bin/fftcompare --backend compute --race default --repeat 3 \
        --sizes 1024,2048,3072,4096,2916,4608,6144,9216,12250
    if [ -x bin/bench/stageprobe ]; then
        for s in ${GRIDTILES_SIZES:-2800 4500 6000 9000 12000}; do
            TAIL=6 run "gridtiles_$s" bin/bench/stageprobe "${s}x$s" gaussian:8 compute 6 pipeline
        done
    fi
fi
if has rowsides && [ -x bin/bench/lineprobe ]; then  # whole rows with one side a linear buffer: which side of a
                                                    # row dispatch is slow through the textures (rows forward
                                                    # read the image, rows inverse write it)
    for n in ${ROWSIDES_SIZES:-1024 2048 4096 8192}; do
        case $n in
            1024|2048) rows="axis=rows,mirror=1,len=$n,lines=2,pairs=2,elems=$((n / 256))" ;;  # row pairs, two a workgroup
            4096) rows="axis=rows,mirror=0,len=4096,lines=2,elems=8" ;;  # channel rows, one a workgroup (lines=2 without pairs=2)
            *) rows="axis=rows,mirror=0,len=8192,lines=1,elems=8" ;;
        esac
        # then rows stored side by side: 1, 2, 4, 8 neighbouring rows a workgroup, all textures
        e=$(( n > 1024 ? n / 1024 : 1 )) side=()
        for g in 1 2 4 8; do side+=("side_g$g:axis=rows,mirror=0,len=$n,lines=$g,pairs=$g,elems=$((e * g))"); done
        TAIL=10 run "rowsides_$n" bin/bench/lineprobe "$n" "$probe_peak" "textures:$rows" "src_buffer:$rows,bin=1" \
            "dst_buffer:$rows,bout=1" "buffers:$rows,buffer=1" "${side[@]}"
    done
fi
if has bands && [ -x bin/bench/lineprobe ]; then  # column lines of 4096 in long columns (the four-step steps B of
                                                 # quarters and halves): workgroups along column pairs of one
                                                 # band of rows first (order=0) or along a pair's bands
                                                 # (order=1, as a fused step B), with and without the mirror column
    for n in ${BANDS_SIZES:-4096 8192 16384}; do
        band="len=4096,step=4096,subs=$((n / 4096)),lines=1,elems=8"
        pats="whole:len=$n,lines=1,elems=$((n / 1024))"
        for o in 0 1; do
            pats="$pats band_o${o}:$band,order=$o band_o${o}_nomirror:$band,order=$o,mirror=0"
        done
        pats="$pats band_o0_pairs2:len=4096,step=4096,subs=$((n / 4096)),lines=2,pairs=2,elems=8,order=0"
        TAIL=12 run "bands_$n" bin/bench/lineprobe "$n" "$probe_peak" $pats
    done
fi
