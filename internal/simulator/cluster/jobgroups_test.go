package cluster_test

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
	st "github.com/kubesched/kubesched/internal/testing"
)

func TestJobsGetPodGroupsWithWorkloadWithJob(t *testing.T) {
	pod := func() *st.PodWrapper { return st.MakePod().Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}) }
	three := int32(3)
	tests := []struct {
		name string
		gate bool
		job  *batchv1.Job
		// wantPolicy is "gang N", "basic" or "" for no PodGroup.
		wantPolicy   string
		wantTopology string
		wantErr      string
	}{
		{name: "a gang Job gets a gang PodGroup whose minCount is its parallelism, with its topology", gate: true,
			job: st.MakeJob("train", 3, &three, pod()).GangIn("topology.kubernetes.io/rack").Obj(), wantPolicy: "gang 3", wantTopology: "topology.kubernetes.io/rack"},
		{name: "a Job without spec.scheduling gets a basic PodGroup", gate: true,
			job: st.MakeJob("plain", 2, &three, pod()).Obj(), wantPolicy: "basic"},
		{name: "without the gate no Job gets a PodGroup", gate: false,
			job: st.MakeJob("train", 3, &three, pod()).GangIn("").Obj()},
		{name: "a Job whose template names a pod group keeps it and gets none", gate: true,
			job: st.MakeJob("own", 2, &three, pod().InGroup("mine")).Obj()},
		{name: "a Job that already started gets none", gate: true,
			job: func() *batchv1.Job {
				j := st.MakeJob("old", 2, &three, pod()).Obj()
				j.Status.StartTime = &metav1.Time{}
				return j
			}()},
		{name: "a gang minCount above the parallelism is refused with the file and the field", gate: true,
			job: func() *batchv1.Job {
				j := st.MakeJob("big", 2, &three, pod()).GangIn("").Obj()
				j.Spec.Scheduling.SchedulingPolicy.Gang.MinCount = ptr.To[int32](5)
				return j
			}(),
			wantErr: "jobs.yaml: document 1 (Job default/big): spec.scheduling.schedulingPolicy.gang.minCount: Invalid value: 5: must not be greater than parallelism (2)"},
		{name: "a basic Job that asks to be disrupted whole is refused", gate: true,
			job: func() *batchv1.Job {
				j := st.MakeJob("basic-all", 2, &three, pod()).Obj()
				j.Spec.Scheduling = &batchv1.JobSchedulingConfiguration{DisruptionMode: &schedulingv1alpha3.WorkloadPodGroupDisruptionMode{All: &schedulingv1alpha3.WorkloadPodGroupAllDisruptionMode{}}}
				return j
			}(),
			wantErr: "jobs.yaml: document 1 (Job default/basic-all): spec.scheduling"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cluster.New()
			c.Add("jobs.yaml: document 1", tt.job)
			c.JobPodGroups = tt.gate
			c.RunControllers()
			if tt.wantErr != "" {
				if len(c.ControllerErrors) == 0 || !strings.Contains(c.ControllerErrors[0].Error(), tt.wantErr) {
					t.Fatalf("errors %v, want one with %q", c.ControllerErrors, tt.wantErr)
				}
				return
			}
			if len(c.ControllerErrors) > 0 {
				t.Fatal(c.ControllerErrors)
			}
			if tt.wantPolicy == "" {
				if len(c.PodGroups) != 0 {
					t.Fatalf("PodGroups %v, want none", c.PodGroups)
				}
				return
			}
			if len(c.PodGroups) != 1 {
				t.Fatalf("%d PodGroups, want 1", len(c.PodGroups))
			}
			pg := c.PodGroups[0]
			policy := "basic"
			if g := pg.Spec.SchedulingPolicy.Gang; g != nil {
				policy = "gang " + string(rune('0'+g.MinCount))
			}
			if policy != tt.wantPolicy {
				t.Errorf("policy %s, want %s", policy, tt.wantPolicy)
			}
			topology := ""
			if sc := pg.Spec.SchedulingConstraints; sc != nil && len(sc.Topology) > 0 {
				topology = sc.Topology[0].Key
			}
			if topology != tt.wantTopology {
				t.Errorf("topology %q, want %q", topology, tt.wantTopology)
			}
			if !strings.HasPrefix(pg.Name, tt.job.Name+"-") || pg.Spec.WorkloadRef == nil || pg.Spec.WorkloadRef.TemplateName != tt.job.Name+"-pgt-0" {
				t.Errorf("PodGroup %s with workloadRef %+v", pg.Name, pg.Spec.WorkloadRef)
			}
			if ref := metav1.GetControllerOf(pg); ref == nil || ref.Kind != "Job" || ref.Name != tt.job.Name {
				t.Errorf("PodGroup's controller %+v, want the Job", ref)
			}
			members := 0
			for _, p := range c.Pods {
				if g := p.Spec.SchedulingGroup; g != nil && g.PodGroupName != nil && *g.PodGroupName == pg.Name {
					members++
				}
			}
			if members != int(*tt.job.Spec.Parallelism) {
				t.Errorf("%d pods in the group, want %d", members, *tt.job.Spec.Parallelism)
			}
		})
	}
}
