package jobs

import (
	"context"
	"testing"
)

// BenchmarkReportMegatron is the whole of placer report megatron: 23
// published rows, each read at Megatron's defaults and at its fastest,
// and searched (issue 44: at most 15 CPU s).
//
//	go test -run xxx -bench ReportMegatron -benchtime 1x ./jobs
func BenchmarkReportMegatron(b *testing.B) {
	for b.Loop() {
		if _, err := Megatron(context.Background(), MegatronOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
