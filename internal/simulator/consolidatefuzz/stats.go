package consolidatefuzz

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/kubesched/kubesched/internal/simulator/questions"
)

// Stats sum up a run's results.
type Stats struct {
	Cases, Errors int
	// ByRules counts the cases of each rule set.
	ByRules map[questions.Rules]int
	// Feasible plans, of which Waits have replacements that wait for
	// the nodes' deletion (pending while the nodes are cordoned);
	// Infeasible ones; Misreported savings.
	Feasible, Waits, Infeasible, Misreported int
	// Optimal: feasible plans saving the optimum (ratio >= 0.999);
	// Nothing: cases where neither the plan nor the optimum removes a
	// node.
	Optimal, Nothing int
	// SumRatio and Worst are over the feasible plans; WorstSeed is the
	// first case at Worst.
	SumRatio, Worst float64
	WorstSeed       uint64
	// PlanCents and OptimumCents sum the savings over the feasible plans.
	PlanCents, OptimumCents int
	Sims                    int
	Elapsed                 time.Duration
	// Typed are the figures of the cases drawn with node types.
	Typed TypedStats

	results []*Result
}

// TypedStats are the figures of the cases drawn with node types, where
// consolidate may replace nodes by a new one and the optimum may swap one
// set of nodes.
type TypedStats struct {
	Cases, Feasible, Optimal int
	// Worst is the worst saving ratio of a feasible plan, WorstSeed the
	// first case at it.
	Worst     float64
	WorstSeed uint64
	// PlanSwaps and OptimumSwaps count the feasible plans, and their
	// optima, that replace nodes.
	PlanSwaps, OptimumSwaps int
	// The savings summed over the feasible plans: the plans' by removals
	// and by replacements, the optima's, and the optima of removals alone
	// (no swap).
	PlanRemovalCents, PlanSwapCents       int
	OptimumRemovalCents, OptimumSwapCents int
	RemovalOptimumCents                   int
}

func (t *TypedStats) add(r *Result) {
	if t.Cases == 0 {
		t.Worst = 1
	}
	t.Cases++
	if !r.Feasible() {
		return
	}
	t.Feasible++
	if r.Optimal() {
		t.Optimal++
	}
	if ratio := r.Ratio(); ratio < t.Worst {
		t.Worst, t.WorstSeed = ratio, r.Case.Seed
	}
	if len(r.Plan.Swaps) > 0 {
		t.PlanSwaps++
	}
	if len(r.Optimum.Swaps) > 0 {
		t.OptimumSwaps++
	}
	t.PlanRemovalCents += r.PlanRemovalCents
	t.PlanSwapCents += r.PlanCents - r.PlanRemovalCents
	t.OptimumRemovalCents += r.OptimumRemovalCents
	t.OptimumSwapCents += r.OptimumCents - r.OptimumRemovalCents
	t.RemovalOptimumCents += r.RemovalOptimumCents
}

// String is the summary of the cases with node types.
func (t *TypedStats) String() string {
	s := fmt.Sprintf("with node types: %d cases, feasible %d, optimal %d (%.1f%%), worst ratio %.4f", t.Cases, t.Feasible, t.Optimal, pct(t.Optimal, t.Cases), t.Worst)
	if t.Worst < 1 {
		s += fmt.Sprintf(" (seed %d)", t.WorstSeed)
	}
	return s + fmt.Sprintf("; %d plans and %d optima replace nodes; plans save %s/h by removals + %s/h by replacements, optima %s/h + %s/h (the optima by removals alone: %s/h)",
		t.PlanSwaps, t.OptimumSwaps, Price(t.PlanRemovalCents), Price(t.PlanSwapCents), Price(t.OptimumRemovalCents), Price(t.OptimumSwapCents), Price(t.RemovalOptimumCents))
}

