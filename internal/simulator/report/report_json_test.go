package report_test

import (
	"bytes"
	"encoding/json"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/report"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func marshalIndentReport(t *testing.T, r *report.Report) string {
	t.Helper()
	var want bytes.Buffer
	if err := report.WriteJSON(&want, r); err != nil {
		t.Fatal(err)
	}
	return want.String()
}

func TestReportJSONIsMarshalIndents(t *testing.T) {
	odd := []string{"", "plain", `quote " and \ backslash`, "<html> & </html>", "tab\tnewline\nreturn\r", "\b\f\x00\x1f\x7f",
		"naïve ünïcödé 日本", "line\u2028para\u2029", "bad \xff utf8 \xc3", "0/5 nodes are available: 3 Insufficient cpu."}
	rng := rand.New(rand.NewSource(3))
	pick := func() string { return odd[rng.Intn(len(odd))] }
	withEverything := &report.Report{Summary: report.Summary{Scheduled: 3, Unschedulable: 1, Nodes: 2, Running: 7}}
	for i := 0; i < 40; i++ {
		withEverything.Pods = append(withEverything.Pods, report.PodResult{Namespace: pick(), Name: pick(), Node: pick(), Status: pick(), Message: pick()})
	}
	for i := 0; i < 20; i++ {
		n := report.NodeResult{Name: pick(), Pods: rng.Intn(200) - 3, Requested: map[string]string{}, Allocatable: map[string]string{pick(): pick(), pick(): pick(), "cpu": "4"}}
		switch i % 4 {
		case 0:
			n.Requested = nil
		case 1:
			n.Requested = map[string]string{"memory": "1Gi", "cpu": "100m", pick(): pick()}
		}
		withEverything.Nodes = append(withEverything.Nodes, n)
	}
	withEverything.Workloads = []report.WorkloadResult{{Kind: "Deployment", Namespace: "shop", Name: "web<1>", Pods: 2, Reasons: []report.Reason{{Message: pick(), Pods: 1}}}}
	withEverything.Timeline = &report.TimelineReport{Scenario: "day & night", Steps: []report.StepResult{{}}}
	cases := []struct {
		name string
		r    *report.Report
	}{
		{"an empty report", &report.Report{Pods: []report.PodResult{}, Nodes: []report.NodeResult{}}},
		{"a report without pods or nodes at all", &report.Report{}},
		{"pods and nodes with every kind of string, nil and empty maps, workloads and a timeline", withEverything},
	}
	for _, name := range []string{"../../../examples/cluster.yaml", "../../../examples/preemption.yaml"} {
		c, err := loading.Load([]string{name})
		if err != nil {
			t.Fatal(err)
		}
		_, rep := simtest.Simulate(t, c, 1)
		cases = append(cases, struct {
			name string
			r    *report.Report
		}{"the report of " + name, rep})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got bytes.Buffer
			if err := tc.r.Write(&got, "json"); err != nil {
				t.Fatal(err)
			}
			if !json.Valid(got.Bytes()) {
				t.Fatalf("not valid JSON:\n%s", got.String())
			}
			if diff := cmp.Diff(marshalIndentReport(t, tc.r), got.String()); diff != "" {
				t.Errorf("report JSON differs from MarshalIndent's (-want,+got):\n%s", diff)
			}
		})
	}
}
