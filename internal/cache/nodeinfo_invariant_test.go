package cache

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

// content is everything a NodeInfo holds that its generation names (all
// but its index, which is where it sits in a snapshot's list).
func content(ni *framework.NodeInfo) string {
	var b strings.Builder
	uids := func(pis []*framework.PodInfo) []string {
		out := make([]string, 0, len(pis))
		for _, pi := range pis {
			out = append(out, string(pi.Pod.UID)+"@"+pi.Pod.ResourceVersion)
		}
		sort.Strings(out)
		return out
	}
	fmt.Fprintf(&b, "name=%q node=%p\n", ni.NodeName(), ni.Node())
	fmt.Fprintf(&b, "pods=%v affinity=%v antiAffinity=%v\n", uids(ni.Pods()), uids(ni.PodsWithAffinity()), uids(ni.PodsWithRequiredAntiAffinity()))
	fmt.Fprintf(&b, "requested=%+v nonZero=%+v allocatable=%+v\n", ni.Requested(), ni.NonZeroRequested(), ni.Allocatable())
	fmt.Fprintf(&b, "ports=%v features=%v\n", ni.UsedPorts(), ni.DeclaredFeatures())
	names := make([]string, 0, len(ni.ImageStates()))
	for name := range ni.ImageStates() {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		s := ni.ImageStates()[name]
		fmt.Fprintf(&b, "image %s: %d bytes on %d nodes\n", name, s.Size, s.NumNodes)
	}
	return b.String()
}

// generations records, per generation, the content of the first NodeInfo
// seen with it and how that NodeInfo was made.
type generations struct {
	t    *testing.T
	seen map[int64]seenInfo
}

type seenInfo struct {
	how, content string
}

// see checks that ni has the content of every NodeInfo seen before with
// its generation.
func (g *generations) see(how string, ni *framework.NodeInfo) {
	g.t.Helper()
	c := content(ni)
	if prev, ok := g.seen[ni.Generation()]; ok {
		if prev.content != c {
			g.t.Errorf("generation %d names two contents:\n%s:\n%s\n%s:\n%s", ni.Generation(), prev.how, prev.content, how, c)
		}
		return
	}
	g.seen[ni.Generation()] = seenInfo{how, c}
}

// changes runs a mutation of ni and checks that it gives ni a new
// generation.
func (g *generations) changes(how string, ni *framework.NodeInfo, mutate func()) {
	g.t.Helper()
	before := ni.Generation()
	mutate()
	if ni.Generation() == before {
		g.t.Errorf("%s kept generation %d", how, before)
	}
	g.see(how, ni)
}

