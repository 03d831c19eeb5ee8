#!/usr/bin/env bash
# The one GPU check of libakx, for a lent H200 with the CUDA toolkit and no package registry,
# in one call of at most 10 minutes. Stages, in order, with the time each is expected to take on
# the H200 machine (16 cores) and its limit (the AKX_GPU_*_TIMEOUT below). The expected times
# are estimates (no GPU has run this script yet): the builds from the 2-core build times scaled
# to 16 cores (a scan unit: 14.2 s for sm_90 here, 6.7 s for compute_80 PTX alone), the bench
# from its host-side work; the first run on a GPU should write the measured ones here:
#   build          sm_90 only, a fresh folder, -j16: library, tests, bench
#                                                                      ~150-180 s   limit 205 s
#   (background)   from here on, niced, in build-gpu-arch80: libakx for compute_80 PTX alone
#                  (CMAKE_CUDA_ARCHITECTURES=80-virtual: the part of an "=80" build an H200
#                  runs; its sm_80 cubin cannot) and the PDL probe, -j16; no limit of its own:
#                  stage pdl-arch80 waits for it within its own       ~40-90 s of CPU
#   sim-vs-gpu     test_sim_matches_gpu: the same calls on the GPU and on a sim context of its
#                  profile, compared byte for byte                     ~5-15 s      limit 25 s
#   shared-state   the workspace shared by every family, on the GPU: test_workspace_invariants
#                  (a split segmented reduction, then a scan, a segmented scan, reduce_by_key
#                  on one context), test_mix's sequences of every family on one context against
#                  the host's exact values (what a fresh context gives), and reduce_by_key /
#                  scan_by_key with a user op over one run of 2^22 keys (test_by_key_positions,
#                  AKX_TEST_ONE_RUN_LOG2=22: linear, where the walk it replaced took seconds);
#                  the one 2^24 segment beside uniform ones and CUB is the bench stage's
#                  segmented suite ("segment sum one")                 ~5-15 s      limit 20 s
#   ctest          every other test on the CUDA backend, 4 at a time (2 workers each),
#                  libakx_dist over NCCL on one rank; not the random-schedule copies (the sim's
#                  shuffles: on CUDA the same tests again) nor the probes (their own stages)
#                                                                      ~30-50 s     limit 75 s
#   pdl-sm90       tests/cuda/pdl_probe.cu against this build: a producer that triggers PDL at
#                  its start and writes after 100 us, then akx_mapreduce of its output on the
#                  context's stream: every sum exact                   ~2-4 s       limit 10 s
#   capture        tests/cuda/capture_probe.c, AKX_PDL=1: libakx calls captured into a graph
#                  (global mode), replayed with changing inputs against eager calls, warm; then
#                  cold (AKX_KERNELS=runtime, an empty AKX_CACHE_DIR): a call that would compile
#                  inside a capture is refused, and works after a warm-up ~8-15 s      limit 20 s
#   legacy-stream  tests/cuda/legacy_stream_probe.cu: the README's C example on stream NULL,
#                  user kernels on stream 0 between the calls, 20 rounds ~2-4 s       limit 10 s
#   two-threads-big-tiles
#                  tests/cuda/two_threads_probe.c: two contexts on two threads, float64 scans
#                  with 64 and 54 KiB tiles (one kernel), 10^4 calls each, every value checked
#                                                                      ~3-8 s       limit 15 s
#   runtime-suite  the suite with AKX_KERNELS=runtime (every kernel from NVRTC, into a fresh
#                  AKX_CACHE_DIR the tests share), 8 at a time (2 workers each), the four
#                  families' files first, stopped by ctest's --stop-time before the limit (the
#                  summary then says how many ran): not the ctest stage's exclusions, the sim's
#                  own files, the run-time compilers' nor the checks that launch nothing
#                  (RUNTIME_SUITE_EXCLUDE below)
#                                                                      ~60-120 s    limit 45 s
#   pdl-arch80     waits for the background build, then the PDL probe against the compute_80
#                  library: its kernels have no griddepcontrol.wait, so libakx must launch them
#                  without programmatic serialization (else they read the producer's output
#                  before it is written)                               ~2-30 s      limit 25 s
#   bench          akx-bench --backend cuda: the complete tables (the default on CUDA), akx
#                  beside CUB and a device copy (the segmented suite beside
#                  DeviceSegmentedReduce and InclusiveSumByKey, the dims suite beside
#                  DeviceSegmentedReduce where the reduced elements are contiguous, and the
#                  seeds' RTX 5080 times beside their rows: bench/seeds.c); table, CSV, JSON
#                                                                      ~30-50 s     limit 60 s
#   no-pdl         akx-bench reduce scan --quick with AKX_PDL=0: plain launches, beside the
#                  bench's programmatic dependent ones (docs/one_launch.md) ~5-10 s  limit 15 s
#   api-calls      tests/cuda/api_calls_probe.c: the CUDA API calls of one warm call, and host
#                  microseconds per call over 1000, of each family at 2^10 and 2^16
#                                                                      ~1-3 s       limit 10 s
#   mixed          tests/cuda/mixed_probe.cu: a program's mix of every family on one context
#                  (sum, split dims, columns dims, scan, findall, sum, scan) at 10^4..10^6,
#                  100 rounds, values checked, median us per call beside CUB's DeviceScan
#                  and DeviceSelect::Flagged (the sim's launch counts of the same sequence:
#                  tests/test_steady_state.c)                         ~3-6 s       limit 10 s
#   sim-kernels    akx-bench --quick on the sim, counters per kernel   ~5 s         limit 10 s
#   ncu            the --quick cases under Nsight Compute, beside the sim's counters
#                  (bench/ncu_compare.py), where ncu reads counters   ~20-30 s     limit 25 s
# The stages that time host work (bench, no-pdl, api-calls, mixed) run after the background build is
# over. Expected in all about 6-8 minutes; the limits add up to 580 s (checked before anything
# runs), so a device call with timeout_s 600 always returns the summary. A stage past its limit
# is killed and recorded as failed, and the next one runs.
#
#   bench/gpu_check.sh OUT_DIR [DEBS_DIR]   on the GPU machine, from anywhere in the checkout
#   bench/gpu_check.sh --dry-run [OUT_DIR]  anywhere: the stages, their limits and commands, and
#                                           the sum of the limits; runs nothing (exit 1 when the
#                                           sum is above 580 s); OUT_DIR only names the paths
#   bench/gpu_check.sh --collect DEBS_DIR   here, on Debian 12: gathers the .deb files of
#                                           Criterion and Boost.Context (and what they load)
#
# OUT_DIR receives summary.txt (one line per stage), build.log, build-arch80.log,
# sim-vs-gpu.log, ctest.log, pdl-sm90.log, capture.log, legacy-stream.log, two-threads.log,
# runtime-suite.log, pdl-arch80.log, bench.txt, bench.csv, bench.json (JSON Lines),
# bench-no-pdl.csv, api-calls.log, mixed.log, bench.png (where gnuplot is installed), ncu.csv +
# ncu-compare.txt (or a line saying why not), sim-kernels.csv.
# DEBS_DIR (default: .debs, then bench/debs, in the checkout): the machine's image has CMake,
# ninja and the toolkit but maybe neither Criterion nor Boost.Context. Their .deb files are
# unpacked (dpkg -x) into a private prefix, never installed into / (the image is not Debian
# 12; dpkg -i would stop on dependencies, and unpacking into / can break it). The .deb files
# travel with the checkout: collect them here into .debs (listed in .git/info/exclude) and
# name .debs in the device call's carry. Without Boost.Context nothing builds (exit 2);
# without Criterion the tests and the probes (tests/cuda) are skipped, and the summary says so.
#
# Exit status: 0 when every step that ran passed; 1 when the build, a test, a probe or a bench
# check failed; 2 when a dependency is missing.
set -euo pipefail

