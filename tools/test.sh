#!/bin/sh
# Install dependencies (tools/deps.sh --test), build, and run every test:
# unit and system tests in a normal build, then the unit and system tests
# again under AddressSanitizer and UndefinedBehaviorSanitizer, the Othello
# solver's thread tests under ThreadSanitizer, then the fuzz targets. GPU
# tests skip (exit 77) without a GPU.
# This is what CI runs (.ci/run).
#
# Every stage runs, whatever the ones before it did: a failure is
# remembered, and the end lists them all and exits 1 (0 when none failed).
# Time limits are meson's multiplied by TEST_TIMEOUT_SCALE (an integer,
# default 1), and in the sanitizer builds by SANITIZER_TIMEOUT_SCALE more
# (default 4: their tests run several times slower, more so on a busy
# 2-core machine, where ASan's test_officers took 92 s alone).
set -u
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
scale=${TEST_TIMEOUT_SCALE:-1}
san=$((scale * ${SANITIZER_TIMEOUT_SCALE:-4}))
failed=""

# stage NAME COMMAND...: run it; remember NAME when it fails.
stage() {
	name=$1
	shift
	echo "== $name"
	"$@"
	rc=$?
	if [ "$rc" -ne 0 ]; then
		failed="$failed
  $name (exit $rc)"
		echo "== $name: FAILED (exit $rc)"
	fi
}

# The normal build; tools/demo.sh may have made it without the tests.
setup_build() {
	if [ -d build ]; then
		meson configure build -Dtests=true
	else
		meson setup build -Dcuda=auto
	fi
}

setup_asan() {
	[ -d build-asan ] || meson setup build-asan -Dcuda=disabled \
		-Db_sanitize=address,undefined -Db_lundef=false
}

# ThreadSanitizer on the one search that many threads share (the deep
# Othello solver's forks): its three unit tests only. Every word of the
# transposition table is read and written atomically, so TSan sees its
# accesses; what it cannot model are the fences of the table's sequence
# lock (-Wtsan says so at each), which tests against minimax check instead.
setup_tsan() {
	[ -d build-tsan ] || meson setup build-tsan -Dcuda=disabled \
		-Db_sanitize=thread -Db_lundef=false -Dc_args=-Wno-tsan
}

# libFuzzer targets (frame decoder, blob reader, parameter and input
# parsers) for a fixed number of inputs from a fixed seed.
setup_fuzz() {
	[ -d build-fuzz ] || (CC=clang && export CC && meson setup build-fuzz \
		-Dfuzz=true -Dcuda=disabled -Db_sanitize=address,undefined \
		-Db_lundef=false -Dtests=true)
}

stage "dependencies" sh tools/deps.sh --test

stage "build: setup" setup_build
stage "build: compile" ninja -C build
stage "build: unit and gpu tests" meson test -C build --print-errorlogs \
	--num-processes "$jobs" --timeout-multiplier "$scale" --suite unit --suite gpu
stage "build: system tests" meson test -C build --print-errorlogs \
	--timeout-multiplier "$scale" --suite system

stage "asan: setup" setup_asan
stage "asan: compile" ninja -C build-asan
stage "asan: unit tests" env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	meson test -C build-asan --print-errorlogs --num-processes "$jobs" \
	--timeout-multiplier "$san" --suite unit
stage "asan: system tests" env ASAN_OPTIONS=detect_leaks=1 \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	meson test -C build-asan --print-errorlogs --timeout-multiplier "$san" --suite system

stage "tsan: setup" setup_tsan
stage "tsan: compile" ninja -C build-tsan tests/unit/test_othello_deep tests/unit/test_othello_window \
	tests/unit/test_othello_par
stage "tsan: othello threads" env TSAN_OPTIONS=halt_on_error=1 \
	meson test -C build-tsan --no-rebuild --print-errorlogs --timeout-multiplier "$san" \
	othello_deep othello_window othello_par

stage "fuzz: setup" setup_fuzz
stage "fuzz: compile" ninja -C build-fuzz
stage "fuzz: targets" meson test -C build-fuzz --print-errorlogs --timeout-multiplier "$san" \
	--suite fuzz

if [ -n "$failed" ]; then
	echo "tools/test.sh: these stages failed (each one's log is above):$failed"
	exit 1
fi
echo "all tests passed"
