#!/usr/bin/env bash
# The short fuzz run (CI's, and the fuzz-short target's): akx_fuzz for 60 s from a copy of the
# seed corpus, so that nothing is written into the checkout.
#   fuzz_short.sh AKX_FUZZ CORPUS_DIR [ARTIFACT_DIR] [extra libFuzzer flags...]
# Exit status: libFuzzer's (non-zero when it found a crash, a leak, a timeout or an OOM; the
# input is saved under ARTIFACT_DIR, default a temporary directory).
set -euo pipefail
fuzz=$1 corpus=$2 artifacts=${3:-}
shift $(( $# < 3 ? $# : 3 ))
work=$(mktemp -d "${TMPDIR:-/tmp}/akx-fuzz.XXXXXX")
trap 'rm -rf "$work/corpus"' EXIT
mkdir -p "$work/corpus"
cp -R "$corpus"/. "$work/corpus/"
[ -n "$artifacts" ] || artifacts=$work/artifacts
mkdir -p "$artifacts"
# detect_stack_use_after_return=0: the sim's fibers (thousands per launch, each on a pooled
# stack) would each get a fake stack of ~1 MiB, and the last switch away from a returned or
# abandoned fiber cannot free it (src/sim/fiber.hpp). Leaks are checked (detect_leaks=1).
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1:detect_stack_use_after_return=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
echo "akx_fuzz: corpus copy in $work/corpus, crashing inputs go to $artifacts/"
"$fuzz" "$work/corpus" -max_total_time=60 -seed=1 -timeout=10 -rss_limit_mb=4096 \
  -print_final_stats=1 -artifact_prefix="$artifacts/" "$@"