// TestEqualGenerationMeansEqualContent builds NodeInfos every way the code
// does — NewNodeInfo and its methods, the cache's pod and node events,
// the snapshot it updates and the copies it dumps, a snapshot made from
// NodeInfos (explain), a copy with a pod removed (preemption's victims)
// or added (nominated pods) — and checks that two NodeInfos of one
// generation always hold the same content, and that every change makes
// a new generation.
func TestEqualGenerationMeansEqualContent(t *testing.T) {
	g := &generations{t: t, seen: map[int64]seenInfo{}}
	withImages := func(name string) *v1.Node {
		return st.MakeNode().Name(name).Capacity(rl{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi"}).Image(100, "img").Obj()
	}
	anti := v1.PodAffinityTerm{TopologyKey: v1.LabelHostname}
	p1 := st.MakePod().Name("p1").UID("p1").Node("n1").Req(rl{v1.ResourceCPU: "1"}).HostPort(80, v1.ProtocolTCP, "").PodAntiAffinity(anti).Obj()
	p2 := st.MakePod().Name("p2").UID("p2").Node("n2").Req(rl{v1.ResourceCPU: "2"}).Obj()
	p3 := st.MakePod().Name("p3").UID("p3").Node("n2").Req(rl{v1.ResourceCPU: "500m"}).Obj()

	// NewNodeInfo and the NodeInfo's own methods.
	ni := framework.NewNodeInfo(p1)
	g.see("NewNodeInfo(p1)", ni)
	g.changes("SetNode", ni, func() { ni.SetNode(withImages("n1")) })
	g.changes("AddPod", ni, func() { ni.AddPod(p3) })
	g.changes("RemovePod", ni, func() {
		if err := ni.RemovePod(p3); err != nil {
			t.Fatal(err)
		}
	})
	g.changes("SetImageStates", ni, func() {
		ni.SetImageStates(map[string]*framework.ImageStateSummary{"img": {Size: 100, NumNodes: 1}})
	})
	g.see("Snapshot of a NodeInfo", ni.Snapshot())
	g.changes("RemoveNode", ni, func() { ni.RemoveNode() })

	// The cache, its dumps and the snapshot it keeps up to date.
	c := newCache()
	snap := NewEmptySnapshot()
	observe := func(how string) {
		t.Helper()
		for name, d := range c.Dump() {
			g.see(how+": cache's "+name, d)
		}
		c.UpdateSnapshot(snap)
		list, _ := snap.List()
		for _, s := range list {
			g.see(how+": snapshot's "+s.NodeName(), s)
			copy := s.Snapshot()
			g.see(how+": copy of the snapshot's "+s.NodeName(), copy)
			if len(copy.Pods()) > 0 {
				victim := copy.Pods()[0].Pod
				g.changes(how+": preemption removing a victim from "+s.NodeName(), copy, func() {
					if err := copy.RemovePod(victim); err != nil {
						t.Fatal(err)
					}
				})
			}
			nominated := s.Snapshot()
			g.changes(how+": a nominated pod added to "+s.NodeName(), nominated, func() { nominated.AddPodInfo(framework.NewPodInfo(p3)) })
		}
	}
	steps := []struct {
		how string
		run func() error
	}{
		{"AddNode n1", func() error { c.AddNode(withImages("n1")); return nil }},
		{"AddNode n2", func() error { c.AddNode(withImages("n2")); return nil }},
		{"AddPod p1", func() error { return c.AddPod(p1) }},
		{"UpdatePod p1", func() error {
			p1b := p1.DeepCopy()
			p1b.ResourceVersion = "2"
			return c.UpdatePod(p1, p1b)
		}},
		{"AssumePod p2", func() error { return c.AssumePod(p2) }},
		{"ForgetPod p2", func() error { return c.ForgetPod(p2) }},
		{"AddPod p3", func() error { return c.AddPod(p3) }},
		{"UpdateNode n1", func() error {
			n1 := withImages("n1")
			n1.Labels = map[string]string{"changed": "yes"}
			c.UpdateNode(nil, n1)
			return nil
		}},
		{"RemoveNode n2 with a pod left", func() error { return c.RemoveNode(withImages("n2")) }},
		{"RemovePod p3", func() error { return c.RemovePod(p3) }},
	}
	for _, step := range steps {
		if err := step.run(); err != nil {
			t.Fatalf("%s: %v", step.how, err)
		}
		observe(step.how)
	}

	// A snapshot made straight from NodeInfos, as explain and tests do.
	var infos []*framework.NodeInfo
	for _, name := range []string{"a", "b"} {
		info := framework.NewNodeInfo()
		info.SetNode(withImages(name))
		g.see("NodeInfo "+name+" before NewSnapshot", info)
		infos = append(infos, info)
	}
	before := []int64{infos[0].Generation(), infos[1].Generation()}
	NewSnapshot(infos...)
	for i, info := range infos {
		g.see("NewSnapshot's "+info.NodeName(), info)
		if info.Generation() == before[i] && len(info.ImageStates()) > 0 {
			t.Errorf("NewSnapshot set %s's image states and kept its generation", info.NodeName())
		}
	}
}
