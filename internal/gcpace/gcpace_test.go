package gcpace

import (
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeRuntime records the knobs a pacer turns; gc() runs what was armed
// to run after the next collection, with live bytes left live.
type fakeRuntime struct {
	percent int
	limit   int64
	live    uint64
	armed   []func()
	user    bool
}

func (r *fakeRuntime) pacer() *pacer {
	r.percent, r.limit = 100, math.MaxInt64
	return &pacer{
		setPercent: func(v int) int { old := r.percent; r.percent = v; return old },
		setLimit:   func(v int64) int64 { old := r.limit; r.limit = v; return old },
		liveHeap:   func() uint64 { return r.live },
		onGC:       func(f func()) { r.armed = append(r.armed, f) },
		userSet:    func() bool { return r.user },
	}
}

func (r *fakeRuntime) gc(live uint64) {
	r.live = live
	armed := r.armed
	r.armed = nil
	for _, f := range armed {
		f()
	}
}

// knobs is what the collector is set to: GOGC and the memory limit ("none").
type knobs struct {
	Percent int
	Limit   string
}

func (r *fakeRuntime) knobs() knobs {
	k := knobs{Percent: r.percent, Limit: "none"}
	switch {
	case r.limit == Ceiling:
		k.Limit = "ceiling"
	case r.limit == 3*int64(r.live)/2 && r.limit > Ceiling:
		k.Limit = "one and a half times the live heap"
	case r.limit == SearchCeiling:
		k.Limit = "search ceiling"
	case r.limit != math.MaxInt64:
		k.Limit = "goal"
	}
	return k
}

func TestPacer(t *testing.T) {
	const goal = 1000
	off := knobs{Percent: -1, Limit: "goal"}
	normal := knobs{Percent: 100, Limit: "ceiling"}
	loading := knobs{Percent: 400, Limit: "ceiling"}
	loadingLarge := knobs{Percent: 400, Limit: "one and a half times the live heap"}
	untouched := knobs{Percent: 100, Limit: "none"}
	type step struct {
		do   func(p *pacer, r *fakeRuntime)
		want knobs
	}
	start := func(p *pacer, _ *fakeRuntime) { p.startingHeap(goal) }
	gc := func(live uint64) func(*pacer, *fakeRuntime) { return func(_ *pacer, r *fakeRuntime) { r.gc(live) } }
	var doneLoading func()
	load := func(p *pacer, _ *fakeRuntime) { doneLoading = p.whileLoading() }
	loaded := func(*pacer, *fakeRuntime) { doneLoading() }
	var doneSearching func()
	search := func(p *pacer, _ *fakeRuntime) { doneSearching = p.whileSearching() }
	searched := func(*pacer, *fakeRuntime) { doneSearching() }
	searching := knobs{Percent: 400, Limit: "search ceiling"}
	tests := []struct {
		name  string
		user  bool
		steps []step
	}{
		{
			name: "the collector is off below the starting heap, and back to GOGC=100 once a collection leaves more than half of it live",
			steps: []step{
				{start, off},
				{gc(goal / 4), off},
				{gc(goal / 2), off},
				{gc(goal/2 + 1), normal},
				{gc(goal), normal},
			},
		},
		{
			name:  "loading during the starting heap leaves the collector off",
			steps: []step{{start, off}, {load, off}, {loaded, off}},
		},
		{
			name:  "loading after the starting heap runs at GOGC=400, then 100 again",
			steps: []step{{start, off}, {gc(goal), normal}, {load, loading}, {loaded, normal}},
		},
		{
			name:  "the starting heap ending while loading goes to GOGC=400, and 100 when loading ends",
			steps: []step{{start, off}, {load, off}, {gc(goal), loading}, {loaded, normal}},
		},
		{
			name:  "loading without a starting heap runs at GOGC=400",
			steps: []step{{load, loading}, {loaded, normal}},
		},
		{
			name: "the limit is the ceiling, or one and a half times the live heap past two thirds of it, loading or not",
			steps: []step{{load, loading}, {gc(Ceiling / 4), loading}, {gc(Ceiling), loadingLarge}, {gc(Ceiling / 2), loading}, {loaded, normal},
				{gc(Ceiling), knobs{Percent: 100, Limit: "one and a half times the live heap"}}},
		},
		{
			name:  "a search after the starting heap runs at GOGC=400 under the search ceiling, then as before",
			steps: []step{{start, off}, {gc(goal), normal}, {search, searching}, {gc(goal), searching}, {searched, normal}},
		},
		{
			name:  "a search past two thirds of the search ceiling is limited at one and a half times the live heap",
			steps: []step{{search, searching}, {gc(SearchCeiling), knobs{Percent: 400, Limit: "one and a half times the live heap"}}, {searched, knobs{Percent: 100, Limit: "one and a half times the live heap"}}},
		},
		{
			name:  "with GOGC or GOMEMLIMIT set, nothing is touched",
			user:  true,
			steps: []step{{start, untouched}, {load, untouched}, {search, untouched}, {gc(goal), untouched}, {searched, untouched}, {loaded, untouched}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &fakeRuntime{user: tc.user}
			p := r.pacer()
			for i, s := range tc.steps {
				s.do(p, r)
				if diff := cmp.Diff(s.want, r.knobs()); diff != "" {
					t.Fatalf("after step %d (-want,+got):\n%s", i, diff)
				}
			}
		})
	}
}

func TestAfterNextGCRunsItsFunctionAfterACollection(t *testing.T) {
	ran := make(chan struct{})
	afterNextGC(func() { close(ran) })
	runtime.GC()
	select {
	case <-ran:
	case <-time.After(time.Minute): // a deadline, not a pace: it runs at once
		t.Fatal("the function armed for after the next collection did not run")
	}
}
