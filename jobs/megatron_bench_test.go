package jobs

import (
	"context"
	"testing"
)

// BenchmarkReportMegatron is the whole of placer report megatron: every
// published row, each read at Megatron's defaults and at its fastest,
// and searched (the project's bound: at most 15 CPU s; 7.8 on 2026-11-26,
// docs/history.md).
//
//	go test -run xxx -bench ReportMegatron -benchtime 1x ./jobs
func BenchmarkReportMegatron(b *testing.B) {
	for b.Loop() {
		if _, err := Megatron(context.Background(), MegatronOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
