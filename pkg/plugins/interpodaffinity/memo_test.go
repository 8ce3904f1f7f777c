package interpodaffinity

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

// TestMemoizedIncomingCountsEqualARecount: across a random sequence of
// cluster changes (pods added and removed, nodes added in the middle of
// the list, removed, relabeled), the counts PreFilter takes from its memos
// (the incoming pod's terms; existing pods' anti-affinity against it)
// equal a recount by a plugin without memos, for pods of three term sets
// taking turns.
func TestMemoizedIncomingCountsEqualARecount(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	newNode := randomNodes(r)
	var nodes []*framework.NodeInfo
	for i := 0; i < 30; i++ {
		nodes = append(nodes, newNode(i))
	}
	shapes := []*v1.Pod{
		st.MakePod().Name("p").Label("app", "web").PodAffinity(st.AffinityTerm(zone, "web")).Obj(),
		st.MakePod().Name("q").Label("app", "api").PodAntiAffinity(st.AffinityTerm(v1.LabelHostname, "api")).
			PodAntiAffinity(st.AffinityTerm(zone, "db")).Obj(),
		st.MakePod().Name("s").Namespace("other").PodAffinity(st.AffinityTerm(zone, "web", "default")).
			PodAntiAffinity(st.AffinityTerm(zone, "api")).Obj(),
	}
	counts := func(pl framework.Plugin, pod *v1.Pod) [3]pairCounts {
		s := framework.NewCycleState()
		if _, st := pl.(framework.PreFilterPlugin).PreFilter(context.Background(), s, pod, nodes); !st.IsSuccess() {
			t.Fatal(st)
		}
		d, err := s.Read(preFilterStateKey)
		if err != nil {
			t.Fatal(err)
		}
		ps := d.(*preFilterState)
		return [3]pairCounts{ps.affinity, ps.anti, ps.existingAnti}
	}
	memoized := newPlugin(t, nil, nodes)
	next := 30
	for step := 0; step < 400; step++ {
		nodes = changeCluster(t, r, nodes, &next, step, newNode)
		// The snapshot the plugin lists nodes from follows the changes.
		memoized.(*InterPodAffinity).handle = newPlugin(t, nil, nodes).(*InterPodAffinity).handle
		pod := shapes[step%len(shapes)]
		got := counts(memoized, pod)
		want := counts(newPlugin(t, nil, nodes), pod) // no memo yet: counts every node
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(topologyPair{})); diff != "" {
			t.Fatalf("step %d, pod %s: memoized counts differ from a recount (-recount,+memo):\n%s", step, pod.Name, diff)
		}
	}
}

// changeCluster applies one random change: a pod lands or goes (with
// required or preferred affinity sometimes), a node joins somewhere in
// the list, leaves, or changes zone.
func changeCluster(t *testing.T, r *rand.Rand, nodes []*framework.NodeInfo, next *int, step int, newNode func(int) *framework.NodeInfo) []*framework.NodeInfo {
	zones := []string{"a", "b", "c"}
	switch op := r.Intn(6); {
	case op <= 1: // a pod lands on a node
		ni := nodes[r.Intn(len(nodes))]
		app := []string{"web", "api", "db"}[r.Intn(3)]
		p := st.MakePod().Name(fmt.Sprintf("x%d", step)).Label("app", app).Node(ni.NodeName())
		switch r.Intn(4) {
		case 0:
			p.PodAffinity(st.AffinityTerm(zone, []string{"web", "api"}[r.Intn(2)]))
		case 1:
			p.PreferredPodAntiAffinity(int32(1+r.Intn(5)), st.AffinityTerm(zone, "web"))
		case 2:
			p.PodAntiAffinity(st.AffinityTerm([]string{zone, v1.LabelHostname}[r.Intn(2)], []string{"web", "api"}[r.Intn(2)]))
		}
		ni.AddPod(p.Obj())
	case op == 2: // a pod goes
		ni := nodes[r.Intn(len(nodes))]
		if len(ni.Pods()) > 0 {
			if err := ni.RemovePod(ni.Pods()[r.Intn(len(ni.Pods()))].Pod); err != nil {
				t.Fatal(err)
			}
		}
	case op == 3: // a node joins somewhere in the list
		i := r.Intn(len(nodes) + 1)
		nodes = append(nodes[:i], append([]*framework.NodeInfo{newNode(*next)}, nodes[i:]...)...)
		*next++
	case op == 4 && len(nodes) > 5: // a node leaves
		i := r.Intn(len(nodes))
		nodes = append(nodes[:i], nodes[i+1:]...)
	default: // a node changes zone
		ni := nodes[r.Intn(len(nodes))]
		n := ni.Node().DeepCopy()
		n.Labels[zone] = zones[r.Intn(len(zones))]
		ni.SetNode(n)
	}
	return nodes
}

// TestMemoizedScoresEqualARecount: the same for PreScore's domain scores:
// existing pods' required and preferred terms against the pod, and the
// pod's own preferred terms against existing pods.
func TestMemoizedScoresEqualARecount(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	newNode := randomNodes(r)
	var nodes []*framework.NodeInfo
	for i := 0; i < 30; i++ {
		nodes = append(nodes, newNode(i))
	}
	shapes := []*v1.Pod{
		st.MakePod().Name("p").Label("app", "web").Obj(),
		st.MakePod().Name("q").Label("app", "api").PreferredPodAffinity(3, st.AffinityTerm(zone, "db")).Obj(),
	}
	// scores reads PreScore's per-domain sums, or nil when it skipped.
	scores := func(pl framework.Plugin, pod *v1.Pod) map[string]map[string]int64 {
		s := framework.NewCycleState()
		st := pl.(framework.PreScorePlugin).PreScore(context.Background(), s, pod, nodes)
		if st.IsSkip() {
			return nil
		}
		if !st.IsSuccess() {
			t.Fatal(st)
		}
		d, err := s.Read(preScoreStateKey)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]map[string]int64{}
		for _, ks := range d.(*preScoreState).scores {
			for v, n := range ks.values {
				if n != 0 {
					if out[ks.key] == nil {
						out[ks.key] = map[string]int64{}
					}
					out[ks.key][v] = n
				}
			}
		}
		return out
	}
	var memoized framework.Plugin
	next, compared := 30, 0
	for step := 0; step < 400; step++ {
		nodes = changeCluster(t, r, nodes, &next, step, newNode)
		// The snapshot the plugin lists nodes from follows the changes.
		fresh := newPlugin(t, nil, nodes)
		if memoized == nil {
			memoized = fresh
		} else {
			memoized.(*InterPodAffinity).handle = fresh.(*InterPodAffinity).handle
		}
		pod := shapes[step%len(shapes)]
		got, want := scores(memoized, pod), scores(newPlugin(t, nil, nodes), pod)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("step %d, pod %s: memoized scores differ from a recount (-recount,+memo):\n%s", step, pod.Name, diff)
		}
		if want != nil {
			compared++
		}
	}
	if compared < 100 {
		t.Errorf("only %d steps had scores to compare", compared)
	}
}

// randomNodes returns a maker of nodes named n000..., most of them in one
// of three zones (some lack the zone label).
func randomNodes(r *rand.Rand) func(int) *framework.NodeInfo {
	zones := []string{"a", "b", "c"}
	return func(i int) *framework.NodeInfo {
		n := st.MakeNode().Name(fmt.Sprintf("n%03d", i))
		if r.Intn(5) > 0 {
			n.Label(zone, zones[r.Intn(len(zones))])
		}
		return st.NodeInfo(n.Obj())
	}
}
