package plannerfuzz

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"testing"
)

// The run's settings: the bounded run of `make test` by default; `make
// fuzz-planner` passes -cases, -seed and -enforce (and may pass the
// thresholds). Case i of a run is drawn from seed+i: a case printed with
// its seed is reproduced by -seed <it> -cases 1.
var (
	flagCases      = flag.Int("cases", 10, "cases to draw")
	flagSeed       = flag.Uint64("seed", 1, "the first case's seed; case i is drawn from seed+i")
	flagEnforce    = flag.Bool("enforce", false, "fail below -min-optimal or above -max-ratio (the long run's targets)")
	flagMinOptimal = flag.Float64("min-optimal", 98, "with -enforce: the least share of decided cases answered at the optimum, in percent")
	flagMaxRatio   = flag.Float64("max-ratio", 1.05, "with -enforce: the worst cost ratio allowed")
	flagMinCases   = flag.Int("min-cases", 1000, "with -enforce: the fewest cases a run must draw to judge the targets")
	flagWorst      = flag.Int("worst", 5, "worst cases printed")
	flagOpen       = flag.Bool("open", false, "run the seeds of TestPlannerOnTheSeedsItFailed marked open (known defects of the search)")
	flagSims       = flag.Int("sims", 0, "simulations the exhaustive search may run per case (0: 1500 with -enforce, else 30)")
	flagOrders     = flag.Int("orders", DefaultLimits.Orders, "other orders of a plan's new nodes (names, joining order, tie-break draws) the judge places it in too before calling it feasible (0: the plan's own order only)")
)

// TestPlannerAgainstTheOptimum draws cases from a fixed seed, asks the
// planner (capacity --node-types' CheapestNodes) each one's question and
// judges the answer by simulation. It fails on any defect: an error, an
// answer that leaves a pod unplaced that the plan with every type at its
// limit places (DaemonSet pods of the new nodes included), or an answer
// holding a node with no pod but DaemonSet pods. The cost ratio to the
// optimum (the cheapest feasible vector, by exhaustive search) is
// logged; -enforce fails below the long run's targets.
func TestPlannerAgainstTheOptimum(t *testing.T) {
	lim := DefaultLimits
	if !*flagEnforce {
		lim.Sims = 30 // the bounded run: optimality is only logged
	}
	if *flagSims > 0 {
		lim.Sims = *flagSims
	}
	lim.Orders = *flagOrders
	var s Stats
	for i := range *flagCases {
		r := Run(context.Background(), *flagSeed+uint64(i), lim)
		s.Add(r)
		if testing.Verbose() && *flagCases > 50 && (i+1)%100 == 0 {
			t.Logf("%d cases: %d feasible, %d optimal of %d decided, worst %.4f", i+1, s.Feasible, s.Optimal, s.Decided, s.Worst)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "seeds %d to %d: %s\n", *flagSeed, *flagSeed+uint64(*flagCases)-1, &s)
	if worst := s.WorstCases(*flagWorst); len(worst) > 0 {
		fmt.Fprintf(&b, "worst feasible answers (reproduce one with -args -seed <seed> -cases 1):\n")
		for _, r := range worst {
			fmt.Fprintf(&b, "%s\n", Describe(r))
		}
	}
	t.Log(b.String())
	defects := s.Defects()
	for i, r := range defects {
		if i == *flagWorst*2 {
			break
		}
		t.Errorf("defect: %s", Describe(r))
	}
	if len(defects) > 0 {
		seeds := make([]string, len(defects))
		for i, r := range defects {
			seeds[i] = fmt.Sprint(r.Case.Seed)
		}
		t.Errorf("%d defects, seeds %s", len(defects), strings.Join(seeds, " "))
	}
	if !*flagEnforce {
		return
	}
	if s.Cases < *flagMinCases {
		t.Errorf("%d cases, want at least %d to judge the targets", s.Cases, *flagMinCases)
	}
	if s.OptimalPct() < *flagMinOptimal {
		t.Errorf("optimal in %.1f%% of the decided cases, want at least %.1f%%", s.OptimalPct(), *flagMinOptimal)
	}
	if s.Worst > *flagMaxRatio+1e-9 {
		t.Errorf("worst cost ratio %.4f, want at most %.4f", s.Worst, *flagMaxRatio)
	}
	if undecided := s.Feasible - s.Decided; undecided*100 > s.Cases {
		t.Errorf("%d feasible cases undecided (the exhaustive search's limits), want at most 1%%", undecided)
	}
}

// The planner on cases the fuzzer found it failing (make fuzz-planner,
// seeds 1 to 1000): one or two of each kind of defect, each with a
// feasible vector the exhaustive search found, so only the answer is
// judged here (no search). The seeds name cases of this generator: when
// it changes, they are to be found again.
//
// Those marked open are known defects of the search (none today); they
// are skipped until it places them (-open runs them): remove the mark
// when one passes.
func TestPlannerOnTheSeedsItFailed(t *testing.T) {
	cases := []struct {
		name string
		seed uint64
		open bool
		// orders: the judge's other orders (Limits.Orders; 0, the
		// plan's own only).
		orders int
	}{
		// Found with the search of 8dc141f, fixed by 4960fd0.
		{"pods pinned to a zone are placed when a type offered there runs them", 19, false, 0},
		{"an existing node's DaemonSet pod is placed when the plan can leave it the room", 27, false, 0},
		{"hostname anti-affine pods are placed when the nodes for them are affordable", 511, false, 0},
		{"a zone spread's pods are placed when nodes in its other zone place them", 68, false, 0},
		{"a new node's DaemonSet pods fit beside the pods it holds", 830, false, 0},
		{"no node is bought to hold its DaemonSet pods alone", 788, false, 0},
		// Found with the search of 4e86c27, fixed by the exact search's
		// slots per pod size (64), its floor over the uncapped worlds too
		// and its candidates for a pod only the existing nodes can take
		// (140, 749); 538 by comparing answers by the pods pending beyond
		// the floor. Seeds 303, 512 and 724, then counted as defects,
		// have no feasible vector (the exhaustive search decides so with
		// up to 27,000 simulations, Limits.DecideSims; its 1,500 had left
		// them undecided).
		{"a new node's DaemonSet pod fits beside anti-affine pods", 64, false, 0},
		{"an existing node's DaemonSet pod keeps its room when a new node can take a pod", 140, false, 0},
		{"pods pinned to a zone with a type offered there are placed in a greenfield cluster", 538, false, 0},
		{"a pinned pod is placed when a type offered in its zone runs it", 749, false, 0},
		// Found with the search of 726d752, fixed by the exact search's
		// zone spread bound (nodetypes_exact_spread.go).
		{"a zone spread's pods and the new nodes' agents are placed on zones that each hold the spread's share", 722, false, 0},
		// Found with the judge's other orders (-orders 4) and the search
		// of 6f7f89e, whose exact search took the cheapest vector its
		// own order places: fixed by taking the cheapest that robust's
		// other orders place too.
		{"a zone spread's pods are placed whatever the order of the nodes in three zones", 11, false, 32},
		{"anti-affine spread pods are placed whatever the order of a greenfield cluster's nodes", 65, false, 32},
		{"pods pinned to a zone are placed whatever the order of the nodes", 68, false, 32},
		{"pods beside a tainted pool are placed whatever the order of the nodes", 83, false, 32},
		{"spread pods of two priorities are placed whatever the order of the nodes", 124, false, 32},
		{"a new node's DaemonSet pods are placed whatever the order of the nodes", 138, false, 32},
		{"a new node's DaemonSet pod is placed beside pinned and spread pods whatever the order of the nodes", 167, false, 32},
		{"anti-affine pods beside a zone spread are placed whatever the order of the nodes", 9, false, 32},
		// Found with the 1,000-case run of 36d4142: the exact search
		// took the first of a dozen vectors that robust's 8 orders
		// placed, one whose new node's agent 71 of 300 orders leave
		// pending; fixed by confirming in 16 more (inConfirmOrders).
		{"a new node's DaemonSet pod is placed whatever the order when an as cheap plan always places it", 460, false, 32},
		// Open: every plan at the optimum's cost leaves a new node's
		// agent pending in some orders (the answer in 25 of 300, the
		// judge's optimum in 18).
		{"a new node's DaemonSet pod beside pinned pods in a greenfield cluster", 410, true, 32},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.open && !*flagOpen {
				t.Skipf("open defect of the search (issue 43), seed %d: -open runs it", tc.seed)
			}
			r := Run(context.Background(), tc.seed, Limits{Orders: tc.orders})
			if r.Defect() {
				t.Errorf("%s", Describe(r))
			}
		})
	}
}

