package dynamicresources

import (
	"context"
	"fmt"
	testingclock "k8s.io/utils/clock/testing"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

// cycle runs PreFilter and Filter on every node, then Reserve on node; it
// returns the cycle state and the Filter verdicts.
func cycle(t *testing.T, pl *DynamicResources, pod *v1.Pod, nodes []*framework.NodeInfo, node string) (*framework.CycleState, map[string]string) {
	t.Helper()
	ctx, state := context.Background(), framework.NewCycleState()
	if _, s := pl.PreFilter(ctx, state, pod, nodes); !s.IsSuccess() {
		t.Fatalf("PreFilter: %v", s)
	}
	verdicts := map[string]string{}
	for _, ni := range nodes {
		verdicts[ni.NodeName()] = st.Verdict(pl.Filter(ctx, state, pod, ni))
	}
	if node != "" {
		if s := pl.Reserve(ctx, state, pod, node); !s.IsSuccess() {
			t.Fatalf("Reserve: %v", s)
		}
	}
	return state, verdicts
}

// TestTwoPodsNeverGetTheSameDevice: the last device of the cluster, asked
// for by two pods one after the other. The first one's allocation is in
// flight from Reserve on, so the second finds no device until the first
// gives it up (Unreserve) or has written it (PreBind, after which the
// claim itself holds it).
func TestTwoPodsNeverGetTheSameDevice(t *testing.T) {
	objs := []interface{}{
		st.DeviceClass("gpu", driver),
		st.MakeSlice("a", driver).Device("gpu-0").Obj(),
		st.MakeClaim("first").Request("gpu", "gpu", 1).Obj(),
		st.MakeClaim("second").Request("gpu", "gpu", 1).Obj(),
	}
	w := newRecorder(objs...)
	pl, m := newPlugin(t, w, objs...)
	nodes := st.NodeInfos([]*v1.Node{st.MakeNode().Name("a").Obj()}, nil)
	p1 := st.MakePod().Name("p1").UID("p1").Claim("gpu", "first").Obj()
	p2 := st.MakePod().Name("p2").UID("p2").Claim("gpu", "second").Obj()

	s1, v := cycle(t, pl, p1, nodes, "a")
	if v["a"] != "" {
		t.Fatalf("first pod: %q", v["a"])
	}
	if _, v = cycle(t, pl, p2, nodes, ""); v["a"] != unresolvable(ErrReasonCannotAllocate) {
		t.Errorf("second pod while the first's allocation is in flight: %q, want %q", v["a"], unresolvable(ErrReasonCannotAllocate))
	}

	pl.Unreserve(context.Background(), s1, p1, "a")
	if _, v = cycle(t, pl, p2, nodes, ""); v["a"] != "" {
		t.Errorf("second pod after the first gave the device up: %q, want it allocated", v["a"])
	}

	s1, _ = cycle(t, pl, p1, nodes, "a")
	if s := pl.PreBind(context.Background(), s1, p1, "a"); !s.IsSuccess() {
		t.Fatalf("PreBind: %v", s)
	}
	if m.GetPendingAllocation("claim-first") != nil {
		t.Error("the allocation is still in flight after PreBind wrote it")
	}
	if _, v = cycle(t, pl, p2, nodes, ""); v["a"] != unresolvable(ErrReasonCannotAllocate) {
		t.Errorf("second pod after the first's claim was written: %q, want %q", v["a"], unresolvable(ErrReasonCannotAllocate))
	}
}

func TestPreBindWritesTheAllocationAndTheReservation(t *testing.T) {
	objs := []interface{}{
		st.DeviceClass("gpu", driver),
		st.MakeSlice("a", driver).Device("gpu-0").Device("gpu-1").Obj(),
		st.MakeClaim("c").Request("gpu", "gpu", 2).Obj(),
	}
	w := newRecorder(objs...)
	pl, m := newPlugin(t, w, objs...)
	pod := st.MakePod().Name("p").UID("p").Claim("gpu", "c").Obj()
	state, _ := cycle(t, pl, pod, st.NodeInfos([]*v1.Node{st.MakeNode().Name("a").Obj()}, nil), "a")
	if s := pl.PreBind(context.Background(), state, pod, "a"); !s.IsSuccess() {
		t.Fatal(s)
	}
	// The finalizer in a normal update, then allocation and reservation in
	// the status, as upstream's bindClaim.
	if diff := cmp.Diff([]string{"update c", "updateStatus c"}, w.calls); diff != "" {
		t.Errorf("calls (-want,+got):\n%s", diff)
	}
	got := w.claims["c"]
	if diff := cmp.Diff([]string{resourceapi.Finalizer}, got.Finalizers); diff != "" {
		t.Errorf("finalizers (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff([]resourceapi.ResourceClaimConsumerReference{{Resource: "pods", Name: "p", UID: "p"}}, got.Status.ReservedFor); diff != "" {
		t.Errorf("reservedFor (-want,+got):\n%s", diff)
	}
	var devices []string
	for _, r := range got.Status.Allocation.Devices.Results {
		devices = append(devices, r.Request+"="+r.Pool+"/"+r.Device)
	}
	if diff := cmp.Diff([]string{"gpu=a/gpu-0", "gpu=a/gpu-1"}, devices); diff != "" {
		t.Errorf("allocated devices (-want,+got):\n%s", diff)
	}
	if got.Status.Allocation.AllocationTimestamp == nil {
		t.Error("no allocation timestamp (binding conditions are on by default in v1.37)")
	}
	// The manager counts the written claim's devices before any informer
	// event (assumed).
	if c, _ := m.GetClaim("default", "c"); c.Status.Allocation == nil {
		t.Error("the manager does not know the written claim")
	}
	a, _ := m.AllocatedState()
	if a.AllocatedDevices.Len() != 2 {
		t.Errorf("allocated devices %v, want the two written", a.AllocatedDevices.UnsortedList())
	}
}

func TestUnreserveTakesThePodOutOfReservedFor(t *testing.T) {
	pod := st.MakePod().Name("p").UID("p").Claim("gpu", "c").Obj()
	objs := []interface{}{
		st.DeviceClass("gpu", driver),
		st.MakeSlice("a", driver).Device("gpu-0").Obj(),
		st.MakeClaim("c").Request("gpu", "gpu", 1).AllocatedOn("a", driver, "gpu-0").ReservedFor(pod).Obj(),
	}
	w := newRecorder(objs...)
	pl, _ := newPlugin(t, w, objs...)
	state, _ := cycle(t, pl, pod, st.NodeInfos([]*v1.Node{st.MakeNode().Name("a").Obj()}, nil), "a")
	pl.Unreserve(context.Background(), state, pod, "a")
	if diff := cmp.Diff([]string{"removeReservation c"}, w.calls); diff != "" {
		t.Errorf("calls (-want,+got):\n%s", diff)
	}
	if n := len(w.claims["c"].Status.ReservedFor); n != 0 {
		t.Errorf("reservedFor has %d entries, want none", n)
	}
}

func TestPostFilterDeallocatesAClaimNobodyUses(t *testing.T) {
	pod := st.MakePod().Name("p").UID("p").Claim("gpu", "c").Obj()
	other := st.MakePod().Name("other").UID("other").Obj()
	tests := []struct {
		name      string
		claim     *resourceapi.ResourceClaim
		wantCalls []string
		want      string
	}{
		{name: "an allocated claim no pod uses is deallocated",
			claim:     st.MakeClaim("c").Request("gpu", "gpu", 1).AllocatedOn("b", driver, "gpu-0").Obj(),
			wantCalls: []string{"updateStatus c"}, want: "Unschedulable: deallocation of ResourceClaim completed"},
		{name: "an allocated claim another pod uses is left alone",
			claim: st.MakeClaim("c").Request("gpu", "gpu", 1).AllocatedOn("b", driver, "gpu-0").ReservedFor(other).Obj(),
			want:  "Unschedulable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := []interface{}{st.DeviceClass("gpu", driver), tt.claim}
			w := newRecorder(objs...)
			pl, _ := newPlugin(t, w, objs...)
			state, v := cycle(t, pl, pod, st.NodeInfos([]*v1.Node{st.MakeNode().Name("a").Obj()}, nil), "")
			if v["a"] != unresolvable(ErrReasonNotAvailable) {
				t.Fatalf("Filter: %q", v["a"])
			}
			_, s := pl.PostFilter(context.Background(), state, pod, nil)
			if got := st.Verdict(s); got != tt.want {
				t.Errorf("PostFilter: %q, want %q", got, tt.want)
			}
			if diff := cmp.Diff(tt.wantCalls, w.calls); diff != "" {
				t.Errorf("calls (-want,+got):\n%s", diff)
			}
			if tt.wantCalls != nil && w.claims["c"].Status.Allocation != nil {
				t.Error("the claim is still allocated")
			}
		})
	}
}

func TestPreBindRetriesOnConflict(t *testing.T) {
	conflict := apierrors.NewConflict(resourceapi.Resource("resourceclaims"), "c", nil)
	tests := []struct {
		name      string
		other     func(c *resourceapi.ResourceClaim) // what another writer did
		wantCalls []string
		wantErr   string
	}{
		{name: "a label added meanwhile: the claim is read again and written",
			other:     func(c *resourceapi.ResourceClaim) { c.Labels = map[string]string{"seen": "by-driver"} },
			wantCalls: []string{"update c", "conflict c", "get c", "updateStatus c"}},
		{name: "an allocation written meanwhile: PreBind fails as upstream's",
			other: func(c *resourceapi.ResourceClaim) {
				c.Status.Allocation = st.MakeClaim("x").Request("gpu", "gpu", 1).AllocatedOn("a", driver, "gpu-0").Obj().Status.Allocation
			},
			wantCalls: []string{"update c", "conflict c", "get c"},
			wantErr:   "claim default/c got allocated elsewhere in the meantime"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := []interface{}{
				st.DeviceClass("gpu", driver),
				st.MakeSlice("a", driver).Device("gpu-0").Obj(),
				st.MakeClaim("c").Request("gpu", "gpu", 1).Obj(),
			}
			w := newRecorder(objs...)
			w.beforeStatus = func(r *recorder, _ *resourceapi.ResourceClaim) error {
				cur := r.claims["c"].DeepCopy()
				tt.other(cur)
				r.claims["c"] = cur
				return conflict
			}
			pl, _ := newPlugin(t, w, objs...)
			pod := st.MakePod().Name("p").UID("p").Claim("gpu", "c").Obj()
			state, _ := cycle(t, pl, pod, st.NodeInfos([]*v1.Node{st.MakeNode().Name("a").Obj()}, nil), "a")
			s := pl.PreBind(context.Background(), state, pod, "a")
			if got := s.Message(); got != tt.wantErr {
				t.Errorf("PreBind: %q, want %q", got, tt.wantErr)
			}
			if diff := cmp.Diff(tt.wantCalls, w.calls); diff != "" {
				t.Errorf("calls (-want,+got):\n%s", diff)
			}
			if tt.wantErr == "" {
				got := w.claims["c"]
				if got.Labels["seen"] != "by-driver" || got.Status.Allocation == nil || len(got.Status.ReservedFor) != 1 {
					t.Errorf("written claim lost the other writer's change or ours: labels %v, allocation %v, reservedFor %v", got.Labels, got.Status.Allocation != nil, got.Status.ReservedFor)
				}
			}
		})
	}
}

