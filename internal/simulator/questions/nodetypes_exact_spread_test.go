package questions

import "testing"

// A zone spread (maxSkew 1) of 31 pods of 1 CPU on nodes of its own puts
// at least ceil((31-(d-1))/d) pods in each of its d zones: a vector is
// admitted only when each zone's nodes have the room for that share. The
// candidates: 0 a 16-CPU node in zone a, 1 the same in zone b, 2 a 4-CPU
// node in zone b, 3 a tainted 16-CPU node in zone c the pods cannot run
// on (a domain all the same), 4 a node in zone d their affinity does not
// match (no domain).
func TestZoneSpreadAdmitsVectorsWhoseZonesHoldTheirShare(t *testing.T) {
	g := zoneSpread{n: 31, skew: 1, demand: []int64{1000}, zone: []int{0, 1, 1, 2, -1}, zones: 3,
		runs: []bool{true, true, true, false, true}}
	room := [][]int64{{16000}, {16000}, {4000}, {16000}, {16000}}
	tests := []struct {
		name   string
		counts []int
		want   bool
	}{
		{name: "one zone holds all 31 pods with two nodes", counts: []int{2, 0, 0, 0, 0}, want: true},
		{name: "one zone of one node cannot hold 31 pods", counts: []int{1, 0, 0, 0, 0}},
		{name: "two zones each holding 16 take their share of 15", counts: []int{1, 1, 0, 0, 0}, want: true},
		{name: "a zone of 4 CPUs cannot take its share of 15", counts: []int{2, 0, 1, 0, 0}},
		{name: "a tainted node makes its zone a domain with no room", counts: []int{2, 2, 0, 1, 0}},
		{name: "a node the pods' affinity does not match adds no domain", counts: []int{1, 1, 0, 0, 3}, want: true},
		{name: "no node is no room", counts: []int{0, 0, 0, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := g.admits(tt.counts, room, make([]int, 3)); got != tt.want {
				t.Errorf("admits(%v) = %v, want %v", tt.counts, got, tt.want)
			}
		})
	}
}

// Zone by zone, a vector's new nodes must hold the pods that can run in
// that zone only and each zone spread's share there: pods of different
// groups do not share room. Candidates: 0 an 8-CPU node in zone a, 1 the
// same in zone b. Pods pinned to zone a ask 6 CPUs; a spread of 10 pods
// of 1 CPU (maxSkew 1) runs on either.
func TestZoneNeedsAddPinnedPodsAndSpreadShares(t *testing.T) {
	zn := &zoneNeeds{zoneIdx: []int{0, 1}, zones: 2}
	zn.alloc(1)
	zn.pinned[0][0] = 6000
	zn.spreads = []zoneSpread{{n: 10, skew: 1, demand: []int64{1000}, zone: []int{0, 1}, zones: 2, runs: []bool{true, true}}}
	room := [][]int64{{8000}, {8000}}
	tests := []struct {
		name   string
		counts []int
		want   bool
	}{
		{name: "zone a holds the pinned pods and its share of the spread (5 of 10) on two nodes", counts: []int{2, 1}, want: true},
		{name: "zone a's one node cannot hold the pinned pods and a share of 5", counts: []int{1, 1}},
		{name: "zone a alone holds the pinned pods and all 10 spread pods on two nodes", counts: []int{2, 0}, want: true},
		{name: "zone b alone leaves the pinned pods no room", counts: []int{0, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := zn.admits(tt.counts, room); got != tt.want {
				t.Errorf("admits(%v) = %v, want %v", tt.counts, got, tt.want)
			}
		})
	}
}
