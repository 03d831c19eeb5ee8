#!/usr/bin/env bash
# The one GPU check of libakx, for a lent H200 (no package registry there, 15 minutes of device
# time in all, the machine's start included): build for sm_90 in a fresh folder, run the tests
# on the CUDA backend, run akx-bench on CUDA (and once on the sim, to set the model beside the
# measurement). bench/RESULTS.md says where the figures go.
#
#   bench/gpu_check.sh --collect DEBS_DIR  here, on Debian 12: gather into DEBS_DIR the .deb
#                                          files of Criterion and Boost.Context (and the
#                                          libraries they load), which the GPU machine may lack
#   bench/gpu_check.sh [DEBS_DIR]          on the GPU machine, from the repository root
#
# On the GPU machine, when criterion.h or Boost.Context is missing, the .deb files of DEBS_DIR
# are unpacked (dpkg -x) into a private prefix instead of installed with dpkg -i: they are
# Debian 12's, the machine's image is not Debian 12, so dpkg -i would stop on dependencies, and
# unpacking into / can break the image. CMake finds them through CMAKE_PREFIX_PATH and
# CMAKE_INCLUDE_PATH / CMAKE_LIBRARY_PATH (not pkg-config: criterion.pc names /usr); the tests
# load their libraries through LD_LIBRARY_PATH.
#
# Output: $OUT when set (the device tool's folder), else gpu-check-out/: summary.txt, build.log,
# ctest.log, bench.txt, bench.csv (+ bench-csv.log), bench-sim.txt. Exit status: non-zero when
# the build, a test or a bench check failed. Each step has a time limit (seconds, overridable
# from the environment): 480 s at worst in all (call the device tool with timeout_s=540); a
# build and run that goes well takes a few minutes, leaving the 15 minutes room for a retry.
set -euo pipefail

: "${AKX_GPU_BUILD_TIMEOUT:=240}"
: "${AKX_GPU_TEST_TIMEOUT:=120}"
: "${AKX_GPU_BENCH_TIMEOUT:=45}"
: "${AKX_GPU_SIM_TIMEOUT:=30}"

DEBS="libcriterion-dev libcriterion3 libnanomsg5 libgit2-1.5 libhttp-parser2.9 libmbedcrypto7
      libmbedtls14 libmbedx509-1 libssh2-1 libgssapi-krb5-2 libkrb5-3 libk5crypto3
      libkrb5support0 libkeyutils1 libcom-err2
      libboost1.74-dev libboost-context1.74-dev libboost-context1.74.0"

if [ "${1:-}" = "--collect" ]; then
  # Debian 12's own archives when apt has them cached, else apt-get download.
  dir=${2:?usage: bench/gpu_check.sh --collect DEBS_DIR}
  mkdir -p "$dir"
  for p in $DEBS; do
    cached=$(ls /var/cache/apt/archives/"${p}"_*_amd64.deb 2>/dev/null | head -n 1 || true)
    if [ -n "$cached" ]; then cp "$cached" "$dir/"; else (cd "$dir" && apt-get download "$p"); fi
  done
  du -sh "$dir"
  exit 0
fi

debs_dir=${1:+$(cd "$1" && pwd)} # absolute: the script moves to the repository root
cd "$(dirname "$0")/.."
out=${OUT:-$PWD/gpu-check-out}
mkdir -p "$out"
build=$PWD/build-gpu
failed=()

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
log "libakx GPU check, $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
{ nvidia-smi -L || true; nvcc --version | tail -n 2 || true; cmake --version | head -n 1 || true; } 2>&1 |
  tee -a "$out/summary.txt"

# ---- dependencies the image may lack ----------------------------------------------------------
cmake_extra=()
if [ ! -e /usr/include/criterion/criterion.h ] || [ ! -e /usr/include/boost/context/fiber.hpp ]; then
  if [ -z "$debs_dir" ] || ! ls "$debs_dir"/*.deb >/dev/null 2>&1; then
    log "Criterion or Boost.Context is missing and no folder of .deb files was given"
    exit 2
  fi
  prefix=/tmp/akx-deps
  rm -rf "$prefix"
  for deb in "$debs_dir"/*.deb; do dpkg -x "$deb" "$prefix"; done
  cmake_extra+=("-DCMAKE_PREFIX_PATH=$prefix/usr" "-DCMAKE_INCLUDE_PATH=$prefix/usr/include"
                "-DCMAKE_LIBRARY_PATH=$prefix/usr/lib/x86_64-linux-gnu")
  export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  log "unpacked $(ls "$debs_dir"/*.deb | wc -l) .deb files into $prefix"
  ldd "$prefix"/usr/lib/x86_64-linux-gnu/libcriterion.so.3 | grep "not found" | tee -a "$out/summary.txt" || true
fi

# ---- build: a fresh folder, sm_90 only -----------------------------------------------------------
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
rm -rf "$build"
step build "$AKX_GPU_BUILD_TIMEOUT" build.log bash -c '
  cmake -S . -B "$0" "${@}" -DCMAKE_BUILD_TYPE=Release -DAKX_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 &&
  cmake --build "$0" -j "$(nproc)"' "$build" "${generator[@]}" "${cmake_extra[@]}"
if [[ " ${failed[*]} " == *" build "* ]]; then
  log "FAILED: build"
  exit 1
fi

# ---- tests on the CUDA backend ---------------------------------------------------------------------
# Criterion runs one worker per core in each test program: with 4 programs at once, 4 each
# (every worker opens its own CUDA context).
step ctest "$AKX_GPU_TEST_TIMEOUT" ctest.log \
  env AKX_BACKEND=cuda CRITERION_JOBS=4 ctest --test-dir "$build" --output-on-failure -j 4 --timeout 100

# ---- akx-bench: CUDA (table, then CSV), and the sim's model of one size ---------------------------
bench=$build/bench/akx-bench
step bench "$AKX_GPU_BENCH_TIMEOUT" bench.txt "$bench" reduce --backend cuda
# The CSV alone in bench.csv; the notes akx-bench prints beside it go to bench-csv.log.
step bench-csv "$AKX_GPU_BENCH_TIMEOUT" bench-csv.log \
  bash -c '"$0" reduce --backend cuda --csv >"$1"' "$bench" "$out/bench.csv"
step bench-sim "$AKX_GPU_SIM_TIMEOUT" bench-sim.txt "$bench" reduce --backend sim --min 6 --max 6
cat "$out/bench.txt"

if [ ${#failed[@]} -gt 0 ]; then
  log "FAILED: ${failed[*]}"
  exit 1
fi
log "all steps passed"
