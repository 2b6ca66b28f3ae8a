#!/usr/bin/env bash
# Streaming benchmark (README, "Images larger than memory"): writes a huge PNG with bin/bench/bigpng
# (once; kept in DIR), filters it with fftfilter under /usr/bin/time and prints the wall time,
# megapixels per second and peak resident memory.
#
#   test/bench_stream.sh [SIZE [KIND [DIR [fftfilter options...]]]]
#   defaults: 65536x65536 rgb8 /tmp/gpufft-bench-stream, then -k gaussian:8
#   e.g.      test/bench_stream.sh 32768x32768 rgba16
set -eu
size=${1:-65536x65536}
kind=${2:-rgb8}
dir=${3:-/tmp/gpufft-bench-stream}
shift $(( $# < 3 ? $# : 3 ))
opts=("$@")
[ ${#opts[@]} -gt 0 ] || opts=(-k gaussian:8)
bin=${BIN:-bin}
mkdir -p "$dir"
in="$dir/$size-$kind.png"
if [ ! -f "$in" ]; then
    start=$(date +%s.%N)
    bin/bench/bigpng "$size" "$kind" "$in"  # this build's writer, whichever fftfilter is timed
    echo "wrote $in ($(du -h "$in" | cut -f1)) in $(echo "$(date +%s.%N) - $start" | awk '{print $1 - $3}') s"
fi
out="$dir/$size-$kind.filtered.png"
rm -f "$out"
/usr/bin/time -f 'wall %e s, peak RSS %M KiB' -o "$dir/time.txt" "$bin/fftfilter" -v "${opts[@]}" -o "$out" "$in"
w=${size%x*}; h=${size#*x}
awk -v w="$w" -v h="$h" '{print; split($0, a, " "); printf "%.1f MP/s, peak RSS %.0f MiB\n", w * h / 1e6 / a[2], a[6] / 1024}' "$dir/time.txt"
ls -la "$out"
rm -f "$out"
