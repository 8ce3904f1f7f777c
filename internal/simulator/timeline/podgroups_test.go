package timeline_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	"github.com/kubesched/kubesched/internal/simulator/timeline"
)

const gangNodes = `apiVersion: v1
kind: Node
metadata:
  name: n1
status:
  capacity:
    cpu: "2"
    memory: 4Gi
    pods: "110"
---
apiVersion: v1
kind: Node
metadata:
  name: n2
status:
  capacity:
    cpu: "2"
    memory: 4Gi
    pods: "110"
`

func gangMember(name string) string {
	return `---
apiVersion: v1
kind: Pod
metadata:
  name: ` + name + `
spec:
  schedulingGroup:
    podGroupName: train
  containers:
  - name: c
    image: x
    resources:
      requests:
        cpu: 1500m
`
}

const gangGroup = `apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata:
  name: train
spec:
  schedulingPolicy:
    gang:
      minCount: 2
`

func TestATimelineCreatesAndDeletesPodGroups(t *testing.T) {
	tests := []struct {
		name      string
		steps     string
		wantBound int
		wantErr   string
	}{
		{name: "members waiting for their PodGroup bind when a step creates it",
			steps:     scenarioHead + "  - at: 10m\n    create:\n    - " + indent(gangGroup) + "\n",
			wantBound: 2},
		{name: "a PodGroup deleted after its gang was placed leaves the members running",
			steps:     scenarioHead + "  - at: 10m\n    create:\n    - " + indent(gangGroup) + "\n  - at: 20m\n    delete: [{kind: PodGroup, name: train}]\n",
			wantBound: 2},
		{name: "members whose PodGroup never comes stay pending",
			steps:     scenarioHead + "  - at: 10m\n    create:\n    - " + indent(strings.ReplaceAll(gangGroup, "name: train", "name: other")) + "\n",
			wantBound: 0},
		{name: "deleting a PodGroup that is not there names it",
			steps:   scenarioHead + "  - at: 10m\n    delete: [{kind: PodGroup, name: nope}]\n",
			wantErr: "PodGroup default/nope not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := simtest.WriteFile(t, "c.yaml", gangNodes+gangMember("w1")+gangMember("w2")+"---\n"+tt.steps)
			c, err := loading.Load([]string{path})
			if err != nil {
				t.Fatal(err)
			}
			w := simtest.PodGroupWorld(t, c, 1)
			err = timeline.Run(context.Background(), w)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			bound := 0
			for _, p := range w.Store.Pods() {
				if p.Spec.NodeName != "" {
					bound++
				}
			}
			if bound != tt.wantBound {
				t.Errorf("%d pods bound, want %d", bound, tt.wantBound)
			}
			for _, e := range w.CheckInvariants() {
				t.Errorf("invariant: %v", e)
			}
		})
	}
}

// indent makes a YAML document an item of a step's create list.
func indent(doc string) string {
	return strings.ReplaceAll(strings.TrimRight(doc, "\n"), "\n", "\n      ")
}

// gangJob is a Job of three 1500m workers as one gang (WorkloadWithJob).
const gangJob = `apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  parallelism: 3
  scheduling:
    schedulingPolicy:
      gang: {}
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: x
        resources:
          requests:
            cpu: 1500m
`

func TestATimelineStepCreatesAGangJob(t *testing.T) {
	tests := []struct {
		name      string
		nodes     string
		wantBound int
	}{
		{name: "a gang Job a step creates is bound whole where it fits", nodes: gangNodes + "---\n" + strings.ReplaceAll(strings.SplitN(gangNodes, "---\n", 2)[0], "n1", "n3"), wantBound: 3},
		{name: "a gang Job a step creates where only two of its three fit binds none", nodes: gangNodes, wantBound: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := simtest.WriteFile(t, "c.yaml", tt.nodes+"---\n"+scenarioHead+"  - at: 10m\n    create:\n    - "+indent(gangJob)+"\n")
			c, err := loading.LoadWith([]string{path}, nil, loading.Options{JobPodGroups: true})
			if err != nil {
				t.Fatal(err)
			}
			w := simtest.PodGroupWorld(t, c, 1)
			if err := timeline.Run(context.Background(), w); err != nil {
				t.Fatal(err)
			}
			bound, members := 0, 0
			for _, p := range w.Store.Pods() {
				if p.Spec.NodeName != "" {
					bound++
				}
				if p.Spec.SchedulingGroup != nil {
					members++
				}
			}
			if bound != tt.wantBound || members != 3 {
				t.Errorf("%d pods bound and %d in a group, want %d and 3", bound, members, tt.wantBound)
			}
			if len(w.Store.PodGroups()) != 1 {
				t.Errorf("%d PodGroups in the world, want the Job's", len(w.Store.PodGroups()))
			}
			for _, e := range w.CheckInvariants() {
				t.Errorf("invariant: %v", e)
			}
		})
	}
}
