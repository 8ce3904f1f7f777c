// Package gcpace paces the garbage collector of the batch commands
// (simulate, explain, capacity), which build a whole cluster in memory,
// work on it, print and exit.
//
// StartingHeap is what the Go compiler does for itself
// (cmd/compile/internal/base.AdjustStartingHeap): the collector does not
// run until the heap reaches a starting size, then GOGC=100 paces it as
// usual. A simulation of 5,000 nodes and 10,000 pods (a live heap of
// ~50 MB, ~190 MB allocated in all) then collects twice instead of seven
// times while its heap grows from nothing, each collection marking the
// whole cluster built so far. A larger one switches to GOGC=100 once a
// collection leaves more than half the starting size live, where GOGC=100
// would let the heap grow as far: its pace from then on is as before.
//
// The price is memory: up to the starting size where the heap would have
// stayed smaller (SchedulingBasic: 179 MB peak RSS against 137 MB). A
// larger starting size (256 MB) saved no more time: fresh pages cost a
// fault each, where a collection would have reused old ones.
//
// While manifests decode, the collector runs at GOGC=400 (Loading):
// decoding is nearly all allocation of objects that stay.
//
// Both leave the collector alone when GOGC or GOMEMLIMIT is set.
package gcpace

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// DefaultStartingHeap is the batch commands' starting heap.
const DefaultStartingHeap = 128 << 20

// pacer is the state, with the runtime's knobs as functions (tests fake them).
type pacer struct {
	setPercent func(int) int
	setLimit   func(int64) int64
	liveHeap   func() uint64
	// onGC arms f to run after the next collection.
	onGC    func(f func())
	userSet func() bool

	mu sync.Mutex
	// starting: the collector is off below the starting heap.
	starting bool
	goal     int64
	loading  int
}

var std = &pacer{
	setPercent: debug.SetGCPercent,
	setLimit:   debug.SetMemoryLimit,
	liveHeap:   readLiveHeap,
	onGC:       afterNextGC,
	userSet:    func() bool { return os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" },
}

// StartingHeap turns the collector off until the heap reaches about goal
// bytes (a memory limit of goal makes it run there), then back to GOGC=100
// once a collection leaves more than goal/2 bytes live.
func StartingHeap(goal int64) { std.startingHeap(goal) }

// Loading runs the collector at GOGC=400 until the returned function is
// called, unless the starting heap is in force.
func Loading() (done func()) { return std.whileLoading() }

func (p *pacer) startingHeap(goal int64) {
	if p.userSet() {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.starting {
		return
	}
	p.starting, p.goal = true, goal
	p.setPercent(-1)
	p.setLimit(goal)
	p.onGC(p.afterGC)
}

// afterGC ends the starting heap once the live heap is past half of it.
func (p *pacer) afterGC() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.starting {
		return
	}
	if p.liveHeap() <= uint64(p.goal/2) {
		p.onGC(p.afterGC)
		return
	}
	p.starting = false
	p.setLimit(math.MaxInt64)
	p.setPercent(p.percent())
}

// percent is GOGC outside the starting heap.
func (p *pacer) percent() int {
	if p.loading > 0 {
		return 400
	}
	return 100
}

func (p *pacer) whileLoading() func() {
	if p.userSet() {
		return func() {}
	}
	p.mu.Lock()
	p.loading++
	if !p.starting {
		p.setPercent(p.percent())
	}
	p.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.loading--
			if !p.starting {
				p.setPercent(p.percent())
			}
		})
	}
}

// readLiveHeap is the heap the last collection left live.
func readLiveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return math.MaxUint64 // unknown: end the starting heap
	}
	return s[0].Value.Uint64()
}

// afterNextGC runs f (in the finalizer goroutine) after the next
// collection: a finalizer on an object nothing else refers to.
func afterNextGC(f func()) {
	sentinel := new([16]byte) // not tiny-allocated: its own finalizer
	runtime.SetFinalizer(sentinel, func(*[16]byte) { f() })
}
