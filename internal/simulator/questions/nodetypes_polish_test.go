package questions

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"

	st "github.com/kubesched/kubesched/internal/testing"
)

// polish's moves from an answer: one node dropped, or made a cheaper
// candidate of its own zone that has room under its limit and that some
// pod can use, the largest saving first.
func TestPolishMovesAreOneNodeDroppedOrMadeACheaperTypeOfItsZone(t *testing.T) {
	node := func(cores string) *v1.Node {
		return st.MakeNode().Name("n" + cores).Capacity(map[v1.ResourceName]string{v1.ResourceCPU: cores, v1.ResourceMemory: "64Gi", v1.ResourcePods: "110"}).Obj()
	}
	types := []NodeType{
		{Type: "big", Zone: "a", Node: node("16"), Cost: 0.80, Limit: 10}, // 0
		{Type: "mid", Zone: "a", Node: node("8"), Cost: 0.40, Limit: 10},  // 1
		{Type: "small", Zone: "a", Node: node("2"), Cost: 0.10, Limit: 1}, // 2: at its limit below
		{Type: "tiny", Zone: "a", Node: node("1"), Cost: 0.05, Limit: 10}, // 3: no pod can use it
		{Type: "mid", Zone: "b", Node: node("8"), Cost: 0.30, Limit: 10},  // 4: another zone
	}
	s := &nodeTypeSearch{types: types, space: newPackSpace(types, []bool{true, true, true, false, true}, make([]v1.ResourceList, len(types)), false)}
	type move struct{ from, to int }
	var got []move
	for _, m := range s.polishMoves([]int{2, 1, 1, 0, 0}) {
		got = append(got, move{m.from, m.to})
	}
	want := []move{
		{0, -1}, // drop a big node: 0.80
		{0, 1},  // big made mid: 0.40
		{1, -1}, // drop a mid node: 0.40
		{2, -1}, // drop the small node: 0.10
	}
	if !slices.Equal(got, want) {
		t.Errorf("moves = %v, want %v", got, want)
	}
}
