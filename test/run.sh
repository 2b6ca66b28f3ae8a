#!/usr/bin/env bash
# Runs every test: the C++ test binaries in $1/test, each of which ends with "N passed, N failed".
# Prints their output and the total as the last line.
set -u
bin=${1:-bin}
passed=0 failed=0
# The programs' binaries (src/gl/program_binaries.h) in a directory of this run's own, not the
# user's cache: the first test to link a program keeps it, later ones link it from there.
if [ -z "${GPUFFT_PROGRAM_CACHE+set}" ]; then
    GPUFFT_PROGRAM_CACHE=$(mktemp -d /tmp/gpufft-programs-XXXXXX) || exit 1
    export GPUFFT_PROGRAM_CACHE
    trap 'rm -rf "$GPUFFT_PROGRAM_CACHE"' EXIT
fi
# llvmpipe's shader compiles without LLVM's optimisation passes (Mesa's GALLIVM_PERF=nopt): with
# Mesa's shader cache empty, compiling is most of the run and those passes about half of a compile
# (test_core's coprime_composite_radices_match_fftw: 182 s -> 94 s; .ci/run from a fresh clone
# 29.0 -> 24.7 minutes on the 2-core machine), while with the cache warm the unoptimised programs
# cost up to a minute of a run (.ci/run 16.9-17.9 -> 18.5 minutes). Every result is still checked;
# GALLIVM_PERF= (empty) keeps the passes.
if [ -z "${GALLIVM_PERF+set}" ]; then
    export GALLIVM_PERF=nopt
fi
# Each binary's tests in processes side by side, one a core (at most four): llvmpipe compiles a
# program on one core at its first use, and with Mesa's shader cache empty compiling is most of
# the run (check.cpp; GPUFFT_TEST_JOBS=1 runs them one at a time).
if [ -z "${GPUFFT_TEST_JOBS+set}" ]; then
    cores=$(nproc 2>/dev/null || echo 1)
    GPUFFT_TEST_JOBS=$(( cores < 4 ? cores : 4 ))
    export GPUFFT_TEST_JOBS
fi
run_one() {
    local name=$1; shift
    echo "== $name"
    local out rc
    out=$("$@" 2>&1); rc=$?
    printf '%s\n' "$out"
    local last
    last=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -n 1)
    if [ -z "$last" ]; then
        echo "FAIL $name: exited $rc without a summary line"
        failed=$((failed + 1))
        return
    fi
    local p f
    p=${last%% passed*}; f=${last#*, }; f=${f%% failed}
    passed=$((passed + p)); failed=$((failed + f))
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "FAIL $name: exited $rc"
        failed=$((failed + 1))
    fi
}
for t in "$bin"/test/*; do
    [ -x "$t" ] && run_one "$(basename "$t")" "$t"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
