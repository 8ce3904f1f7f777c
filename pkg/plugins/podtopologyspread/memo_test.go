package podtopologyspread

import (
	"context"
	"math/rand"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/internal/testing/memocheck"
	"github.com/kubesched/kubesched/pkg/framework"
)

// spreadNode is memocheck's node: in a zone or not (as memocheck's), with
// disk=ssd one time in two and a dedicated taint one time in four.
func spreadNode(r *rand.Rand, name string) *v1.Node {
	n := memocheck.DefaultNode(r, name)
	if r.Intn(2) == 0 {
		n.Labels["disk"] = "ssd"
	}
	if r.Intn(4) == 0 {
		n.Spec.Taints = []v1.Taint{{Key: "dedicated", Value: "x", Effect: v1.TaintEffectNoSchedule}}
	}
	return n
}

// spreadPods are the pods the tests schedule in turn: a DoNotSchedule
// constraint on zone, the same with node inclusion by affinity (Honor)
// for two node selections, with taints honored, a hostname constraint,
// the same as ScheduleAnyway, and none (the system defaults, via the Service).
func spreadPods() []*v1.Pod {
	honor := v1.NodeInclusionPolicyHonor
	withPolicy := func(p *st.PodWrapper, affinity, taints bool) *v1.Pod {
		if affinity {
			p.LastSpreadConstraint().NodeAffinityPolicy = &honor
		}
		if taints {
			p.LastSpreadConstraint().NodeTaintsPolicy = &honor
		}
		return p.Obj()
	}
	return []*v1.Pod{
		st.MakePod().Name("p").Label("app", "web").SpreadConstraint(1, zone, v1.DoNotSchedule, "web").Obj(),
		withPolicy(st.MakePod().Name("q").Label("app", "web").SpreadConstraint(1, zone, v1.DoNotSchedule, "web").NodeSelector("disk", "ssd"), true, false),
		withPolicy(st.MakePod().Name("r").Label("app", "web").SpreadConstraint(1, zone, v1.DoNotSchedule, "web"), true, false),
		withPolicy(st.MakePod().Name("s").Label("app", "api").SpreadConstraint(1, zone, v1.DoNotSchedule, "api").
			SpreadConstraint(2, v1.LabelHostname, v1.DoNotSchedule, "api"), false, true),
		st.MakePod().Name("t").Label("app", "api").SpreadConstraint(1, v1.LabelHostname, v1.ScheduleAnyway, "api").
			SpreadConstraint(3, v1.LabelHostname, v1.DoNotSchedule, "api").Obj(),
		st.MakePod().Name("u").Label("app", "web").Obj(),
	}
}

// TestMemoizedAnswersEqualARecount: across random cluster changes
// (memocheck), what PreFilter counts from its memo and Filter answers on
// every node from it, and what PreScore counts and Score answers, equal a
// recount from scratch, for pods of several shapes taking turns (PreFilter
// and PreScore of one pod keeping memos of their own in one set).
func TestMemoizedAnswersEqualARecount(t *testing.T) {
	service := &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: v1.ServiceSpec{Selector: map[string]string{"app": "web"}}}
	pods := spreadPods()
	type answer struct {
		Counts      []map[string]int
		Verdicts    map[string]string
		ScoreCounts []map[string]int64
		Scores      map[string]int64
	}
	scored := 0
	for _, seed := range []int64{7, 11} {
		memocheck.Run(t, memocheck.Config{Seed: seed, Node: spreadNode},
			func(l framework.SharedLister) *PodTopologySpread {
				pl, err := New(context.Background(), nil, st.FakeHandle{Lister: l, Objects: []interface{}{service}})
				if err != nil {
					t.Fatal(err)
				}
				return pl.(*PodTopologySpread)
			},
			func(pl *PodTopologySpread, step int, nodes []*framework.NodeInfo) any {
				// Even steps filter a pod, odd ones score it: a recount of
				// either starts from an empty set of memos.
				ctx, pod, s := context.Background(), pods[step/2%len(pods)], framework.NewCycleState()
				var a answer
				if step%2 == 0 {
					if _, status := pl.PreFilter(ctx, s, pod, nodes); !status.IsSuccess() {
						return status.Code().String()
					}
					d, _ := s.Read(preFilterStateKey)
					a.Counts, a.Verdicts = d.(*preFilterState).counts, map[string]string{}
					for _, ni := range nodes {
						a.Verdicts[ni.NodeName()] = st.Verdict(pl.Filter(ctx, s, pod, ni))
					}
					return a
				}
				if status := pl.PreScore(ctx, s, pod, nodes); !status.IsSuccess() {
					return status.Code().String()
				}
				d, _ := s.Read(preScoreStateKey)
				a.ScoreCounts, a.Scores = d.(*preScoreState).counts, map[string]int64{}
				for _, ni := range nodes {
					a.Scores[ni.NodeName()], _ = pl.Score(ctx, s, pod, ni)
				}
				scored++
				return a
			})
	}
	if scored < 150 {
		t.Errorf("only %d answers had scores to compare", scored)
	}
}
