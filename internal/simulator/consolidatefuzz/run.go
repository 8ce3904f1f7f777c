package consolidatefuzz

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/internal/simulator/plannerfuzz"
	"github.com/kubesched/kubesched/internal/simulator/questions"
)

// startTime is when the generated pods started; Now, the time the rule
// sets read (fixed: a case gives the same answer on any day).
var (
	startTime = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	Now       = startTime.Add(24 * time.Hour)
)

// Result is one case's outcome.
type Result struct {
	Case *Case
	// Err: the planner, the judge or a simulation failed (a defect).
	Err error
	// Plan is consolidate's answer: the nodes it removes, in its order,
	// and its replacements (swaps); its saving in hundredths (of which
	// the removals'), and the saving it reported.
	Plan                        Plan
	PlanCents, PlanRemovalCents int
	Reported                    float64
	// Misreport says which replacement's price or saving consolidate
	// misreports ("" when none).
	Misreport string
	// Keep are the nodes it keeps and why.
	Keep []questions.KeptNode
	// Verdict is the judge's on the plan.
	Verdict *Verdict
	// Optimum is the feasible plan saving the most, with at most one swap
	// (the plan when none saves more); found always, the empty plan being
	// feasible. OptimumCents is its saving, OptimumRemovalCents the
	// removals' part.
	Optimum                           Plan
	OptimumCents, OptimumRemovalCents int
	// RemovalOptimumCents is, in a case with node types, the saving of the
	// feasible set of nodes saving the most by removals alone (no swap).
	RemovalOptimumCents int
	// Blocked counts the nodes the judge's rules keep whatever the set.
	Blocked int
	Sims    int
	Elapsed time.Duration
}

// Feasible: the judge accepts the plan.
func (r *Result) Feasible() bool { return r.Err == nil && r.Verdict != nil && r.Verdict.Feasible }

// Misreported: the saving consolidate reports is not its nodes' prices'
// sum (less its new nodes'), or a replacement's price or saving is not
// its type's and nodes'.
func (r *Result) Misreported() bool {
	return r.Err == nil && r.Verdict != nil && (r.Misreport != "" || math.Abs(r.Reported-float64(r.PlanCents)/100) > 1e-6)
}

// Defect: an error, an infeasible plan, or a misreported saving.
func (r *Result) Defect() bool { return r.Err != nil || !r.Feasible() || r.Misreported() }

// Ratio is the plan's saving over the optimum's: 1 when both are 0; 0
// for an infeasible plan.
func (r *Result) Ratio() float64 {
	switch {
	case !r.Feasible():
		return 0
	case r.OptimumCents == 0:
		return 1
	}
	return float64(r.PlanCents) / float64(r.OptimumCents)
}

// Optimal: a feasible plan saving the optimum (to 0.1%).
func (r *Result) Optimal() bool { return r.Feasible() && r.Ratio() >= 0.999 }

// Options are the judge's settings.
type Options struct {
	// StrictCordon: a plan is feasible only when every replacement is
	// placed while its nodes are cordoned (Judge.CheckPlan).
	StrictCordon bool
	// Orders: see Judge.Orders.
	Orders int
}

// Run draws the case of seed, asks consolidate, and judges its plan.
func Run(ctx context.Context, seed uint64, o Options) *Result {
	return RunCase(ctx, Generate(seed), o)
}

// RunCase asks consolidate (questions.Consolidate, a black box, with its
// drains unbounded and the case's node types) which of the case's nodes
// can go and which can be replaced, judges the plan, and searches every
// plan removing a subset of the nodes and swapping at most one other
// subset for one saving more.
func RunCase(ctx context.Context, c *Case, o Options) *Result {
	start := time.Now()
	r := &Result{Case: c}
	r.Err = runCase(ctx, c, o, r)
	r.Elapsed = time.Since(start)
	return r
}

