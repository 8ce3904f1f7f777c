package scheduler_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubesched/kubesched/internal/scheduler"
	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

// fakeExtender answers in process. reject names the nodes its Filter
// rejects (the message is the value; "!"-prefixed ones are unresolvable),
// scores the nodes its Prioritize gives, keep the nodes its
// ProcessPreemption keeps; err fails every call.
type fakeExtender struct {
	name      string
	reject    map[string]string
	scores    map[string]int64
	weight    int64
	binds     bool
	keep      map[string]bool
	err       error
	ignorable bool

	mu    sync.Mutex
	bound []string
}

func (f *fakeExtender) Name() string { return f.name }
func (f *fakeExtender) Filter(_ *v1.Pod, nodes []*framework.NodeInfo) ([]*framework.NodeInfo, extenderv1.FailedNodesMap, extenderv1.FailedNodesMap, error) {
	if f.err != nil {
		return nil, nil, nil, f.err
	}
	var out []*framework.NodeInfo
	failed, unresolvable := extenderv1.FailedNodesMap{}, extenderv1.FailedNodesMap{}
	for _, ni := range nodes {
		msg, ok := f.reject[ni.NodeName()]
		switch {
		case !ok:
			out = append(out, ni)
		case strings.HasPrefix(msg, "!"):
			unresolvable[ni.NodeName()] = msg[1:]
		default:
			failed[ni.NodeName()] = msg
		}
	}
	return out, failed, unresolvable, nil
}
func (f *fakeExtender) Prioritize(_ *v1.Pod, nodes []*framework.NodeInfo) (*extenderv1.HostPriorityList, int64, error) {
	if f.err != nil {
		return nil, 0, f.err
	}
	var l extenderv1.HostPriorityList
	for _, ni := range nodes {
		l = append(l, extenderv1.HostPriority{Host: ni.NodeName(), Score: f.scores[ni.NodeName()]})
	}
	return &l, f.weight, nil
}
func (f *fakeExtender) Bind(b *v1.Binding) error {
	if f.err != nil {
		return f.err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bound = append(f.bound, b.Name+"->"+b.Target.Name)
	return nil
}
func (f *fakeExtender) IsBinder() bool            { return f.binds }
func (f *fakeExtender) IsFilter() bool            { return f.reject != nil || f.err != nil }
func (f *fakeExtender) IsPrioritizer() bool       { return f.scores != nil }
func (f *fakeExtender) IsInterested(*v1.Pod) bool { return true }
func (f *fakeExtender) SupportsPreemption() bool  { return f.keep != nil }
func (f *fakeExtender) IsIgnorable() bool         { return f.ignorable }
func (f *fakeExtender) ProcessPreemption(_ *v1.Pod, victims map[string]*extenderv1.Victims, _ framework.NodeInfoLister) (map[string]*extenderv1.Victims, error) {
	out := map[string]*extenderv1.Victims{}
	for n, v := range victims {
		if f.keep[n] {
			out[n] = v
		}
	}
	return out, nil
}

func cpuNode(name, cpu string) *v1.Node {
	return st.MakeNode().Name(name).Capacity(rl{v1.ResourceCPU: cpu, v1.ResourceMemory: "8Gi", v1.ResourcePods: "110"}).Obj()
}

func TestExtendersInTheSchedulingCycle(t *testing.T) {
	tests := []struct {
		name      string
		extenders []*fakeExtender
		nodes     []*v1.Node
		// wantNode is where pod "p" is bound ("" for not bound).
		wantNode string
		// wantMessage is a prefix of the PodScheduled condition's message.
		wantMessage string
		wantReason  string
		// wantExtenderBinds: what the binding extender bound.
		wantExtenderBinds string
	}{
		{
			name:        "an extender's rejections are counted in the FitError beside the plugins'",
			extenders:   []*fakeExtender{{name: "lic", reject: map[string]string{"a": "no licence", "b": "!wrong rack", "c": "no licence"}}},
			nodes:       []*v1.Node{cpuNode("a", "4"), cpuNode("b", "4"), cpuNode("c", "4"), cpuNode("tiny", "0")},
			wantMessage: "0/4 nodes are available: 1 Insufficient cpu, 1 wrong rack, 2 no licence.",
			wantReason:  v1.PodReasonUnschedulable,
		},
		{
			name:      "extenders filter in turn, each on what the previous one left",
			extenders: []*fakeExtender{{name: "one", reject: map[string]string{"a": "one says no"}}, {name: "two", reject: map[string]string{"b": "two says no"}}},
			nodes:     []*v1.Node{cpuNode("a", "4"), cpuNode("b", "4"), cpuNode("c", "4")},
			wantNode:  "c",
		},
		{
			name:      "a prioritizer's score times its weight times 10 outweighs the plugins'",
			extenders: []*fakeExtender{{name: "prio", scores: map[string]int64{"small": 10}, weight: 2}},
			nodes:     []*v1.Node{cpuNode("big", "64"), cpuNode("small", "2")},
			wantNode:  "small",
		},
		{
			name:              "a binding extender binds in place of the Bind plugins",
			extenders:         []*fakeExtender{{name: "binder", binds: true}},
			nodes:             []*v1.Node{cpuNode("a", "4")},
			wantExtenderBinds: "p->a",
		},
		{
			name:      "an ignorable extender's error is skipped",
			extenders: []*fakeExtender{{name: "flaky", err: errors.New("connection refused"), ignorable: true, scores: map[string]int64{}}},
			nodes:     []*v1.Node{cpuNode("a", "4")},
			wantNode:  "a",
		},
		{
			name:        "a non-ignorable extender's error fails the cycle with it",
			extenders:   []*fakeExtender{{name: "broken", err: errors.New("connection refused")}},
			nodes:       []*v1.Node{cpuNode("a", "4"), cpuNode("b", "4")},
			wantMessage: "connection refused",
			wantReason:  v1.PodReasonSchedulerError,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var exts []framework.Extender
			for _, e := range tt.extenders {
				exts = append(exts, e)
			}
			e := newEnvWith(t, nil, nil, []scheduler.Option{scheduler.WithExtenders(exts...)})
			for _, n := range tt.nodes {
				e.add(t, n)
			}
			e.add(t, st.MakePod().Name("p").UID("p").Req(rl{v1.ResourceCPU: "1"}).Obj())
			e.drain()
			p := e.pod(t, "p")
			if p.Spec.NodeName != tt.wantNode {
				t.Errorf("bound to %q, want %q", p.Spec.NodeName, tt.wantNode)
			}
			if tt.wantMessage != "" {
				c := condition(p)
				if c == nil || c.Reason != tt.wantReason || !strings.HasPrefix(c.Message, tt.wantMessage) {
					t.Errorf("condition = %+v, want %s with a message starting %q", c, tt.wantReason, tt.wantMessage)
				}
			}
			var bound []string
			for _, x := range tt.extenders {
				bound = append(bound, x.bound...)
			}
			if got := strings.Join(bound, ","); got != tt.wantExtenderBinds {
				t.Errorf("extender bound %q, want %q", got, tt.wantExtenderBinds)
			}
			if tt.wantExtenderBinds != "" {
				evs := e.store.Events()
				if len(evs) != 1 || evs[0].Reason != "Scheduled" {
					t.Errorf("events = %+v, want the Scheduled event after the extender's binding", evs)
				}
			}
		})
	}
}

