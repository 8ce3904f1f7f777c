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
// Outside the starting heap, a memory limit of Ceiling, or one and a half
// times the live heap when that is more, bounds what the process holds:
// GOGC=400 alone let a 15,000-node, 150,000-pod input (540 MB live) grow
// to 2.1 GB before its next collection while loading, and the limit makes
// the runtime return freed pages to the system as it nears it. Twice the
// live heap let that input peak at 1.22-1.54 GB; one and a half times, at
// 1.10 GB, for ~10% more wall.
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

// Ceiling is the memory limit outside the starting heap, unless 1.5 times the
// live heap is more.
const Ceiling = 1 << 30

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
	// searching counts the searches under way (Searching).
	searching int
	// live is the heap the last collection left live (outside the
	// starting heap); watching: a function is armed to read it.
	live     uint64
	watching bool
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

// SearchCeiling is the memory limit while a search runs (Searching),
// unless 1.5 times the live heap is more.
const SearchCeiling = 3 << 29

// Searching runs the collector at GOGC=400, with a memory limit of
// SearchCeiling, until the returned function is called (unless the
// starting heap is in force): a search of capacity --node-types builds
// one world of the whole cluster after another while the settled
// cluster it starts from stays live, and at the usual limit (1.5 times a
// live heap that a world's build doubles) most of its time went to
// collecting. On a 15,000-node, 150,000-pod cluster, GOGC=400 with a
// 1.8 GB limit halved the CPU time (291 s to 160 s).
func Searching() (done func()) { return std.whileSearching() }

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
	p.setLimit(p.limit())
	p.setPercent(p.percent())
	p.watch()
}

// limit is the memory limit outside the starting heap.
func (p *pacer) limit() int64 {
	ceiling := int64(Ceiling)
	if p.searching > 0 {
		ceiling = SearchCeiling
	}
	return max(ceiling, 3*int64(min(p.live, math.MaxInt64/4))/2)
}

// watch arms afterPacedGC outside the starting heap.
func (p *pacer) watch() {
	if !p.starting && !p.watching {
		p.watching = true
		p.onGC(p.afterPacedGC)
	}
}

// afterPacedGC follows the live heap with the limit.
func (p *pacer) afterPacedGC() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.watching = false
	if p.starting {
		return
	}
	p.live = p.liveHeap()
	p.setLimit(p.limit())
	p.watch()
}

// percent is GOGC outside the starting heap.
func (p *pacer) percent() int {
	if p.loading > 0 || p.searching > 0 {
		return 400
	}
	return 100
}

func (p *pacer) whileLoading() func() { return p.while(&p.loading) }

func (p *pacer) whileSearching() func() { return p.while(&p.searching) }

// while counts a phase in *n until the returned function is called.
func (p *pacer) while(n *int) func() {
	if p.userSet() {
		return func() {}
	}
	p.mu.Lock()
	*n++
	if !p.starting {
		p.setPercent(p.percent())
		p.setLimit(p.limit())
		p.watch()
	}
	p.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			*n--
			if !p.starting {
				p.setPercent(p.percent())
				p.setLimit(p.limit())
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
