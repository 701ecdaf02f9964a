#!/usr/bin/env bash
# make test's phases timed (Makefile, test):
#
#   phase.sh FILE NAME COMMAND...   runs COMMAND, prints and appends to FILE
#                                   "NAME WALL CPU USER SYS RC": its wall
#                                   seconds and the user and system CPU
#                                   seconds of every process it waited for
#                                   (sub-makes, go test's binaries, python);
#                                   exits with COMMAND's status
#   phase.sh --table FILE [START]   prints FILE as a table, with the sum;
#                                   with START (a file holding date
#                                   +%s.%N), the wall from then to now too,
#                                   which is less than the sum where
#                                   phases ran side by side
#
# A phase that fails prints the table of the phases so far before it
# exits, so that a failed make test says where its time went too.
#
# CPU is what a shared machine does not inflate: a neighbour's load
# stretches the wall, not the CPU seconds (docs/history.md). Processes a
# command hands to another parent (Slurm's tasks, started by slurmd) are
# not counted.
set -u
table() {
	awk 'BEGIN { printf "%-24s %9s %9s %9s %9s  %s\n", "make test phase", "wall s", "CPU s", "user s", "sys s", "status" }
		{ printf "%-24s %9.1f %9.1f %9.1f %9.1f  %s\n", $1, $2, $3, $4, $5, ($6 == 0 ? "ok" : "FAILED " $6); w += $2; c += $3; u += $4; s += $5 }
		END { printf "%-24s %9.1f %9.1f %9.1f %9.1f\n", "total", w, c, u, s }' "$1"
}
if [ "${1:-}" = --table ]; then
	table "$2"
	if [ -n "${3:-}" ] && [ -s "$3" ]; then
		awk -v now="$(date +%s.%N)" '{ printf "%-24s %9.1f  (phases side by side overlap)\n", "make test, end to end", now - $1 }' "$3"
	fi
	exit 0
fi
file=$1 name=$2
shift 2
start=$(date +%s.%N)
"$@"
rc=$?
end=$(date +%s.%N)
t=$(mktemp "${TMPDIR:-/tmp}/placer-phase-times.XXXXXX")
times > "$t" # the shell's, then its children's: "0m1.234s 0m0.050s"
line=$(awk -v n="$name" -v s="$start" -v e="$end" -v rc="$rc" '
	function sec(x,  m) { m = x; sub(/m.*/, "", m); sub(/^[0-9]+m/, "", x); sub(/s$/, "", x); return m * 60 + x }
	NR == 2 { printf "%s %.1f %.1f %.1f %.1f %d", n, e - s, sec($1) + sec($2), sec($1), sec($2), rc }' "$t")
rm -f "$t"
echo "$line" >> "$file"
echo "phase: $line" | awk '{ printf "phase %s: wall %.1f s, CPU %.1f s (user %.1f, sys %.1f)%s\n", $2, $3, $4, $5, $6, ($7 == 0 ? "" : ", FAILED " $7) }'
[ "$rc" = 0 ] || table "$file"
exit $rc
