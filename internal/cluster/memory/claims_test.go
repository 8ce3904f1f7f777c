package memory

import (
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"

	st "github.com/kubesched/kubesched/internal/testing"
)

// TestDeletingAPodReleasesItsClaimsAndCollectsThoseItControls: the
// resourceclaim controller's and the garbage collector's work on a
// deleted pod.
func TestDeletingAPodReleasesItsClaimsAndCollectsThoseItControls(t *testing.T) {
	const driver = "gpu.example.com"
	yes := true
	a := st.MakePod().Name("a").UID("a").Node("n1").ClaimFromTemplate("gpu", "one-gpu", "a-gpu-x").Claim("shared", "shared").Obj()
	b := st.MakePod().Name("b").UID("b").Node("n1").Claim("shared", "shared").Obj()
	generated := st.MakeClaim("a-gpu-x").Request("gpu", driver, 1).AllocatedOn("n1", driver, "gpu-0").ReservedFor(a).Obj()
	generated.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "a", UID: "a", Controller: &yes}}
	shared := st.MakeClaim("shared").Request("gpu", driver, 1).AllocatedOn("n1", driver, "gpu-1").ReservedFor(a).ReservedFor(b).Obj()
	tests := []struct {
		name        string
		delete      []*v1.Pod
		wantClaims  []string
		wantSharers int // pods left in the shared claim's reservedFor
		wantShared  bool
	}{
		{name: "a pod's generated claim is deleted with it; a claim it shares keeps the other pod",
			delete: []*v1.Pod{a}, wantClaims: []string{"shared"}, wantSharers: 1, wantShared: true},
		{name: "a claim nobody uses any more is deallocated, not deleted, when no pod controls it",
			delete: []*v1.Pod{a, b}, wantClaims: []string{"shared"}, wantSharers: 0, wantShared: false},
		{name: "a pod that controls no claim deletes none",
			delete: []*v1.Pod{b}, wantClaims: []string{"a-gpu-x", "shared"}, wantSharers: 1, wantShared: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewStore(testingclock.NewFakeClock(time.Unix(0, 0)))
			if err := s.SetClaims([]*resourceapi.ResourceClaim{generated, shared}, nil); err != nil {
				t.Fatal(err)
			}
			for _, p := range []*v1.Pod{a, b} {
				if err := s.AddPod(p); err != nil {
					t.Fatal(err)
				}
			}
			for _, p := range tt.delete {
				if err := s.DeletePod(p.Namespace, p.Name); err != nil {
					t.Fatal(err)
				}
			}
			var names []string
			for _, c := range s.Claims() {
				names = append(names, c.Name)
			}
			if !slices.Equal(names, tt.wantClaims) {
				t.Errorf("claims %v, want %v", names, tt.wantClaims)
			}
			c, _ := s.Claim("default", "shared")
			if len(c.Status.ReservedFor) != tt.wantSharers || (c.Status.Allocation != nil) != tt.wantShared {
				t.Errorf("shared claim reserved for %v, allocated %t; want %d pods, allocated %t", c.Status.ReservedFor, c.Status.Allocation != nil, tt.wantSharers, tt.wantShared)
			}
		})
	}
}
