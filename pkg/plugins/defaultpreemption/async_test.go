package defaultpreemption

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"

	"github.com/kubesched/kubesched/pkg/framework"
)

// fakeHandle records what asynchronous preemption asks of the world. Evict
// of a victim named in block waits until its channel is closed; Evict of
// a victim named in fail returns an error.
type fakeHandle struct {
	framework.Handle
	mu        sync.Mutex
	calls     []string
	pods      map[string]*v1.Pod // the world's pods by name
	nominated []*framework.PodInfo
	waiting   map[types.UID]*fakeWaitingPod
	block     map[string]chan struct{}
	fail      map[string]bool
	activated []string
	events    []string
}

func (h *fakeHandle) record(s string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, s)
}

func (h *fakeHandle) Calls() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.calls...)
}

func (h *fakeHandle) AsyncPreemption() bool                            { return true }
func (h *fakeHandle) Extenders() []framework.Extender                  { return nil }
func (h *fakeHandle) Parallelism() int                                 { return 4 }
func (h *fakeHandle) EventRecorder() events.EventRecorder              { return (*fakeRecorder)(h) }
func (h *fakeHandle) NominatedPodsForNode(string) []*framework.PodInfo { return h.nominated }

func (h *fakeHandle) GetWaitingPod(uid string) framework.WaitingPod {
	if wp, ok := h.waiting[types.UID(uid)]; ok {
		return wp
	}
	return nil
}

func (h *fakeHandle) ClearNominatedNodeName(_ context.Context, pod *v1.Pod) error {
	h.record("clear " + pod.Name)
	return nil
}

func (h *fakeHandle) Evict(_ context.Context, victim *v1.Pod, _ framework.Preemptor) error {
	if ch, ok := h.block[victim.Name]; ok {
		<-ch
	}
	if victim.Name == "vanished" {
		h.record("evict vanished: not found")
		return apierrors.NewNotFound(v1.Resource("pods"), victim.Name)
	}
	if h.fail[victim.Name] {
		h.record("evict " + victim.Name + " failed")
		return errors.New("the API server said no")
	}
	h.record("evict " + victim.Name)
	h.mu.Lock()
	now := metav1.Now()
	if p, ok := h.pods[victim.Name]; ok {
		p = p.DeepCopy()
		p.DeletionTimestamp = &now
		h.pods[victim.Name] = p
	}
	h.mu.Unlock()
	return nil
}

func (h *fakeHandle) GetPod(_, name string) (*v1.Pod, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	p, ok := h.pods[name]
	return p, ok
}

func (h *fakeHandle) Activate(pods ...*v1.Pod) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, p := range pods {
		h.activated = append(h.activated, p.Name)
	}
}

// fakeRecorder records each event as "REASON POD".
type fakeRecorder fakeHandle

func (r *fakeRecorder) Eventf(regarding, _ k8sruntime.Object, _, reason, _, _ string, _ ...interface{}) {
	h := (*fakeHandle)(r)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, reason+" "+regarding.(*v1.Pod).Name)
}

type fakeWaitingPod struct {
	framework.WaitingPod
	h    *fakeHandle
	name string
}

func (w *fakeWaitingPod) Preempt(plugin, msg string) bool {
	w.h.record(fmt.Sprintf("preempt %s in memory (%s: %s)", w.name, plugin, msg))
	return true
}

func testPod(name string, prio int32) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec: v1.PodSpec{Priority: &prio}}
}

func newTestPlugin(h *fakeHandle, pods ...*v1.Pod) *DefaultPreemption {
	h.pods = map[string]*v1.Pod{}
	for _, p := range pods {
		h.pods[p.Name] = p
	}
	return &DefaultPreemption{handle: h, exec: newExecutor()}
}

