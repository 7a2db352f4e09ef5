# each update_bytes_may_use of FSID by "rm", with its stack (kept per CPU)
function cpu_of(line,   c) { c = line; sub(/^[^\[]*\[/, "", c); sub(/\].*/, "", c); return c }
function out(c) { if (ev[c] != "") print ev[c] " |" st[c]; ev[c] = ""; st[c] = "" }
/tracing_mark_write: MARK_RM/ { on = 1; next }
/tracing_mark_write: MARK_SYNC/ { for (c in ev) out(c); on = 0; next }
!on { next }
/ update_bytes_may_use: / {
	c = cpu_of($0); out(c); cur = ""
	if (index($0, FSID) && $1 ~ /^rm-/) { d = $0; sub(/.*type=/, "", d); ev[c] = d }
	next
}
/<stack trace>/ { cur = cpu_of($0); next }
/^ => / && cur != "" && ev[cur] != "" {
	f = $2
	if (f ~ /^(evict_refill_and_join|btrfs_delayed_refs_rsv_refill|btrfs_truncate_inode_items|btrfs_evict_inode|start_transaction|btrfs_unlink|btrfs_block_rsv_release|__btrfs_end_transaction|btrfs_commit_inode_delayed_inode|btrfs_delayed_refs_rsv_release|flush_space|btrfs_run_delayed_refs|btrfs_orphan_del)$/)
		st[cur] = st[cur] " " f
	next
}
END { for (c in ev) out(c) }
