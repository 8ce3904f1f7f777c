package framework

import (
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// nodeList returns n NodeInfos named n0.. at their positions.
func nodeList(n int) []*NodeInfo {
	out := make([]*NodeInfo, n)
	for i := range out {
		ni := NewNodeInfo()
		ni.SetNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n%d", i)}})
		ni.SetIndex(i)
		out[i] = ni
	}
	return out
}

func TestStatusesOfAgreesWithGetForEveryNode(t *testing.T) {
	list := nodeList(5)
	other := nodeList(5) // the same names, another list
	rejected := NewStatus(Unschedulable, "too small")
	tests := []struct {
		name   string
		record func(m *NodeToStatus)
	}{
		{name: "statuses added for the list's own NodeInfos are read by position",
			record: func(m *NodeToStatus) { m.AddNew(list[3], rejected); m.AddNew(list[1], rejected) }},
		{name: "statuses added for another list's NodeInfos are read by name",
			record: func(m *NodeToStatus) { m.AddNew(other[2], rejected); m.AddNew(other[4], rejected) }},
		{name: "statuses set by name are read by name",
			record: func(m *NodeToStatus) { m.Set("n0", rejected); m.AddNew(list[4], rejected) }},
		{name: "statuses read by name once before are read the same",
			record: func(m *NodeToStatus) { m.AddNew(list[2], rejected); m.Get("n1") }},
		{name: "no status recorded gives every node the absent nodes' status",
			record: func(*NodeToStatus) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewNodeToStatus()
			tt.record(m)
			got := m.StatusesOf(list)
			for i, ni := range list {
				if want := m.Get(ni.NodeName()); got[i] != want {
					t.Errorf("%s: StatusesOf gives %v, Get %v", ni.NodeName(), got[i], want)
				}
			}
		})
	}
}

func TestFitErrorCountsEveryNodeOnce(t *testing.T) {
	list := nodeList(40)
	m := NewNodeToStatus()
	for i, ni := range list {
		// 20 distinct reason lists, past the short scan's 16.
		m.AddNew(ni, NewStatus(Unschedulable, fmt.Sprintf("reason %02d", i%20)))
	}
	fe := &FitError{NumAllNodes: 42, Diagnosis: Diagnosis{NodeToStatus: m}}
	var parts []string
	for r := 0; r < 20; r++ {
		parts = append(parts, fmt.Sprintf("2 reason %02d", r))
	}
	// The two nodes not recorded have the absent nodes' status, which
	// gives no reason.
	want := "0/42 nodes are available: " + strings.Join(parts, ", ") + "."
	if got := fe.Error(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestShareHistogramReusesOnlyTheSameStatuses(t *testing.T) {
	list := nodeList(3)
	statuses := func(reason string) *NodeToStatus {
		m := NewNodeToStatus()
		for _, ni := range list {
			m.AddNew(ni, NewStatus(Unschedulable, reason))
		}
		return m
	}
	shared := statuses("too small")
	first := &FitError{NumAllNodes: 3, Diagnosis: Diagnosis{NodeToStatus: shared}}
	_ = first.Error() // renders the histogram
	tests := []struct {
		name string
		next *FitError
		want string
	}{
		{name: "the same statuses give the first error's histogram",
			next: &FitError{NumAllNodes: 3, Diagnosis: Diagnosis{NodeToStatus: shared, PostFilterMsg: "preemption: none"}},
			want: "0/3 nodes are available: 3 too small. preemption: none"},
		{name: "statuses equal but not the same are counted again",
			next: &FitError{NumAllNodes: 3, Diagnosis: Diagnosis{NodeToStatus: statuses("taken")}},
			want: "0/3 nodes are available: 3 taken."},
		{name: "the same statuses over another node count are counted again",
			next: &FitError{NumAllNodes: 4, Diagnosis: Diagnosis{NodeToStatus: shared}},
			want: "0/4 nodes are available: 3 too small."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.next.ShareHistogram(first)
			if got := tt.next.Error(); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}