// eventLog records events' reasons and notes.
type eventLog struct{ got []string }

func (l *eventLog) Eventf(_ runtime.Object, _ runtime.Object, _, reason, _, note string, args ...interface{}) {
	l.got = append(l.got, reason+": "+fmt.Sprintf(note, args...))
}

func TestPreBindWaitsForBindingConditions(t *testing.T) {
	tests := []struct {
		name       string
		conditions []metav1.Condition // what the driver set on the device
		cancel     bool               // the pod is deleted while PreBind waits
		want       string
		wantEvents []string
	}{
		{name: "a device whose binding condition is true binds at once",
			conditions: []metav1.Condition{{Type: "Attached", Status: metav1.ConditionTrue}},
			wantEvents: []string{"BindingConditionsPending: waiting for binding conditions for device on node a"}},
		{name: "a device whose failure condition is true fails PreBind",
			conditions: []metav1.Condition{{Type: "AttachFailed", Status: metav1.ConditionTrue, Reason: "NoPath", Message: "fabric down"}},
			want:       `device binding failed: claim=c, reason=NoPath, message="fabric down"`,
			wantEvents: []string{"BindingConditionsPending: waiting for binding conditions for device on node a"}},
		{name: "a device nobody attaches fails PreBind after bindingTimeout, on the scheduler's clock",
			// The allocation's age is past bindingTimeout at the check
			// after the 13th step of 5 s (65 s > 1 min).
			want:       "device binding timeout",
			wantEvents: []string{"BindingConditionsPending: waiting for binding conditions for device on node a"}},
		{name: "a wait ends at once when the binding cycle is cancelled (the pod was deleted)", cancel: true,
			want:       "context canceled",
			wantEvents: []string{"BindingConditionsPending: waiting for binding conditions for device on node a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			slice := st.MakeSlice("a", driver).Device("gpu-0").Obj()
			slice.Spec.Devices[0].BindingConditions = []string{"Attached"}
			slice.Spec.Devices[0].BindingFailureConditions = []string{"AttachFailed"}
			objs := []interface{}{st.DeviceClass("gpu", driver), slice, st.MakeClaim("c").Request("gpu", "gpu", 1).Obj()}
			w := newRecorder(objs...)
			w.afterStatus = func(c *resourceapi.ResourceClaim) {
				if len(tt.conditions) > 0 {
					c.Status.Devices = []resourceapi.AllocatedDeviceStatus{{Driver: driver, Pool: "a", Device: "gpu-0", Conditions: tt.conditions}}
				}
			}
			l, err := framework.StaticListers(objs...)
			if err != nil {
				t.Fatal(err)
			}
			m := NewManager(l)
			events := &eventLog{}
			args := &configv1.DynamicResourcesArgs{BindingTimeout: &metav1.Duration{Duration: time.Minute}}
			clk := testingclock.NewFakeClock(time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC))
			p, err := New(context.Background(), args, st.FakeHandle{Objects: objs, DRA: m, Claims: w, Recorder: events, Clk: clk})
			if err != nil {
				t.Fatal(err)
			}
			pl := p.(*DynamicResources)
			pod := st.MakePod().Name("p").UID("p").Claim("gpu", "c").Obj()
			state, _ := cycle(t, pl, pod, st.NodeInfos([]*v1.Node{st.MakeNode().Name("a").Obj()}, nil), "a")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan string)
			go func() { done <- pl.PreBind(ctx, state, pod, "a").Message() }()
			var got string
			for steps := 0; ; {
				select {
				case got = <-done:
				default:
					// PreBind waits on the clock: step it by the poll interval.
					if clk.HasWaiters() && tt.cancel {
						cancel()
					} else if clk.HasWaiters() {
						clk.Step(bindingConditionsPollInterval)
						steps++
					} else {
						goruntime.Gosched()
					}
					if steps > 100 {
						t.Fatal("PreBind still waits after 100 steps")
					}
					continue
				}
				break
			}
			if got != tt.want && (tt.want == "" || !strings.HasPrefix(got, tt.want+":")) {
				t.Errorf("PreBind: %q, want %q", got, tt.want)
			}
			if diff := cmp.Diff(tt.wantEvents, events.got); diff != "" {
				t.Errorf("events (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestPodGroupPostFilterDeallocatesWhatEachMembersPostFilterWould(t *testing.T) {
	members := []*v1.Pod{
		st.MakePod().Name("p1").UID("p1").InGroup("g").Claim("gpu", "c1").Obj(),
		st.MakePod().Name("p2").UID("p2").InGroup("g").Claim("gpu", "c2").Obj(),
	}
	tests := []struct {
		name string
		// tried are the members the failed cycle ran PreFilter for.
		tried     []int
		topology  bool
		gates     framework.Features
		wantCalls []string
		want      string
	}{
		{name: "each member's claim allocated where no node can use it is deallocated",
			tried: []int{0, 1}, wantCalls: []string{"updateStatus c1", "updateStatus c2"},
			want: "Unschedulable: deallocation and deletion of ResourceClaims completed"},
		{name: "a member the cycle did not try keeps its claim",
			tried: []int{0}, wantCalls: []string{"updateStatus c1"},
			want: "Unschedulable: deallocation and deletion of ResourceClaims completed"},
		{name: "a topology-constrained group is left alone while TopologyAwareWorkloadScheduling is on",
			tried: []int{0, 1}, topology: true, gates: framework.Features{GenericWorkload: true, TopologyAwareWorkloadScheduling: true},
			want: "Unschedulable"},
		{name: "a topology-constrained group is handled as any other while TopologyAwareWorkloadScheduling is off",
			tried: []int{0, 1}, topology: true, gates: framework.Features{GenericWorkload: true},
			wantCalls: []string{"updateStatus c1", "updateStatus c2"},
			want:      "Unschedulable: deallocation and deletion of ResourceClaims completed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := []interface{}{st.DeviceClass("gpu", driver),
				st.MakeClaim("c1").Request("gpu", "gpu", 1).AllocatedOn("b", driver, "gpu-0").Obj(),
				st.MakeClaim("c2").Request("gpu", "gpu", 1).AllocatedOn("b", driver, "gpu-1").Obj()}
			w := newRecorder(objs...)
			l, err := framework.StaticListers(objs...)
			if err != nil {
				t.Fatal(err)
			}
			p, err := New(context.Background(), nil, st.FakeHandle{Objects: objs, DRA: NewManager(l), Claims: w, Gates: tt.gates})
			if err != nil {
				t.Fatal(err)
			}
			pl := p.(*DynamicResources)
			nodes := st.NodeInfos([]*v1.Node{st.MakeNode().Name("a").Obj()}, nil)
			gs := framework.NewPodGroupCycleState()
			for _, i := range tt.tried {
				state, _ := cycle(t, pl, members[i], nodes, "")
				gs.SetMember(members[i], state)
			}
			pg := st.MakePodGroup("g").Gang(2)
			if tt.topology {
				pg = pg.Topology("rack")
			}
			g := &framework.QueuedPodGroupInfo{PodGroupInfo: &framework.PodGroupInfo{Namespace: "default", Name: "g", PodGroup: pg.Obj(), UnscheduledPods: members}}
			_, s := pl.PodGroupPostFilter(context.Background(), gs, g, nil)
			if got := st.Verdict(s); got != tt.want {
				t.Errorf("PodGroupPostFilter: %q, want %q", got, tt.want)
			}
			if diff := cmp.Diff(tt.wantCalls, w.calls); diff != "" {
				t.Errorf("calls (-want,+got):\n%s", diff)
			}
		})
	}
}
