package main

import (
	"strings"
	"testing"
)

func TestSummarize(t *testing.T) {
	in := `{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:9: no data in x (make data)\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"--- SKIP: TestA (0.00s)\n"}
{"Action":"skip","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestB","Output":"=== RUN   TestB\n"}
{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:3: fine\n"}
{"Action":"pass","Package":"p","Test":"TestB"}
{"Action":"output","Package":"p","Output":"PASS\n"}
{"Action":"output","Package":"p","Output":"ok  \tp\t0.1s\n"}
{"Action":"pass","Package":"p"}
`
	var w strings.Builder
	failed, err := summarize(strings.NewReader(in), &w)
	if err != nil || failed {
		t.Fatalf("failed %v, err %v", failed, err)
	}
	want := "--- SKIP: TestA (p): a_test.go:9: no data in x (make data)\nok  \tp\t0.1s\n"
	if w.String() != want {
		t.Errorf("got %q, want %q", w.String(), want)
	}

	in = `{"Action":"output","Package":"q","Test":"TestC","Output":"=== RUN   TestC\n"}
{"Action":"output","Package":"q","Test":"TestC","Output":"    c_test.go:5: got 1, want 2\n"}
{"Action":"output","Package":"q","Test":"TestC","Output":"--- FAIL: TestC (0.00s)\n"}
{"Action":"fail","Package":"q","Test":"TestC"}
{"Action":"output","Package":"q","Output":"FAIL\n"}
{"Action":"output","Package":"q","Output":"FAIL\tq\t0.1s\n"}
{"Action":"fail","Package":"q"}
`
	w.Reset()
	failed, err = summarize(strings.NewReader(in), &w)
	if err != nil || !failed {
		t.Fatalf("a failure: failed %v, err %v", failed, err)
	}
	if s := w.String(); !strings.Contains(s, "c_test.go:5: got 1, want 2") || !strings.Contains(s, "FAIL\tq\t0.1s") {
		t.Errorf("a failure's output is missing: %q", s)
	}
}
