package main

import (
	"strings"
	"testing"
)

// TestCompletion: flag values complete from the registries.
func TestCompletion(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
		not  string
	}{
		{[]string{"__complete", "eval", "--workload", "gn"}, []string{"gnmt2", "gnmt8"}, "rnnlm2"},
		{[]string{"__complete", "eval", "--hardware", "h"}, []string{"h100", "h200"}, "v100"},
		{[]string{"__complete", "search", "--methods", "m-etf,s"}, []string{"m-etf,single", "m-etf,sa"}, "m-etf,expert"},
		{[]string{"__complete", "workloads", "export", "tr"}, []string{"trxl2"}, "gnmt2"},
		{[]string{"__complete", "eval", "--topology", ""}, []string{"nvswitch", "pcie"}, "torus"},
	} {
		code, out, errs := placer(t, tc.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, errs)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w+"\n") {
				t.Errorf("%v: %q lacks %s", tc.args, out, w)
			}
		}
		if strings.Contains(out, tc.not+"\n") {
			t.Errorf("%v: %q offers %s", tc.args, out, tc.not)
		}
	}
}
