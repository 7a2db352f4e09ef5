#!/bin/bash
# The csumref8 images again, for the filemem check: csumref8-mkimgs.sh with
# its image folder and falloc-loop binary moved
exec env DIR=/tmp/filemem-imgs FL=/tmp/filemem-bench/falloc-loop \
	"$(dirname "$0")/csumref8-mkimgs.sh" "$@"