// Seeds the planner answers at the optimum, each for a reason of its own.
func TestThePlannerAnswersTheseSeedsAtTheOptimum(t *testing.T) {
	cases := []struct {
		name string
		seed uint64
	}{
		// The optimum an answer is compared with is held to what the
		// answer is held to: no new node that holds no pod. In seed 771
		// the cheapest vector that placed as much did so only with a
		// tainted node no pod could use (empty, yet moving the
		// scheduler's other choices): the planner, which buys no empty
		// node, was counted 30% above that "optimum".
		{"the optimum has no empty node", 771},
		// The exact search's zone bound counts the room of a zone's
		// existing nodes: in seed 219, pods pinned to zone b fit one new
		// node there beside the existing ones (other pods move to the
		// new nodes in zone a), and the bound that asked for two made the
		// planner answer 2.32/h against the optimum's 2.03/h once the
		// cheaper vectors were held to other orders.
		{"the zone bound leaves room on existing nodes", 219},
		// A new node may hold a pod the existing nodes had room for,
		// which leaves that room to a pod they had none for: in seed
		// 230 one pending pod fits the small type, yet two small nodes
		// (1.21/h) place everything; the exact search, which allowed a
		// type as many nodes as the pods without room could use, listed
		// one and answered 1.32/h.
		{"a new node may take a pod the existing nodes had room for", 230},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := Run(context.Background(), tc.seed, DefaultLimits)
			if r.Defect() || !r.Decided {
				t.Fatalf("defect %v, decided %v: %s", r.Defect(), r.Decided, Describe(r))
			}
			if got := r.Ratio(); got > 1 {
				t.Errorf("cost ratio %.4f against %s: want the planner's answer to be the optimum", got, Plan(r.Case.Types, r.Case.Cents, r.Optimum))
			}
		})
	}
}
