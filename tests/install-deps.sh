#!/bin/bash
# Install the Debian packages needed to build and test btrfs-space, when
# missing. Idempotent: with everything present it changes nothing (and does
# not run apt-get at all). As non-root it only says what is missing.
#
# OPTIONAL packages let more of a test run (chromium renders the SVG map of
# image test 030-map-svg, which otherwise skips that part) or the benchmark
# (libfuse3-dev and fuse3 build and mount bench/delayfs, the +8 ms rows of
# bench/run.sh): they are installed after the others, and their failure is
# only a warning. prometheus gives promtool (cli test 030-monitoring-formats),
# linux-perf perf (kernel test 065-replay-perf).
# INSTALL_OPTIONAL=no leaves them out (a quicker CI, ~120 MB less).
# liburing-dev: configure then reads through io_uring (threads without it).

set -u

PACKAGES="
	build-essential autoconf automake pkg-config
	libblkid-dev uuid-dev libisal-dev libxxhash-dev libgcrypt20-dev zlib1g-dev
	btrfs-progs xz-utils jq python3 util-linux e2fsprogs attr strace python3-docutils
	liblzma-dev libzstd-dev zstd libxml2-utils clang libclang-rt-14-dev liburing-dev
"
OPTIONAL="chromium libfuse3-dev fuse3 trace-cmd prometheus linux-perf"
[ "${INSTALL_OPTIONAL:-yes}" != no ] || OPTIONAL=

# missing_of PKG...: those not installed
missing_of()
{
	local pkg status out=
	for pkg in "$@"; do
		status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null)
		case "$status" in
		*"install ok installed"*) ;;
		*) out="$out $pkg" ;;
		esac
	done
	echo "$out"
}

# shellcheck disable=SC2086
missing=$(missing_of $PACKAGES)
# shellcheck disable=SC2086
optional=$(missing_of $OPTIONAL)

# install_optional: try the optional packages; a failure is only a warning
install_optional()
{
	[ -n "$optional" ] || return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "install-deps: optional, not installed:$optional (apt-get install -y$optional)" >&2
		return 0
	fi
	[ -n "$updated" ] || apt-get update || { echo "install-deps: WARNING: apt-get update failed, optional packages left out:$optional" >&2; return 0; }
	# shellcheck disable=SC2086
	if apt-get install -y --no-install-recommends $optional; then
		echo "install-deps: installed (optional):$optional"
	else
		echo "install-deps: WARNING: optional packages not installed:$optional (their tests skip)" >&2
	fi
}

export DEBIAN_FRONTEND=noninteractive
updated=
if [ -z "$missing" ]; then
	echo "install-deps: all build and test dependencies are installed"
	install_optional
	exit 0
fi

echo "install-deps: missing:$missing"
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: not root; install them with:" >&2
	echo "    apt-get install -y$missing" >&2
	exit 1
fi

apt-get update || exit 1
updated=1
# shellcheck disable=SC2086
apt-get install -y --no-install-recommends $missing || exit 1
echo "install-deps: installed:$missing"
install_optional
