#!/bin/sh
# Two builds side by side on one GPU machine, in one call: the kernel
# benchmarks and the end-to-end runs through gpud, A then B then A then B,
# so that machine-to-machine differences cancel. Each build travels as a
# small tree of binaries (the GPU machine need not compile anything).
#
#   here:   sh tools/bench/device_compare.sh pack BUILD DEST    # BUILD: a -Dcuda=enabled build
#           (run from the source tree the build belongs to; copies its
#            binaries and its tools/*.sh into DEST)
#   there:  sh tools/bench/device_compare.sh run A B [SECTION...]  (carry .debs, A, B)
#           SECTION: gputest graveler officers othello sudoku sudoku_gpud
#           (default all; sudoku is the 4x3 kernel, a minute of setup each;
#           sudoku_gpud a 3x3 job through gpud on a cpu:16 worker);
#           GPU_TESTS names the GPU tests gputest runs (B's; default all four);
#           A_OTHELLO_ARGS adds bench_othello arguments for A (a build from
#           before issue 19 times every kernel variant unless given -v 36)
# Logs go to $OUT: one file per section and build, and compare.txt with
# the lines that carry the figures.
set -u
mode=${1:-}
case "$mode" in
pack)
	build=$2 dest=$3
	mkdir -p "$dest/daemon" "$dest/worker" "$dest/tools/bench" "$dest/tests/gpu"
	cp "$build/daemon/gpud" "$dest/daemon/"
	cp "$build/worker/gpuworker" "$dest/worker/"
	cp "$build/tools/gpuctl" "$dest/tools/"
	for t in bench_graveler bench_officers bench_othello bench_sudoku; do
		cp "$build/tools/bench/$t" "$dest/tools/bench/"
	done
	cp "$build"/tests/gpu/test_*_gpu "$dest/tests/gpu/"
	cp tools/bench/bench_gpud.sh tools/bench/bench_officers_gpud.sh tools/bench/bench_othello_gpud.sh \
		tools/bench/bench_job_gpud.sh tools/bench/gpud_one.sh "$dest/tools/bench/"
	strip "$dest"/daemon/* "$dest"/worker/* "$dest"/tools/gpuctl "$dest"/tools/bench/bench_[a-z]*[!h] "$dest"/tests/gpu/*
	git log --oneline -1 > "$dest/commit.txt"
	ln -sfn . "$dest/build-gpu"
	du -sh "$dest"
	exit 0
	;;
run) ;;
*)
	echo "usage: device_compare.sh pack BUILD DEST | run A B [SECTION...]" >&2
	exit 2
	;;
esac
a=$(cd "$2" && pwd) b=$(cd "$3" && pwd)
shift 3
sections="$*"
out=${OUT:-/tmp/out}
mkdir -p "$out"
for f in .debs/*.deb; do dpkg -x "$f" /; done
ldconfig
{ nvidia-smi -L; nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv; nproc
  echo "A: $(cat "$a/commit.txt")"; echo "B: $(cat "$b/commit.txt")"; } > "$out/device.txt" 2>&1
cat "$out/device.txt"
want() { [ -z "$sections" ] || case " $sections " in *" $1 "*) true;; *) false;; esac; }
# t SECTION TREE TIMEOUT CMD...: run CMD inside TREE, log to $out/SECTION-X.txt
t() {
	s=$1 tree=$2 lim=$3
	shift 3
	tag=$( [ "$tree" = "$a" ] && echo A || echo B )
	echo "== $tag: $*" >> "$out/$s-$tag.txt"
	(cd "$tree" && BUILD=. timeout "$lim" "$@") >> "$out/$s-$tag.txt" 2>&1
	echo "rc=$?" >> "$out/$s-$tag.txt"
}
both() { s=$1; shift; for tree in "$a" "$b" "$a" "$b"; do t "$s" "$tree" "$@"; done; }
if want gputest; then
	for g in ${GPU_TESTS:-graveler officers othello sudoku}; do
		t gputest "$b" 400 tests/gpu/test_${g}_gpu
	done
fi
if want graveler; then
	both graveler 120 tools/bench/bench_graveler -r 15 -c 0
	both graveler 200 sh tools/bench/bench_gpud.sh 2e12 cuda:0
fi
if want officers; then
	both officers 120 tools/bench/bench_officers -n 268435456 -s 2097152 -c 0
	both officers 200 sh tools/bench/bench_officers_gpud.sh 1000000000 67108864
fi
if want othello; then
	for tree in "$a" "$b" "$a" "$b"; do
		extra=$( [ "$tree" = "$a" ] && echo "${A_OTHELLO_ARGS:-}" )
		t othello "$tree" 120 tools/bench/bench_othello -r 5 -c 0 $extra
	done
	both othello 100 sh tools/bench/bench_othello_gpud.sh
fi
if want sudoku; then
	# its setup takes a minute: once each
	t sudoku "$a" 300 tools/bench/bench_sudoku -r 2 -c 0
	t sudoku "$b" 300 tools/bench/bench_sudoku -r 2 -c 0
fi
if want sudoku_gpud; then
	both sudoku_gpud 60 sh tools/bench/bench_job_gpud.sh cpu:16 sudoku --box 3x3
fi
grep -HE "^== |rc=|kernel|end to end|e2e|M values/s|positions/s|battles/s|gangster|median|PASS|FAIL|passed|failed" \
	"$out"/*-[AB].txt > "$out/compare.txt"
cat "$out/compare.txt" | cut -c1-220 | tail -120
