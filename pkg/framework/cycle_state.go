package framework

import (
	"errors"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
)

// ErrNotFound is returned by CycleState.Read for a key nobody wrote.
var ErrNotFound = errors.New("not found")

// StateKey names a piece of per-cycle data.
type StateKey string

// StateData is per-cycle data a plugin stores in PreFilter/PreScore.
type StateData interface {
	Clone() StateData
}

// CycleState carries data between the extension points of one scheduling
// cycle of one pod. Writes happen in the sequential points (PreFilter,
// PreScore, Reserve); the parallel ones (Filter, Score) only read.
type CycleState struct {
	// storage is copy-on-write: Filter and Score read it from many
	// goroutines for every node, lock-free, while writes are a few per
	// cycle, under mu.
	mu      sync.Mutex
	storage atomic.Pointer[[]stateEntry]
	// SkipFilterPlugins are the plugins whose PreFilter returned Skip.
	SkipFilterPlugins PluginNames
	// SkipScorePlugins are the plugins whose PreScore returned Skip.
	SkipScorePlugins PluginNames
	// RecordPluginMetrics: this cycle is sampled for per-plugin durations.
	RecordPluginMetrics bool
	// PodInfo is the pod this cycle schedules with what is derived from
	// it once (requests, host ports, affinity terms), when the scheduler
	// knows it; plugins read it through PodInfoOf.
	PodInfo *PodInfo
	// FilterClass is the key of the pod's equivalence class when every
	// filter plugin that runs this cycle is an EquivalencePlugin that
	// signed the pod: the pod's Filter verdict on a node (nominated pods
	// added or not) is then a function of FilterClass, the node's
	// generation and the nominated pods, and plugins may memoize by it.
	// Empty otherwise. The framework sets it in PreFilter.
	FilterClass string
	// PodGroupCycle marks the cycle of a member of a pod group scheduled
	// as one (PostFilter does not run; the group's outcome decides).
	PodGroupCycle bool
}

type stateEntry struct {
	key StateKey
	val StateData
}

// NewCycleState returns an empty CycleState.
func NewCycleState() *CycleState { return &CycleState{} }

func (c *CycleState) entries() []stateEntry {
	if p := c.storage.Load(); p != nil {
		return *p
	}
	return nil
}

// Read returns the data at key, or ErrNotFound.
func (c *CycleState) Read(key StateKey) (StateData, error) {
	for _, e := range c.entries() {
		if e.key == key {
			return e.val, nil
		}
	}
	return nil, ErrNotFound
}

// Write stores data at key.
func (c *CycleState) Write(key StateKey, v StateData) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.entries()
	for i, e := range old {
		if e.key == key {
			// A reader may hold old: the replacement goes into a copy.
			next := append([]stateEntry(nil), old...)
			next[i].val = v
			c.storage.Store(&next)
			return
		}
	}
	if old == nil {
		old = make([]stateEntry, 0, 8)
	}
	// Appending past a reader's length never touches what it reads.
	next := append(old, stateEntry{key, v})
	c.storage.Store(&next)
}

// Delete removes key.
func (c *CycleState) Delete(key StateKey) {
	c.mu.Lock()
	old := c.entries()
	next := make([]stateEntry, 0, len(old))
	for _, e := range old {
		if e.key != key {
			next = append(next, e)
		}
	}
	c.storage.Store(&next)
	c.mu.Unlock()
}

// Clone deep-copies the state (used when a cycle is evaluated speculatively).
func (c *CycleState) Clone() *CycleState {
	if c == nil {
		return nil
	}
	out := NewCycleState()
	old := c.entries()
	next := make([]stateEntry, len(old))
	for i, e := range old {
		next[i] = stateEntry{e.key, e.val.Clone()}
	}
	out.storage.Store(&next)
	out.SkipFilterPlugins = c.SkipFilterPlugins.Clone()
	out.SkipScorePlugins = c.SkipScorePlugins.Clone()
	out.RecordPluginMetrics = c.RecordPluginMetrics
	out.PodInfo = c.PodInfo
	out.FilterClass = c.FilterClass
	out.PodGroupCycle = c.PodGroupCycle
	return out
}

// PodInfoOf returns the cycle's PodInfo when it is pod's, else one
// computed now: plugins get a pod's derived data without recomputing it
// in every cycle.
func (c *CycleState) PodInfoOf(pod *v1.Pod) *PodInfo {
	if c != nil && c.PodInfo != nil && c.PodInfo.Pod == pod {
		return c.PodInfo
	}
	return NewPodInfo(pod)
}
