#!/bin/sh
# Install dependencies, build, and run every test: unit and system tests in a
# normal build, then the unit and system tests again under AddressSanitizer
# and UndefinedBehaviorSanitizer, the Othello solver's thread tests under
# ThreadSanitizer, then the fuzz targets. GPU tests skip
# (exit 77) without a GPU.
# This is what CI runs (.ci/run).
set -eu
cd "$(dirname "$0")/.."
sh tools/deps.sh
jobs=$(nproc 2>/dev/null || echo 2)

[ -d build ] || meson setup build -Dcuda=auto
ninja -C build
meson test -C build --print-errorlogs --num-processes "$jobs" --suite unit --suite gpu
meson test -C build --print-errorlogs --suite system

[ -d build-asan ] || meson setup build-asan -Dcuda=disabled -Db_sanitize=address,undefined -Db_lundef=false
ninja -C build-asan
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	meson test -C build-asan --print-errorlogs --num-processes "$jobs" --suite unit
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	meson test -C build-asan --print-errorlogs --suite system
# ThreadSanitizer on the one search that many threads share (the deep
# Othello solver's forks): its two unit tests only. Every word of the
# transposition table is read and written atomically, so TSan sees its
# accesses; what it cannot model are the fences of the table's sequence
# lock (-Wtsan says so at each), which tests against minimax check instead.
[ -d build-tsan ] || meson setup build-tsan -Dcuda=disabled -Db_sanitize=thread -Db_lundef=false -Dc_args=-Wno-tsan
ninja -C build-tsan tests/unit/test_othello_deep tests/unit/test_othello_window
TSAN_OPTIONS=halt_on_error=1 meson test -C build-tsan --no-rebuild --print-errorlogs othello_deep othello_window
# libFuzzer targets (frame decoder, blob reader, parameter and input parsers)
# for a fixed number of inputs from a fixed seed.
[ -d build-fuzz ] || CC=clang meson setup build-fuzz -Dfuzz=true -Dcuda=disabled \
	-Db_sanitize=address,undefined -Db_lundef=false -Dtests=true
ninja -C build-fuzz
meson test -C build-fuzz --print-errorlogs --suite fuzz
echo "all tests passed"
