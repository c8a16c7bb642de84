#!/bin/sh
# Run one libFuzzer target over its seed corpus (tests/fuzz/corpus/NAME; new
# inputs go to a scratch copy, not the tree) for a fixed number of runs from
# a fixed seed, so a test run is repeatable. A crash leaves its input as
# crash-* in the build directory: add it to the corpus once fixed. (libFuzzer
# exits 77 on a crash by default, which meson would count as a skip.)
# Usage: run_fuzz.sh BINARY CORPUS_DIR RUNS [SEED]
set -eu
bin=$1 corpus=$2 runs=${3:-200000} seed=${4:-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$corpus"/. "$work"/ 2>/dev/null || true
"$bin" -seed="$seed" -runs="$runs" -max_len=65536 -rss_limit_mb=2048 \
	-timeout=120 -error_exitcode=1 -timeout_exitcode=1 -print_final_stats=1 "$work"