func TestAnExtenderRejectionMakesAnyEventWakeThePod(t *testing.T) {
	ext := &fakeExtender{name: "lic", reject: map[string]string{"a": "no licence"}}
	e := newEnvWith(t, nil, nil, []scheduler.Option{scheduler.WithExtenders(ext)})
	e.add(t, cpuNode("a", "4"), st.MakePod().Name("p").UID("p").Req(rl{v1.ResourceCPU: "1"}).Obj())
	e.drain()
	if _, _, u := e.sched.Queue.Counts(); u != 1 {
		t.Fatalf("unschedulable pods = %d, want 1", u)
	}
	// A node's label change interests no plugin that rejected the pod;
	// only the extender's registration (every event) moves it.
	delete(ext.reject, "a")
	n := cpuNode("a", "4")
	n.Labels = map[string]string{"licence": "yes"}
	if err := e.store.UpdateNode(n); err != nil {
		t.Fatal(err)
	}
	e.store.Flush()
	e.clock.Step(10 * 1e9)
	e.drain()
	if got := e.pod(t, "p").Spec.NodeName; got != "a" {
		t.Errorf("after the node changed the pod is on %q, want a", got)
	}
}

func TestPreemptionAsksTheExtenders(t *testing.T) {
	ext := &fakeExtender{name: "pre", keep: map[string]bool{"b": true}}
	e := newEnvWith(t, nil, nil, []scheduler.Option{scheduler.WithExtenders(ext)})
	e.add(t, cpuNode("a", "1"), cpuNode("b", "1"),
		st.MakePod().Name("low-a").UID("low-a").Node("a").Priority(1).Req(rl{v1.ResourceCPU: "1"}).Obj(),
		st.MakePod().Name("low-b").UID("low-b").Node("b").Priority(1).Req(rl{v1.ResourceCPU: "1"}).Obj(),
		st.MakePod().Name("high").UID("high").Priority(100).Req(rl{v1.ResourceCPU: "1"}).Obj())
	e.drain()
	if got := e.pod(t, "high").Status.NominatedNodeName; got != "b" {
		t.Errorf("nominated %q, want b (the only candidate the extender kept; a comes first in node order)", got)
	}
	if _, ok := e.store.GetPod("default", "low-b"); ok {
		t.Error("the victim on b is still there")
	}
	if _, ok := e.store.GetPod("default", "low-a"); !ok {
		t.Error("the pod on a was evicted though the extender dropped a")
	}
}

