#!/bin/bash
# Install the Debian packages needed to build and test btrfs-space, when
# missing. Idempotent: with everything present it changes nothing (and does
# not run apt-get at all). As non-root it only says what is missing.

set -u

PACKAGES="
	build-essential autoconf automake pkg-config
	libblkid-dev uuid-dev libisal-dev libxxhash-dev libgcrypt20-dev zlib1g-dev
	btrfs-progs xz-utils jq python3 util-linux e2fsprogs attr strace python3-docutils
	liblzma-dev libzstd-dev zstd libxml2-utils clang libclang-rt-14-dev
"

missing=
for pkg in $PACKAGES; do
	status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null)
	case "$status" in
	*"install ok installed"*) ;;
	*) missing="$missing $pkg" ;;
	esac
done

if [ -z "$missing" ]; then
	echo "install-deps: all build and test dependencies are installed"
	exit 0
fi

echo "install-deps: missing:$missing"
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: not root; install them with:" >&2
	echo "    apt-get install -y$missing" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update || exit 1
# shellcheck disable=SC2086
apt-get install -y --no-install-recommends $missing || exit 1
echo "install-deps: installed:$missing"
