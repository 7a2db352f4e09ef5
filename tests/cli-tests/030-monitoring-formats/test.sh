#!/bin/bash
# The monitoring outputs of "inspect" and the CI gates. --format nagios:
# one line "BTRFS-SPACE STATUS - text | perfdata" parsed by the Nagios
# plugin rules (label=value[UOM];warn;crit;min;max), the status and the
# exit code (0/1/2/3 = OK/WARNING/CRITICAL/UNKNOWN) those of the JSON
# level, each headroom equal to the JSON's. --format openmetrics: every
# sample equal to the JSON figure it names, "# EOF" last, and accepted by
# promtool check metrics (Debian's prometheus; without it that part
# skips, after the rest has run). --fail-on exits 3 at or over its level
# and records the gate in the JSON; forecast --fail-below records its own.

source "$TEST_TOP/common" || exit
check_prereq btrfs-space
check_prereq jq xz tar python3

here=$(pwd)
declare -A devs
for name in ns16k-1g full-data raid1-2dev; do
	devs[$name]=$(fixture_images "$name" "$TEST_TMP/$name" | tr '\n' ' ')
done

# nagios_check NAME WANT-EXIT: the plugin line against the JSON
nagios_check()
{
	local name=$1 want=$2 rc
	# shellcheck disable=SC2086
	"$BTRFS_SPACE" inspect --format nagios ${devs[$name]} > "$TEST_TMP/$name.nagios"
	rc=$?
	[ "$rc" = "$want" ] || fail "$name: --format nagios exits $rc, not $want"
	# shellcheck disable=SC2086
	run_check_stdout "$BTRFS_SPACE" inspect --format json ${devs[$name]} > "$TEST_TMP/$name.json" || exit
	python3 "$here/parse-nagios.py" "$TEST_TMP/$name.nagios" "$TEST_TMP/$name.json" "$rc" ||
		fail "$name: the Nagios line does not follow the plugin rules or the JSON"
}
nagios_check ns16k-1g 0
nagios_check full-data 2
nagios_check raid1-2dev 0

# a file that is no filesystem: UNKNOWN, exit 3, one line
printf 'not btrfs' > "$TEST_TMP/junk.img"
truncate -s 1M "$TEST_TMP/junk.img"
out=$("$BTRFS_SPACE" inspect --format nagios "$TEST_TMP/junk.img" 2>/dev/null)
rc=$?
[ "$rc" = 3 ] && [[ "$out" == "BTRFS-SPACE UNKNOWN - "* ]] && [ "$(wc -l <<< "$out")" = 1 ] ||
	fail "unreadable filesystem: exit $rc, '$out' (want 3 and one UNKNOWN line)"
echo "nagios: unreadable filesystem is UNKNOWN, exit 3"

# a path with the perfdata separator or a newline in it: the reason stays
# one line of text, with no '|' for Nagios to take as perfdata
bad="$TEST_TMP/a|b
c"
cp "$TEST_TMP/junk.img" "$bad"
out=$("$BTRFS_SPACE" inspect --format nagios "$bad" 2>/dev/null)
rc=$?
[ "$rc" = 3 ] && [[ "$out" == "BTRFS-SPACE UNKNOWN - "* ]] && [ "$(wc -l <<< "$out")" = 1 ] &&
	[[ "$out" != *"|"* ]] ||
	fail "path with '|' and a newline: exit $rc, '$out' (want 3, one line, no '|')"
echo "nagios: '|' and newlines in a path do not leak into the plugin line"

# invalid arguments to the check are UNKNOWN (exit 3), not exit 2, which
# Nagios reads as CRITICAL: a bad option, a bad value, no device
nagios_usage()
{
	local out rc

	out=$("$BTRFS_SPACE" inspect "$@" 2>/dev/null)
	rc=$?
	[ "$rc" = 3 ] && [[ "$out" == "BTRFS-SPACE UNKNOWN - "* ]] && [ "$(wc -l <<< "$out")" = 1 ] ||
		fail "inspect $*: exit $rc, '$out' (want 3 and one UNKNOWN line)"
}
one=${devs[ns16k-1g]%% *}
nagios_usage --format nagios --no-such-option "$one"
nagios_usage --format=nagios --kernel 9.9 "$one"
nagios_usage --format nagios
echo "nagios: invalid arguments are UNKNOWN, exit 3"

