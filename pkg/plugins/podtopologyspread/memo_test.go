package podtopologyspread

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

// TestMemoizedCountsEqualARecount: across a random sequence of cluster
// changes (pods added and removed, nodes added in the middle of the list,
// removed, relabeled), the counts PreFilter takes from its memo equal a
// recount from scratch, for pods of two shapes taking turns.
func TestMemoizedCountsEqualARecount(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	zones := []string{"a", "b", "c"}
	newNode := func(i int) *framework.NodeInfo {
		n := st.MakeNode().Name(fmt.Sprintf("n%03d", i))
		if r.Intn(5) > 0 { // some nodes lack the zone label
			n.Label(zone, zones[r.Intn(len(zones))])
		}
		if r.Intn(4) == 0 {
			n.Taint("dedicated", "x", v1.TaintEffectNoSchedule)
		}
		return st.NodeInfo(n.Obj())
	}
	var nodes []*framework.NodeInfo
	for i := 0; i < 30; i++ {
		nodes = append(nodes, newNode(i))
	}
	honor := v1.NodeInclusionPolicyHonor
	shapes := []*v1.Pod{
		st.MakePod().Name("p").Label("app", "web").SpreadConstraint(1, zone, v1.DoNotSchedule, "web").Obj(),
		func() *v1.Pod {
			p := st.MakePod().Name("q").Label("app", "api").SpreadConstraint(1, zone, v1.DoNotSchedule, "api").
				SpreadConstraint(2, v1.LabelHostname, v1.DoNotSchedule, "api")
			p.LastSpreadConstraint().NodeTaintsPolicy = &honor
			return p.Obj()
		}(),
	}
	pl := newPlugin(t, nil, nodes)
	fresh := func(pod *v1.Pod) []map[string]int {
		other := newPlugin(t, nil, nodes) // no memo yet: counts every node
		s := framework.NewCycleState()
		if _, st := other.PreFilter(context.Background(), s, pod, nodes); !st.IsSuccess() {
			t.Fatal(st)
		}
		d, _ := s.Read(preFilterStateKey)
		return d.(*preFilterState).counts
	}
	next := 30
	for step := 0; step < 300; step++ {
		switch op := r.Intn(6); {
		case op <= 1: // a pod lands on a node
			ni := nodes[r.Intn(len(nodes))]
			app := []string{"web", "api", "db"}[r.Intn(3)]
			ni.AddPod(st.MakePod().Name(fmt.Sprintf("x%d", step)).Label("app", app).Node(ni.NodeName()).Obj())
		case op == 2: // a pod goes
			ni := nodes[r.Intn(len(nodes))]
			if len(ni.Pods()) > 0 {
				if err := ni.RemovePod(ni.Pods()[r.Intn(len(ni.Pods()))].Pod); err != nil {
					t.Fatal(err)
				}
			}
		case op == 3: // a node joins somewhere in the list
			i := r.Intn(len(nodes) + 1)
			nodes = append(nodes[:i], append([]*framework.NodeInfo{newNode(next)}, nodes[i:]...)...)
			next++
		case op == 4 && len(nodes) > 5: // a node leaves
			i := r.Intn(len(nodes))
			nodes = append(nodes[:i], nodes[i+1:]...)
		default: // a node changes zone
			ni := nodes[r.Intn(len(nodes))]
			n := ni.Node().DeepCopy()
			n.Labels[zone] = zones[r.Intn(len(zones))]
			ni.SetNode(n)
		}
		pod := shapes[step%len(shapes)]
		s := framework.NewCycleState()
		if _, st := pl.PreFilter(context.Background(), s, pod, nodes); !st.IsSuccess() {
			t.Fatal(st)
		}
		d, _ := s.Read(preFilterStateKey)
		if diff := cmp.Diff(fresh(pod), d.(*preFilterState).counts); diff != "" {
			t.Fatalf("step %d: memoized counts differ from a recount (-recount,+memo):\n%s", step, diff)
		}
	}
}

