package jobs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/report/plans"
)

// TestDocsFineTuneTable holds docs/cluster-scale.md's table of the
// fine-tuning keys on Llama 3 8B (docs/cluster-scale.md once said 2.353 s
// where eval gave 2.496 s): each row's step and memory are what placer
// eval prints for the command the page names, plus the row's keys.
func TestDocsFineTuneTable(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "docs", "cluster-scale.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| (\\(none: full training\\)|`[^`]+`) \\| ([0-9.]+ s) \\| ([0-9.]+ GB)")
	rows := row.FindAllStringSubmatch(string(page), -1)
	if len(rows) != 3 {
		t.Fatalf("%d rows of the fine-tuning table; want 3", len(rows))
	}
	for _, r := range rows {
		strat := "tp=1,dp=8,mbs=1"
		if k := strings.Trim(r[1], "`"); !strings.HasPrefix(k, "(") {
			strat += "," + k
		}
		sp, err := ScaleEval(context.Background(), ScaleOptions{Workload: "llama3-8b:seq=4096,batch=64", Cluster: "dgx-h100:1", Strat: strat})
		if err != nil {
			t.Fatal(err)
		}
		step, mem := fmt.Sprintf("%.3f s", sp.Result.Step), plans.GB(sp.Result.Memory)
		if step != r[2] || mem != r[3] {
			t.Errorf("docs/cluster-scale.md: %s: %s, %s; placer eval --strategy %s gives %s, %s", r[1], r[2], r[3], strat, step, mem)
		}
	}
}

// TestREADMEConfigTypes holds the README's list of the config.json
// model types placer reads to transformer.HFModelTypes (it once omitted
// seven).
func TestREADMEConfigTypes(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(readme), "The config.json files placer reads, by their model_type:")
	if i < 0 {
		t.Fatal("README: no list of the config.json files placer reads")
	}
	para, _, _ := strings.Cut(string(readme[i:]), ". ")
	para = strings.Join(strings.Fields(para), " ")
	for _, typ := range transformer.HFModelTypes() {
		if !regexp.MustCompile(`[ ,]` + regexp.QuoteMeta(typ) + `(,| and|$)`).MatchString(para) {
			t.Errorf("README's config.json list %q: no %s", para, typ)
		}
	}
}
