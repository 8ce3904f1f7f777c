package testing

import (
	"context"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"

	"github.com/kubesched/kubesched/pkg/framework"
)

// NodeInfo builds a NodeInfo for node with pods on it.
func NodeInfo(node *v1.Node, pods ...*v1.Pod) *framework.NodeInfo {
	ni := framework.NewNodeInfo(pods...)
	ni.SetNode(node)
	return ni
}

// RunFilter runs a plugin's PreFilter (if any) then Filter on one node, as
// the runtime does: a PreFilter Skip means the Filter is not run.
func RunFilter(pl framework.Plugin, pod *v1.Pod, ni *framework.NodeInfo) *framework.Status {
	ctx := context.Background()
	state := framework.NewCycleState()
	if pf, ok := pl.(framework.PreFilterPlugin); ok {
		_, st := pf.PreFilter(ctx, state, pod, []*framework.NodeInfo{ni})
		if st.IsSkip() {
			return nil
		}
		if !st.IsSuccess() {
			return st
		}
	}
	return pl.(framework.FilterPlugin).Filter(ctx, state, pod, ni)
}

// RunScore runs PreScore (if any), Score on every node and NormalizeScore,
// returning the normalized scores by node name (nil when PreScore skipped).
func RunScore(pl framework.Plugin, pod *v1.Pod, nodes ...*framework.NodeInfo) (map[string]int64, *framework.Status) {
	ctx := context.Background()
	state := framework.NewCycleState()
	if ps, ok := pl.(framework.PreScorePlugin); ok {
		st := ps.PreScore(ctx, state, pod, nodes)
		if st.IsSkip() {
			return nil, st
		}
		if !st.IsSuccess() {
			return nil, st
		}
	}
	sp := pl.(framework.ScorePlugin)
	list := make(framework.NodeScoreList, len(nodes))
	for i, ni := range nodes {
		s, st := sp.Score(ctx, state, pod, ni)
		if !st.IsSuccess() {
			return nil, st
		}
		list[i] = framework.NodeScore{Name: ni.NodeName(), Score: s}
	}
	if ext := sp.ScoreExtensions(); ext != nil {
		if st := ext.NormalizeScore(ctx, state, pod, list); !st.IsSuccess() {
			return nil, st
		}
	}
	out := map[string]int64{}
	for _, s := range list {
		out[s.Name] = s.Score
	}
	return out, nil
}

// FakeHandle is a framework.Handle over a fixed snapshot lister.
type FakeHandle struct {
	framework.Handle
	Lister framework.SharedLister
	// Objects are served by Listers (namespaces, services, ...).
	Objects []interface{}
	// Writer receives volume writes (nil: VolumeWriter returns nil).
	Writer framework.VolumeWriter
	// DRA is the shared DRA manager (nil: plugins build their own).
	DRA framework.DRAManager
	// Claims receives ResourceClaim writes (nil: ClaimWriter returns nil).
	Claims framework.ClaimWriter
	// Recorder receives events (nil: EventRecorder returns nil).
	Recorder events.EventRecorder
	// Gates are what Features returns.
	Gates framework.Features
	// Clk is what Clock returns (nil: the real clock).
	Clk clock.WithTicker
	// Gone are the pods (namespace/name) GetPod reports deleted; every
	// other pod exists.
	Gone []string
	// Groups is what PodGroupManager returns.
	Groups framework.PodGroupManager
}

// PodGroupManager implements framework.Handle.
func (h FakeHandle) PodGroupManager() framework.PodGroupManager { return h.Groups }

// Clock implements framework.Handle.
func (h FakeHandle) Clock() clock.WithTicker {
	if h.Clk == nil {
		return clock.RealClock{}
	}
	return h.Clk
}

// GetPod implements framework.Handle: the pod exists unless it is in Gone.
func (h FakeHandle) GetPod(namespace, name string) (*v1.Pod, bool) {
	for _, k := range h.Gone {
		if k == namespace+"/"+name {
			return nil, false
		}
	}
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}, true
}

// GetNode implements framework.Handle: the nodes of Objects, else of
// Lister (a test's handle has no binding goroutine to race with).
func (h FakeHandle) GetNode(name string) (*v1.Node, bool) {
	for _, o := range h.Objects {
		if n, ok := o.(*v1.Node); ok && n.Name == name {
			return n, true
		}
	}
	if h.Lister == nil {
		return nil, false
	}
	ni, err := h.Lister.NodeInfos().Get(name)
	if err != nil || ni.Node() == nil {
		return nil, false
	}
	return ni.Node(), true
}

// ProfileName implements framework.Handle.
func (h FakeHandle) ProfileName() string { return v1.DefaultSchedulerName }

// Features implements framework.Handle.
func (h FakeHandle) Features() framework.Features { return h.Gates }

// EventRecorder implements framework.Handle.
func (h FakeHandle) EventRecorder() events.EventRecorder { return h.Recorder }

// SharedDRAManager implements framework.Handle.
func (h FakeHandle) SharedDRAManager() framework.DRAManager { return h.DRA }

// ClaimWriter implements framework.Handle.
func (h FakeHandle) ClaimWriter() framework.ClaimWriter { return h.Claims }

// VolumeWriter implements framework.Handle.
func (h FakeHandle) VolumeWriter() framework.VolumeWriter { return h.Writer }

// Listers implements framework.Handle.
func (h FakeHandle) Listers() framework.Listers {
	l, err := framework.StaticListers(h.Objects...)
	if err != nil {
		panic(err)
	}
	return l
}

// SnapshotSharedLister implements framework.Handle.
func (h FakeHandle) SnapshotSharedLister() framework.SharedLister { return h.Lister }
