package main

import (
	"os"
	"strings"
	"testing"
)

// TestInputsDocListsFlags: docs/inputs.md's flag table is flagRanges, row
// for row.
func TestInputsDocListsFlags(t *testing.T) {
	doc, err := os.ReadFile("../../docs/inputs.md")
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	for _, row := range flagRangeTable() {
		if !strings.Contains(string(doc), row) {
			missing = append(missing, row)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("docs/inputs.md lacks these rows of flagRanges:\n%s", strings.Join(missing, "\n"))
	}
}
