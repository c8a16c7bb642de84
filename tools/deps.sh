#!/bin/sh
# Install what gpud needs to build and test, from Debian 12's packages.
# Safe to run again: installs only what is missing. Needs root or sudo.
set -eu
# The cluster tests: a single-node Slurm (slurmctld slurmd slurm-client
# munge), network namespaces with delay and loss (iproute2 nftables), and
# the Kubernetes manifests' YAML check (python3-yaml).
pkgs="meson ninja-build pkg-config gcc python3 libuv1-dev libsqlite3-dev zlib1g-dev
      libjansson-dev libsodium-dev libcmocka-dev clang libclang-rt-14-dev systemd
      python3-nacl slurmctld slurmd slurm-client munge iproute2 nftables python3-yaml
      libmicrohttpd-dev prometheus chromium"
# The man pages' check (groff).
pkgs="$pkgs groff-base"
# The Othello evaluation's training script (tools/othello_train.py).
pkgs="$pkgs python3-numpy"
# The digests' tests change a stored answer as an operator could (sqlite3).
pkgs="$pkgs sqlite3"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "deps: installing$missing"
if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get install -y -qq $missing >/dev/null 2>&1 || {
	$sudo apt-get update -qq
	$sudo apt-get install -y -qq $missing
}
