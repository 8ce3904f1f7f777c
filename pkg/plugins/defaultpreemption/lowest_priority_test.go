package defaultpreemption

import (
	"math"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched/pkg/framework"
)

func podOfPriority(name string, prio int32) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)}, Spec: v1.PodSpec{Priority: &prio}}
}

func TestLowestPriorityFollowsTheNodesPods(t *testing.T) {
	ni := framework.NewNodeInfo()
	ni.SetNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}})
	ni.SetIndex(3)
	low := podOfPriority("low", 1)
	steps := []struct {
		name   string
		change func(t *testing.T)
		want   int32
	}{
		{name: "a node without pods has no lowest priority", change: func(*testing.T) {}, want: math.MaxInt32},
		{name: "pods of priority 10 and 5 make 5 the lowest", change: func(*testing.T) {
			ni.AddPod(podOfPriority("a", 10))
			ni.AddPod(podOfPriority("b", 5))
		}, want: 5},
		{name: "a pod of priority 1 added makes 1 the lowest", change: func(*testing.T) { ni.AddPod(low) }, want: 1},
		{name: "that pod removed makes 5 the lowest again", change: func(t *testing.T) {
			if err := ni.RemovePod(low); err != nil {
				t.Fatal(err)
			}
		}, want: 5},
	}
	var l lowestPriorities
	for _, s := range steps {
		s.change(t)
		if got := l.of(ni); got != s.want {
			t.Errorf("%s: lowest %d, want %d", s.name, got, s.want)
		}
	}
}
