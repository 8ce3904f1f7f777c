package memory

import (
	"context"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	testingclock "k8s.io/utils/clock/testing"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

// heard records what the handlers hear.
type heard struct {
	events []string
}

func (h *heard) OnPodAdd(p *v1.Pod) {
	h.events = append(h.events, "add pod "+p.Name+" on "+p.Spec.NodeName)
}
func (h *heard) OnPodUpdate(_, p *v1.Pod)                                        { h.events = append(h.events, "update pod "+p.Name) }
func (h *heard) OnPodDelete(p *v1.Pod)                                           { h.events = append(h.events, "delete pod "+p.Name) }
func (h *heard) OnNodeAdd(n *v1.Node)                                            { h.events = append(h.events, "add node "+n.Name) }
func (h *heard) OnNodeUpdate(_, n *v1.Node)                                      { h.events = append(h.events, "update node "+n.Name) }
func (h *heard) OnNodeDelete(n *v1.Node)                                         { h.events = append(h.events, "delete node "+n.Name) }
func (h *heard) OnClusterEvent(framework.ClusterEvent, interface{}, interface{}) {}

// TestUndoWritesTheJournalsNodesAndPodsBack: what a drain does (a node
// deleted, its pods deleted, a copy created and bound elsewhere, a victim
// evicted) is undone: the store holds the very objects it held, the
// handlers hear each change back, and the evictions are forgotten.
func TestUndoWritesTheJournalsNodesAndPodsBack(t *testing.T) {
	n1, n2 := st.MakeNode().Name("n1").Obj(), st.MakeNode().Name("n2").Obj()
	a := st.MakePod().Name("a").UID("a").Node("n1").Obj()
	victim := st.MakePod().Name("victim").UID("v").Node("n2").Obj()
	stays := st.MakePod().Name("stays").UID("s").Node("n2").Obj()
	tests := []struct {
		name       string
		drain      func(s *Store) error
		wantHeard  []string
		wantRefuse bool
	}{
		{
			name: "a drained node, its pod, a copy bound elsewhere and its victim all come back as they were",
			drain: func(s *Store) error {
				if err := s.DeleteNode("n1"); err != nil {
					return err
				}
				if err := s.DeletePod("default", "a"); err != nil {
					return err
				}
				cp := a.DeepCopy()
				cp.Spec.NodeName = ""
				if err := s.AddPod(cp); err != nil {
					return err
				}
				if err := s.Evict(context.Background(), victim, framework.Preemptor{Namespace: "default", Name: "a"}); err != nil {
					return err
				}
				return s.Bind(context.Background(), &v1.Binding{ObjectMeta: cp.ObjectMeta, Target: v1.ObjectReference{Name: "n2"}})
			},
			wantHeard: []string{"delete pod a", "add node n1", "add pod a on n1", "add pod victim on n2"},
		},
		{
			name: "a journal of claim writes is refused",
			drain: func(s *Store) error {
				return s.AddClaim(st.MakeClaim("c").Request("gpu", "gpu.example.com", 1).Obj())
			},
			wantRefuse: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewStore(testingclock.NewFakeClock(time.Unix(0, 0)))
			if err := s.SetClaims(nil, nil); err != nil {
				t.Fatal(err)
			}
			for _, n := range []*v1.Node{n1, n2} {
				if err := s.AddNode(n); err != nil {
					t.Fatal(err)
				}
			}
			for _, p := range []*v1.Pod{a, victim, stays} {
				if err := s.AddPod(p); err != nil {
					t.Fatal(err)
				}
			}
			before := s.Pods()
			s.StartJournal()
			if err := tt.drain(s); err != nil {
				t.Fatal(err)
			}
			j := s.StopJournal()
			h := &heard{}
			s.SetHandler(h)
			s.pending = nil // what the drain's writes told is not this test's
			err := s.Undo(j)
			if tt.wantRefuse {
				if err == nil {
					t.Fatal("Undo of claim writes: no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			s.Flush()
			if !slices.Equal(s.Pods(), before) {
				t.Errorf("pods after undo %v, want the very objects %v", s.Pods(), before)
			}
			if nodes := s.Nodes(); len(nodes) != 2 || nodes[0] != n1 || nodes[1] != n2 {
				t.Errorf("nodes after undo %v, want n1 and n2 as they were", nodes)
			}
			if !slices.Equal(h.events, tt.wantHeard) {
				t.Errorf("handlers heard %q, want %q", h.events, tt.wantHeard)
			}
			if len(s.Evicted) != 0 {
				t.Errorf("evictions after undo %v, want none", s.Evicted)
			}
		})
	}
}
