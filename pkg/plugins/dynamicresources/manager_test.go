package dynamicresources

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

func withVersion(c *resourceapi.ResourceClaim, v string) *resourceapi.ResourceClaim {
	c = c.DeepCopy()
	c.ResourceVersion = v
	return c
}

func allocated(t *testing.T, m *Manager) []string {
	t.Helper()
	a, err := m.AllocatedState()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for id := range a.AllocatedDevices {
		out = append(out, id.String())
	}
	return out
}

func TestManagerFollowsClaims(t *testing.T) {
	free := withVersion(st.MakeClaim("c").Request("gpu", "gpu", 1).Obj(), "1")
	taken := withVersion(st.MakeClaim("c").Request("gpu", "gpu", 1).AllocatedOn("a", driver, "gpu-0").Obj(), "2")
	admin := withVersion(st.MakeClaim("c").Request("gpu", "gpu", 1).AllocatedOn("a", driver, "gpu-0").Obj(), "2")
	admin.Status.Allocation.Devices.Results[0].AdminAccess = ptr.To(true)
	tests := []struct {
		name  string
		steps func(m *Manager)
		want  []string
	}{
		{name: "an allocated claim's device is taken", steps: func(m *Manager) { m.OnClaimChange(free, taken) },
			want: []string{"gpu.example.com/a/gpu-0"}},
		{name: "a deallocation frees the device", steps: func(m *Manager) { m.OnClaimChange(free, taken); m.OnClaimChange(taken, free) }},
		{name: "a deleted claim frees its device", steps: func(m *Manager) { m.OnClaimChange(free, taken); m.OnClaimChange(taken, nil) }},
		{name: "a device with admin access is not taken", steps: func(m *Manager) { m.OnClaimChange(free, admin) }},
		{name: "an informer event older than the scheduler's own write is ignored", steps: func(m *Manager) {
			if err := m.AssumeClaimAfterAPICall(taken); err != nil {
				t.Fatal(err)
			}
			m.OnClaimChange(nil, free)
		}, want: []string{"gpu.example.com/a/gpu-0"}},
		{name: "the informer catching up replaces the assumed claim", steps: func(m *Manager) {
			if err := m.AssumeClaimAfterAPICall(taken); err != nil {
				t.Fatal(err)
			}
			m.OnClaimChange(free, withVersion(free, "3"))
		}},
		{name: "restoring an assumed claim goes back to the informer's", steps: func(m *Manager) {
			if err := m.AssumeClaimAfterAPICall(taken); err != nil {
				t.Fatal(err)
			}
			m.AssumedClaimRestore("default", "c")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := framework.StaticListers(free)
			if err != nil {
				t.Fatal(err)
			}
			m := NewManager(l)
			if _, err := m.GetClaim("default", "c"); err != nil {
				t.Fatal(err)
			}
			tt.steps(m)
			if diff := cmp.Diff(tt.want, allocated(t, m)); diff != "" {
				t.Errorf("allocated devices (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestClaimEventHints(t *testing.T) {
	pod := st.MakePod().Name("p").Namespace("default").UID("p").Claim("gpu", "c").Obj()
	mine := withVersion(st.MakeClaim("c").Request("gpu", "gpu", 1).Obj(), "1")
	mineAllocated := withVersion(st.MakeClaim("c").Request("gpu", "gpu", 1).AllocatedOn("a", driver, "gpu-0").Obj(), "2")
	other := withVersion(st.MakeClaim("other").Request("gpu", "gpu", 1).Obj(), "1")
	otherAllocated := withVersion(st.MakeClaim("other").Request("gpu", "gpu", 1).AllocatedOn("a", driver, "gpu-0").Obj(), "2")
	tests := []struct {
		name     string
		old, new *resourceapi.ResourceClaim
		want     framework.QueueingHint
	}{
		{name: "the pod's claim being created queues it", new: mine, want: framework.Queue},
		{name: "another claim being created does not", new: other, want: framework.QueueSkip},
		{name: "another claim being deallocated queues it", old: otherAllocated, new: other, want: framework.Queue},
		{name: "the pod's claim getting a new status queues it", old: mine, new: mineAllocated, want: framework.Queue},
		{name: "the pod's claim changing only its metadata does not", old: mine, new: withVersion(mine, "5"), want: framework.QueueSkip},
		{name: "an allocated claim being deleted queues it", old: otherAllocated, want: framework.Queue},
		{name: "an unallocated claim being deleted does not", old: other, want: framework.QueueSkip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, _ := newPlugin(t, nil, mine, other)
			var oldObj, newObj interface{}
			if tt.old != nil {
				oldObj = tt.old
			}
			if tt.new != nil {
				newObj = tt.new
			}
			got, err := pl.isSchedulableAfterClaimChange(klog.Background(), pod, oldObj, newObj)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("hint %v, want %v", got, tt.want)
			}
		})
	}
}
