package main

import (
	"strings"
	"testing"
)

// TestHostFlagsErrors: search's and baselines' --host and --dispatch
// (eval's meaning) refuse bad values in one line with exit 2 (a
// transformer planned at cluster scale, which has no host model, as it
// refuses every flag it does not take: exit 2, a command-line mistake),
// never a panic.
func TestHostFlagsErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"search", "--workload", "trxl2", "--gpus", "2", "--dispatch", "-1us"}, "--dispatch -1µs: must be 0 or more", 2},
		{[]string{"baselines", "--workload", "trxl2", "--gpus", "2", "--host", "--dispatch", "-2ms"}, "--dispatch -2ms: must be 0 or more", 2},
		{[]string{"search", "--gpus", "2", "--dispatch", "20us"}, "give --graph FILE or --workload NAME", 2},
		{[]string{"baselines", "--gpus", "2", "--host"}, "give --graph FILE or --workload NAME", 2},
		{[]string{"search", "--workload", "trxl2", "--gpus", "2", "--host", "--measure"}, "--measure runs the real one", 2},
		{[]string{"baselines", "--workload", "trxl2", "--gpus", "2", "--dispatch", "5us", "--measure"}, "--measure runs the real one", 2},
		{[]string{"baselines", "--workload", "trxl2", "--gpus", "2", "--dispatch", "fast"}, "--dispatch", 2},
		{[]string{"search", "--workload", "gpt:layers=2,hidden=256,heads=4,seq=128,vocab=1000,batch=8", "--gpus", "8", "--host"}, "--host does not apply", 2},
	} {
		code, _, errs := placer(t, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%s: exit %d, stderr %q; want %d and one line with %q", strings.Join(tc.args, " "), code, errs, tc.code, tc.want)
		}
	}
}
