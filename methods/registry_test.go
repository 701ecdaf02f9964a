package methods_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/placer/placer/graph/graphtest"
	"github.com/placer/placer/methods"
	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/optimize"
)

// TestMethodsAndArms: the user's list holds the distinct algorithms and
// no arm; every arm names a registered method; CheckMethods refuses an arm
// with one line that names its method, while Check takes it.
func TestMethodsAndArms(t *testing.T) {
	user := methods.Methods()
	for _, want := range []string{"single", "expert", "tf-default", "metis", "dp", "local-search", "local-search-anchored", "sa", "brkga", "go", "go-scored", "rl17", "hdp", "regal"} {
		if !slices.Contains(user, want) {
			t.Errorf("Methods() lacks %s: %v", want, user)
		}
	}
	for _, arm := range []string{"sa-anchored", "brkga-tuned", "go-no-learning", "go-scored-no-learning", "go-scored-prior", "go-zero-shot", "regal-zero-shot"} {
		if slices.Contains(user, arm) {
			t.Errorf("Methods() offers the arm %s", arm)
		}
		e, ok := methods.Lookup(arm)
		if !ok || e.Arm == "" {
			t.Errorf("%s: registered %v, arm of %q", arm, ok, e.Arm)
			continue
		}
		err := methods.CheckMethods([]string{"metis", arm})
		if err == nil || !errors.Is(err, methods.ErrUnknown) || !strings.Contains(err.Error(), "arm of "+e.Arm) || strings.Contains(err.Error(), "\n") {
			t.Errorf("CheckMethods(%s) = %v, want one line naming %s", arm, err, e.Arm)
		}
		if err := methods.Check([]string{arm}); err != nil {
			t.Errorf("Check(%s) = %v, want the report commands to take it", arm, err)
		}
	}
	if err := methods.CheckMethods(user); err != nil {
		t.Errorf("CheckMethods(Methods()) = %v", err)
	}
	// About 15 distinct placement algorithms, and the strategies users run
	// without placer (ddp, fsdp; the pipelines next).
	if len(user) > 25 {
		t.Errorf("%d user methods: %v", len(user), user)
	}
}

// TestStartAnchored: local-search and sa with Start "anchored" are their
// anchored arms, decision for decision.
func TestStartAnchored(t *testing.T) {
	p, err := methodstest.NewProblem(graphtest.LayeredDAG(graphtest.Layered{Ops: 120, Width: 8, Seed: 7}), 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	set := &optimize.Settings{Budget: optimize.Budget{Evaluations: 300}, Seed: 5}
	for method, arm := range map[string]string{"local-search": "local-search-anchored", "sa": "sa-anchored"} {
		a, err := methods.New(method, methods.Options{Start: "anchored"})
		if err != nil {
			t.Fatal(err)
		}
		b, err := methods.New(arm, methods.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ra, err := a.Optimize(context.Background(), p, set)
		if err != nil {
			t.Fatal(err)
		}
		rb, err := b.Optimize(context.Background(), p, set)
		if err != nil {
			t.Fatal(err)
		}
		if ra.Eval.StepTime != rb.Eval.StepTime || !slices.Equal(ra.Decision.Device, rb.Decision.Device) || ra.Stats.Evaluations != rb.Stats.Evaluations {
			t.Errorf("%s --start anchored: %v ms in %d evaluations; %s: %v ms in %d", method, ra.Eval.StepTime*1e3, ra.Stats.Evaluations, arm, rb.Eval.StepTime*1e3, rb.Stats.Evaluations)
		}
	}
	if _, err := methods.New("local-search", methods.Options{Start: "best"}); err == nil || !strings.Contains(err.Error(), "anchored") {
		t.Errorf("start best: %v, want the list of starts", err)
	}
}

// TestCheckSearch: placer search takes the user's searches, and refuses
// references, heuristics and experiment arms with one line listing them.
func TestCheckSearch(t *testing.T) {
	for _, ok := range []string{"go-scored", "go", "local-search", "local-search-anchored", "sa", "brkga", "rl17", "hdp"} {
		if err := methods.CheckSearch(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"metis", "single", "go-scored-no-learning", "magic"} {
		err := methods.CheckSearch(bad)
		if err == nil || !errors.Is(err, methods.ErrUnknown) || !strings.Contains(err.Error(), "go-scored") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line listing the searches", bad, err)
		}
	}
}
