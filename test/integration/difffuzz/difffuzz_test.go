package difffuzz

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// settings are the bounded run's: a fixed seed and a deadline, both
// overridable (KUBESCHED_DIFFFUZZ_SEED, KUBESCHED_DIFFFUZZ_DURATION, e.g.
// 30m) for `make fuzz-differential`.
func settings(t *testing.T) (uint64, time.Duration) {
	seed, dur := uint64(1), 45*time.Second
	if v := os.Getenv("KUBESCHED_DIFFFUZZ_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("KUBESCHED_DIFFFUZZ_SEED: %v", err)
		}
		seed = s
	}
	if v := os.Getenv("KUBESCHED_DIFFFUZZ_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("KUBESCHED_DIFFFUZZ_DURATION: %v", err)
		}
		dur = d
	}
	return seed, dur
}

// TestDifferential draws cases from a fixed seed until the deadline and
// fails on any divergence between kubesched and upstream, printing for
// each cause its first divergence shrunk to a scenario file (the
// conformance format, the pending pod annotated) and upstream's answer.
func TestDifferential(t *testing.T) {
	seed, dur := settings(t)
	g := NewGenerator(seed)
	deadline := time.Now().Add(dur)
	start := time.Now()
	var cases, steps int
	byCause := map[string][]string{} // cause -> case ids
	reported := map[string]bool{}
	for time.Now().Before(deadline) {
		c := g.DrawCase()
		cases++
		res, err := Run(c)
		if err != nil {
			t.Errorf("case %d: %v", cases, err)
			continue
		}
		steps += len(res)
		last := res[len(res)-1]
		if len(last.Diff) == 0 {
			continue
		}
		causes := Causes(last.Diff)
		key := strings.Join(causes, " + ")
		byCause[key] = append(byCause[key], fmt.Sprint(cases))
		if reported[key] {
			continue
		}
		reported[key] = true
		budget := min(max(time.Until(deadline), 0)+5*time.Second, 15*time.Second)
		t.Errorf("case %d diverges (%s):\n%s\n%s", cases, key, describe(last), Minimize(c, res, budget))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d, %s: %d cases, %d pods explained; draws: %d valid, %d rejected by validation\n",
		seed, time.Since(start).Round(time.Second), cases, steps, g.Drawn, g.Rejected)
	for _, k := range slices.Sorted(maps.Keys(g.Rejections)) {
		fmt.Fprintf(&b, "  rejected %4d  %s\n", g.Rejections[k], k)
	}
	fmt.Fprintf(&b, "divergent cases: %d\n", sum(byCause))
	for _, k := range slices.Sorted(maps.Keys(byCause)) {
		fmt.Fprintf(&b, "  %4d  %s\n", len(byCause[k]), k)
	}
	drawn, blocked, missing := g.Coverage.Summary()
	fmt.Fprintf(&b, "plugin-read fields: %d, drawn %d, not drawable %d %v, never drawn %d %v\n", len(PluginFields), drawn, len(blocked), blocked, len(missing), missing)
	t.Log(b.String())
	if testing.Verbose() || os.Getenv("KUBESCHED_DIFFFUZZ_COVERAGE") != "" {
		t.Log(g.Coverage.Report())
	}
}

func sum(m map[string][]string) int {
	n := 0
	for _, v := range m {
		n += len(v)
	}
	return n
}