// liveLister serves whatever node list the test holds now.
type liveLister struct{ nodes *[]*framework.NodeInfo }

func (l liveLister) NodeInfos() framework.NodeInfoLister  { return l }
func (l liveLister) List() ([]*framework.NodeInfo, error) { return *l.nodes, nil }
func (l liveLister) HavePodsWithAffinityList() ([]*framework.NodeInfo, error) {
	return nil, fmt.Errorf("not used")
}
func (l liveLister) HavePodsWithRequiredAntiAffinityList() ([]*framework.NodeInfo, error) {
	return nil, fmt.Errorf("not used")
}
func (l liveLister) Get(name string) (*framework.NodeInfo, error) {
	for _, ni := range *l.nodes {
		if ni.NodeName() == name {
			return ni, nil
		}
	}
	return nil, fmt.Errorf("node %q not found", name)
}

// TestMemoizedScoringCountsEqualARecount: the same for PreScore's counts,
// with explicit ScheduleAnyway constraints and with the system default
// spreading of a Service-backed pod (nodes without a zone included).
func TestMemoizedScoringCountsEqualARecount(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	zones := []string{"a", "b", "c"}
	newNode := func(i int) *framework.NodeInfo {
		n := st.MakeNode().Name(fmt.Sprintf("n%03d", i))
		if r.Intn(5) > 0 {
			n.Label(zone, zones[r.Intn(len(zones))])
		}
		return st.NodeInfo(n.Obj())
	}
	var nodes []*framework.NodeInfo
	for i := 0; i < 30; i++ {
		nodes = append(nodes, newNode(i))
	}
	service := &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: v1.ServiceSpec{Selector: map[string]string{"app": "web"}}}
	handle := st.FakeHandle{Lister: liveLister{&nodes}, Objects: []interface{}{service}}
	plugin := func() *PodTopologySpread {
		pl, err := New(context.Background(), nil, handle)
		if err != nil {
			t.Fatal(err)
		}
		return pl.(*PodTopologySpread)
	}
	shapes := []*v1.Pod{
		st.MakePod().Name("p").Label("app", "web").Obj(), // system defaults, via the Service
		st.MakePod().Name("q").Label("app", "api").SpreadConstraint(1, zone, v1.ScheduleAnyway, "api").Obj(),
	}
	counts := func(pl *PodTopologySpread, pod *v1.Pod) []map[string]int64 {
		s := framework.NewCycleState()
		if st := pl.PreScore(context.Background(), s, pod, nodes); !st.IsSuccess() {
			t.Fatal(st)
		}
		d, _ := s.Read(preScoreStateKey)
		return d.(*preScoreState).counts
	}
	pl := plugin()
	next := 30
	for step := 0; step < 300; step++ {
		switch op := r.Intn(5); {
		case op <= 1:
			ni := nodes[r.Intn(len(nodes))]
			app := []string{"web", "api", "db"}[r.Intn(3)]
			ni.AddPod(st.MakePod().Name(fmt.Sprintf("x%d", step)).Label("app", app).Node(ni.NodeName()).Obj())
		case op == 2:
			ni := nodes[r.Intn(len(nodes))]
			if len(ni.Pods()) > 0 {
				if err := ni.RemovePod(ni.Pods()[r.Intn(len(ni.Pods()))].Pod); err != nil {
					t.Fatal(err)
				}
			}
		case op == 3:
			i := r.Intn(len(nodes) + 1)
			nodes = append(nodes[:i], append([]*framework.NodeInfo{newNode(next)}, nodes[i:]...)...)
			next++
		case len(nodes) > 5:
			i := r.Intn(len(nodes))
			nodes = append(nodes[:i], nodes[i+1:]...)
		}
		pod := shapes[step%len(shapes)]
		if diff := cmp.Diff(counts(plugin(), pod), counts(pl, pod)); diff != "" {
			t.Fatalf("step %d: memoized scoring counts differ from a recount (-recount,+memo):\n%s", step, diff)
		}
	}
}
