#!/bin/sh
# Generate ./configure and include/config.h.in from configure.ac.
# Usage: ./autogen.sh && ./configure && make
set -e

cd "$(dirname "$0")"

for tool in aclocal autoconf autoheader pkg-config; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "autogen.sh: '$tool' not found; install autoconf, automake and pkg-config" >&2
		echo "            (or run tests/install-deps.sh)" >&2
		exit 1
	fi
done

mkdir -p include
echo "   aclocal:    $(aclocal --version | head -n 1)"
aclocal
echo "   autoconf:   $(autoconf --version | head -n 1)"
autoconf
echo "   autoheader: $(autoheader --version | head -n 1)"
autoheader
# autoheader keeps an unchanged file's old time; make compares it with configure.ac
touch include/config.h.in

echo
echo "Now type './configure' and 'make' to compile."
