package inputs

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/placer/placer/graph/transformer"
)

// WorkloadFile is the file a --workload reads, if any: an hf:PATH[:keys]
// workload's config.json (PATH, or PATH/config.json where PATH is a
// folder), as ReadHFConfig reads it. Other workloads read no file.
func WorkloadFile(workload string) (string, bool) {
	rest, ok := strings.CutPrefix(workload, "hf:")
	if !ok {
		return "", false
	}
	path, _ := transformer.SplitHF(rest)
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "config.json")
	}
	return path, path != ""
}
