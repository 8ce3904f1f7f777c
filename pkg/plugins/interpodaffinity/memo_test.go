package interpodaffinity

import (
	"context"
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/internal/testing/memocheck"
	"github.com/kubesched/kubesched/pkg/framework"
)

// existingPod is memocheck's pod: labeled app=web, api or db, in namespace
// default or (one in four) other, with required or preferred
// (anti-)affinity terms sometimes.
func existingPod(r *rand.Rand, name, node string) *v1.Pod {
	p := st.MakePod().Name(name).Label("app", []string{"web", "api", "db"}[r.Intn(3)]).Node(node)
	if r.Intn(4) == 0 {
		p.Namespace("other")
	}
	switch r.Intn(4) {
	case 0:
		p.PodAffinity(st.AffinityTerm(zone, []string{"web", "api"}[r.Intn(2)]))
	case 1:
		p.PreferredPodAntiAffinity(int32(1+r.Intn(5)), st.AffinityTerm(zone, "web"))
	case 2:
		p.PodAntiAffinity(st.AffinityTerm([]string{zone, v1.LabelHostname}[r.Intn(2)], []string{"web", "api"}[r.Intn(2)]))
	}
	return p.Obj()
}

// inEveryNamespace is term with namespaceSelector {}.
func inEveryNamespace(term v1.PodAffinityTerm) v1.PodAffinityTerm {
	term.NamespaceSelector = &metav1.LabelSelector{}
	return term
}

func memoPlugin(t *testing.T) func(framework.SharedLister) *InterPodAffinity {
	return func(l framework.SharedLister) *InterPodAffinity {
		pl, err := New(context.Background(), nil, st.FakeHandle{Lister: l})
		if err != nil {
			t.Fatal(err)
		}
		return pl.(*InterPodAffinity)
	}
}

// TestMemoizedIncomingCountsEqualARecount: across random cluster changes
// (memocheck), the counts PreFilter takes from its memos (the incoming
// pod's terms; existing pods' anti-affinity against it) equal a recount,
// for pods of term sets taking turns, two of them alike but for an
// empty namespaceSelector.
func TestMemoizedIncomingCountsEqualARecount(t *testing.T) {
	shapes := []*v1.Pod{
		st.MakePod().Name("p").Label("app", "web").PodAffinity(st.AffinityTerm(zone, "web")).Obj(),
		st.MakePod().Name("q").Label("app", "api").PodAntiAffinity(st.AffinityTerm(v1.LabelHostname, "api")).
			PodAntiAffinity(st.AffinityTerm(zone, "db")).Obj(),
		st.MakePod().Name("s").Namespace("other").PodAffinity(st.AffinityTerm(zone, "web", "default")).
			PodAntiAffinity(st.AffinityTerm(zone, "api")).Obj(),
		st.MakePod().Name("t").Label("app", "web").PodAffinity(inEveryNamespace(st.AffinityTerm(zone, "web"))).Obj(),
	}
	for _, seed := range []int64{3, 4} {
		memocheck.Run(t, memocheck.Config{Seed: seed, Steps: 400, Pod: existingPod}, memoPlugin(t),
			func(pl *InterPodAffinity, step int, nodes []*framework.NodeInfo) any {
				pod := shapes[step%len(shapes)]
				s := framework.NewCycleState()
				if _, st := pl.PreFilter(context.Background(), s, pod, nodes); !st.IsSuccess() {
					t.Fatal(st)
				}
				d, err := s.Read(preFilterStateKey)
				if err != nil {
					t.Fatal(err)
				}
				ps := d.(*preFilterState)
				return [3]pairCounts{ps.affinity, ps.anti, ps.existingAnti}
			}, cmp.AllowUnexported(topologyPair{}))
	}
}

// TestMemoizedScoresEqualARecount: the same for PreScore's domain scores:
// existing pods' required and preferred terms against the pod, and the
// pod's own preferred terms against existing pods.
func TestMemoizedScoresEqualARecount(t *testing.T) {
	shapes := []*v1.Pod{
		st.MakePod().Name("p").Label("app", "web").Obj(),
		st.MakePod().Name("q").Label("app", "api").PreferredPodAffinity(3, st.AffinityTerm(zone, "db")).Obj(),
		st.MakePod().Name("r").Label("app", "api").PreferredPodAffinity(3, inEveryNamespace(st.AffinityTerm(zone, "db"))).Obj(),
	}
	compared := 0
	memocheck.Run(t, memocheck.Config{Seed: 5, Steps: 400, Pod: existingPod}, memoPlugin(t),
		func(pl *InterPodAffinity, step int, nodes []*framework.NodeInfo) any {
			pod := shapes[step%len(shapes)]
			s := framework.NewCycleState()
			st := pl.PreScore(context.Background(), s, pod, nodes)
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
			compared++
			// PreScore's per-domain sums; the order of keys is the memo's.
			out := map[string]map[string]int64{}
			for _, ks := range d.(*preScoreState).scores {
				for v, n := range ks.values {
					if out[ks.key] == nil {
						out[ks.key] = map[string]int64{}
					}
					out[ks.key][v] = n
				}
			}
			return out
		})
	if compared < 200 {
		t.Errorf("only %d answers had scores to compare", compared)
	}
}
