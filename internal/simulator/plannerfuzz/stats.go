package plannerfuzz

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Stats sum up a run's results.
type Stats struct {
	Cases int
	// Errors: the planner or a simulation failed.
	Errors int
	// NeedNodes: cases whose answer adds nodes or whose optimum does.
	NeedNodes int
	Feasible  int
	// EmptyNodes counts the answers' nodes holding no pod but DaemonSet
	// pods, EmptyCases the cases with one.
	EmptyNodes, EmptyCases int
	// Decided: feasible cases whose exhaustive search ended; Optimal of
	// them, the answer costs the optimum.
	Decided, Optimal int
	// SumRatio and Worst are over the decided cases.
	SumRatio, Worst float64
	// BeyondFloor: cases whose answer places pods the floor's simulation
	// does not.
	BeyondFloor int
	// Unsatisfiable: no vector is feasible (not counted as defects);
	// DaemonsFirst: the floor was taken with the agents first.
	Unsatisfiable, DaemonsFirst int
	// Infeasible answers by what they leave unplaced: a new node's
	// DaemonSet pod, an existing node's, another pod.
	NewDaemon, OldDaemon, OtherPod int
	Daemon                         int // cases with DaemonSets
	Greenfield                     int
	Sims                           int
	Elapsed                        time.Duration

	results []*Result
}

// Add counts a result.
func (s *Stats) Add(r *Result) {
	s.Cases++
	s.results = append(s.results, r)
	s.Sims += r.Sims
	s.Elapsed += r.Elapsed
	if r.Case.DaemonSets > 0 {
		s.Daemon++
	}
	if r.Case.Greenfield() {
		s.Greenfield++
	}
	if r.Err != nil {
		s.Errors++
		return
	}
	if r.AnswerCents > 0 || (r.Decided && r.OptimumCents > 0) {
		s.NeedNodes++
	}
	if e := len(r.Empty()); e > 0 {
		s.EmptyNodes += e
		s.EmptyCases++
	}
	if r.DaemonsFirst {
		s.DaemonsFirst++
	}
	if r.Unsatisfiable {
		s.Unsatisfiable++
		return
	}
	if !r.Feasible() {
		var nd, od, op bool
		for _, u := range r.Verdict.Missing {
			nd = nd || (u.Daemon && u.NewNode)
			od = od || (u.Daemon && !u.NewNode)
			op = op || !u.Daemon
		}
		s.NewDaemon, s.OldDaemon, s.OtherPod = s.NewDaemon+b2i(nd), s.OldDaemon+b2i(od), s.OtherPod+b2i(op)
		return
	}
	s.Feasible++
	if r.BeyondFloor > 0 {
		s.BeyondFloor++
	}
	if !r.Decided {
		return
	}
	s.Decided++
	ratio := r.Ratio()
	s.SumRatio += ratio
	s.Worst = max(s.Worst, ratio)
	if r.Optimal() {
		s.Optimal++
	}
}

