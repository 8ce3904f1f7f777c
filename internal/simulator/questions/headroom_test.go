package questions_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/questions"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	st "github.com/kubesched/kubesched/internal/testing"
)

// referenceHeadroom is capacity --headroom as it was first written, kept
// as the reference of the answer: for each workload, the cluster loaded
// and simulated afresh, then the workload scaled up one replica at a
// time (WorkloadCapacity).
func referenceHeadroom(ctx context.Context, load func() (*cluster.Cluster, error), newWorld func(*cluster.Cluster) (*simulator.World, error), limit int) ([]questions.WorkloadHeadroom, error) {
	first, err := load()
	if err != nil {
		return nil, err
	}
	var out []questions.WorkloadHeadroom
	for _, wl := range first.Workloads {
		if !referenceKinds[wl.Kind] || (wl.Kind == "ReplicaSet" && ownedReplicaSet(first, wl)) {
			continue
		}
		c, err := load()
		if err != nil {
			return nil, err
		}
		w, err := newWorld(c)
		if err != nil {
			return nil, err
		}
		hpa, replicas := c.HPAOf(wl.Kind, wl.Namespace, wl.Name)
		wlLimit := limit
		if hpa != nil {
			wlLimit = max(limit, int(hpa.Spec.MaxReplicas-replicas))
		}
		r, err := questions.WorkloadCapacity(ctx, w, wl.Kind, wl.Namespace, wl.Name, wlLimit)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", wl, err)
		}
		h := questions.WorkloadHeadroom{Kind: wl.Kind, Namespace: wl.Namespace, Name: wl.Name, More: r.Fits}
		if hpa != nil {
			h.HPA = &questions.HPAHeadroom{Name: hpa.Name, Replicas: replicas, MaxReplicas: hpa.Spec.MaxReplicas,
				Short: max(0, int(hpa.Spec.MaxReplicas-replicas)-r.Fits)}
		}
		if r.Next != nil {
			h.Reason = r.Next.Message
		} else {
			h.Reason = fmt.Sprintf("stopped at --max %d; more may fit", wlLimit)
		}
		out = append(out, h)
	}
	return out, nil
}

// referenceKinds are the workloads whose replicas can be added.
var referenceKinds = map[string]bool{"Deployment": true, "ReplicaSet": true, "StatefulSet": true, "ReplicationController": true, "Job": true}

// ownedReplicaSet: a ReplicaSet a Deployment of the input controls (the
// Deployment's headroom counts its pods).
func ownedReplicaSet(c *cluster.Cluster, wl cluster.Workload) bool {
	o, ok := c.WorkloadObject(c.WorkloadIndex(wl.Kind, wl.Namespace, wl.Name)).(metav1.Object)
	if !ok {
		return false
	}
	ref := metav1.GetControllerOf(o)
	return ref != nil && ref.Kind == "Deployment" && c.WorkloadIndex("Deployment", wl.Namespace, ref.Name) >= 0
}

// headroomNodes are n nodes over three zones.
func headroomNodes(n int, cpu, memory string) []runtime.Object {
	var out []runtime.Object
	for i := range n {
		out = append(out, st.MakeNode().Name(fmt.Sprintf("node-%d", i)).Label(v1.LabelTopologyZone, fmt.Sprintf("zone-%c", 'a'+i%3)).
			Capacity(map[v1.ResourceName]string{v1.ResourceCPU: cpu, v1.ResourceMemory: memory, v1.ResourcePods: "20"}).Obj())
	}
	return out
}

func app(name, cpu, memory string) *st.PodWrapper {
	return st.MakePod().Label("app", name).Req(map[v1.ResourceName]string{v1.ResourceCPU: cpu, v1.ResourceMemory: memory})
}