func runCase(ctx context.Context, c *Case, o Options, r *Result) error {
	env, err := plannerfuzz.NewEnv(c.Objects)
	if err != nil {
		return err
	}
	res, err := questions.Consolidate(ctx, env.Load, env.NewWorld, questions.ConsolidateOptions{Rules: c.Rules, MaxDrains: 0, Now: Now, NodeTypes: c.Types}, nil)
	if err != nil {
		return fmt.Errorf("consolidate: %w", err)
	}
	r.Reported, r.Keep = res.HourlySaving, res.Keep
	if r.Plan, err = planOf(c, res); err != nil {
		return err
	}
	r.PlanCents, r.PlanRemovalCents = r.Plan.Cents(c)
	for i, rep := range res.Replace {
		s := r.Plan.Swaps[i]
		if want := s.Cents(c); math.Abs(rep.HourlySaving-float64(want)/100) > 1e-6 || math.Abs(rep.HourlyCost-float64(c.TypeCents[s.Type])/100) > 1e-6 {
			r.Misreport = fmt.Sprintf("the replacement of %v by %s costs %s and saves %s; consolidate says %.4f and %.4f",
				rep.Nodes, rep.Type, Price(c.TypeCents[s.Type]), Price(want), rep.HourlyCost, rep.HourlySaving)
			break
		}
	}
	j, err := NewJudge(ctx, env, c.Rules, c.Types...)
	if err != nil {
		return err
	}
	j.StrictCordon, j.Orders = o.StrictCordon, o.Orders
	r.Blocked = len(j.Blocked)
	defer func() { r.Sims = j.Sims() }()
	if r.Verdict, err = j.CheckPlan(r.Plan); err != nil {
		return fmt.Errorf("judging the plan: %w", err)
	}
	above := r.PlanCents
	if !r.Verdict.Feasible {
		above = -1
	}
	best, found, err := optimum(j, plans(c), above)
	if err != nil {
		return fmt.Errorf("the exhaustive search: %w", err)
	}
	r.Optimum, r.OptimumCents, r.OptimumRemovalCents = r.Plan, r.PlanCents, r.PlanRemovalCents
	if found {
		r.Optimum = best.plan()
		r.OptimumCents, r.OptimumRemovalCents = r.Optimum.Cents(c)
	}
	if len(c.Types) == 0 {
		r.RemovalOptimumCents = r.OptimumCents
		return nil
	}
	// The optimum of the removals alone: the optimum when it has no swap,
	// else searched (from the largest saving down, to the first feasible
	// set).
	if len(r.Optimum.Swaps) == 0 {
		r.RemovalOptimumCents = r.OptimumCents
		return nil
	}
	bestR, foundR, err := optimum(j, subsets(c), -1)
	if err != nil {
		return fmt.Errorf("the exhaustive search of removals alone: %w", err)
	}
	if foundR {
		r.RemovalOptimumCents = bestR.cents
	}
	return nil
}

// planOf is consolidate's answer as the judge's plan: its removals, and
// each replacement's nodes and type (by its type and zone).
func planOf(c *Case, res *questions.ConsolidateResult) (Plan, error) {
	p := Plan{Remove: res.Remove}
	for _, n := range res.Remove {
		if _, ok := c.Cents[n]; !ok {
			return p, fmt.Errorf("consolidate removes %q: not a node of the case", n)
		}
	}
	for _, rep := range res.Replace {
		t := slices.IndexFunc(c.Types, func(t questions.NodeType) bool { return t.Type == rep.Type && t.Zone == rep.Zone })
		if t < 0 {
			return p, fmt.Errorf("consolidate replaces %v by %s in %s: not a node type of the case", rep.Nodes, rep.Type, rep.Zone)
		}
		for _, n := range rep.Nodes {
			if _, ok := c.Cents[n]; !ok {
				return p, fmt.Errorf("consolidate replaces %q: not a node of the case", n)
			}
		}
		p.Swaps = append(p.Swaps, Swap{Nodes: rep.Nodes, Type: t})
	}
	return p, nil
}

// Describe is a result in a few lines: the seed, the case, the plan and
// the optimum, and what is wrong with the plan.
func Describe(r *Result) string {
	c := r.Case
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d: %s\n", c.Seed, c)
	var prices []string
	for _, n := range c.Nodes {
		prices = append(prices, fmt.Sprintf("%s %s", n, Price(c.Cents[n])))
	}
	fmt.Fprintf(&b, "  prices: %s\n", strings.Join(prices, ", "))
	if len(c.Types) > 0 {
		var types []string
		for i, t := range c.Types {
			types = append(types, fmt.Sprintf("%s %s in %s %s", t.Type, t.Node.Labels[v1.LabelInstanceTypeStable], t.Zone, Price(c.TypeCents[i])))
		}
		fmt.Fprintf(&b, "  node types: %s\n", strings.Join(types, ", "))
	}
	if r.Err != nil {
		fmt.Fprintf(&b, "  error: %v", r.Err)
		return b.String()
	}
	fmt.Fprintf(&b, "  plan: %s; optimum: %s", r.Plan.String(c), r.Optimum.String(c))
	if r.Feasible() {
		fmt.Fprintf(&b, " (ratio %.4f)", r.Ratio())
	}
	if len(c.Types) > 0 && r.RemovalOptimumCents != r.OptimumCents {
		fmt.Fprintf(&b, "; by removals alone %s", Price(r.RemovalOptimumCents))
	}
	if r.Misreported() {
		fmt.Fprintf(&b, "\n  MISREPORTED: consolidate says it saves %.4f", r.Reported)
		if r.Misreport != "" {
			fmt.Fprintf(&b, "; %s", r.Misreport)
		}
	}
	if !r.Verdict.Feasible {
		fmt.Fprintf(&b, "\n  INFEASIBLE: %s", r.Verdict.Why)
	}
	if r.Verdict.Waits != "" {
		fmt.Fprintf(&b, "\n  replacements wait for the nodes' deletion: %s", r.Verdict.Waits)
	}
	for _, k := range r.Keep {
		fmt.Fprintf(&b, "\n  kept %s: %s", k.Node, k.Reason)
	}
	return b.String()
}
