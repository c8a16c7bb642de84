#!/bin/sh
# Install what is missing from Debian 12's packages:
#   tools/deps.sh            what building and running gpud needs (the demo)
#   tools/deps.sh --test     that, and what the tests need (tools/test.sh, CI)
#   tools/deps.sh --list [--test]   print those packages, install nothing
# Safe to run again: installs only what is missing. Needs root or sudo.
set -eu
test=0
list=0
for a in "$@"; do
	case $a in
	--test) test=1 ;;
	--list) list=1 ;;
	*) echo "usage: tools/deps.sh [--test] [--list]" >&2; exit 2 ;;
	esac
done
# Building and running gpud, gpuworker and gpuctl: the build (meson needs
# python3, which also embeds the SQL schema) and the libraries they link.
pkgs="meson ninja-build pkg-config gcc python3 libuv1-dev libsqlite3-dev zlib1g-dev
      libjansson-dev libsodium-dev libmicrohttpd-dev"
# TLS 1.3 on every TCP port (common/chan.c): GnuTLS, the field's standard,
# already linked through libmicrohttpd.
pkgs="$pkgs libgnutls28-dev"
if [ "$test" = 1 ]; then
	# The unit tests (cmocka), the sanitizer and fuzz builds (clang), the
	# units' checks (systemd-analyze), the system tests'
	# TLS client, which makes certificates for credential keys
	# (python3-cryptography), and test_tls's openssl s_client.
	pkgs="$pkgs libcmocka-dev clang libclang-rt-14-dev systemd python3-cryptography openssl"
	# The cluster tests: a single-node Slurm (slurmctld slurmd
	# slurm-client munge), network namespaces with delay and loss
	# (iproute2 nftables), and the Kubernetes manifests' YAML check
	# (python3-yaml).
	pkgs="$pkgs slurmctld slurmd slurm-client munge iproute2 nftables python3-yaml"
	# test_http: promtool on /metrics, the page in headless Chromium.
	pkgs="$pkgs prometheus chromium"
	# The man pages' check (groff).
	pkgs="$pkgs groff-base"
	# The Othello evaluation's training script (tools/othello_train.py)
	# and its system test.
	pkgs="$pkgs python3-numpy"
	# The digests' tests change a stored answer as an operator could.
	pkgs="$pkgs sqlite3"
fi
if [ "$list" = 1 ]; then
	for p in $pkgs; do echo "$p"; done
	exit 0
fi
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
