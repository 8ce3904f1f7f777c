package consolidatefuzz

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"testing"
)

// The run's settings: the bounded run of `make test` by default; `make
// fuzz-consolidate` passes -cases, -seed and -enforce. Case i of a run is
// drawn from seed+i: a case printed with its seed is reproduced by -seed
// <it> -cases 1.
var (
	flagCases      = flag.Int("cases", 40, "cases to draw")
	flagSeed       = flag.Uint64("seed", 1, "the first case's seed; case i is drawn from seed+i")
	flagEnforce    = flag.Bool("enforce", false, "fail below -min-optimal or -min-ratio (the long run's targets)")
	flagMinOptimal = flag.Float64("min-optimal", 98, "with -enforce: the least share of cases whose plan saves the optimum, in percent")
	flagMinRatio   = flag.Float64("min-ratio", 0.95, "with -enforce: the worst saving ratio allowed")
	flagMinCases   = flag.Int("min-cases", 1000, "with -enforce: the fewest cases a run must draw to judge the targets")
	flagWorst      = flag.Int("worst", 5, "worst cases printed")
	flagStrict     = flag.Bool("strict-cordon", false, "a plan is feasible only when every replacement is placed while its nodes are cordoned, before they are deleted")
	flagOrders     = flag.Int("orders", 1, "orders of the replacements' creation the judge simulates a set in: the nodes' order, then shuffles")
	flagOpen       = flag.Bool("open", false, "run the seeds of TestConsolidateOnTheSeedsItFailed marked open (known defects of consolidate)")
	flagDescribe   = flag.Bool("describe", false, "print every case, its plan, the optimum and the nodes kept")
)

// TestConsolidateAgainstTheOptimum draws cases from a fixed seed, asks
// consolidate (questions.Consolidate) each one's question and judges its
// plan by simulation. It fails on any defect: an error, a plan the judge
// finds infeasible, or a saving misreported. The saving ratio to the
// optimum (the feasible set of nodes saving the most, by exhaustive
// search) is logged; -enforce fails below the long run's targets.
func TestConsolidateAgainstTheOptimum(t *testing.T) {
	var s Stats
	for i := range *flagCases {
		r := Run(context.Background(), *flagSeed+uint64(i), Options{StrictCordon: *flagStrict, Orders: *flagOrders})
		s.Add(r)
		if *flagDescribe {
			t.Logf("%s\n  judge: %d nodes blocked, %d simulations", Describe(r), r.Blocked, r.Sims)
		}
		if testing.Verbose() && *flagCases > 50 && (i+1)%100 == 0 {
			t.Logf("%d cases: %d feasible, %d optimal, worst ratio %.4f", i+1, s.Feasible, s.Optimal, s.Worst)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "seeds %d to %d: %s\n", *flagSeed, *flagSeed+uint64(*flagCases)-1, &s)
	if worst := s.WorstCases(*flagWorst); len(worst) > 0 {
		fmt.Fprintf(&b, "worst feasible plans (reproduce one with -args -seed <seed> -cases 1):\n")
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
		t.Errorf("optimal in %.1f%% of the cases, want at least %.1f%%", s.OptimalPct(), *flagMinOptimal)
	}
	if s.Worst < *flagMinRatio-1e-9 {
		t.Errorf("worst saving ratio %.4f (seed %d), want at least %.4f", s.Worst, s.WorstSeed, *flagMinRatio)
	}
}

// Consolidate on the cases the fuzzer found it failing (make
// fuzz-consolidate, seeds 1 to 1000, with consolidate of 1717cd0, then of
// the commit that cordons drained nodes and searches small questions
// exactly): one or two of each kind, the plan judged and, where the kind
// is a saving missed, compared with the optimum. The seeds name cases of this
// generator: when it changes, they are to be found again.
//
// Those marked open are known defects of consolidate; they are skipped
// until it passes them (-open runs them): remove the mark when one
// passes.
func TestConsolidateOnTheSeedsItFailed(t *testing.T) {
	cases := []struct {
		name string
		seed uint64
		open bool
		// optimal: the plan must save the optimum, not only hold.
		optimal bool
	}{
		// Infeasible: a spread's replacements wait, pending, for their
		// cordoned node's deletion (a topology spread counts the node as a
		// domain, left empty), and a budget that allows one disruption
		// refuses the drain's next eviction until a replacement runs: the
		// drain waits for the node's deletion, which waits for the drain.
		// Consolidate's check deleted the nodes and did not see it.
		{"a zone spread's replacements and a budget allowing one disruption stall a one-node drain (Karpenter)", 36, false, false},
		{"a hostname spread's replacements and a budget allowing one disruption stall a drain (cluster-autoscaler)", 702, false, false},
		{"a budget over kube-system pods of a zone spread stalls a three-node plan", 400, false, false},
		// Infeasible: with the plan's nodes cordoned, a replacement of
		// higher priority preempts a DaemonSet's pod in the judge's order
		// of replacements; consolidate's own run placed them in another.
		{"a replacement preempts an agent while the plan's nodes are cordoned", 536, true, false},
		// Saving missed: a node drained on the cluster the drains before
		// it left (one of them later cut from the plan when the plan did
		// not hold with its nodes cordoned together) is kept, and the
		// nodes rejected on that cluster are not tried again without it.
		{"a node rejected after a drain the plan later cut is tried again", 652, false, true},
		{"nodes rejected for room a cut drain took are tried again", 102, false, true},
		// Saving missed: a node whose spread's replacements fit only when
		// other nodes (and their spread domains) go too is tried before
		// them, alone, and not again after them.
		{"a node that drains only with a cheaper node removed is tried after it", 897, false, true},
		{"hostname spreads: four nodes go together where two went one by one", 699, false, true},
		// Saving missed: the pods of three nodes drained one at a time
		// leave no room for the third (each drain spreads them), drained
		// together they fit.
		{"nodes drained one at a time pack worse than together", 135, false, true},
		// Saving missed: the most expensive node first takes the room
		// that two cheaper nodes saving more needed.
		{"two cheaper nodes saving more than the dearest one", 220, false, true},
		// Saving missed, open: the judge and consolidate disagree on the
		// optimum. In seed 914 a replacement of higher priority waits,
		// pending, while the pair is cordoned (a hostname spread); the
		// judge then places every replacement again with the nodes
		// deleted from the start, while consolidate retries the one
		// waiting after the others ran, as kube-scheduler would once the
		// nodes are deleted, and it preempts a StatefulSet's pod. Seed
		// 694 is not analysed.
		{"a replacement waiting for the pair's deletion preempts once it retries", 914, true, true},
		{"a pair saving more than the node consolidate takes (not analysed)", 694, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.open && !*flagOpen {
				t.Skipf("open defect of consolidate, seed %d: -open runs it", tc.seed)
			}
			r := Run(context.Background(), tc.seed, Options{})
			if r.Defect() || (tc.optimal && !r.Optimal()) {
				t.Errorf("%s", Describe(r))
			}
		})
	}
}
