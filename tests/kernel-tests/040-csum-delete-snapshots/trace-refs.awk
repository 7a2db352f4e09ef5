# Replays a tracefs trace of one file deletion with the kernel's rules for
# delayed_refs_rsv.size (fs/btrfs/delayed-ref.c, 6.7-6.18) and prints what
# the deletion did, one "key value" per line.
#
# Input: the trace of a private instance with the btrfs events
# add_delayed_ref_head, add_delayed_data_ref, add_delayed_tree_ref,
# run_delayed_ref_head, update_bytes_may_use and btrfs_cow_block, and the
# markers MARK_RM (before rm) and MARK_SYNC (after rm, before the commit).
# Variables: FSID (events of other filesystems are skipped), ROOTS (the
# subvolume ids whose refs count), REF (delayed_ref_bytes(1)), CSUM (the
# csum deletion charge of one leaf), CPL (checksums per leaf), SS (sector
# size).
#
# Rules replayed, per ref event of a counted root (the event fires after
# add_delayed_ref() has done its accounting, with the ref as queued):
#   head: first ref of a bytenr creates it with ref_mod +-1; a data head
#     whose total_ref_mod goes below 0 is charged CSUM per csum leaf of its
#     num_bytes, and released again when it comes back to >= 0;
#   node: (bytenr, type, root or parent, owner, offset, seq) inserted adds
#     REF; a later equal ref adds its mod, and a node merged down to 0 is
#     released (-REF);
#   run_delayed_ref_head removes the head and its nodes from the state: the
#     rise is what was queued before running, so runs do not lower it.
# Output:
#   data_total    data refs' rise: REF per data node alive + csum charges
#   tree_refs     tree-block refs' rise (REF per tree node alive)
#   peak          the highest running data + tree rise
#   reserved      METADATA bytes_may_use added between MARK_RM and MARK_SYNC
#   fs_cows       btrfs_cow_block events of the counted roots (whole trace)
#   other_refs    ref events of other roots of this filesystem
#   other_tree_refs  their tree-block refs' rise (runs not undone; a ref
#                 after its head ran is a new node, not a merge): the
#                 extent, csum, free space and root trees' copies that the
#                 commit makes; not part of the tool's figures
#   midway_runs   counted heads run before the end (state dropped)

function fld(name,   i, v)
{
	for (i = 1; i <= NF; i++)
		if (index($i, name "=") == 1) {
			v = substr($i, length(name) + 2)
			sub(/\(.*/, "", v)
			return v
		}
	return ""
}

function resize(bytes)
{
	size += bytes
	if (size > peak)
		peak = size
}

BEGIN {
	n = split(ROOTS, r, " ")
	for (i = 1; i <= n; i++)
		want[r[i]] = 1
	on = 0
	rm_phase = 0
}

/tracing_mark_write: MARK_RM/ { on = 1; rm_phase = 1; next }
/tracing_mark_write: MARK_SYNC/ { rm_phase = 0; next }
!on { next }
index($0, FSID ":") == 0 { next }

/ update_bytes_may_use: / {
	if (rm_phase && fld("type") == "METADATA" && fld("diff") + 0 > 0)
		reserved += fld("diff")
	next
}

/ btrfs_cow_block: / {
	if (fld("root") in want)
		cows++
	next
}

/ add_delayed_ref_head: / {
	hnb = fld("num_bytes")
	next
}

/ add_delayed_(data|tree)_ref: / {
	b = fld("bytenr"); a = fld("action"); root = fld("ref_root")
	par = fld("parent"); ty = fld("type")
	isd = ($0 ~ / add_delayed_data_ref: /)
	if (!(root in want)) {
		other++
		# tree-block refs of the other trees (extent, csum, free space,
		# root...), queued by the commit's runs: shown, not predicted
		if (!isd) {
			ko = b SUBSEP (ty ~ /^SHARED/ ? par : root) SUBSEP fld("seq")
			if (!(ko in omod) || omod[ko] == 0) {
				if (!(ko in omod))
					okeys[b] = okeys[b] " " ko
				omod[ko] = (a == "DROP_DELAYED_REF") ? -1 : 1
				other_tree += REF
			} else {
				omod[ko] += (a == "DROP_DELAYED_REF") ? -1 : 1
				if (omod[ko] == 0)
					other_tree -= REF
			}
		}
		next
	}
	mod = (a == "DROP_DELAYED_REF") ? -1 : 1
	leaves = int((int(hnb / SS) + CPL - 1) / CPL)
	if (!(b in hmod)) {
		hmod[b] = mod
		hdata[b] = isd
		hleaves[b] = leaves
		if (isd && mod < 0)
			resize(leaves * CSUM)
	} else {
		old = hmod[b]
		hmod[b] += mod
		if (isd && hmod[b] >= 0 && old < 0)
			resize(-hleaves[b] * CSUM)
		if (isd && hmod[b] < 0 && old >= 0)
			resize(hleaves[b] * CSUM)
	}
	if (ty ~ /^SHARED/)
		k = b SUBSEP ty SUBSEP par
	else if (isd)
		k = b SUBSEP ty SUBSEP root SUBSEP fld("owner") SUBSEP fld("offset")
	else
		k = b SUBSEP ty SUBSEP root
	k = k SUBSEP fld("seq")
	if (!(k in nmod) || nmod[k] == 0) {
		if (!(k in nmod))
			keys[b] = keys[b] " " k
		nmod[k] = mod
		nisd[k] = isd
		resize(REF)
	} else {
		nmod[k] += mod
		if (nmod[k] == 0)
			resize(-REF)
	}
	next
}

/ run_delayed_ref_head: / {
	b = fld("bytenr")
	# other roots' nodes of the head ran: a later ref of the block is
	# a new node of a new head (it does not cancel the ran one)
	m = split(okeys[b], ks, " ")
	for (j = 1; j <= m; j++)
		delete omod[ks[j]]
	delete okeys[b]
	if (!(b in hmod))
		next
	# freeze what this head contributes: the rise counts queued refs
	if (hdata[b] && hmod[b] < 0)
		frozen_data += hleaves[b] * CSUM
	m = split(keys[b], ks, " ")
	for (j = 1; j <= m; j++) {
		if (nmod[ks[j]] != 0) {
			if (nisd[ks[j]])
				frozen_data += REF
			else
				frozen_tree += REF
		}
		delete nmod[ks[j]]
		delete nisd[ks[j]]
	}
	delete keys[b]
	delete hmod[b]
	delete hdata[b]
	delete hleaves[b]
	runs++
	next
}

END {
	data = frozen_data
	tree = frozen_tree
	for (b in hmod)
		if (hdata[b] && hmod[b] < 0)
			data += hleaves[b] * CSUM
	for (k in nmod)
		if (nmod[k] != 0) {
			if (nisd[k])
				data += REF
			else
				tree += REF
		}
	printf "data_total %d\ntree_refs %d\npeak %d\nreserved %d\n", data, tree, peak, reserved
	printf "fs_cows %d\nother_refs %d\nmidway_runs %d\n", cows, other, runs
	printf "other_tree_refs %d\n", other_tree
}
