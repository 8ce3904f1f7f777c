package memory

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kubesched/kubesched/pkg/framework"
)

func TestTheStorePlaysThePVControllerAtOnce(t *testing.T) {
	class := "local"
	claim := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "data", UID: "u1"},
		Spec: v1.PersistentVolumeClaimSpec{StorageClassName: &class, AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}}}}
	volume := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-a"}, Spec: v1.PersistentVolumeSpec{StorageClassName: class,
		Capacity: v1.ResourceList{v1.ResourceStorage: resource.MustParse("2Gi")}}, Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable}}
	tests := []struct {
		name       string
		write      func(s *Store) error
		wantVolume string
	}{
		{
			name: "a static volume given the claim is bound, and the claim to it",
			write: func(s *Store) error {
				pv := volume.DeepCopy()
				pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: "default", Name: "data", UID: "u1"}
				_, err := s.UpdatePersistentVolume(context.Background(), pv)
				return err
			},
			wantVolume: "pv-a",
		},
		{
			name: "a claim given a selected node gets a provisioned volume, bound",
			write: func(s *Store) error {
				pvc := claim.DeepCopy()
				pvc.Annotations = map[string]string{annSelectedNode: "n1"}
				_, err := s.UpdatePersistentVolumeClaim(context.Background(), pvc)
				return err
			},
			wantVolume: "pvc-u1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			listers, publish, err := framework.IndexedListers(claim.DeepCopy(), volume.DeepCopy())
			if err != nil {
				t.Fatal(err)
			}
			s := NewStore(testingclock.NewFakeClock(time.Unix(0, 0)))
			s.SetVolumes(listers, publish)
			if err := tt.write(s); err != nil {
				t.Fatal(err)
			}
			pvc, _ := listers.PersistentVolumeClaims.PersistentVolumeClaims("default").Get("data")
			if pvc.Spec.VolumeName != tt.wantVolume || pvc.Annotations[annBindCompleted] != "yes" || pvc.Status.Phase != v1.ClaimBound {
				t.Errorf("claim = %s %v %s, want bound to %s", pvc.Spec.VolumeName, pvc.Annotations, pvc.Status.Phase, tt.wantVolume)
			}
			pv, err := listers.PersistentVolumes.Get(tt.wantVolume)
			if err != nil || pv.Status.Phase != v1.VolumeBound || pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.Name != "data" {
				t.Errorf("volume %s = %+v (%v), want bound to claim data", tt.wantVolume, pv, err)
			}
		})
	}
}
