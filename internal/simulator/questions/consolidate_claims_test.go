package questions_test

import (
	"context"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/questions"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	st "github.com/kubesched/kubesched/internal/testing"
)

// TestADrainCountsTheDevicesAndVolumesOfThePodsThatStay holds that a
// drained world sees the devices and volumes the settled cluster's pods
// hold (claims generated and allocated, volumes bound as the cluster
// settled), and frees the devices of the evicted pods for their
// replacements.
func TestADrainCountsTheDevicesAndVolumesOfThePodsThatStay(t *testing.T) {
	const driver = "gpu.example.com"
	owned := func(p *v1.Pod, kind string) *v1.Pod {
		yes := true
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: "owner", UID: "owner", Controller: &yes}}
		return p
	}
	gpuNode := func(name, price string, gpus ...string) []runtime.Object {
		n := st.MakeNode().Name(name).Label("kubernetes.io/hostname", name).Capacity(map[v1.ResourceName]string{"cpu": "8", "memory": "32Gi", "pods": "110"}).Obj()
		n.Annotations = map[string]string{questions.HourlyCostAnnotation: price}
		s := st.MakeSlice(name, driver)
		for _, g := range gpus {
			s.Device(g)
		}
		return []runtime.Object{n, s.Obj()}
	}
	fromTemplate := func(name string) *v1.Pod {
		return owned(st.MakePod().Name(name).Req(map[v1.ResourceName]string{"cpu": "1"}).ClaimFromTemplate("gpu", "one-gpu", "").Obj(), "ReplicaSet")
	}
	shared := owned(st.MakePod().Name("trainer").UID("trainer").Node("n1").Req(map[v1.ResourceName]string{"cpu": "1"}).Claim("gpu", "trainer-gpu").Obj(), "ReplicaSet")
	withVolume := func(name string) []runtime.Object {
		return []runtime.Object{owned(st.MakePod().Name(name).Req(map[v1.ResourceName]string{"cpu": "1"}).Volume(name+"-data").Obj(), "StatefulSet"),
			st.MakePVC(name+"-data", "10Gi").Class("local").Obj()}
	}
	localPV := func(node string) *v1.PersistentVolume {
		return st.MakePV("pv-"+node, "10Gi", "local").NodeAffinityIn("kubernetes.io/hostname", node).Obj()
	}
	common := []runtime.Object{st.StorageClass("local", storagev1.VolumeBindingWaitForFirstConsumer, "kubernetes.io/no-provisioner"), st.DeviceClass(driver, driver), st.ClaimTemplate("one-gpu", driver, 1)}
	tests := []struct {
		name       string
		objs       [][]runtime.Object
		wantRemove []string
	}{
		{name: "two pods holding the only GPU of each of two nodes keep both nodes",
			objs:       [][]runtime.Object{gpuNode("n1", "2", "gpu-0"), gpuNode("n2", "1", "gpu-0"), {fromTemplate("a"), fromTemplate("b")}},
			wantRemove: []string{}},
		{name: "a pod's generated claim is made anew for its replacement on a node with a free GPU",
			objs:       [][]runtime.Object{gpuNode("n1", "2", "gpu-0"), gpuNode("n2", "1", "gpu-0", "gpu-1"), {fromTemplate("a"), fromTemplate("b")}},
			wantRemove: []string{"n1"}},
		{name: "a pod whose named claim holds a device of the drained node gets one on the node left",
			objs: [][]runtime.Object{gpuNode("n1", "2", "gpu-0"), gpuNode("n2", "1", "gpu-0"), {shared,
				st.MakeClaim("trainer-gpu").Request("gpu", driver, 1).AllocatedOn("n1", driver, "gpu-0").ReservedFor(shared).Obj()}},
			wantRemove: []string{"n1"}},
		{name: "two pods whose claims bound the only local volume of each of two nodes keep both nodes",
			objs:       [][]runtime.Object{gpuNode("n1", "2"), gpuNode("n2", "1"), {localPV("n1"), localPV("n2")}, withVolume("a"), withVolume("b")},
			wantRemove: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := slices.Concat(append(tt.objs, common)...)
			res, err := questions.Consolidate(context.Background(), func() (*cluster.Cluster, error) { return simtest.LoadObjects(t, objs), nil }, worldMaker(t), questions.ConsolidateOptions{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(res.Remove, tt.wantRemove) {
				t.Errorf("remove %v, want %v (keep: %+v)", res.Remove, tt.wantRemove, res.Keep)
			}
		})
	}
}
