#!/bin/sh
# install_conf.sh DIR FILE... - meson install: put each FILE into DIR
# (under $DESTDIR) unless a file of that name is there already.
set -eu
dir="${DESTDIR:-}$1"
shift
mkdir -p "$dir"
for f in "$@"; do
	dest="$dir/$(basename "$f")"
	if [ -e "$dest" ]; then
		echo "keeping $dest (the new defaults are in the examples)"
	else
		install -m 0644 "$f" "$dest"
		echo "installed $dest"
	fi
done
