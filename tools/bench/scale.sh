#!/bin/sh
# scale.sh - one job on 1..N CPU workers, own and shared credentials, and
# GPU + CPU together (tools/bench/scale.py; its --help lists the options).
#   tools/bench/scale.sh [--quick] [--n 1,2,4,8,16] [--gpu-mix 0,4,15] [--two-gpus] ...
# BUILD: the build directory (default build).
cd "$(dirname "$0")/../.." || exit 2
exec python3 tools/bench/scale.py --build "${BUILD:-build}" "$@"
