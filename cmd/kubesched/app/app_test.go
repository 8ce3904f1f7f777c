package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := newCommand(streams{out: &out, errOut: &errOut})
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	code = Run(context.Background(), cmd, args)
	return code, out.String(), errOut.String()
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const scenario = "../../../internal/simulator/questions/testdata/conformance/033.yaml"

func TestCommands(t *testing.T) {
	badConfig := writeFile(t, "bad.yaml", `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    score:
      enabled:
      - name: NodeAffinity
      - name: TaintToleration
        weight: -1
`)
	unknownField := writeFile(t, "typo.yaml", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\npercentageOfNodeToScore: 50\n")
	otherProfile := writeFile(t, "other.yaml", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: kubesched\n")
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantOut    []string
		wantStderr []string
		notStderr  []string
	}{
		{name: "version prints the version", args: []string{"version"}, wantOut: []string{"kubesched v"}},
		{name: "simulate prints a table with a summary", args: []string{"simulate", "-f", "../../../examples/cluster.yaml"},
			wantOut: []string{"POD", "NODE", "scheduled,", "unschedulable,"}},
		{name: "simulate without -f fails and says why", args: []string{"simulate"}, wantCode: 1,
			wantStderr: []string{"-f/--filename: at least one manifest"}},
		{name: "an unknown output format fails", args: []string{"simulate", "-f", "../../../examples/cluster.yaml", "-o", "xml"}, wantCode: 1,
			wantStderr: []string{`-o/--output: "xml" is not one of`}},
		{name: "turning composite pod groups on is refused as not built yet, and the gate is known", args: []string{"simulate", "-f", "../../../examples/cluster.yaml", "--feature-gates=GenericWorkload=true,TopologyAwareWorkloadScheduling=true,CompositePodGroup=true"}, wantCode: 1,
			wantStderr: []string{"--feature-gates: CompositePodGroup=true: composite pod groups and workload resource claims are not built in kubesched yet (GenericWorkload and TopologyAwareWorkloadScheduling are)"}},
		{name: "topology-aware placements without pod groups are refused as kube-scheduler refuses them", args: []string{"simulate", "-f", "../../../examples/cluster.yaml", "--feature-gates=TopologyAwareWorkloadScheduling=true"}, wantCode: 1,
			wantStderr: []string{"TopologyAwareWorkloadScheduling is enabled, but depends on features that are disabled: [GenericWorkload]"}},
		{name: "the racks example places the gang that fits in one rack there whole and none of the one that fits in no single rack", args: []string{"simulate", "-f", "../../../examples/gang-racks.yaml", "--feature-gates=GenericWorkload=true,TopologyAwareWorkloadScheduling=true", "--show", "all"},
			wantOut: []string{"4 scheduled, 3 unschedulable", "default/train-0  rack-2-node", "default/train-3  rack-2-node", "0/2 placements are available, first placement status: minCount (3) cannot be satisfied: 2 scheduled, 0 remaining"}},
		{name: "the Job example gives each Job a gang PodGroup: the one that fits in one rack lands there whole, the other is bound nowhere", args: []string{"simulate", "-f", "../../../examples/gang-job.yaml", "--feature-gates=GenericWorkload=true,TopologyAwareWorkloadScheduling=true,WorkloadWithJob=true", "--show", "all"},
			wantOut: []string{"4 scheduled, 3 unschedulable", "Job default/train      4     4          0", "Job default/train-big  3     0          3", "0/2 placements are available, first placement status: minCount (3) cannot be satisfied: 2 scheduled, 0 remaining"}},
		{name: "explaining a member of a rack-held gang Job gives the group's verdict, its rack constraint and its members' reasons", args: []string{"simulate", "-f", "../../../examples/gang-job.yaml", "--feature-gates=GenericWorkload=true,TopologyAwareWorkloadScheduling=true,WorkloadWithJob=true", "--explain", "default/train-big-9gcv4"},
			wantOut: []string{"(gang, minCount 3, within one topology.kubernetes.io/rack), placed whole or not at all: PodGroupInitiallyScheduled=False (Unschedulable): pod group is unschedulable, 0/2 placements are available", "train-big-k4sjg: 0/2 nodes are available: 2 Insufficient cpu."}},
		{name: "without WorkloadWithJob the Jobs' spec.scheduling is ignored with a warning and their pods scheduled one by one", args: []string{"simulate", "-f", "../../../examples/gang-job.yaml", "--feature-gates=GenericWorkload=true", "--show", "summary"},
			wantOut:    []string{"6 scheduled, 1 unschedulable"},
			wantStderr: []string{"warning: spec.scheduling of 2 Job(s) ignored (the API server drops it): a Job's PodGroup needs --feature-gates=WorkloadWithJob=true"}},
		{name: "WorkloadWithJob without pod groups is refused as kube-scheduler refuses it", args: []string{"simulate", "-f", "../../../examples/gang-job.yaml", "--feature-gates=WorkloadWithJob=true"}, wantCode: 1,
			wantStderr: []string{"WorkloadWithJob is enabled, but depends on features that are disabled: [GenericWorkload]"}},
		{name: "without placements the racks example still places each gang whole or not at all", args: []string{"simulate", "-f", "../../../examples/gang-racks.yaml", "--feature-gates=GenericWorkload=true", "--show", "summary"},
			wantOut: []string{"4 scheduled, 3 unschedulable"}},
		{name: "turning pod groups on is accepted", args: []string{"simulate", "-f", "../../../examples/cluster.yaml", "--feature-gates=GenericWorkload=true", "-o", "json"}},
		{name: "the gang example binds the gang that fits whole and none of the one that does not", args: []string{"simulate", "-f", "../../../examples/gang.yaml", "--feature-gates=GenericWorkload=true", "--show", "all"},
			wantOut: []string{"4 scheduled, 5 unschedulable", "default/train-a-0  rack-1-node", "pod group is unschedulable, minCount (5) cannot be satisfied: 4 scheduled, 0 remaining"}},
		{name: "explaining a gang member after the simulation gives the group's verdict and the member that holds it back", args: []string{"simulate", "-f", "../../../examples/gang.yaml", "--feature-gates=GenericWorkload=true", "--explain", "default/train-b-0"},
			wantOut: []string{"placed whole or not at all: PodGroupInitiallyScheduled=False (Unschedulable): minCount (5) cannot be satisfied", "train-b-4: 0/4 nodes are available: 4 Insufficient cpu."}},
		{name: "explaining a gang member alone says the group is placed together", args: []string{"explain", "-f", "../../../examples/gang.yaml", "--feature-gates=GenericWorkload=true", "--pod", "default/train-b-0"},
			wantOut: []string{"The pod belongs to pod group default/train-b (gang, minCount 5): it is judged here alone"}},
		{name: "pod groups without their gate are ignored with a warning, as kube-scheduler schedules their pods one by one", args: []string{"simulate", "-f", "../../../examples/gang.yaml", "--show", "summary"},
			wantOut:    []string{"8 scheduled, 1 unschedulable"},
			wantStderr: []string{"warning: 2 PodGroup(s) ignored and their pods scheduled one by one: pod groups need --feature-gates=GenericWorkload=true"}},
		{name: "the pod-group gates at their defaults are accepted", args: []string{"simulate", "-f", "../../../examples/cluster.yaml", "--feature-gates=GenericWorkload=false,CompositePodGroup=false", "-o", "json"}},
		{name: "a bad config fails with the field path", args: []string{"simulate", "-f", "../../../examples/cluster.yaml", "--config", badConfig}, wantCode: 1,
			wantStderr: []string{"profiles[0].plugins.score.enabled[1].weight: Invalid value: -1"}},
		{name: "an unknown config field fails", args: []string{"simulate", "-f", "../../../examples/cluster.yaml", "--config", unknownField}, wantCode: 1,
			wantStderr: []string{`unknown field "percentageOfNodeToScore"`}},
		{name: "explain prints the JSON schema", args: []string{"explain", "-f", scenario, "-o", "json"},
			wantOut: []string{`"pod": "default/inference-new-pbxn4s8mh9-jcwmv"`, `"feasibleCount": 2`, `"bestNodes"`}},
		{name: "explain prints a table for people", args: []string{"explain", "-f", scenario},
			wantOut: []string{"2/5 nodes feasible", "REJECTED BY", "NodeAffinity"}},
		{name: "simulate expands workloads and counts them", args: []string{"simulate", "-f", "../../../examples/cluster.yaml", "-f", "../../../examples/workloads.yaml", "--show", "all"},
			wantOut: []string{"WORKLOAD", "Deployment shop/web", "StatefulSet shop/db", "shop/db-2"}},
		{name: "capacity says how many copies fit and why the next does not", args: []string{"capacity", "-f", "../../../examples/cluster.yaml", "--pod", "../../../examples/pending-pod.yaml"},
			wantOut: []string{"more copies of", "NODE", "COPIES", "The next copy does not fit: 0/12 nodes are available"}},
		{name: "capacity places copies of the example pod on the GPU node whose taint it tolerates", args: []string{"capacity", "-f", "../../../examples/cluster.yaml", "--pod", "../../../examples/pending-pod.yaml", "-o", "json"},
			wantOut: []string{`"gpu-b-44bws": `}},
		{name: "capacity -o json keeps the documented shape", args: []string{"capacity", "-f", "../../../examples/cluster.yaml", "--pod", "../../../examples/pending-pod.yaml", "-o", "json"},
			wantOut: []string{`"fits": `, `"nodes": {`, `"zones": {`, `"next": {`, `"message": "0/12 nodes are available`}},
		{name: "capacity --add-nodes answers with a simulated node count", args: []string{"capacity", "-f", "../../../examples/cluster.yaml", "--add-nodes", "../../../examples/gpu-node.yaml", "-o", "json"},
			wantOut: []string{`"node": "gpu-b"`, `"addNodes": 9`, `"pending": 19`, `"preempted": 1`}},
		{name: "simulate --compare prints both configurations' outcomes and the moved pods as JSON", args: []string{"simulate", "-f", "../../../examples/cluster.yaml", "--compare", "../../../examples/scheduler-config.yaml", "-o", "json"},
			wantOut: []string{`"a": {`, `"b": {`, `"moved": [`, `"namespace": "batch"`, `"zones": [`}},
		{name: "simulate says which profiles exist when no pod asks for them", args: []string{"simulate", "-f", "../../../examples/cluster.yaml", "--config", otherProfile},
			wantStderr: []string{`left pending: 156 pod(s) for scheduler "default-scheduler"; the configuration's profiles schedule pods for "kubesched"`}},
		{name: "simulate replays a scenario and prints each step", args: []string{"simulate", "-f", "../../../examples/cluster.yaml", "-f", "../../../examples/workloads.yaml", "-f", "../../../examples/scenario.yaml"},
			wantOut: []string{"STEP (sale-day)", "maintenance on compute-b-hp28q", "30m0s", "Job shop/report", "finished"}},
		{name: "simulate --explain explains a pod as its last attempt saw the cluster", args: []string{"simulate", "-f", "../../../examples/cluster.yaml", "--explain", "ml/inference-7kjzvjfp-x6tnw"},
			wantOut: []string{"As attempt 2 of ml/inference-7kjzvjfp-x6tnw saw the cluster at 2026-01-01T00:05:00Z (result: Unschedulable)", "0/12 nodes feasible", "REJECTED BY"}},
		{name: "simulate --explain of a pod not in the simulation fails saying so", args: []string{"simulate", "-f", "../../../examples/cluster.yaml", "--explain", "ml/nope"}, wantCode: 1,
			wantStderr: []string{"--explain ml/nope: the scheduler never attempted the pod: it is not in the simulation"}},
		{name: "simulate --trace into a directory that does not exist fails naming the flag", args: []string{"simulate", "-f", "../../../examples/cluster.yaml", "--trace", "/nonexistent/trace.jsonl"}, wantCode: 1,
			wantStderr: []string{"--trace: open /nonexistent/trace.jsonl"}},
		{name: "simulate --trace with --compare says to trace one configuration", args: []string{"simulate", "-f", "../../../examples/cluster.yaml", "--compare", "../../../examples/scheduler-config.yaml", "--trace", "t.jsonl"}, wantCode: 1,
			wantStderr: []string{"--trace and --compare"}},
		{name: "explain takes a pod of the cluster files by name, a workload's included", args: []string{"explain", "-f", "../../../examples/cluster.yaml", "-f", "../../../examples/workloads.yaml", "--pod", "shop/db-1"},
			wantOut: []string{"Pod shop/db-1: 3/12 nodes feasible"}},
		{name: "explain takes a workload as kubectl logs does, in the one namespace that has it", args: []string{"explain", "-f", "../../../examples/cluster.yaml", "-f", "../../../examples/workloads.yaml", "--pod", "deployment/web"},
			wantOut: []string{"Pod shop/web-"}},
		{name: "explain takes a workload's short name too", args: []string{"explain", "-f", "../../../examples/cluster.yaml", "-f", "../../../examples/workloads.yaml", "--pod", "sts/db"},
			wantOut: []string{"Pod shop/db-0: "}},
		{name: "explain of a workload the files lack names those of its kind they hold", args: []string{"explain", "-f", "../../../examples/cluster.yaml", "-f", "../../../examples/workloads.yaml", "--pod", "deploy/api"}, wantCode: 1,
			wantStderr: []string{"--pod: no Deployment */api in the cluster files (-n names the namespace; they hold shop/web)"}},
		{name: "explain -f says the pod is judged against the running pods only", args: []string{"explain", "-f", "../../../examples/cluster.yaml", "--pod", "../../../examples/pending-pod.yaml"},
			wantOut: []string{"Note: Judged against the running pods only: the 156 other pending pods of the cluster files are not placed first."}},
		{name: "simulate --show summary gives the summary first and says what it left out", args: []string{"simulate", "-f", "../../../examples/cluster.yaml", "--show", "summary"},
			wantOut: []string{"137 scheduled, 19 unschedulable, 1 preempted; 94 already running; 12 nodes\n", "Not listed: 157 pods and 12 nodes"}},
		{name: "simulate --show of an unknown value names the values", args: []string{"simulate", "-f", "../../../examples/cluster.yaml", "--show", "nodes"}, wantCode: 1,
			wantStderr: []string{`--show: unknown value "nodes": want summary, pending or all`}},
		{name: "simulate --show with -o json says it is the table's", args: []string{"simulate", "-f", "../../../examples/cluster.yaml", "--show", "all", "-o", "json"}, wantCode: 1,
			wantStderr: []string{"--show chooses what simulate's table lists: not with -o json"}},
		{name: "explain names a pod the cluster files lack", args: []string{"explain", "-f", "../../../examples/cluster.yaml", "--pod", "shop/nope"}, wantCode: 1,
			wantStderr: []string{"--pod: no pod shop/nope in the cluster files"}},
		{name: "capacity needs --pod or --add-nodes", args: []string{"capacity", "-f", "../../../examples/cluster.yaml"}, wantCode: 1,
			wantStderr: []string{"want exactly one of --pod, --workload, --headroom, --add-nodes and --node-types"}},
		{name: "capacity --workload scales a workload until a replica does not fit, and explains that one", args: []string{"capacity", "-f", "../../../examples/cluster.yaml", "--workload", "../../../examples/capacity-workload.yaml"},
			wantOut: []string{"more copies of Deployment shop/api fit", "ZONE", "The next copy does not fit: 0/12 nodes are available", "REJECTED BY"}},
		{name: "capacity --workload refuses a file without exactly one workload", args: []string{"capacity", "-f", "../../../examples/cluster.yaml", "--workload", "../../../examples/pending-pod.yaml"}, wantCode: 1,
			wantStderr: []string{"want exactly one Deployment, ReplicaSet, StatefulSet, ReplicationController or Job, found 0 workloads"}},
		{name: "capacity with a scenario says the timeline is not replayed", args: []string{"capacity", "-f", "../../../examples/cluster.yaml", "-f", "../../../examples/workloads.yaml", "-f", "../../../examples/scenario.yaml", "--pod", "../../../examples/pending-pod.yaml"},
			wantOut:    []string{"34 more copies of default/analytics fit"},
			wantStderr: []string{"warning: ../../../examples/scenario.yaml: document 1: Scenario sale-day (6 steps) is not replayed: capacity answers on the cluster as the files give it at the start (simulate replays a timeline)"}},
		{name: "consolidate with a scenario says the timeline is not replayed", args: []string{"consolidate", "-f", "../../../examples/cluster.yaml", "-f", "../../../examples/scenario.yaml"},
			wantStderr: []string{"Scenario sale-day (6 steps) is not replayed: consolidate answers"}},
		{name: "explain with a scenario says the timeline is not replayed", args: []string{"explain", "-f", "../../../examples/cluster.yaml", "-f", "../../../examples/scenario.yaml", "--pod", "../../../examples/pending-pod.yaml"},
			wantStderr: []string{"Scenario sale-day (6 steps) is not replayed: explain answers"}},
		{name: "simulate replays a scenario and does not warn about it", args: []string{"simulate", "-f", "../../../examples/cluster.yaml", "-f", "../../../examples/workloads.yaml", "-f", "../../../examples/scenario.yaml", "--show", "summary"},
			notStderr: []string{"not replayed"}},
		{name: "the root command outside a cluster without a kubeconfig says what it needs", args: []string{"--secure-port=0"}, wantCode: 1,
			wantStderr: []string{"no --kubeconfig or clientConnection.kubeconfig, and not in a cluster"}},
		{name: "a missing kubeconfig file fails", args: []string{"--secure-port=0", "--kubeconfig", "/nonexistent/kubeconfig"}, wantCode: 1,
			wantStderr: []string{"/nonexistent/kubeconfig"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := run(t, tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit code = %d, want %d (stderr: %s)", code, tt.wantCode, errOut)
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("stdout does not contain %q:\n%s", w, truncate(out))
				}
			}
			for _, w := range tt.wantStderr {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr does not contain %q:\n%s", w, errOut)
				}
			}
			for _, w := range tt.notStderr {
				if strings.Contains(errOut, w) {
					t.Errorf("stderr contains %q:\n%s", w, errOut)
				}
			}
		})
	}
}

func truncate(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "..."
	}
	return s
}

func TestExplainOnALiveClusterReadsKUBECONFIG(t *testing.T) {
	// A server nobody listens on: the error names it, so the command read
	// this kubeconfig. (~/.kube/config is not tested here: client-go
	// resolves the home directory when the process starts.)
	kc := writeFile(t, "kubeconfig", `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`)
	t.Setenv("KUBECONFIG", kc)
	code, _, errOut := run(t, "explain", "pod", "default/web-0")
	if code == 0 || !strings.Contains(errOut, "127.0.0.1:1") {
		t.Errorf("exit %d, stderr %q: want a failure to reach the kubeconfig's server 127.0.0.1:1", code, errOut)
	}
}
