package integration

import (
	"strings"
	"testing"
)

func TestTriedBeforeNodeLeftCache(t *testing.T) {
	failed := `I1206 05:09:06.168015 1 schedule_one.go:1194] "Unable to schedule pod; no fit; waiting" pod="default/web-new" err="0/3 nodes are available"`
	removed := `I1206 05:09:09.278020 1 node_tree.go:79] "Removed node from NodeTree" node="node-c" zone=":\x00:zone-c"`
	other := `I1206 05:09:06.168015 1 schedule_one.go:1194] "Unable to schedule pod; no fit; waiting" pod="default/other" err="0/3 nodes are available"`
	// After node-c's removal two nodes are left: an attempt that counts
	// two saw the removal; one that still counts three was tried on a
	// snapshot taken before it, its failure logged after (CI, 2026-12-07).
	fresh := `I1206 05:09:10.001000 1 schedule_one.go:1194] "Unable to schedule pod; no fit; waiting" pod="default/web-new" err="0/2 nodes are available"`
	for _, tc := range []struct {
		name string
		log  []string
		want bool
	}{
		{"a second failed attempt logged before the node left the cache is the race", []string{failed, failed, removed}, true},
		{"one failed attempt before the removal is the pod waiting for the event, not the race", []string{failed, removed}, false},
		{"an attempt after the removal that counts the nodes left is not the race", []string{failed, removed, fresh}, false},
		{"an attempt logged after the removal that still counts the node is the race", []string{failed, removed, failed}, true},
		{"another pod's attempts do not count", []string{failed, other, removed}, false},
		{"a log without the removal is not the race", []string{failed, failed}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := triedBeforeNodeLeftCache(strings.Join(tc.log, "\n"), "default/web-new", "node-c"); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
