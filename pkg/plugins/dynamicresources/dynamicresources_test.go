package dynamicresources

import (
	"context"
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

const driver = "gpu.example.com"

func unresolvable(reason string) string {
	return framework.UnschedulableAndUnresolvable.String() + ": " + reason
}

// newPlugin builds the plugin over a set of DRA objects, with its own
// manager and the given claim writer.
func newPlugin(t *testing.T, w framework.ClaimWriter, objs ...interface{}) (*DynamicResources, *Manager) {
	t.Helper()
	l, err := framework.StaticListers(objs...)
	if err != nil {
		t.Fatal(err)
	}
	m := NewManager(l)
	pl, err := New(context.Background(), nil, st.FakeHandle{Objects: objs, DRA: m, Claims: w})
	if err != nil {
		t.Fatal(err)
	}
	return pl.(*DynamicResources), m
}

func TestFilter(t *testing.T) {
	nodes := []*v1.Node{st.MakeNode().Name("a").Obj(), st.MakeNode().Name("b").Obj()}
	gpuClass := st.DeviceClass("gpu", driver)
	sliceA := st.MakeSlice("a", driver).Device("gpu-0", "model", "l4").Obj()
	sliceB := st.MakeSlice("b", driver).Device("gpu-0", "model", "h100").Obj()
	pod := st.MakePod().Name("p").UID("p").Claim("gpu", "c").Obj()
	other := st.MakePod().Name("other").UID("other").Obj()
	tests := []struct {
		name string
		pod  *v1.Pod
		objs []interface{}
		want map[string]string
	}{
		{name: "a pod without claims is not filtered", pod: st.MakePod().Name("p").Obj(),
			want: map[string]string{"a": "", "b": ""}},
		{name: "a claim is allocated on each node that has a device of its class",
			objs: []interface{}{gpuClass, sliceA, st.MakeClaim("c").Request("gpu", "gpu", 1).Obj()},
			want: map[string]string{"a": "", "b": unresolvable(ErrReasonCannotAllocate)}},
		{name: "a CEL selector of the request picks the node with the matching attribute",
			objs: []interface{}{gpuClass, sliceA, sliceB, st.MakeClaim("c").Request("gpu", "gpu", 1, `device.attributes["gpu.example.com"].model == "h100"`).Obj()},
			want: map[string]string{"a": unresolvable(ErrReasonCannotAllocate), "b": ""}},
		{name: "asking for more devices than a node has fails there",
			objs: []interface{}{gpuClass, sliceA, st.MakeClaim("c").Request("gpu", "gpu", 2).Obj()},
			want: map[string]string{"a": unresolvable(ErrReasonCannotAllocate), "b": unresolvable(ErrReasonCannotAllocate)}},
		{name: "a device another claim holds is not given again",
			objs: []interface{}{gpuClass, sliceA, st.MakeClaim("c").Request("gpu", "gpu", 1).Obj(),
				st.MakeClaim("held").Request("gpu", "gpu", 1).AllocatedOn("a", driver, "gpu-0").ReservedFor(other).Obj()},
			want: map[string]string{"a": unresolvable(ErrReasonCannotAllocate), "b": unresolvable(ErrReasonCannotAllocate)}},
		{name: "a claim allocated on one node is not available on the others",
			objs: []interface{}{gpuClass, sliceA, st.MakeClaim("c").Request("gpu", "gpu", 1).AllocatedOn("a", driver, "gpu-0").Obj()},
			want: map[string]string{"a": "", "b": unresolvable(ErrReasonNotAvailable)}},
		{name: "a device class that does not exist rejects every node in PreFilter",
			objs: []interface{}{sliceA, st.MakeClaim("c").Request("gpu", "missing", 1).Obj()},
			want: map[string]string{"a": unresolvable("request gpu: device class missing does not exist"), "b": unresolvable("request gpu: device class missing does not exist")}},
		{name: "a claim that does not exist rejects every node with kube-scheduler's words",
			objs: []interface{}{gpuClass, sliceA},
			want: map[string]string{"a": unresolvable(`could not find ResourceClaim "default/c"`), "b": unresolvable(`could not find ResourceClaim "default/c"`)}},
		{name: "a template's claim not generated yet rejects every node",
			pod:  st.MakePod().Name("p").Namespace("default").UID("p").ClaimFromTemplate("gpu", "tmpl", "").Obj(),
			objs: []interface{}{gpuClass, sliceA},
			want: map[string]string{"a": unresolvable(`pod "default/p": ResourceClaim not created yet`), "b": unresolvable(`pod "default/p": ResourceClaim not created yet`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.pod
			if p == nil {
				p = pod
			}
			pl, _ := newPlugin(t, nil, tt.objs...)
			if diff := cmp.Diff(tt.want, st.RunFilterAll(pl, p, st.NodeInfos(nodes, nil)...)); diff != "" {
				t.Errorf("verdicts (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestPreEnqueueWaitsForTheClaims(t *testing.T) {
	claim := st.MakeClaim("c").Request("gpu", "gpu", 1).Obj()
	tests := []struct {
		name string
		pod  *v1.Pod
		want string
	}{
		{name: "a pod without claims is enqueued", pod: st.MakePod().Name("p").Obj(), want: ""},
		{name: "a pod whose claim exists is enqueued", pod: st.MakePod().Name("p").Claim("gpu", "c").Obj(), want: ""},
		{name: "a pod whose claim is missing waits", pod: st.MakePod().Name("p").Claim("gpu", "nope").Obj(),
			want: unresolvable(`could not find ResourceClaim "default/nope"`)},
		{name: "a pod whose template's claim is not named in its status yet waits",
			pod:  st.MakePod().Name("p").ClaimFromTemplate("gpu", "tmpl", "").Obj(),
			want: unresolvable(`pod "default/p": ResourceClaim not created yet`)},
		{name: "a pod whose generated claim is not owned by it waits",
			pod:  st.MakePod().Name("p").UID("p").ClaimFromTemplate("gpu", "tmpl", "c").Obj(),
			want: unresolvable(`ResourceClaim default/c was not created for Pod default/p (Pod is not owner)`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.pod.Namespace = v1.NamespaceDefault
			pl, _ := newPlugin(t, nil, claim)
			if got := st.Verdict(pl.PreEnqueue(context.Background(), tt.pod)); got != tt.want {
				t.Errorf("PreEnqueue: %q, want %q", got, tt.want)
			}
		})
	}
}

func TestScoreFavoursTheFirstAvailableAlternative(t *testing.T) {
	nodes := []*v1.Node{st.MakeNode().Name("a").Obj(), st.MakeNode().Name("b").Obj()}
	objs := []interface{}{
		st.DeviceClass("big", driver, `device.attributes["gpu.example.com"].model == "h100"`),
		st.DeviceClass("small", driver, `device.attributes["gpu.example.com"].model == "l4"`),
		st.MakeSlice("a", driver).Device("gpu-0", "model", "l4").Obj(),
		st.MakeSlice("b", driver).Device("gpu-0", "model", "h100").Obj(),
		st.MakeClaim("c").FirstAvailable("gpu", "big", "small").Obj(),
	}
	pl, _ := newPlugin(t, nil, objs...)
	pod := st.MakePod().Name("p").UID("p").Claim("gpu", "c").Obj()
	ctx, state := context.Background(), framework.NewCycleState()
	nis := st.NodeInfos(nodes, nil)
	if _, s := pl.PreFilter(ctx, state, pod, nis); !s.IsSuccess() {
		t.Fatal(s)
	}
	var scores framework.NodeScoreList
	for _, ni := range nis {
		if s := pl.Filter(ctx, state, pod, ni); !s.IsSuccess() {
			t.Fatalf("Filter %s: %v", ni.NodeName(), s)
		}
		sc, s := pl.Score(ctx, state, pod, ni)
		if !s.IsSuccess() {
			t.Fatal(s)
		}
		scores = append(scores, framework.NodeScore{Name: ni.NodeName(), Score: sc})
	}
	// The first alternative scores 8 (FirstAvailableDeviceRequestMaxSize),
	// the second 7; normalized to 100 and 87 (upstream's 174 and 200 at
	// weight 2 in the conformance scenarios).
	if diff := cmp.Diff(framework.NodeScoreList{{Name: "a", Score: 7}, {Name: "b", Score: 8}}, scores); diff != "" {
		t.Errorf("raw scores (-want,+got):\n%s", diff)
	}
	if s := pl.NormalizeScore(ctx, state, pod, scores); !s.IsSuccess() {
		t.Fatal(s)
	}
	if diff := cmp.Diff(framework.NodeScoreList{{Name: "a", Score: 87}, {Name: "b", Score: 100}}, scores); diff != "" {
		t.Errorf("normalized scores (-want,+got):\n%s", diff)
	}
}

// recorder is a ClaimWriter that keeps what was written, as an API server
// would (resource versions counted up).
type recorder struct {
	claims  map[string]*resourceapi.ResourceClaim
	calls   []string
	version int
	// beforeStatus, if set, runs before a status update and may fail it
	// (a conflict) after changing the stored claim, as another writer.
	beforeStatus func(r *recorder, c *resourceapi.ResourceClaim) error
	// afterStatus, if set, changes what a status update stores (a
	// driver's device status).
	afterStatus func(c *resourceapi.ResourceClaim)
	// podStatus is the last extendedResourceClaimStatus patched.
	podStatus *v1.PodExtendedResourceClaimStatus
}

func newRecorder(objs ...interface{}) *recorder {
	r := &recorder{claims: map[string]*resourceapi.ResourceClaim{}}
	for _, o := range objs {
		if c, ok := o.(*resourceapi.ResourceClaim); ok {
			r.claims[c.Name] = c.DeepCopy()
		}
	}
	return r
}

func (r *recorder) write(call string, c *resourceapi.ResourceClaim) (*resourceapi.ResourceClaim, error) {
	r.version++
	c = c.DeepCopy()
	c.ResourceVersion = strconv.Itoa(r.version)
	r.claims[c.Name] = c
	r.calls = append(r.calls, call+" "+c.Name)
	return c, nil
}

func (r *recorder) GetResourceClaim(_ context.Context, _, name string) (*resourceapi.ResourceClaim, error) {
	r.calls = append(r.calls, "get "+name)
	return r.claims[name].DeepCopy(), nil
}

func (r *recorder) UpdateResourceClaim(_ context.Context, c *resourceapi.ResourceClaim) (*resourceapi.ResourceClaim, error) {
	return r.write("update", c)
}

func (r *recorder) UpdateResourceClaimStatus(_ context.Context, c *resourceapi.ResourceClaim) (*resourceapi.ResourceClaim, error) {
	if r.beforeStatus != nil {
		hook := r.beforeStatus
		r.beforeStatus = nil
		if err := hook(r, c); err != nil {
			r.calls = append(r.calls, "conflict "+c.Name)
			return nil, err
		}
	}
	if r.afterStatus != nil {
		c = c.DeepCopy()
		r.afterStatus(c)
	}
	return r.write("updateStatus", c)
}

func (r *recorder) RemoveClaimReservation(_ context.Context, c *resourceapi.ResourceClaim, uid types.UID) error {
	cur := r.claims[c.Name].DeepCopy()
	cur.Status.ReservedFor = slices.DeleteFunc(cur.Status.ReservedFor, func(ref resourceapi.ResourceClaimConsumerReference) bool { return ref.UID == uid })
	_, err := r.write("removeReservation", cur)
	return err
}