// Defects are the results that fail the bounded run: an error, an
// infeasible answer, or an answer with a node holding no pod.
func (s *Stats) Defects() []*Result {
	var out []*Result
	for _, r := range s.results {
		if r.Defect() {
			out = append(out, r)
		}
	}
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// FeasiblePct, OptimalPct (of the decided cases) and MeanRatio.
func (s *Stats) FeasiblePct() float64 { return pct(s.Feasible, s.Cases-s.Unsatisfiable) }
func (s *Stats) OptimalPct() float64  { return pct(s.Optimal, s.Decided) }
func (s *Stats) MeanRatio() float64 {
	if s.Decided == 0 {
		return 1
	}
	return s.SumRatio / float64(s.Decided)
}

func pct(a, b int) float64 {
	if b == 0 {
		return 100
	}
	return 100 * float64(a) / float64(b)
}

// WorstCases are the n feasible answers farthest from the optimum.
func (s *Stats) WorstCases(n int) []*Result {
	var out []*Result
	for _, r := range s.results {
		if r.Feasible() && r.Decided && !r.Optimal() {
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Ratio() > out[j].Ratio() })
	return out[:min(n, len(out))]
}

// String is the summary.
func (s *Stats) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d cases (%d greenfield, %d with DaemonSets, %d needing nodes) in %s, %d simulations of the exhaustive search\n",
		s.Cases, s.Greenfield, s.Daemon, s.NeedNodes, s.Elapsed.Round(time.Millisecond), s.Sims)
	fmt.Fprintf(&b, "feasible %d/%d (%.1f%%; %d more cases have no feasible plan at all), errors %d, empty nodes %d in %d cases\n",
		s.Feasible, s.Cases-s.Unsatisfiable, s.FeasiblePct(), s.Unsatisfiable, s.Errors, s.EmptyNodes, s.EmptyCases)
	if infeasible := s.Cases - s.Unsatisfiable - s.Feasible - s.Errors; infeasible > 0 {
		fmt.Fprintf(&b, "infeasible answers leave unplaced: a new node's DaemonSet pod in %d, an existing node's in %d, another pod in %d\n", s.NewDaemon, s.OldDaemon, s.OtherPod)
	}
	fmt.Fprintf(&b, "optimal %d/%d decided (%.1f%%), %d undecided; cost ratio mean %.4f, worst %.4f", s.Optimal, s.Decided, s.OptimalPct(), s.Feasible-s.Decided, s.MeanRatio(), s.Worst)
	if s.BeyondFloor > 0 {
		fmt.Fprintf(&b, "; %d answers place pods the all-types world leaves pending", s.BeyondFloor)
	}
	if s.DaemonsFirst > 0 {
		fmt.Fprintf(&b, "; %d floors taken with the agents first", s.DaemonsFirst)
	}
	var undecided, unsat []string
	for _, r := range s.results {
		switch {
		case r.Feasible() && !r.Decided:
			undecided = append(undecided, fmt.Sprint(r.Case.Seed))
		case r.Unsatisfiable:
			unsat = append(unsat, fmt.Sprint(r.Case.Seed))
		}
	}
	if len(undecided) > 0 {
		fmt.Fprintf(&b, "\nundecided seeds: %s", strings.Join(undecided, " "))
	}
	if len(unsat) > 0 {
		fmt.Fprintf(&b, "\nseeds with no feasible plan: %s", strings.Join(unsat, " "))
	}
	return b.String()
}

// Describe is a result in a few lines: the seed, the case, the answer
// and the optimum, and what is wrong with the answer.
func Describe(r *Result) string {
	c := r.Case
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d: %s\n", c.Seed, c)
	if r.Err != nil {
		fmt.Fprintf(&b, "  error: %v", r.Err)
		return b.String()
	}
	fmt.Fprintf(&b, "  planner: %s", Plan(c.Types, c.Cents, r.Answer))
	switch {
	case r.Decided && r.Feasible():
		fmt.Fprintf(&b, "; optimum: %s (ratio %.4f)", Plan(c.Types, c.Cents, r.Optimum), r.Ratio())
	case r.Decided:
		fmt.Fprintf(&b, "; optimum: %s", Plan(c.Types, c.Cents, r.Optimum))
	case r.Unsatisfiable:
		b.WriteString("; no vector is feasible")
	}
	if r.Verdict != nil {
		if n := len(r.Verdict.Missing); n > 0 {
			u := r.Verdict.Missing[0]
			what := "pod"
			switch {
			case u.Daemon && u.NewNode:
				what = "DaemonSet pod of new node " + u.Node + ":"
			case u.Daemon:
				what = "DaemonSet pod of existing node " + u.Node + ":"
			}
			in := ""
			if r.Verdict.Order > 0 {
				in = fmt.Sprintf(" in the judge's order %d of its nodes", r.Verdict.Order)
			}
			fmt.Fprintf(&b, "\n  INFEASIBLE%s: %d pods unplaced, e.g. %s %s (%s): %s", in, n, what, u.Pod, u.Status, u.Reason)
		}
		if len(r.Verdict.Empty) > 0 {
			fmt.Fprintf(&b, "\n  EMPTY NODES: %s hold no pod but DaemonSet pods", strings.Join(r.Verdict.Empty, ", "))
		}
	}
	return b.String()
}
