package framework

import (
	"errors"
	"sync"

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
	mu      sync.RWMutex
	storage map[StateKey]StateData
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
	// Equivalence is the runtime's handle on its equivalence cache for
	// this cycle (nil: not used). Plugins never touch it; Clone drops it,
	// so speculative evaluations (preemption) run uncached.
	Equivalence any
}

// NewCycleState returns an empty CycleState.
func NewCycleState() *CycleState {
	return &CycleState{storage: map[StateKey]StateData{}}
}

// Read returns the data at key, or ErrNotFound.
func (c *CycleState) Read(key StateKey) (StateData, error) {
	c.mu.RLock()
	v, ok := c.storage[key]
	c.mu.RUnlock()
	if !ok {
		return nil, ErrNotFound
	}
	return v, nil
}

// Write stores data at key.
func (c *CycleState) Write(key StateKey, v StateData) {
	c.mu.Lock()
	c.storage[key] = v
	c.mu.Unlock()
}

// Delete removes key.
func (c *CycleState) Delete(key StateKey) {
	c.mu.Lock()
	delete(c.storage, key)
	c.mu.Unlock()
}

// Clone deep-copies the state (used when a cycle is evaluated speculatively).
func (c *CycleState) Clone() *CycleState {
	if c == nil {
		return nil
	}
	out := NewCycleState()
	c.mu.RLock()
	for k, v := range c.storage {
		out.storage[k] = v.Clone()
	}
	c.mu.RUnlock()
	out.SkipFilterPlugins = c.SkipFilterPlugins.Clone()
	out.SkipScorePlugins = c.SkipScorePlugins.Clone()
	out.RecordPluginMetrics = c.RecordPluginMetrics
	out.PodInfo = c.PodInfo
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