# only inspect has them
# shellcheck disable=SC2086
run_mustfail_code 2 "chunks takes no --format nagios" "$BTRFS_SPACE" chunks --format nagios ${devs[ns16k-1g]}

# --fail-on: exit 3 and a failed gate at or over the level, 0 and a pass below
# shellcheck disable=SC2086
"$BTRFS_SPACE" --format json inspect --fail-on tight ${devs[full-data]} > "$TEST_TMP/gate.json" 2>/dev/null
rc=$?
[ "$rc" = 3 ] || fail "full-data --fail-on tight exits $rc, not 3"
[ "$(jq -c '.gates' "$TEST_TMP/gate.json")" = \
  '[{"option":"--fail-on","what":"summary.level below limit","limit":"tight","figure":"critical","result":"fail"}]' ] ||
	fail "full-data --fail-on tight: gates $(jq -c .gates "$TEST_TMP/gate.json")"
# shellcheck disable=SC2086
run_check_stdout "$BTRFS_SPACE" --format json inspect --fail-on critical ${devs[ns16k-1g]} > "$TEST_TMP/gate.json" || exit
[ "$(jq -r '.gates[0].result' "$TEST_TMP/gate.json")" = pass ] || fail "ns16k-1g --fail-on critical: not a pass"
# shellcheck disable=SC2086
run_mustfail_code 2 "--fail-on ok is no limit" "$BTRFS_SPACE" inspect --fail-on ok ${devs[ns16k-1g]}
echo "--fail-on: exit 3 and the gate in the JSON"

# forecast --fail-below: its gates, one per limit, with the figure
# shellcheck disable=SC2086
"$BTRFS_SPACE" --format json forecast --fail-below data=1G,metadata=1M ${devs[ns16k-1g]} \
	> "$TEST_TMP/fc.json" 2>/dev/null
rc=$?
[ "$rc" = 3 ] || fail "forecast --fail-below data=1G exits $rc, not 3"
got=$(jq -c '[.gates[] | [.option, .limit, .figure == (if (.what | startswith("data")) then .figure else .figure end), .result]]' "$TEST_TMP/fc.json")
[ "$got" = '[["--fail-below","1073741824",true,"fail"],["--fail-below","1048576",true,"pass"]]' ] ||
	fail "forecast gates: $got"
[ "$(jq -r '.gates[0].figure' "$TEST_TMP/fc.json")" = "$(jq -r '.forecast.data_fill.writable_bytes' "$TEST_TMP/fc.json")" ] ||
	fail "forecast gate: the data figure is not data_fill.writable_bytes"
echo "forecast --fail-below: the gates in the JSON"

# openmetrics: the samples are the JSON's figures
for name in ns16k-1g full-data raid1-2dev; do
	# shellcheck disable=SC2086
	run_check_stdout "$BTRFS_SPACE" inspect --format openmetrics ${devs[$name]} > "$TEST_TMP/$name.prom" || exit
	python3 "$here/check-metrics.py" "$TEST_TMP/$name.prom" "$TEST_TMP/$name.json" ||
		fail "$name: the OpenMetrics samples differ from the JSON"
done
if ! command -v promtool > /dev/null 2>&1; then
	skip "promtool not found: the OpenMetrics output was not checked by it (apt-get install prometheus, or tests/install-deps.sh)"
fi
for name in ns16k-1g full-data raid1-2dev; do
	promtool check metrics < "$TEST_TMP/$name.prom" ||
		fail "$name: promtool check metrics rejects the output"
done
echo "openmetrics: promtool check metrics accepts all three"
