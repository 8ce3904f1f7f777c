package defaultpreemption

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched/pkg/framework"
)

func memoNode(name string, index int) *framework.NodeInfo {
	ni := framework.NewNodeInfo()
	ni.SetNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}})
	ni.SetIndex(index)
	return ni
}

func TestDryRunMemoHoldsOnlyForTheSameNodeAndNominatedPods(t *testing.T) {
	nominee := framework.NewPodInfo(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "waiting", UID: "w"}})
	other := framework.NewPodInfo(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "other", UID: "o"}})
	noRoom := framework.NewStatus(framework.Unschedulable, "Insufficient cpu")
	tests := []struct {
		name      string
		change    func(ni *framework.NodeInfo) []*framework.PodInfo // returns the nominated pods now
		wantReuse bool
	}{
		{name: "an unchanged node with the same nominated pods gives the recorded status",
			change:    func(*framework.NodeInfo) []*framework.PodInfo { return []*framework.PodInfo{nominee} },
			wantReuse: true},
		{name: "a node whose content changed is dry-run again",
			change: func(ni *framework.NodeInfo) []*framework.PodInfo {
				ni.AddPod(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "new", UID: "n"}})
				return []*framework.PodInfo{nominee}
			}},
		{name: "a node with another pod nominated to it is dry-run again",
			change: func(*framework.NodeInfo) []*framework.PodInfo { return []*framework.PodInfo{nominee, other} }},
		{name: "a node whose nominated pod left is dry-run again",
			change: func(*framework.NodeInfo) []*framework.PodInfo { return nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m dryRunMemo
			ni := memoNode("n1", 1)
			c := m.classFor("class", 100, 3)
			c.record(ni, []*framework.PodInfo{nominee}, noRoom)
			nominated := tt.change(ni)
			got := m.classFor("class", 100, 3).failed(ni, nominated)
			if reused := got == noRoom; reused != tt.wantReuse {
				t.Errorf("reused = %v, want %v", reused, tt.wantReuse)
			}
		})
	}
}

func TestDryRunMemoKeepsClassesAndPrioritiesApart(t *testing.T) {
	var m dryRunMemo
	ni := memoNode("n0", 0)
	noRoom := framework.NewStatus(framework.Unschedulable, "Insufficient cpu")
	m.classFor("a", 100, 1).record(ni, nil, noRoom)
	if m.classFor("", 100, 1) != nil {
		t.Errorf("a pod without a class has a memo")
	}
	if st := m.classFor("a", 200, 1).failed(ni, nil); st != nil {
		t.Errorf("another priority reuses the dry run: %v", st)
	}
	if st := m.classFor("b", 100, 1).failed(ni, nil); st != nil {
		t.Errorf("another class reuses the dry run: %v", st)
	}
	for i := range maxDryRunClasses {
		m.classFor(fmt.Sprintf("filler-%d", i), 1, 1)
	}
	if len(m.classes) > maxDryRunClasses {
		t.Errorf("%d classes kept, at most %d", len(m.classes), maxDryRunClasses)
	}
	if st := m.classFor("a", 100, 1).failed(ni, nil); st != nil {
		t.Errorf("the least recently used class was not dropped: %v", st)
	}
}