: "${AKX_GPU_BUILD_TIMEOUT:=205}"  # sm_90 only, -j16: about 2-3 minutes on the H200 machine
: "${AKX_GPU_MATCH_TIMEOUT:=25}"
: "${AKX_GPU_TEST_TIMEOUT:=75}"
: "${AKX_GPU_PDL_SM90_TIMEOUT:=10}"
: "${AKX_GPU_CAPTURE_TIMEOUT:=20}"
: "${AKX_GPU_LEGACY_TIMEOUT:=10}"
: "${AKX_GPU_TWO_THREADS_TIMEOUT:=15}"
: "${AKX_GPU_RUNTIME_SUITE_TIMEOUT:=45}"
: "${AKX_GPU_SHARED_STATE_TIMEOUT:=20}"
: "${AKX_GPU_PDL_ARCH80_TIMEOUT:=25}"
: "${AKX_GPU_BENCH_TIMEOUT:=60}"
: "${AKX_GPU_NO_PDL_TIMEOUT:=15}"
: "${AKX_GPU_API_CALLS_TIMEOUT:=10}"
: "${AKX_GPU_SIM_TIMEOUT:=10}"
: "${AKX_GPU_MIXED_TIMEOUT:=10}"
: "${AKX_GPU_NCU_TIMEOUT:=25}"
# The compute_80 build of stage pdl-arch80 (see above; "80" builds the sm_80 cubin as well, at
# twice the compile time, which an H200 never runs).
: "${AKX_GPU_ARCH80:=80-virtual}"
# The stages and their limits, in order: the dry run prints them, and their sum is checked.
STAGES=(
  "build $AKX_GPU_BUILD_TIMEOUT"
  "sim-vs-gpu $AKX_GPU_MATCH_TIMEOUT"
  "shared-state $AKX_GPU_SHARED_STATE_TIMEOUT"
  "ctest $AKX_GPU_TEST_TIMEOUT"
  "pdl-sm90 $AKX_GPU_PDL_SM90_TIMEOUT"
  "capture $AKX_GPU_CAPTURE_TIMEOUT"
  "legacy-stream $AKX_GPU_LEGACY_TIMEOUT"
  "two-threads-big-tiles $AKX_GPU_TWO_THREADS_TIMEOUT"
  "runtime-suite $AKX_GPU_RUNTIME_SUITE_TIMEOUT"
  "pdl-arch80 $AKX_GPU_PDL_ARCH80_TIMEOUT"
  "bench $AKX_GPU_BENCH_TIMEOUT"
  "no-pdl $AKX_GPU_NO_PDL_TIMEOUT"
  "api-calls $AKX_GPU_API_CALLS_TIMEOUT"
  "mixed $AKX_GPU_MIXED_TIMEOUT"
  "sim-kernels $AKX_GPU_SIM_TIMEOUT"
  "ncu $AKX_GPU_NCU_TIMEOUT"
)
TOTAL_LIMIT=580
# Not in the ctest stage: test_sim_matches_gpu (its own stage), test_bench_cli (akx-bench's
# command line on the sim, CI's; the bench stage runs it on the GPU), the random-schedule copies
# (AKX_SIM_SCHEDULE shuffles the sim's fibers: on CUDA they repeat the same tests) and the probes
# (their own stages).
CTEST_EXCLUDE='^(test_sim_matches_gpu|test_bench_cli|test_workspace_invariants|test_mix)$|_random_schedule$|^cuda_probe_'
# Not in the runtime suite, besides those: the files that test the sim itself (test_sim_*,
# test_capture, the counters', the look-back's and akx.cuh's on the sim: with
# AKX_KERNELS=runtime their sim contexts would compile every unit with the host compiler), the
# run-time compilers' own files (already the run-time path), and the checks that launch
# nothing (kernel_resources, symbols, paths, criterion_timeouts, install_consumers,
# julia_caller).
RUNTIME_SUITE_EXCLUDE="$CTEST_EXCLUDE"'|^test_sim_|^test_(capture|one_launch|reduce_whole_counters|scan_counters|lookback|akx_cuh|instance|embedded|jit_cache|nvrtc|nvrtc_families|sim_module)$|^(kernel_resources|symbols|paths|criterion_timeouts|install_consumers|julia_caller)$'
# The four families' own files, which the runtime suite runs first.
RUNTIME_SUITE_FIRST='^test_(mapreduce|reduce_dims|scan|findall)$'