// Add counts a result.
func (s *Stats) Add(r *Result) {
	if s.Cases == 0 {
		s.Worst = 1
	}
	if s.ByRules == nil {
		s.ByRules = map[questions.Rules]int{}
	}
	s.Cases++
	s.ByRules[r.Case.Rules]++
	if len(r.Case.Types) > 0 {
		s.Typed.add(r)
	}
	s.results = append(s.results, r)
	s.Sims += r.Sims
	s.Elapsed += r.Elapsed
	switch {
	case r.Err != nil:
		s.Errors++
		return
	case r.Misreported():
		s.Misreported++
	}
	if !r.Feasible() {
		s.Infeasible++
		return
	}
	s.Feasible++
	if r.Verdict.Waits != "" {
		s.Waits++
	}
	ratio := r.Ratio()
	s.SumRatio += ratio
	if ratio < s.Worst {
		s.Worst, s.WorstSeed = ratio, r.Case.Seed
	}
	if r.Optimal() {
		s.Optimal++
	}
	if r.OptimumCents == 0 && len(r.Plan.Remove)+len(r.Plan.Swaps) == 0 {
		s.Nothing++
	}
	s.PlanCents += r.PlanCents
	s.OptimumCents += r.OptimumCents
}

// FeasiblePct, OptimalPct (of all the cases: an infeasible plan is not
// optimal) and MeanRatio (over the feasible plans).
func (s *Stats) FeasiblePct() float64 { return pct(s.Feasible, s.Cases) }
func (s *Stats) OptimalPct() float64  { return pct(s.Optimal, s.Cases) }
func (s *Stats) MeanRatio() float64 {
	if s.Feasible == 0 {
		return 1
	}
	return s.SumRatio / float64(s.Feasible)
}

func pct(a, b int) float64 {
	if b == 0 {
		return 100
	}
	return 100 * float64(a) / float64(b)
}

// Defects are the results that fail the bounded run: an error, an
// infeasible plan, or a misreported saving.
func (s *Stats) Defects() []*Result {
	var out []*Result
	for _, r := range s.results {
		if r.Defect() {
			out = append(out, r)
		}
	}
	return out
}

// WorstCases are the n feasible plans farthest below the optimum.
func (s *Stats) WorstCases(n int) []*Result {
	var out []*Result
	for _, r := range s.results {
		if r.Feasible() && !r.Optimal() {
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Ratio() < out[j].Ratio() })
	return out[:min(n, len(out))]
}

// String is the summary.
func (s *Stats) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d cases (%d cluster-autoscaler, %d karpenter) in %s, %d simulations by the judge\n",
		s.Cases, s.ByRules[questions.RulesClusterAutoscaler], s.ByRules[questions.RulesKarpenter], s.Elapsed.Round(time.Millisecond), s.Sims)
	fmt.Fprintf(&b, "feasible %d/%d (%.1f%%; in %d some replacements wait for the nodes' deletion), infeasible %d, errors %d, savings misreported %d\n",
		s.Feasible, s.Cases, s.FeasiblePct(), s.Waits, s.Infeasible, s.Errors, s.Misreported)
	fmt.Fprintf(&b, "optimal %d/%d (%.1f%%; %d where nothing can go), saving ratio mean %.4f, worst %.4f", s.Optimal, s.Cases, s.OptimalPct(), s.Nothing, s.MeanRatio(), s.Worst)
	if s.Worst < 1 {
		fmt.Fprintf(&b, " (seed %d)", s.WorstSeed)
	}
	if s.OptimumCents > 0 {
		fmt.Fprintf(&b, "; plans save %s/h of the optima's %s/h (%.1f%%)", Price(s.PlanCents), Price(s.OptimumCents), pct(s.PlanCents, s.OptimumCents))
	}
	if s.Typed.Cases > 0 {
		fmt.Fprintf(&b, "\n%s", &s.Typed)
	}
	var suboptimal, typed []string
	for _, r := range s.WorstCases(len(s.results)) {
		suboptimal = append(suboptimal, fmt.Sprint(r.Case.Seed))
		if len(r.Case.Types) > 0 {
			typed = append(typed, fmt.Sprint(r.Case.Seed))
		}
	}
	if len(suboptimal) > 0 {
		fmt.Fprintf(&b, "\nsuboptimal seeds: %s", strings.Join(suboptimal, " "))
	}
	if len(typed) > 0 {
		fmt.Fprintf(&b, " (with node types: %s)", strings.Join(typed, " "))
	}
	var waits []string
	for _, r := range s.results {
		if r.Feasible() && r.Verdict.Waits != "" {
			waits = append(waits, fmt.Sprint(r.Case.Seed))
		}
	}
	if len(waits) > 0 {
		fmt.Fprintf(&b, "\nseeds whose replacements wait for the nodes' deletion (infeasible with -strict-cordon): %s", strings.Join(waits, " "))
	}
	return b.String()
}