func TestAsyncPreemption(t *testing.T) {
	tests := []struct {
		name    string
		victims []string
		// nominatedLow and nominatedHigh are pods nominated to the node
		// with a lower and a higher priority than the preemptor's 10.
		nominatedLow, nominatedHigh string
		waiting                     []string
		fail                        []string
		wantCalls                   []string
		wantActivated               []string
		// wantEvents are the events sent, sorted.
		wantEvents []string
	}{
		{
			name:         "lower-priority nominations are cleared before the victims are deleted, the last victim alone and last",
			victims:      []string{"v1", "v2", "v3"},
			nominatedLow: "low", nominatedHigh: "high",
			wantCalls:  []string{"clear low", "evict v1", "evict v2", "evict v3"},
			wantEvents: []string{"Preempted v1", "Preempted v2", "Preempted v3"},
		},
		{
			name:          "a failed deletion spares the last victim and activates the preemptor",
			victims:       []string{"v1", "v2"},
			fail:          []string{"v1"},
			wantCalls:     []string{"evict v1 failed"},
			wantActivated: []string{"p"},
		},
		{
			name:          "a failed deletion of the last victim activates the preemptor",
			victims:       []string{"v1"},
			fail:          []string{"v1"},
			wantCalls:     []string{"evict v1 failed"},
			wantActivated: []string{"p"},
		},
		{
			name:          "a last victim waiting at Permit, preempted in memory, activates the preemptor, no deletion event will",
			victims:       []string{"v1", "v2"},
			waiting:       []string{"v2"},
			wantCalls:     []string{"evict v1", "preempt v2 in memory (DefaultPreemption: preempted)"},
			wantActivated: []string{"p"},
			wantEvents:    []string{"Preempted v1", "Preempted v2"},
		},
		{
			name:       "a victim already gone counts as preempted, with no event and no error",
			victims:    []string{"vanished", "v1"},
			wantCalls:  []string{"evict vanished: not found", "evict v1"},
			wantEvents: []string{"Preempted v1"},
		},
		{
			name:       "a victim already terminating gets no second call",
			victims:    []string{"v1", "gone"},
			wantCalls:  []string{"evict v1"},
			wantEvents: []string{"Preempted v1"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := &fakeHandle{waiting: map[types.UID]*fakeWaitingPod{}, fail: map[string]bool{}}
			preemptor := testPod("p", 10)
			var victims []*v1.Pod
			for _, n := range tc.victims {
				v := testPod(n, 1)
				if n == "gone" {
					now := metav1.Now()
					v.DeletionTimestamp = &now
				}
				victims = append(victims, v)
			}
			for _, n := range tc.waiting {
				h.waiting[types.UID("uid-"+n)] = &fakeWaitingPod{h: h, name: n}
			}
			for _, n := range tc.fail {
				h.fail[n] = true
			}
			if tc.nominatedLow != "" {
				h.nominated = append(h.nominated, framework.NewPodInfo(testPod(tc.nominatedLow, 5)))
			}
			if tc.nominatedHigh != "" {
				h.nominated = append(h.nominated, framework.NewPodInfo(testPod(tc.nominatedHigh, 20)))
			}
			pl := newTestPlugin(h, append([]*v1.Pod{preemptor}, victims...)...)
			pl.actuateAsync(preemptor, candidate{node: "n1", victims: victims})
			pl.exec.running.Wait()

			// The victims before the last are deleted in parallel, in any
			// order: sort the calls between the cleared nominations and
			// the last call.
			got := h.Calls()
			if tc.nominatedLow != "" && len(got) > 1 {
				sort.Strings(got[1 : len(got)-1])
			} else if len(got) > 1 {
				sort.Strings(got[:len(got)-1])
			}
			if diff := cmp.Diff(tc.wantCalls, got); diff != "" {
				t.Errorf("calls (-want,+got):\n%s", diff)
			}
			sort.Strings(h.events)
			if diff := cmp.Diff(tc.wantEvents, h.events); diff != "" {
				t.Errorf("events (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantActivated, h.activated); diff != "" {
				t.Errorf("activated (-want,+got):\n%s", diff)
			}
			if pl.isRunningPreemption(preemptor.UID) {
				t.Error("the preemptor is still running preemption after its goroutine ended")
			}
		})
	}
}

// TestPreEnqueueHoldsThePreemptorUntilItsLastVictimIsDeleted steps the
// goroutine through its deletions and asks PreEnqueue at each step.
func TestPreEnqueueHoldsThePreemptorUntilItsLastVictimIsDeleted(t *testing.T) {
	h := &fakeHandle{block: map[string]chan struct{}{"v1": make(chan struct{}), "v2": make(chan struct{})}}
	preemptor, other := testPod("p", 10), testPod("other", 10)
	v1Pod, v2Pod := testPod("v1", 1), testPod("v2", 1)
	pl := newTestPlugin(h, preemptor, other, v1Pod, v2Pod)
	ctx := context.Background()

	pl.actuateAsync(preemptor, candidate{node: "n1", victims: []*v1.Pod{v1Pod, v2Pod}})
	st := pl.PreEnqueue(ctx, preemptor)
	if st.Code() != framework.UnschedulableAndUnresolvable || st.Message() != msgWaitingForPreemption {
		t.Fatalf("while the first victim is being deleted: PreEnqueue = %v, want UnschedulableAndUnresolvable %q", st, msgWaitingForPreemption)
	}
	if st := pl.PreEnqueue(ctx, other); st != nil {
		t.Errorf("a pod that is not preempting: PreEnqueue = %v, want nil", st)
	}
	close(h.block["v1"])
	// The goroutine now waits in the last victim's deletion: it is
	// registered as pending, and still there and not terminating.
	waitFor(t, func() bool {
		pl.exec.mu.RLock()
		defer pl.exec.mu.RUnlock()
		_, ok := pl.exec.lastVictim[preemptor.UID]
		return ok
	})
	if st := pl.PreEnqueue(ctx, preemptor); st.IsSuccess() {
		t.Fatal("while the last victim is being deleted and still running: PreEnqueue let the preemptor in")
	}
	// Its deletion is seen (terminating) before the goroutine ends: the
	// preemptor is let in, or the deletion event would find it gated.
	h.mu.Lock()
	now := metav1.Now()
	term := v2Pod.DeepCopy()
	term.DeletionTimestamp = &now
	h.pods["v2"] = term
	h.mu.Unlock()
	if st := pl.PreEnqueue(ctx, preemptor); st != nil {
		t.Errorf("once the last victim is terminating: PreEnqueue = %v, want nil", st)
	}
	close(h.block["v2"])
	pl.exec.running.Wait()
	if st := pl.PreEnqueue(ctx, preemptor); st != nil {
		t.Errorf("after the goroutine ended: PreEnqueue = %v, want nil", st)
	}
}

// waitFor polls cond; the goroutine it waits on is unblocked already, so
// this is a handoff, not a timing assumption.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for i := 0; i < 1_000_000; i++ {
		if cond() {
			return
		}
		runtimeGosched()
	}
	t.Fatal("condition never held")
}

func TestSynchronousPreemptionRegistersNoGate(t *testing.T) {
	pl := &DefaultPreemption{handle: &fakeHandle{}}
	if st := pl.PreEnqueue(context.Background(), testPod("p", 10)); st != nil {
		t.Errorf("PreEnqueue = %v, want nil", st)
	}
	evs, err := pl.EventsToRegister(context.Background())
	if err != nil || len(evs) != 0 {
		t.Errorf("EventsToRegister = %v, %v; want none", evs, err)
	}
}

var runtimeGosched = runtime.Gosched
