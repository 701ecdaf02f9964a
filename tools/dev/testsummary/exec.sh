#!/usr/bin/env bash
# go test -exec tools/dev/testsummary/exec.sh: runs a package's test binary
# ("$@") and, when PLACER_TEST_CPU names a file, appends one line to it:
# the package's folder (relative to PLACER_TEST_ROOT when that is set),
# the user and system CPU seconds of the test binary and of every process
# it waited for (the placer and python processes the tests start), and
# the wall seconds. testsummary -cpu FILE prints them, most CPU first.
# Processes the tests hand to another parent (a Slurm job's tasks, which
# slurmd starts) are not counted. Exits with the test binary's status.
start=$(date +%s.%N)
"$@"
rc=$?
if [ -n "${PLACER_TEST_CPU:-}" ]; then
	end=$(date +%s.%N)
	t=$(mktemp "${TMPDIR:-/tmp}/placer-exec-times.XXXXXX")
	times > "$t" # the shell's, then its children's: "0m1.234s 0m0.050s"
	dir=${PWD#"${PLACER_TEST_ROOT:-}"/}
	awk -v d="$dir" -v s="$start" -v e="$end" '
		function sec(x,  m) { m = x; sub(/m.*/, "", m); sub(/^[0-9]+m/, "", x); sub(/s$/, "", x); return m * 60 + x }
		NR == 2 { printf "%s %.2f %.2f %.2f\n", d, sec($1), sec($2), e - s }' "$t" >> "$PLACER_TEST_CPU"
	rm -f "$t"
fi
exit $rc
