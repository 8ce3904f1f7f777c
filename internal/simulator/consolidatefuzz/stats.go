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

	results []*Result
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
	if r.OptimumCents == 0 && len(r.Plan) == 0 {
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
	var suboptimal []string
	for _, r := range s.WorstCases(len(s.results)) {
		suboptimal = append(suboptimal, fmt.Sprint(r.Case.Seed))
	}
	if len(suboptimal) > 0 {
		fmt.Fprintf(&b, "\nsuboptimal seeds: %s", strings.Join(suboptimal, " "))
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