// TestHeadroomAnswersAsOneReplicaAtATime compares capacity --headroom
// with the reference, which counts each workload one replica at a time
// in a cluster simulated for it alone: the same rows (counts, reasons,
// HPA shortfalls), whether a workload was counted from the cluster
// simulated once (settled) or alone.
func TestHeadroomAnswersAsOneReplicaAtATime(t *testing.T) {
	big := headroomNodes(6, "4", "8Gi")
	tests := []struct {
		name  string
		objs  []runtime.Object
		limit int
		// settled is how many workloads are counted from the cluster
		// simulated once.
		settled int
	}{
		{name: "plain Deployments of different shapes fill the nodes by cpu, memory and pod slots", limit: 500, settled: 3,
			objs: append(clone(big), st.MakeDeployment("web", 4, app("web", "300m", "256Mi")),
				st.MakeDeployment("cache", 2, app("cache", "100m", "1500Mi")),
				st.MakeDeployment("tiny", 3, app("tiny", "0", "0")))},
		{name: "the limit stops a workload that has more room", limit: 7, settled: 1,
			objs: append(clone(big), st.MakeDeployment("web", 2, app("web", "100m", "64Mi")))},
		{name: "a workload with no room left answers none, with the scheduler's reason", limit: 100, settled: 2,
			objs: append(clone(big), st.MakeDeployment("hog", 6, app("hog", "3400m", "1Gi")),
				st.MakeDeployment("big", 1, app("big", "500m", "1Gi")))},
		{name: "pods that repel each other per node take one node each", limit: 100, settled: 2,
			objs: append(clone(big), st.MakeDeployment("ha", 2, app("ha", "100m", "64Mi").PodAntiAffinity(st.AffinityTerm(v1.LabelHostname, "ha"))),
				st.MakeDeployment("web", 3, app("web", "1", "1Gi")))},
		{name: "host ports allow one pod per node", limit: 100, settled: 1,
			objs: append(clone(big), st.MakeDeployment("agent", 1, app("agent", "100m", "64Mi").HostPort(8080, v1.ProtocolTCP, "")))},
		{name: "a Deployment spread over zones that must stay even is counted alone", limit: 100, settled: 1,
			objs: append(clone(big), st.MakeDeployment("spread", 3, app("spread", "500m", "64Mi").SpreadConstraint(1, v1.LabelTopologyZone, v1.DoNotSchedule, "spread")),
				st.MakeDeployment("web", 2, app("web", "700m", "1Gi")))},
		{name: "a PodDisruptionBudget changes nothing", limit: 100, settled: 1,
			objs: append(clone(big), st.MakeDeployment("web", 2, app("web", "700m", "1Gi")),
				&policyv1.PodDisruptionBudget{TypeMeta: metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
					ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
					Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(2)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}})},
		{name: "an HPA's workload is counted up to its maxReplicas past the limit", limit: 3, settled: 1,
			objs: append(clone(big), st.MakeDeployment("web", 2, app("web", "1", "1Gi")),
				&autoscalingv2.HorizontalPodAutoscaler{TypeMeta: metav1.TypeMeta{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"},
					ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
					Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MinReplicas: ptr.To(int32(2)), MaxReplicas: 40,
						ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}}})},
		{name: "a StatefulSet created in order, and one that repels itself", limit: 100, settled: 2,
			objs: append(clone(big), st.MakeStatefulSet("db", 2, app("db", "900m", "2Gi")).Obj(),
				st.MakeStatefulSet("quorum", 3, app("quorum", "100m", "64Mi").PodAntiAffinity(st.AffinityTerm(v1.LabelHostname, "quorum"))).Obj())},
		{name: "a StatefulSet whose claims are provisioned where its pods land, a class that binds when the pod is scheduled", limit: 100, settled: 1,
			objs: append(clone(big), st.StorageClass("zonal", storagev1.VolumeBindingWaitForFirstConsumer, "ebs.csi.aws.com"),
				st.MakeStatefulSet("db", 2, app("db", "900m", "2Gi").PreferredPodAntiAffinity(100, st.AffinityTerm(v1.LabelTopologyZone, "db"))).ClaimTemplate("data", "1Gi", "zonal").Obj())},
		{name: "a StatefulSet whose claims are provisioned before its pods are scheduled is counted alone", limit: 100, settled: 0,
			objs: append(clone(big), st.StorageClass("zonal", storagev1.VolumeBindingImmediate, "ebs.csi.aws.com"),
				st.MakeStatefulSet("db", 1, app("db", "900m", "2Gi")).ClaimTemplate("data", "1Gi", "zonal").Obj())},
		{name: "a StatefulSet whose nodes limit the volumes they attach is counted alone", limit: 100, settled: 0,
			objs: append(clone(big), st.StorageClass("zonal", storagev1.VolumeBindingWaitForFirstConsumer, "ebs.csi.aws.com"), st.CSINode("node-0", "ebs.csi.aws.com", 3),
				st.MakeStatefulSet("db", 1, app("db", "300m", "256Mi")).ClaimTemplate("data", "1Gi", "zonal").Obj())},
		{name: "a Job, one whose completions bound its parallelism, and a ReplicationController", limit: 100, settled: 2,
			objs: append(clone(big), st.MakeJob("batch", 2, nil, app("batch", "1", "512Mi")).Obj(),
				st.MakeJob("migrate", 3, ptr.To(int32(2)), app("migrate", "250m", "128Mi")).Obj(),
				st.MakeReplicationController("legacy", 1, app("legacy", "200m", "256Mi")))},
		{name: "tainted and selected nodes count only where the pods may go", limit: 100, settled: 2,
			objs: []runtime.Object{
				st.MakeNode().Name("general-1").Label("pool", "general").Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi"}).Obj(),
				st.MakeNode().Name("general-2").Label("pool", "general").Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "2", v1.ResourceMemory: "8Gi"}).Obj(),
				st.MakeNode().Name("gpu-1").Label("pool", "gpu").Taint("gpu", "yes", v1.TaintEffectNoSchedule).Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "8", v1.ResourceMemory: "8Gi"}).Obj(),
				st.MakeDeployment("web", 1, app("web", "500m", "64Mi")),
				st.MakeDeployment("pinned", 1, app("pinned", "300m", "64Mi").NodeSelector("pool", "general")),
			}},
		{name: "a pod that stays pending leaves every workload counted alone", limit: 50, settled: 0,
			objs: append(clone(big), st.MakeDeployment("web", 2, app("web", "1", "1Gi")),
				st.MakePod().Name("too-big").Req(map[v1.ResourceName]string{v1.ResourceCPU: "5"}).Obj())},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Every node runs a DaemonSet's agent, read after the workloads
			// (its controller runs first: the workloads' order differs
			// from the input's).
			objs := append(clone(tt.objs), st.MakeDaemonSet("agent", app("node-agent", "100m", "128Mi")))
			load := func() (*cluster.Cluster, error) { return simtest.LoadObjects(t, objs), nil }
			want, err := referenceHeadroom(context.Background(), load, worldMaker(t), tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			var progress questions.HeadroomProgress
			var rows []questions.WorkloadHeadroom
			got, err := questions.Headroom(context.Background(), load, worldMaker(t), questions.HeadroomOptions{
				Limit: tt.limit, Config: simtest.DefaultConfig(t), Progress: &progress, Workers: 2,
				Row: func(h questions.WorkloadHeadroom) { rows = append(rows, h) }})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got.Workloads); diff != "" {
				t.Errorf("headroom differs from one replica at a time (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(got.Workloads, rows); diff != "" {
				t.Errorf("the rows told one by one differ from the answer (-answer +told):\n%s", diff)
			}
			if n := progress.Settled.Load(); n != int64(tt.settled) {
				t.Errorf("%d workloads counted from the cluster simulated once, want %d", n, tt.settled)
			}
		})
	}
}

func clone(objs []runtime.Object) []runtime.Object { return append([]runtime.Object(nil), objs...) }
