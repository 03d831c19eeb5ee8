#!/usr/bin/env bash
# The one GPU check of libakx, for a lent H200 with the CUDA toolkit and no package registry,
# in one call of at most 10 minutes. Stages, with the time each is expected to take on the H200
# machine (16 cores) and its limit (the AKX_GPU_*_TIMEOUT below). The expected times are
# estimates (no GPU has run this script yet): the build from the 2-core build times scaled to 16
# cores, the bench from its host-side work (inputs and checks of up to 10^8 elements per case);
# the first run on a GPU should write the measured ones here:
#   build          sm_90 only, a fresh folder, -j16                    ~150-180 s   limit 240 s
#   sim-vs-gpu     test_sim_matches_gpu: the same calls on the GPU and on a sim context of its
#                  profile, compared byte for byte                     ~5-15 s      limit 40 s
#   ctest          every other test on the CUDA backend, 4 at a time   ~60-90 s     limit 120 s
#                  (libakx_dist over NCCL on one rank, test_dist_nccl, where the toolkit has NCCL)
#   bench          akx-bench --backend cuda: the complete tables (the default on CUDA), akx
#                  beside CUB and a device copy; table, CSV, JSON      ~30-50 s     limit 90 s
#   no-pdl         akx-bench reduce scan --quick with AKX_PDL=0: plain launches, beside the
#                  bench's programmatic dependent ones (docs/one_launch.md) ~5-10 s   limit 30 s
#   sim-kernels    akx-bench --quick on the sim, counters per kernel   ~5 s         limit 15 s
#   ncu            the --quick cases under Nsight Compute, beside the sim's counters
#                  (bench/ncu_compare.py), where ncu reads counters   ~20-30 s     limit 45 s
# Expected in all about 5-6 minutes; the limits add up to 580 s, so a device call with
# timeout_s 600 always returns the summary. A stage past its limit is killed and recorded as
# failed, and the next one runs.
#
#   bench/gpu_check.sh OUT_DIR [DEBS_DIR]   on the GPU machine, from anywhere in the checkout
#   bench/gpu_check.sh --collect DEBS_DIR   here, on Debian 12: gathers the .deb files of
#                                           Criterion and Boost.Context (and what they load)
#
# OUT_DIR receives summary.txt, build.log, sim-vs-gpu.log, ctest.log, bench.txt, bench.csv,
# bench.json (JSON Lines), bench-no-pdl.csv, bench.png (where gnuplot is installed), ncu.csv + ncu-compare.txt (or
# a line saying why not), sim-kernels.csv.
# DEBS_DIR (default: .debs, then bench/debs, in the checkout): the machine's image has CMake,
# ninja and the toolkit but maybe neither Criterion nor Boost.Context. Their .deb files are
# unpacked (dpkg -x) into a private prefix, never installed into / (the image is not Debian
# 12; dpkg -i would stop on dependencies, and unpacking into / can break it). The .deb files
# travel with the checkout: collect them here into .debs (listed in .git/info/exclude) and
# name .debs in the device call's carry. Without Boost.Context nothing builds (exit 2);
# without Criterion the tests are skipped, and the summary says so.
#
# Exit status: 0 when every step that ran passed; 1 when the build, a test or a bench check
# failed; 2 when a dependency is missing.
set -euo pipefail

: "${AKX_GPU_BUILD_TIMEOUT:=240}"  # sm_90 only, -j16: about 2-3 minutes on the H200 machine
: "${AKX_GPU_MATCH_TIMEOUT:=40}"
: "${AKX_GPU_TEST_TIMEOUT:=120}"
: "${AKX_GPU_BENCH_TIMEOUT:=90}"
: "${AKX_GPU_NCU_TIMEOUT:=45}"
: "${AKX_GPU_SIM_TIMEOUT:=15}"
: "${AKX_GPU_NO_PDL_TIMEOUT:=30}"
# 240 + 40 + 120 + 90 + 15 + 45 = 550 s at worst: call the device tool with timeout_s 600.

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

out_arg=${1:?usage: bench/gpu_check.sh OUT_DIR [DEBS_DIR]  (or --collect DEBS_DIR)}
mkdir -p "$out_arg"
out=$(cd "$out_arg" && pwd)
debs_dir=${2:+$(cd "$2" && pwd)}
cd "$(dirname "$0")/.."
root=$PWD
if [ -z "$debs_dir" ]; then
  for d in .debs bench/debs; do
    if [ -d "$d" ]; then debs_dir=$root/$d && break; fi
  done
fi
build=$root/build-gpu
failed=()
export PATH="$PATH:/usr/local/cuda/bin"

log() { echo "== $*" | tee -a "$out/summary.txt"; }

# Runs a step under its time limit, its output into a log; records a failure and carries on.
step() {
  local name=$1 limit=$2 logfile=$3
  shift 3
  local start=$SECONDS rc=0
  timeout --kill-after=10 "$limit" "$@" >"$out/$logfile" 2>&1 || rc=$?
  log "$name: exit $rc after $((SECONDS - start)) s (limit $limit s), log $logfile"
  if [ "$rc" -ne 0 ]; then
    failed+=("$name")
    tail -n 30 "$out/$logfile"
  fi
  return 0
}

: >"$out/summary.txt"
log "libakx GPU check, $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
{ nvidia-smi -L || true; nvcc --version | tail -n 2 || true; cmake --version | head -n 1 || true; } 2>&1 |
  tee -a "$out/summary.txt"

