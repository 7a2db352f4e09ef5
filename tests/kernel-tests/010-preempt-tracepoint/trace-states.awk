# Turn btrfs_done_preemptive_reclaim lines of a tracefs "trace" file into one
# line per event:  fsid=UUID flags=METADATA total_bytes=N bytes_used=N ...
# with every value named by the event's own field name.
#
#   awk -f trace-states.awk FORMAT_FILE TRACE_FILE
#
# FORMAT_FILE is events/btrfs/btrfs_done_preemptive_reclaim/format. Its
# "print fmt" says which label of the text output prints which field: the
# n-th conversion ("label=%llu") prints the n-th REC->field argument, so
# "chunk_free_space=%llu" is REC->free_chunk_space and the unlabelled "%pU"
# is REC->fsid. The first output line is "fields NAME..." (the format's
# fields, common_* left out). On a format this script cannot read it prints
# "error: ..." and exits 2. Lines written to trace_marker come out as
# "marker TEXT", in their place among the events. POSIX awk (mawk, gawk).

function parse_fmt(line,    s, q, fmt, rest, pre, label, i, nspec, nargs)
{
	s = line
	sub(/^print fmt: "/, "", s)
	q = index(s, "\"")
	if (!q)
		return 0
	fmt = substr(s, 1, q - 1)
	rest = substr(s, q + 1)
	nspec = 0
	while (match(fmt, /%[-+ #0-9.]*[A-Za-z]+/)) {
		pre = substr(fmt, 1, RSTART - 1)
		fmt = substr(fmt, RSTART + RLENGTH)
		label = ""
		if (match(pre, /[A-Za-z_0-9]+=$/))
			label = substr(pre, RSTART, RLENGTH - 1)
		labels[++nspec] = label
	}
	nargs = 0
	while (match(rest, /REC->[A-Za-z_0-9]+/)) {
		args[++nargs] = substr(rest, RSTART + 5, RLENGTH - 5)
		rest = substr(rest, RSTART + RLENGTH)
	}
	if (nspec == 0 || nspec != nargs) {
		printf "error: print fmt has %d conversions for %d REC-> arguments\n", nspec, nargs
		failed = 1
		exit 2
	}
	for (i = 1; i <= nspec; i++) {
		if (labels[i] != "")
			by_label[labels[i]] = args[i]
		else if (unlabelled == "")
			unlabelled = args[i]
	}
	nfmt = nspec
	return 1
}

FNR == NR {
	if ($1 ~ /^field:/) {
		s = $0
		sub(/;.*/, "", s)
		n = split(s, w, /[ \t]+/)
		name = w[n]
		sub(/\[.*/, "", name)
		if (name !~ /^common_/)
			field_list = field_list " " name
	} else if ($0 ~ /^print fmt: "/) {
		parse_fmt($0)
	}
	next
}

function header()
{
	if (header_done)
		return
	header_done = 1
	if (!nfmt) {
		print "error: no print fmt in the format file"
		failed = 1
		exit 2
	}
	print "fields" field_list
}

FNR == 1 {
	header()
}

# trace_marker writes: "marker TEXT"
/ tracing_mark_write: / {
	s = $0
	sub(/.* tracing_mark_write: /, "", s)
	print "marker " s
	next
}

/btrfs_done_preemptive_reclaim: / {
	s = $0
	sub(/.*btrfs_done_preemptive_reclaim: /, "", s)
	n = split(s, w, /[ \t]+/)
	out = ""
	for (i = 1; i <= n; i++) {
		if (w[i] == "")
			continue
		eq = index(w[i], "=")
		if (!eq) {
			# the unlabelled conversion: "UUID:"
			v = w[i]
			sub(/:$/, "", v)
			if (unlabelled != "")
				out = out " " unlabelled "=" v
			continue
		}
		k = substr(w[i], 1, eq - 1)
		v = substr(w[i], eq + 1)
		if (k in by_label)
			out = out " " by_label[k] "=" v
		else
			out = out " unknown_" k "=" v
	}
	sub(/^ /, "", out)
	print out
}

END {
	if (!failed)
		header()
}
