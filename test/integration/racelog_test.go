package integration

import (
	"strings"
	"testing"
)

// triedBeforeNodeLeftCache reads kube-scheduler's log of the race it
// names. The lines are kube-scheduler v1.37.2's, from a CI run where the
// woken attempt's failure was written after the node left the NodeTree
// but its snapshot still held the node ("0/3 nodes" of 2 left).
func TestTriedBeforeNodeLeftCacheReadsUpstreamsLog(t *testing.T) {
	const (
		first   = `I1207 04:23:59.519029 4947 schedule_one.go:1194] "Unable to schedule pod; no fit; waiting" pod="default/web-new" err="0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match pod topology spread constraints."`
		removed = `I1207 04:23:59.704607 4947 node_tree.go:79] "Removed node from NodeTree" node="node-c" zone=":\x00:zone-c"`
		stale   = `I1207 04:23:59.705658 4947 schedule_one.go:1194] "Unable to schedule pod; no fit; waiting" pod="default/web-new" err="0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match pod topology spread constraints."`
		fresh   = `I1207 04:23:59.705658 4947 schedule_one.go:1194] "Unable to schedule pod; no fit; waiting" pod="default/web-new" err="0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match pod topology spread constraints."`
	)
	tests := []struct {
		name  string
		lines []string
		want  bool
	}{
		{name: "a second attempt logged before the node left the tree is the race", lines: []string{first, stale, removed}, want: true},
		{name: "an attempt logged after the removal that still counts the node is the race", lines: []string{first, removed, stale}, want: true},
		{name: "an attempt after the removal without the node is no race", lines: []string{first, removed, fresh}, want: false},
		{name: "no attempt after the first is no race", lines: []string{first, removed}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := triedBeforeNodeLeftCache(strings.Join(tt.lines, "\n"), "default/web-new", "node-c"); got != tt.want {
				t.Errorf("triedBeforeNodeLeftCache = %v, want %v", got, tt.want)
			}
		})
	}
}