# ---- dependencies the image may lack ----------------------------------------------------------
cmake_extra=()
have_criterion=1
[ -e /usr/include/criterion/criterion.h ] || have_criterion=0
have_boost=1
[ -e /usr/include/boost/context/fiber.hpp ] || have_boost=0
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
  log "Criterion is missing and no .deb files provide it: the tests are SKIPPED (build and bench only)"
fi

# ---- build: a fresh folder, sm_90 only -------------------------------------------------------
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
rm -rf "$build"
# shellcheck disable=SC2016 # $0 and $@ belong to the inner shell
step build "$AKX_GPU_BUILD_TIMEOUT" build.log bash -c '
  cmake -S . -B "$0" "${@}" -DCMAKE_BUILD_TYPE=Release -DAKX_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90-real &&
  cmake --build "$0" -j 16' "$build" "${generator[@]}" "${cmake_extra[@]}" "-DAKX_TESTS=$tests"
if [[ " ${failed[*]} " == *" build "* ]]; then
  log "FAILED: build"
  exit 1
fi

# ---- the GPU against the sim, bit for bit -------------------------------------------------------
# test_sim_matches_gpu runs the same calls on the GPU and on a sim context of its profile and
# compares the results byte for byte (the README's bit-for-bit claim). Its own stage, first, so
# that its verdict is there even if the rest of the suite runs out of time. It skips (and passes)
# when no sim profile stands for the GPU: that is reported, not taken for a match.
if [ "$tests" = ON ]; then
  step sim-vs-gpu "$AKX_GPU_MATCH_TIMEOUT" sim-vs-gpu.log \
    env AKX_BACKEND=cuda "$build/tests/test_sim_matches_gpu" --jobs 4 --verbose
  if grep -q "is not the sim profile" "$out/sim-vs-gpu.log"; then
    log "sim-vs-gpu: this GPU has no sim profile, nothing was compared (see sim-vs-gpu.log)"
    failed+=("sim-vs-gpu-skipped")
  fi
fi

# ---- the rest of the test suite on the CUDA backend ---------------------------------------------
# Among them: test_complex_abs holds the GPU's complex ABS to include/akx/hypot.cuh's bits;
# kernel_resources reads the sm_90 build's registers and spills (cuobjdump, from the toolkit).
# Not test_sim_matches_gpu (the stage above) nor test_bench_cli (akx-bench's command line on the
# sim, CI's; the bench stage below runs it on the GPU).
# Criterion runs one worker per core in each test program: 4 programs at once, 4 workers each
# (every worker opens its own CUDA context).
if [ "$tests" = ON ]; then
  step ctest "$AKX_GPU_TEST_TIMEOUT" ctest.log \
    env AKX_BACKEND=cuda CRITERION_JOBS=4 ctest --test-dir "$build" --output-on-failure -j 4 \
    --timeout 100 -E '^(test_sim_matches_gpu|test_bench_cli)$'
fi

# ---- akx-bench on CUDA: the table, the CSV, the JSON Lines (and the plot) of one run -----------
# The default command: on CUDA it runs the complete tables, every case beside CUB and a copy.
bench=$build/bench/akx-bench
plot=()
command -v gnuplot >/dev/null && plot=(--plot "$out/bench.png")
step bench "$AKX_GPU_BENCH_TIMEOUT" bench.txt \
  "$bench" --backend cuda --csv "$out/bench.csv" --json "$out/bench.json" ${plot[@]+"${plot[@]}"}
cat "$out/bench.txt"
# What programmatic dependent launch buys: the small cases again with plain launches.
step no-pdl "$AKX_GPU_NO_PDL_TIMEOUT" bench-no-pdl.txt \
  env AKX_PDL=0 "$bench" reduce scan --quick --backend cuda --csv "$out/bench-no-pdl.csv"

# ---- Nsight Compute beside the sim ------------------------------------------------------------
# The same cases on both: `all --quick`, each akx call once on CUDA (--once) under ncu, and on
# the sim with its counters per kernel. ncu_compare.py pairs the launches case by case.
step sim-kernels "$AKX_GPU_SIM_TIMEOUT" sim-kernels.log \
  "$bench" all --quick --backend sim --kernels-csv "$out/sim-kernels.csv"
ncu=$(command -v ncu || true)
if [ -z "$ncu" ]; then
  log "ncu: not found (Nsight Compute): no hardware counters beside the sim's"
else
  metrics=launch__registers_per_thread,launch__grid_size,launch__block_size,gpu__time_duration.sum
  metrics+=,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
  metrics+=,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum
  metrics+=,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
  metrics+=,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
  step ncu "$AKX_GPU_NCU_TIMEOUT" ncu.log \
    "$ncu" --csv --page raw --log-file "$out/ncu.csv" --kernel-name-base function \
    --kernel-name "regex:^(scan_|findall_|reduce_)" --metrics "$metrics" \
    "$bench" all --quick --once --backend cuda
  if grep -q -i "error\|not permitted\|LibraryNotLoaded" "$out/ncu.log" "$out/ncu.csv" 2>/dev/null &&
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

if [ ${#failed[@]} -gt 0 ]; then
  log "FAILED: ${failed[*]}"
  exit 1
fi
log "all steps passed"
