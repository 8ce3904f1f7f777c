package consolidatefuzz

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

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
	// their saving in hundredths, and the saving it reported.
	Plan      []string
	PlanCents int
	Reported  float64
	// Keep are the nodes it keeps and why.
	Keep []questions.KeptNode
	// Verdict is the judge's on the plan.
	Verdict *Verdict
	// Optimum is the feasible set of nodes saving the most (the plan when
	// none saves more); found always, the empty set being feasible.
	Optimum      []string
	OptimumCents int
	// Blocked counts the nodes the judge's rules keep whatever the set.
	Blocked int
	Sims    int
	Elapsed time.Duration
}

// Feasible: the judge accepts the plan.
func (r *Result) Feasible() bool { return r.Err == nil && r.Verdict != nil && r.Verdict.Feasible }

// Misreported: the saving consolidate reports is not its nodes' prices'
// sum.
func (r *Result) Misreported() bool {
	return r.Err == nil && r.Verdict != nil && math.Abs(r.Reported-float64(r.PlanCents)/100) > 1e-6
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
	// StrictCordon: a set of nodes is feasible only when every
	// replacement is placed while the nodes are cordoned (Judge.Check).
	StrictCordon bool
	// Orders: see Judge.Orders.
	Orders int
}

// Run draws the case of seed, asks consolidate, and judges its plan.
func Run(ctx context.Context, seed uint64, o Options) *Result {
	return RunCase(ctx, Generate(seed), o)
}

// RunCase asks consolidate (questions.Consolidate, a black box, with its
// drains unbounded) which of the case's nodes can go, judges the plan
// and searches every subset of the nodes for one saving more.
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
	res, err := questions.Consolidate(ctx, env.Load, env.NewWorld, questions.ConsolidateOptions{Rules: c.Rules, MaxDrains: 0, Now: Now}, nil)
	if err != nil {
		return fmt.Errorf("consolidate: %w", err)
	}
	r.Plan, r.Reported, r.Keep = res.Remove, res.HourlySaving, res.Keep
	for _, n := range res.Remove {
		cents, ok := c.Cents[n]
		if !ok {
			return fmt.Errorf("consolidate removes %q: not a node of the case", n)
		}
		r.PlanCents += cents
	}
	j, err := NewJudge(ctx, env, c.Rules)
	if err != nil {
		return err
	}
	j.StrictCordon, j.Orders = o.StrictCordon, o.Orders
	r.Blocked = len(j.Blocked)
	defer func() { r.Sims = j.Sims() }()
	if r.Verdict, err = j.Check(res.Remove); err != nil {
		return fmt.Errorf("judging the plan: %w", err)
	}
	above := r.PlanCents
	if !r.Verdict.Feasible {
		above = -1
	}
	best, found, err := optimum(j, subsets(c), above)
	if err != nil {
		return fmt.Errorf("the exhaustive search: %w", err)
	}
	r.Optimum, r.OptimumCents = r.Plan, r.PlanCents
	if found {
		r.Optimum, r.OptimumCents = best.nodes, best.cents
	}
	return nil
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
	if r.Err != nil {
		fmt.Fprintf(&b, "  error: %v", r.Err)
		return b.String()
	}
	fmt.Fprintf(&b, "  plan: %s; optimum: %s", nodeSet(r.Plan, r.PlanCents), nodeSet(r.Optimum, r.OptimumCents))
	if r.Feasible() {
		fmt.Fprintf(&b, " (ratio %.4f)", r.Ratio())
	}
	if r.Misreported() {
		fmt.Fprintf(&b, "\n  MISREPORTED: consolidate says it saves %.4f", r.Reported)
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

// nodeSet writes a set of nodes and its saving: "node-1, node-3 = 0.52".
func nodeSet(nodes []string, cents int) string {
	if len(nodes) == 0 {
		return "nothing"
	}
	return strings.Join(nodes, ", ") + " = " + Price(cents)
}
