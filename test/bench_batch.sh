#!/usr/bin/env bash
# Batch throughput, end to end, as a user sees it: synthesizes a folder of PNGs, filters it with
# fftfilter and, where installed, with the tools people use today on the same files and kernels
# (OpenCV through python3-opencv, libvips' vips), and prints MP/s and peak RSS side by side.
# A benchmark that prints numbers, not a test. Usage:
#   test/bench_batch.sh [COUNT] [WxH] [KERNELS...]      defaults: 16 1920x1080 gaussian:8 disk:30
# Environment: BIN (default bin), OUT (logs and files; default out/bench), FFTFILTER_ARGS (extra
# options for fftfilter, e.g. "--backend compute"), PEERS (default "opencv vips"), PYTHON (default
# /usr/bin/python3, Debian's, which python3-opencv installs into).
set -uo pipefail
count=${1:-16}
size=${2:-1920x1080}
shift 2 2>/dev/null
kernels=${*:-gaussian:8 disk:30}
bin=${BIN:-bin}
peers=${PEERS:-opencv vips}
py=${PYTHON:-/usr/bin/python3}
out=${OUT:-out/bench}
mkdir -p "$out/in"
width=${size%x*}
height=${size#*x}
echo "== $(date -u +%F), $(nproc) threads, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
echo "== $count RGB 8-bit ${size} PNGs (fftfilter --synth ${size}:power=2:seed=N:colour)"
# The inputs, on every core (each fftfilter --synth starts a GL context: about 2 s on the device machine)
seq 1 "$count" | xargs -P "$(nproc)" -I{} sh -c 'f=$(printf "%s/in/img%04d.png" "$1" "$2");
    [ -e "$f" ] || "$3" -q --synth "$4:power=2:seed=$2:colour" -o "$f"' sh "$out" {} "$bin/fftfilter" "$size" || exit 1
mp=$(awk -v n="$count" -v w="$width" -v h="$height" 'BEGIN { printf "%.1f", n * w * h / 1e6 }')

# row TOOL KERNEL COMMAND...: runs COMMAND under /usr/bin/time, prints MP/s, peak RSS and the
# outputs' size.
row() {
    local tool=$1 kernel=$2; shift 2
    rm -rf "$out/o" && mkdir -p "$out/o"
    local log="$out/$(echo "$tool-$kernel" | tr ' :/' '___').log"
    /usr/bin/time -f '%e %M' -o "$out/time" "$@" > "$log" 2>&1
    local rc=$?
    read -r secs kb < "$out/time"
    local files; files=$(ls "$out/o" | wc -l)
    if [ "$rc" -ne 0 ] || [ "$files" -ne "$count" ]; then
        printf '%-26s %-10s failed (exit %s, %s of %s outputs; see %s)\n' "$tool" "$kernel" "$rc" "$files" "$count" "$log"
        return
    fi
    local bytes; bytes=$(du -sb "$out/o" | cut -f1)
    awk -v t="$tool" -v k="$kernel" -v mp="$mp" -v s="$secs" -v kb="$kb" -v b="$bytes" \
        'BEGIN { printf "%-26s %-10s %8.1f MP %8.2f s %9.1f MP/s %8.0f MB %9.2f MB\n", t, k, mp, s, mp / s, kb / 1024, b / 1e6 }'
}

radius_of() { echo "${1#*:}"; }
printf '%-26s %-10s %11s %10s %14s %11s %12s\n' tool kernel pixels time throughput "peak RSS" outputs
for k in $kernels; do
    # Untimed, on two files (a batch: its outputs deflated on the GPU, as a file alone's are not):
    # the GL driver's shader cache (NVIDIA keeps compiled programs on disk) and ours then hold
    # this kernel's programs, as for anyone filtering a second folder; the timed run's -v line
    # "setup (s)" shows what remains of setup.
    "$bin/fftfilter" -q -f ${FFTFILTER_ARGS:-} -k "$k" -o "$out/warm/" $(ls "$out"/in/*.png | head -n 2) || exit 1
    row "fftfilter" "$k" "$bin/fftfilter" -v ${FFTFILTER_ARGS:-} -k "$k" -o "$out/o" "$out"/in/*.png
    grep -E 'backend|setup|bottleneck|host areas|on a CPU' "$out/fftfilter-${k/:/_}.log" | sed 's/^/    /' | tail -n 6
    if [[ " $peers " == *" opencv "* ]] && "$py" -c 'import cv2' 2>/dev/null; then
        r=$(radius_of "$k")
        case $k in
            gaussian:*) op="cv2.GaussianBlur(img, (0, 0), $r, borderType=cv2.BORDER_REFLECT)"; name="OpenCV GaussianBlur";;
            disk:*)     op="cv2.filter2D(img, -1, disk, borderType=cv2.BORDER_REFLECT)"; name="OpenCV filter2D";;
            *) op=""; name="";;
        esac
        if [ -n "$op" ]; then
            row "$name" "$k" "$py" -c "
import cv2, sys, glob, numpy as np
r = int(round($r)); y, x = np.mgrid[-r:r + 1, -r:r + 1]
disk = ((x * x + y * y) <= r * r).astype(np.float32); disk /= disk.sum()
for f in sorted(glob.glob('$out/in/*.png')):
    img = cv2.imread(f, cv2.IMREAD_UNCHANGED)
    cv2.imwrite('$out/o/' + f.split('/')[-1], $op)
"
        fi
    fi
    if [[ " $peers " == *" vips "* ]] && command -v vips >/dev/null; then
        r=$(radius_of "$k")
        case $k in
            gaussian:*)
                row "vips gaussblur" "$k" bash -c "for f in $out/in/*.png; do vips gaussblur \$f $out/o/\$(basename \$f) $r || exit 1; done";;
            disk:*)
                awk -v r="$r" 'BEGIN { n = 2 * r + 1; s = 0; for (y = -r; y <= r; y++) for (x = -r; x <= r; x++) s += (x*x + y*y <= r*r);
                    printf "%d %d %d 0\n", n, n, s; for (y = -r; y <= r; y++) { for (x = -r; x <= r; x++) printf "%d ", (x*x + y*y <= r*r); printf "\n" } }' > "$out/disk.mat"
                row "vips conv" "$k" bash -c "for f in $out/in/*.png; do vips conv \$f $out/o/\$(basename \$f) $out/disk.mat || exit 1; done";;
        esac
    fi
done