DEBS="libcriterion-dev libcriterion3 libnanomsg5 libgit2-1.5 libhttp-parser2.9 libmbedcrypto7
      libmbedtls14 libmbedx509-1 libssh2-1 libgssapi-krb5-2 libkrb5-3 libk5crypto3
      libkrb5support0 libkeyutils1 libcom-err2
      libboost1.74-dev libboost-context1.74-dev libboost-context1.74.0"

if [ "${1:-}" = "--collect" ]; then
  dir=${2:?usage: bench/gpu_check.sh --collect DEBS_DIR}
  mkdir -p "$dir"
  for p in $DEBS; do
    cached=""
    for f in /var/cache/apt/archives/"${p}"_*_amd64.deb; do
      [ -e "$f" ] && cached=$f && break
    done
    if [ -n "$cached" ]; then cp "$cached" "$dir/"; else (cd "$dir" && apt-get download "$p"); fi
  done
  du -sh "$dir"
  exit 0
fi

total=0
for stage in "${STAGES[@]}"; do total=$((total + ${stage##* })); done

dry_run=0
if [ "${1:-}" = "--dry-run" ]; then
  dry_run=1
  shift
fi
if [ "$dry_run" = 1 ]; then
  out_arg=${1:-gpu-check-out}
  out=$out_arg
  debs_dir=""
else
  out_arg=${1:?usage: bench/gpu_check.sh OUT_DIR [DEBS_DIR]  (or --dry-run [OUT_DIR], --collect DEBS_DIR)}
  mkdir -p "$out_arg"
  out=$(cd "$out_arg" && pwd)
  debs_dir=${2:+$(cd "$2" && pwd)}
fi
cd "$(dirname "$0")/.."
root=$PWD
if [ -z "$debs_dir" ]; then
  for d in .debs bench/debs; do
    if [ -d "$d" ]; then debs_dir=$root/$d && break; fi
  done
fi
build=$root/build-gpu
build80=$root/build-gpu-arch80
probes=$build/tests/cuda
failed=()
export PATH="$PATH:/usr/local/cuda/bin"

log() {
  if [ "$dry_run" = 1 ]; then echo "== $*"; else echo "== $*" | tee -a "$out/summary.txt"; fi
}

# The limit of a stage, from STAGES.
limit_of() {
  local stage
  for stage in "${STAGES[@]}"; do
    if [ "${stage% *}" = "$1" ]; then echo "${stage##* }" && return 0; fi
  done
  echo "gpu_check.sh: no stage $1 in STAGES" >&2
  exit 2
}

# Runs a stage under its limit (STAGES), its output into a log; records a failure and carries
# on. A dry run prints the command instead.
step() {
  local name=$1 logfile=$2
  shift 2
  local limit
  limit=$(limit_of "$name")
  if [ "$dry_run" = 1 ]; then
    printf '%-22s limit %3s s  log %-18s %s\n' "$name" "$limit" "$logfile" "$*"
    return 0
  fi
  local start=$SECONDS rc=0
  timeout --kill-after=5 "$limit" "$@" >"$out/$logfile" 2>&1 || rc=$?
  log "$name: exit $rc after $((SECONDS - start)) s (limit $limit s), log $logfile"
  if [ "$rc" -ne 0 ]; then
    failed+=("$name")
    tail -n 30 "$out/$logfile"
  fi
  return 0
}

# A stage that cannot run here, with the reason, in the summary.
skip() {
  log "$1: skipped: $2"
}

# A wall-clock time $1 seconds from now, for ctest's --stop-time (local time, as ctest reads it):
# ctest stops its tests there and still writes its summary before the stage's limit.
stop_time() { date -d "+$1 sec" +%H:%M:%S; }

# How many tests of the sm_90 build ctest selects with these arguments (-R / -E REGEX).
ctest_count() {
  [ "$dry_run" = 0 ] || { echo "?"; return 0; }
  ctest --test-dir "$build" -N "$@" 2>/dev/null | sed -n 's/^Total Tests: //p'
}

# A line in the summary when a ctest stage ran out of time: how many of its tests ran.
ctest_note() {
  local name=$1 logfile=$2 total=$3 ran
  [ "$dry_run" = 0 ] && grep -q "The stop time has been passed" "$out/$logfile" || return 0
  ran=$(grep -Eo 'tests? failed out of [0-9]+' "$out/$logfile" | awk '{ n += $NF } END { if (NR) print n }')
  log "$name: stopped at its limit (ctest --stop-time) after ${ran:-?} of ${total:-?} tests; the test it cut off shows as Timeout (see $logfile)"
}

if [ "$dry_run" = 1 ]; then
  echo "bench/gpu_check.sh --dry-run: the stages in order, their limits and commands (nothing runs)"
else
  : >"$out/summary.txt"
  log "libakx GPU check, $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
  { nvidia-smi -L || true; nvcc --version | tail -n 2 || true; cmake --version | head -n 1 || true; } 2>&1 |
    tee -a "$out/summary.txt"
fi
if [ "$total" -gt "$TOTAL_LIMIT" ]; then
  log "the stages' limits add up to $total s, above $TOTAL_LIMIT s: a device call of 600 s could end before the summary; lower some AKX_GPU_*_TIMEOUT"
  exit 1
fi

# ---- dependencies the image may lack ----------------------------------------------------------
cmake_extra=()
have_criterion=1
[ -e /usr/include/criterion/criterion.h ] || have_criterion=0
have_boost=1
[ -e /usr/include/boost/context/fiber.hpp ] || have_boost=0
if [ "$dry_run" = 1 ]; then
  have_criterion=1 have_boost=1  # the plan as it runs with both
fi
if [ "$have_criterion" = 0 ] || [ "$have_boost" = 0 ]; then
  shopt -s nullglob
  debs=("${debs_dir:-/nonexistent}"/*.deb)
  shopt -u nullglob
  if [ ${#debs[@]} -gt 0 ]; then
    prefix=/tmp/akx-deps
    rm -rf "$prefix"
    for deb in "${debs[@]}"; do dpkg -x "$deb" "$prefix"; done
    cmake_extra+=("-DCMAKE_PREFIX_PATH=$prefix/usr" "-DCMAKE_INCLUDE_PATH=$prefix/usr/include"
                  "-DCMAKE_LIBRARY_PATH=$prefix/usr/lib/x86_64-linux-gnu")
    export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    log "unpacked ${#debs[@]} .deb files from $debs_dir into $prefix"
    [ -e "$prefix/usr/include/criterion/criterion.h" ] && have_criterion=1
    [ -e "$prefix/usr/include/boost/context/fiber.hpp" ] && have_boost=1
  fi
fi
if [ "$have_boost" = 0 ]; then
  log "Boost.Context is missing and no .deb files provide it (bench/gpu_check.sh --collect .debs here, then carry .debs): nothing can be built"
  exit 2
fi
tests=ON
if [ "$have_criterion" = 0 ]; then
  tests=OFF
  log "Criterion is missing and no .deb files provide it: the tests and the probes are SKIPPED (build and bench only)"
fi

# ---- build: a fresh folder, sm_90 only -------------------------------------------------------
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
[ "$dry_run" = 1 ] || rm -rf "$build" "$build80"
# shellcheck disable=SC2016 # $0 and $@ belong to the inner shell
step build build.log bash -c \
  'cmake -S . -B "$0" "$@" -DCMAKE_BUILD_TYPE=Release -DAKX_CUDA=ON -DAKX_GPU_TARGETS=ON -DCMAKE_CUDA_ARCHITECTURES=90-real && cmake --build "$0" -j 16' \
  "$build" ${generator[@]+"${generator[@]}"} ${cmake_extra[@]+"${cmake_extra[@]}"} "-DAKX_TESTS=$tests"
if [[ " ${failed[*]-} " == *" build "* ]]; then
  log "FAILED: build"
  exit 1
fi

# ---- in the background: libakx for compute_80, and the PDL probe (stage pdl-arch80) ----------
# Its own session (setsid), so that the stage can stop the whole build, and so can the exit.
arch80_pid=""
arch80_start=$SECONDS
if [ "$tests" = ON ]; then
  # shellcheck disable=SC2016 # $0 and $@ belong to the inner shell
  arch80_build=(bash -c
    'cmake -S . -B "$0" "$@" -DCMAKE_BUILD_TYPE=Release -DAKX_CUDA=ON -DAKX_GPU_TARGETS=ON -DAKX_BENCH=OFF && cmake --build "$0" --target akx_pdl_probe -j 16'
    "$build80" ${generator[@]+"${generator[@]}"}
    ${cmake_extra[@]+"${cmake_extra[@]}"} -DAKX_TESTS=ON "-DCMAKE_CUDA_ARCHITECTURES=$AKX_GPU_ARCH80")
  if [ "$dry_run" = 1 ]; then
    printf '%-22s %-9s  log %-18s nice -n 5 setsid %s\n' "(background)" "" build-arch80.log "${arch80_build[*]}"
  else
    nice -n 5 setsid "${arch80_build[@]}" >"$out/build-arch80.log" 2>&1 &
    arch80_pid=$!
    trap '[ -z "$arch80_pid" ] || kill -TERM -- "-$arch80_pid" 2>/dev/null || true' EXIT
  fi
fi

# ---- the GPU against the sim, bit for bit -------------------------------------------------------
# test_sim_matches_gpu runs the same calls on the GPU and on a sim context of its profile and
# compares the results byte for byte (the README's bit-for-bit claim). Its own stage, first, so
# that its verdict is there even if the rest of the suite runs out of time. It skips (and passes)
# when no sim profile stands for the GPU: that is reported, not taken for a match.
if [ "$tests" = ON ]; then
  step sim-vs-gpu sim-vs-gpu.log \
    env AKX_BACKEND=cuda "$build/tests/test_sim_matches_gpu" --jobs 4 --verbose
  if [ "$dry_run" = 0 ] && grep -q "is not the sim profile" "$out/sim-vs-gpu.log"; then
    log "sim-vs-gpu: this GPU has no sim profile, nothing was compared (see sim-vs-gpu.log)"
    failed+=("sim-vs-gpu-skipped")
  fi
else
  skip sim-vs-gpu "no Criterion"
fi

# ---- the workspace every family shares ------------------------------------------------------------
# The calls that corrupted each other through the workspace's tags on the sim (a split segmented
# reduction's tickets read as a scan's epoch), their random mixes, and a by-key user op over one
# long run, on the GPU (their own stage: the ctest stage may run out of time first).
if [ "$tests" = ON ]; then
  # shellcheck disable=SC2016 # $0 belongs to the inner shell
  step shared-state shared-state.log env AKX_BACKEND=cuda AKX_TEST_ONE_RUN_LOG2=22 bash -c \
    'cd "$0" && ./test_workspace_invariants --jobs 2 && ./test_mix --jobs 4 &&
     ./test_by_key_positions --jobs 1 --filter "by_key_positions/one_long_run_user_sum_values_on_any_backend"' \
    "$build/tests"
else
  skip shared-state "no Criterion"
fi

# ---- the rest of the test suite on the CUDA backend ---------------------------------------------
# Among them: test_complex_abs holds the GPU's complex ABS to kernels/akx/hypot.cuh's bits;
# kernel_resources reads the sm_90 build's registers and spills (cuobjdump, from the toolkit);
# test_cuda_api_calls bounds the CUDA API calls of a warm call. Not CTEST_EXCLUDE (above).
# 4 programs at once, each with the 2 Criterion workers its ctest entry asks for (--jobs 2,
# which CRITERION_JOBS does not override); every worker opens its own CUDA context.
if [ "$tests" = ON ]; then
  limit=$(limit_of ctest)
  step ctest ctest.log \
    env AKX_BACKEND=cuda ctest --test-dir "$build" --output-on-failure -j 4 \
    --timeout $((limit - 10)) --stop-time "$(stop_time $((limit - 8)))" -E "$CTEST_EXCLUDE"
  ctest_note ctest ctest.log "$(ctest_count -E "$CTEST_EXCLUDE")"
else
  skip ctest "no Criterion"
fi

# ---- the probes (tests/cuda): what only a GPU shows ---------------------------------------------
if [ "$tests" = ON ]; then
  step pdl-sm90 pdl-sm90.log env AKX_PDL=1 "$probes/akx_pdl_probe" 300
  # From the build folder: the cold run makes its empty cache directory there.
  # shellcheck disable=SC2016 # $0 belongs to the inner shell
  step capture capture.log env AKX_PDL=1 bash -c \
    'cd "$0" && ./akx_capture_probe warm 50; w=$?; ./akx_capture_probe cold 20 || exit 1; exit $w' "$probes"
  step legacy-stream legacy-stream.log "$probes/akx_legacy_stream_probe" 20
  step two-threads-big-tiles two-threads.log "$probes/akx_two_threads_probe" 10000
else
  for stage in pdl-sm90 capture legacy-stream two-threads-big-tiles; do skip "$stage" "no Criterion (the probes are built with the tests)"; done
fi

# ---- the suite again, every kernel from NVRTC ----------------------------------------------------
# AKX_KERNELS=runtime: the CUDA backend takes every kernel from NVRTC (the path no GPU has run),
# compiled once into a fresh cache directory that the tests share (its build lock makes one
# process compile a unit while the others wait). The four families' own files first
# (RUNTIME_SUITE_FIRST), then the rest that fits; ctest stops at the stage's limit and still
# reports (the test it cut off shows as Timeout). Not RUNTIME_SUITE_EXCLUDE (above).
if [ "$tests" = ON ]; then
  limit=$(limit_of runtime-suite)
  runtime_cache=$build/akx-cache-runtime
  [ "$dry_run" = 1 ] || { rm -rf "$runtime_cache" && mkdir -m 700 "$runtime_cache"; }
  # shellcheck disable=SC2016 # $0 and $@ belong to the inner shell
  step runtime-suite runtime-suite.log \
    env AKX_BACKEND=cuda AKX_KERNELS=runtime AKX_CACHE_DIR="$runtime_cache" bash -c \
    'first_re=$0 exclude_re=$1; shift; ctest "$@" -R "$first_re"; rc=$?; ctest "$@" -E "$first_re|$exclude_re" || rc=1; exit $rc' \
    "$RUNTIME_SUITE_FIRST" "$RUNTIME_SUITE_EXCLUDE" --test-dir "$build" --output-on-failure -j 8 \
    --timeout $((limit - 10)) --stop-time "$(stop_time $((limit - 8)))"
  ctest_note runtime-suite runtime-suite.log "$(ctest_count -E "$RUNTIME_SUITE_EXCLUDE")"
else
  skip runtime-suite "no Criterion"
fi

# ---- PDL against a library built for compute_80 (the background build) -----------------------
# Waits for the build within the stage's limit, then runs the probe in what is left of it.
if [ "$tests" = ON ] && [ "$dry_run" = 1 ]; then
  printf '%-22s limit %3s s  log %-18s %s\n' pdl-arch80 "$(limit_of pdl-arch80)" pdl-arch80.log \
    "wait for the background build, then: env AKX_PDL=1 $build80/tests/cuda/akx_pdl_probe 300"
elif [ "$tests" = ON ]; then
  limit=$(limit_of pdl-arch80)
  start=$SECONDS
  while kill -0 "$arch80_pid" 2>/dev/null && [ $((SECONDS - start)) -lt $((limit - 8)) ]; do sleep 1; done
  build_rc=0
  if kill -0 "$arch80_pid" 2>/dev/null; then
    kill -TERM -- "-$arch80_pid" 2>/dev/null || true
    build_rc=124
  fi
  wait "$arch80_pid" || build_rc=$?
  arch80_pid=""
  build_s=$((SECONDS - arch80_start))
  left=$((limit - (SECONDS - start)))
  [ "$left" -ge 1 ] || left=1  # timeout 0 would mean no limit
  if [ "$build_rc" -ne 0 ]; then
    log "pdl-arch80: the compute_80 build failed or was not done (exit $build_rc after $build_s s in the background), log build-arch80.log"
    failed+=("pdl-arch80")
    tail -n 30 "$out/build-arch80.log"
  else
    rc=0
    timeout --kill-after=5 "$left" env AKX_PDL=1 "$build80/tests/cuda/akx_pdl_probe" 300 \
      >"$out/pdl-arch80.log" 2>&1 || rc=$?
    log "pdl-arch80: exit $rc after $((SECONDS - start)) s (limit $limit s; the $AKX_GPU_ARCH80 build took $build_s s in the background, log build-arch80.log), log pdl-arch80.log"
    if [ "$rc" -ne 0 ]; then
      failed+=("pdl-arch80")
      tail -n 30 "$out/pdl-arch80.log"
    fi
  fi
else
  skip pdl-arch80 "no Criterion (the probes are built with the tests)"
fi

# ---- akx-bench on CUDA: the table, the CSV, the JSON Lines (and the plot) of one run -----------
# The default command: on CUDA it runs the complete tables, every case beside CUB and a copy.
bench=$build/bench/akx-bench
plot=()
command -v gnuplot >/dev/null && plot=(--plot "$out/bench.png")
step bench bench.txt \
  "$bench" --backend cuda --csv "$out/bench.csv" --json "$out/bench.json" ${plot[@]+"${plot[@]}"}
[ "$dry_run" = 1 ] || cat "$out/bench.txt"
# What programmatic dependent launch buys: the small cases again with plain launches.
step no-pdl bench-no-pdl.txt \
  env AKX_PDL=0 "$bench" reduce scan --quick --backend cuda --csv "$out/bench-no-pdl.csv"
# The host work of a call at small sizes: API calls and microseconds per call.
if [ "$tests" = ON ]; then
  step api-calls api-calls.log "$probes/akx_api_calls_probe" 1000
  [ "$dry_run" = 1 ] || cat "$out/api-calls.log"
else
  skip api-calls "no Criterion (the probes are built with the tests)"
fi
# The mix of every family on one context, beside CUB's scan and select.
if [ "$tests" = ON ]; then
  step mixed mixed.log "$probes/akx_mixed_probe" 100
  [ "$dry_run" = 1 ] || cat "$out/mixed.log"
else
  skip mixed "no Criterion (the probes are built with the tests)"
fi

# ---- Nsight Compute beside the sim ------------------------------------------------------------
# The same cases on both: `all --quick`, each akx call once on CUDA (--once) under ncu, and on
# the sim with its counters per kernel. ncu_compare.py pairs the launches case by case.
step sim-kernels sim-kernels.log \
  "$bench" all --quick --backend sim --kernels-csv "$out/sim-kernels.csv"
ncu=$(command -v ncu || true)
[ "$dry_run" = 0 ] || ncu=${ncu:-ncu}
if [ -z "$ncu" ]; then
  log "ncu: not found (Nsight Compute): no hardware counters beside the sim's"
else
  metrics=launch__registers_per_thread,launch__grid_size,launch__block_size,gpu__time_duration.sum
  metrics+=,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
  metrics+=,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum
  metrics+=,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
  metrics+=,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
  step ncu ncu.log \
    "$ncu" --csv --page raw --log-file "$out/ncu.csv" --kernel-name-base function \
    --kernel-name "regex:^(scan_|findall_|reduce_)" --metrics "$metrics" \
    "$bench" all --quick --once --backend cuda
  if [ "$dry_run" = 1 ]; then
    :
  elif grep -q -i "error\|not permitted\|LibraryNotLoaded" "$out/ncu.log" "$out/ncu.csv" 2>/dev/null &&
     ! grep -q "launch__registers_per_thread" "$out/ncu.csv" 2>/dev/null; then
    log "ncu: could not read the hardware counters here (see ncu.log); no comparison"
  elif command -v python3 >/dev/null; then
    python3 bench/ncu_compare.py "$out/ncu.csv" "$out/sim-kernels.csv" kernels \
      >"$out/ncu-compare.txt" 2>&1 || failed+=("ncu-compare")
    cat "$out/ncu-compare.txt"
  else
    log "python3 not found: ncu.csv and sim-kernels.csv are not compared"
  fi
fi

if [ "$dry_run" = 1 ]; then
  echo "the limits add up to $total s (at most $TOTAL_LIMIT s: a device call with timeout_s 600)"
  exit 0
fi
if [ ${#failed[@]} -gt 0 ]; then
  log "FAILED: ${failed[*]}"
  exit 1
fi
log "all steps passed"
