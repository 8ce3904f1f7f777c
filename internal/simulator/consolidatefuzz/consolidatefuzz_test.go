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
// exactly, then with node types drawn): one or two of each kind, the plan
// judged and, where the kind is a saving missed, compared with the
// optimum. The seeds name cases of this generator: when it changes, they
// are to be found again. A case runs without the node types its seed
// draws unless types is set (the types come from a stream of their own:
// the seed's cluster is the same without them, as it was found).
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
		// types: with the node types the seed draws.
		types bool
	}{
		// Infeasible: a spread's replacements wait, pending, for their
		// cordoned node's deletion (a topology spread counts the node as a
		// domain, left empty), and a budget that allows one disruption
		// refuses the drain's next eviction until a replacement runs: the
		// drain waits for the node's deletion, which waits for the drain.
		// Consolidate's check deleted the nodes and did not see it.
		{"a zone spread's replacements and a budget allowing one disruption stall a one-node drain (Karpenter)", 36, false, false, false},
		{"a hostname spread's replacements and a budget allowing one disruption stall a drain (cluster-autoscaler)", 702, false, false, false},
		{"a budget over kube-system pods of a zone spread stalls a three-node plan", 400, false, false, false},
		// Infeasible (fixed: the undo in place now tells the world its
		// pods are back, World.Restored): with node-2 and node-4 cordoned, both
		// replacements fit only node-3 (deployment-2-rs-3 by its hostname
		// spread, the cordoned nodes counted as empty domains), 250m
		// short: deployment-2-rs-3, of higher priority, preempts node-3's
		// two DaemonSet pods, in consolidate's own run too. Consolidate
		// misses it: its exact search first tried node-2 with node-3, a
		// drain that deleted node-3's DaemonSet pods and was undone in
		// place (the store's journal), but the world's record of the pods
		// it removed (the report's gone pods) still holds them, and a pod
		// recorded gone is left out of the evicted pods' results
		// (World.evictedResults), so the next trial's preemption of those
		// very pods goes unseen and node-2 with node-4 is kept.
		{"a replacement preempts an agent while the plan's nodes are cordoned", 536, false, false, false},
		// Infeasible (fixed: consolidate now replays its plan from the
		// settled cluster and drops a replacement that does not hold
		// there): consolidate checked each replacement round in
		// its live world, on the placements its earlier drains' tie-breaks
		// made. Replayed from the settled cluster in the plan's order,
		// the removals' drain puts replicaset-1-1 (1 CPU) on node-6, a tie
		// with node-1 and node-5; then node-6's swap creates it first
		// (pods by name), it takes the new 2-CPU node, and
		// replicaset-2-3 (2 CPU, hostname anti-affinity to its replicas)
		// has no node left. The plan holds only when that tie-break puts
		// replicaset-1-1 on node-1.
		{"replacement rounds hold only on the removals' tie-breaks (node types)", 313, false, false, true},
		// Saving missed (fixed by the joint search of small questions
		// with node types): a removal, chosen before the replacements,
		// took the room the better replacement needed.
		{"a removal took the room a better replacement needed (node types)", 418, false, true, true},
		{"removals chosen before replacements miss the better pair (node types)", 280, false, true, true},
		// Saving missed: a node drained on the cluster the drains before
		// it left (one of them later cut from the plan when the plan did
		// not hold with its nodes cordoned together) is kept, and the
		// nodes rejected on that cluster are not tried again without it.
		{"a node rejected after a drain the plan later cut is tried again", 652, false, true, false},
		{"nodes rejected for room a cut drain took are tried again", 102, false, true, false},
		// Saving missed: a node whose spread's replacements fit only when
		// other nodes (and their spread domains) go too is tried before
		// them, alone, and not again after them.
		{"a node that drains only with a cheaper node removed is tried after it", 897, false, true, false},
		{"hostname spreads: four nodes go together where two went one by one", 699, false, true, false},
		// Saving missed: the pods of three nodes drained one at a time
		// leave no room for the third (each drain spreads them), drained
		// together they fit.
		{"nodes drained one at a time pack worse than together", 135, false, true, false},
		// Saving missed: the most expensive node first takes the room
		// that two cheaper nodes saving more needed.
		{"two cheaper nodes saving more than the dearest one", 220, false, true, false},
		// Saving the judge once credited wrongly: with the pair cordoned,
		// job-3-3 (high priority) waits, pending, for their deletion (a
		// hostname spread); retried once they are deleted, after the other
		// replacements ran, it preempts statefulset-1-0. The judge placed
		// every replacement afresh with the nodes deleted from the start
		// and found the pair feasible; it now goes on from the cordoned
		// placements as consolidate does, and the one node consolidate
		// removes is the optimum.
		{"a replacement waiting for the pair's deletion preempts once it retries", 914, false, true, false},
		// Saving missed, open: node-2 and node-3 drain together only with
		// node-2's pods created first (the judge's order, the nodes'):
		// their 7.6 CPU of pods go on node-1 and node-4 with 600m to
		// spare, and the scheduler's spreading finds such a packing in
		// that order only. Consolidate's exact search drains each subset
		// once, in its candidates' order (the dearer node-3 before
		// node-2), where replicaset-2-1 (2 CPU)
		// is left without room; so is it in the judge's first shuffle
		// (-orders 2).
		{"a pair that packs only in one order of its replacements", 694, true, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.open && !*flagOpen {
				t.Skipf("open defect of consolidate, seed %d: -open runs it", tc.seed)
			}
			c := Generate(tc.seed)
			if !tc.types {
				c.Types, c.TypeCents = nil, nil
			}
			r := RunCase(context.Background(), c, Options{})
			if r.Defect() || (tc.optimal && !r.Optimal()) {
				t.Errorf("%s", Describe(r))
			}
		})
	}
}