func TestWithoutScoringTheFirstFeasibleNodeIsTaken(t *testing.T) {
	cfg := &configv1.KubeSchedulerConfiguration{Profiles: []configv1.KubeSchedulerProfile{{
		Plugins: &configv1.Plugins{Score: configv1.PluginSet{Disabled: []configv1.Plugin{{Name: "*"}}}},
	}}}
	e := newEnv(t, nil, cfg)
	e.add(t, cpuNode("a", "8"), cpuNode("b", "8"), cpuNode("c", "8"))
	for _, p := range []string{"p0", "p1", "p2", "p3"} {
		e.add(t, st.MakePod().Name(p).UID(p).Req(rl{v1.ResourceCPU: "1"}).Obj())
	}
	e.drain()
	var got []string
	for _, p := range []string{"p0", "p1", "p2", "p3"} {
		got = append(got, e.pod(t, p).Spec.NodeName)
	}
	// One node found per cycle, the rotating start moving past it.
	if strings.Join(got, ",") != "a,b,c,a" {
		t.Errorf("placements = %v, want a,b,c,a", got)
	}
}

// TestANonCacheCapableExtendersNodesAreScoredAsItSentThem: an extender
// that is not node-cache-capable answers with Node objects, which upstream
// scores as NodeInfos of their own, without the pods on them; kubesched
// does the same, with the equivalence cache on or off.
func TestANonCacheCapableExtendersNodesAreScoredAsItSentThem(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var args extenderv1.ExtenderArgs
		_ = json.NewDecoder(r.Body).Decode(&args)
		_ = json.NewEncoder(w).Encode(extenderv1.ExtenderFilterResult{Nodes: args.Nodes})
	}))
	defer srv.Close()
	for _, cache := range []bool{true, false} {
		cfg := &configv1.KubeSchedulerConfiguration{Extenders: []configv1.Extender{{URLPrefix: srv.URL, FilterVerb: "filter"}}}
		e := newEnvWith(t, nil, cfg, []scheduler.Option{scheduler.WithEquivalenceCache(cache)})
		// With its pod, "busy" has 1 cpu of 8 free and "free" 3 of 4:
		// LeastAllocated prefers "free". Without it, "busy" has 8 of 8.
		e.add(t, cpuNode("busy", "8"), cpuNode("free", "4"),
			st.MakePod().Name("running").UID("running").Node("busy").Req(rl{v1.ResourceCPU: "7"}).Obj(),
			st.MakePod().Name("p").UID("p").Req(rl{v1.ResourceCPU: "500m"}).Obj())
		e.drain()
		if got := e.pod(t, "p").Spec.NodeName; got != "busy" {
			t.Errorf("equivalence cache %v: bound to %q, want busy (scored without its pod, as upstream)", cache, got)
		}
	}
}
