package report_test

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/kubesched/kubesched/internal/simulator/report"
	"github.com/kubesched/kubesched/pkg/framework"
)

const (
	rare   = "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector."
	common = "0/3 nodes are available: 3 Insufficient cpu."
)

// node is a report's node with cpu millicores requested of allocatable.
func node(name string, pods int, requested, allocatable int64) report.NodeResult {
	return report.NodeResult{Name: name, Pods: pods, Zone: "a", Pool: "p",
		RequestedResources:   framework.Resource{MilliCPU: requested, Memory: 1 << 30},
		AllocatableResources: framework.Resource{MilliCPU: allocatable, Memory: 3 << 30, AllowedPodNumber: 110}}
}

// mixedReport has its rarer pending reason first in pod order, a node
// whose use is not a whole percent, one node with one pod, a preempted
// pod, and a finished Job.
func mixedReport() *report.Report {
	return &report.Report{
		Pods: []report.PodResult{
			{Namespace: "a", Name: "early", Status: report.StatusUnschedulable, Message: rare},
			{Namespace: "b", Name: "p1", Status: report.StatusUnschedulable, Message: common},
			{Namespace: "b", Name: "p2", Status: report.StatusUnschedulable, Message: common},
			{Namespace: "c", Name: "run", Node: "n1", Status: report.StatusScheduled},
			{Namespace: "c", Name: "victim", Node: "n1", Status: report.StatusPreempted, Message: "preempted by c/run"},
		},
		Nodes:     []report.NodeResult{node("n1", 1, 2000, 3000)},
		Workloads: []report.WorkloadResult{{Kind: "Job", Namespace: "c", Name: "batch", Completions: "3/3"}, {Kind: "Deployment", Namespace: "c", Name: "web", Pods: 1, Scheduled: 1}},
		Summary:   report.Summary{Scheduled: 1, Unschedulable: 3, Preempted: 1, Nodes: 1, Running: 1},
	}
}

func table(t *testing.T, r *report.Report, show report.Show) string {
	t.Helper()
	var b bytes.Buffer
	if err := r.WriteTable(&b, show); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func html(t *testing.T, r *report.Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := r.Write(&b, "html"); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestTheTableAndTheHTMLPageAgree(t *testing.T) {
	r := mixedReport()
	tab, page := table(t, r, report.ShowAll), html(t, r)
	t.Run("the pending reasons are numbered alike, the most shared first", func(t *testing.T) {
		inTable := map[string]string{}
		for _, m := range regexp.MustCompile(`(?m)^(\d+)\s+\d+\s+(0/3 .*)$`).FindAllStringSubmatch(tab, -1) {
			inTable[m[2]] = m[1]
		}
		inPage := map[string]string{}
		for i, m := range regexp.MustCompile(`<li>(.*?) \(\d+ pods?\)</li>`).FindAllStringSubmatch(page, -1) {
			inPage[strings.ReplaceAll(m[1], "&#39;", "'")] = string(rune('1' + i))
		}
		if inTable[common] != "1" || inTable[rare] != "2" || inPage[common] != "1" || inPage[rare] != "2" {
			t.Errorf("reasons numbered %v in the table and %v in the page, want the 2 pods' reason 1 in both", inTable, inPage)
		}
		if !strings.Contains(tab, "a/early") || !regexp.MustCompile(`a/early\s+-\s+Unschedulable\s+reason 2`).MatchString(tab) {
			t.Errorf("the table does not give a/early reason 2:\n%s", tab)
		}
		if !strings.Contains(page, "reason 2: "+strings.ReplaceAll(rare, "'", "&#39;")) {
			t.Errorf("the page's pod table does not give a/early reason 2")
		}
	})
	t.Run("a node's use is the same whole percent, rounded down", func(t *testing.T) {
		// 2 of 3 cores: 66.7%.
		if !regexp.MustCompile(`n1\s+1/110\s+2\.00\s+3\.00\s+66%`).MatchString(tab) {
			t.Errorf("the node table does not give n1 66%% cpu:\n%s", tab)
		}
		if !strings.Contains(page, "n1 (pool p): cpu 66%, memory 33%, 1 pod") {
			t.Errorf("the heat map's cell does not give n1 66%% cpu, 33%% memory and 1 pod")
		}
	})
	t.Run("one of a thing is singular", func(t *testing.T) {
		plural := regexp.MustCompile(`\b1 (nodes|pods)\b`)
		if m := plural.FindString(tab); m != "" {
			t.Errorf("the table says %q:\n%s", m, tab)
		}
		if m := plural.FindString(page); m != "" {
			t.Errorf("the page says %q", m)
		}
		if !strings.Contains(tab, "; 1 already running; 1 node\n") || !strings.Contains(page, "<span>1 node</span>") {
			t.Errorf("the summaries do not count 1 node")
		}
	})
	t.Run("a finished Job shows its completions", func(t *testing.T) {
		if !regexp.MustCompile(`Job c/batch\s+0\s+0\s+0\s+3/3`).MatchString(tab) || !regexp.MustCompile(`Deployment c/web\s+1\s+1\s+0\s+-`).MatchString(tab) {
			t.Errorf("the workload table does not show the Job's 3/3 completions (and - for the Deployment):\n%s", tab)
		}
		if !strings.Contains(page, "<th>completions</th>") || !strings.Contains(page, "<td>3/3</td>") {
			t.Errorf("the page's workload table does not show the Job's 3/3 completions")
		}
	})
}

func TestTheTableShowsWhatShowAsks(t *testing.T) {
	tests := []struct {
		name       string
		show       report.Show
		want, lack []string
	}{
		{name: "summary gives the counts and the reasons, and says what it left out", show: report.ShowSummary,
			want: []string{"REASON", "WORKLOAD", "Not listed: 5 pods and 1 node (--show all lists every pod and node, --show pending the pods not running)."},
			lack: []string{"POD ", "a/early", "CPU REQUESTED"}},
		{name: "pending lists the pods not running by reason, the preempted last", show: report.ShowPending,
			want: []string{"b/p1", "b/p2", "a/early", "c/victim", "Not listed: 1 pod and 1 node (--show all lists every pod and node)."},
			lack: []string{"c/run ", "CPU REQUESTED"}},
		{name: "all lists every pod and node", show: report.ShowAll,
			want: []string{"a/early", "c/run", "c/victim", "CPU %"},
			lack: []string{"Not listed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := table(t, mixedReport(), tt.show)
			if first, _, _ := strings.Cut(got, "\n"); first != "1 scheduled, 3 unschedulable, 1 preempted; 1 already running; 1 node" {
				t.Errorf("first line %q, want the summary", first)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q:\n%s", w, got)
				}
			}
			for _, l := range tt.lack {
				if strings.Contains(got, l) {
					t.Errorf("holds %q:\n%s", l, got)
				}
			}
			if tt.show == report.ShowPending {
				order := []string{"b/p1", "b/p2", "a/early", "c/victim"}
				for i := 1; i < len(order); i++ {
					if strings.Index(got, order[i-1]) > strings.Index(got, order[i]) {
						t.Errorf("%s after %s, want the pods by reason:\n%s", order[i-1], order[i], got)
					}
				}
			}
		})
	}
}

func TestParseShowNamesTheValues(t *testing.T) {
	if _, err := report.ParseShow("nodes"); err == nil || !strings.Contains(err.Error(), "want summary, pending or all") {
		t.Errorf("ParseShow(nodes) = %v, want an error naming the values", err)
	}
}

// The HTML page folds an explanation's nodes that fail alike into one row.
func TestTheHTMLPageFoldsAnExplanationsNodes(t *testing.T) {
	r := mixedReport()
	ex := &report.ExplainReport{Pod: "a/early"}
	for _, n := range []string{"n1", "n2", "n3", "n4", "n5"} {
		ex.Nodes = append(ex.Nodes, report.ExplainNode{Name: n, Plugin: "NodeAffinity", Reasons: []string{"node(s) didn't match Pod's node affinity/selector"}})
	}
	ex.Nodes = append(ex.Nodes, report.ExplainNode{Name: "n6", Plugin: "TaintToleration", Reasons: []string{"node(s) had untolerated taint(s)"}})
	r.Explanations = map[string]*report.ExplainReport{"a/early": ex}
	page := html(t, r)
	for _, w := range []string{"explain: 0/6 nodes feasible", "<td>5 nodes: n1, n2, n3, …</td><td>no</td><td>NodeAffinity</td>", "<td>n6</td><td>no</td><td>TaintToleration</td>"} {
		if !strings.Contains(page, w) {
			t.Errorf("the page lacks %q", w)
		}
	}
}

func TestManyPendingPodsAreListedByGroupAndReason(t *testing.T) {
	r := &report.Report{}
	add := func(n int, group, msg string) {
		for i := 0; i < n; i++ {
			r.Pods = append(r.Pods, report.PodResult{Namespace: "ml", Name: fmt.Sprintf("%s-%d-%d", group, len(r.Pods), i), Status: report.StatusUnschedulable, Message: msg, Group: group})
			r.Summary.Unschedulable++
		}
	}
	add(90, "Deployment ml/trainer", "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.")
	add(20, "Deployment ml/trainer", "0/3 nodes are available: 3 Insufficient cpu.")
	add(5, "Pods ml app=inference", "0/3 nodes are available: 3 Insufficient cpu.")
	var out bytes.Buffer
	if err := r.WriteTable(&out, report.ShowPending); err != nil {
		t.Fatal(err)
	}
	want := `PENDING                REASON  PODS
Deployment ml/trainer  1       90
Deployment ml/trainer  2       20
Pods ml app=inference  2       5
`
	if !strings.Contains(out.String(), want) {
		t.Errorf("table:\n%s\nwant the groups:\n%s", out.String(), want)
	}
	if strings.Contains(out.String(), "ml/trainer-0-0") {
		t.Errorf("past 100 pending pods, the pods are listed one by one:\n%s", out.String())
	}
}

func TestThePodGroupTableSaysWhereEachGroupStands(t *testing.T) {
	tests := []struct {
		name  string
		group report.PodGroupResult
		want  string
	}{
		{name: "a gang placed in one rack shows its domain and that it is placed",
			group: report.PodGroupResult{Namespace: "default", Name: "train", Policy: "gang", MinCount: 4, Topology: "rack", Domain: "r2", Pods: 4, Scheduled: 4, Condition: "True", Reason: "Scheduled"},
			want:  `default/train\s+gang of 4\s+4\s+4\s+0\s+rack=r2\s+placed`},
		{name: "a pending gang held to a rack shows it asks for one and its condition",
			group: report.PodGroupResult{Namespace: "default", Name: "infer", Policy: "gang", MinCount: 3, Topology: "rack", Pods: 3, Pending: 3, Condition: "False", Reason: "Unschedulable", Message: "no room"},
			want:  `default/infer\s+gang of 3\s+3\s+0\s+3\s+one rack\s+Unschedulable: no room`},
		{name: "a basic group without a condition yet is not tried",
			group: report.PodGroupResult{Namespace: "default", Name: "web", Policy: "basic", Pods: 2, Pending: 2},
			want:  `default/web\s+basic\s+2\s+0\s+2\s+-\s+not tried`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &report.Report{PodGroups: []report.PodGroupResult{tt.group}}
			var b strings.Builder
			if err := r.WriteTable(&b, report.ShowSummary); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), "POD GROUP") || !regexp.MustCompile(tt.want).MatchString(b.String()) {
				t.Errorf("table\n%s\nlacks %q", b.String(), tt.want)
			}
		})
	}
}

func TestTheTableAndTheHTMLPageShowTheSamePodGroups(t *testing.T) {
	r := mixedReport()
	r.PodGroups = []report.PodGroupResult{
		{Namespace: "a", Name: "train", Policy: "gang", MinCount: 4, Topology: "rack", Domain: "r2", Pods: 4, Scheduled: 4, Condition: "True", Reason: "Scheduled"},
		{Namespace: "a", Name: "infer", Policy: "gang", MinCount: 3, Topology: "rack", Pods: 3, Pending: 3, Condition: "False", Reason: "Unschedulable", Message: "no room"},
	}
	tab, page := table(t, r, report.ShowSummary), html(t, r)
	for _, g := range []struct{ table, page string }{
		{`a/train\s+gang of 4\s+4\s+4\s+0\s+rack=r2\s+placed`, "<td>a/train</td><td>gang of 4</td><td>4</td><td>4</td><td>0</td><td>rack=r2</td><td>placed</td>"},
		{`a/infer\s+gang of 3\s+3\s+0\s+3\s+one rack\s+Unschedulable: no room`, "<td>a/infer</td><td>gang of 3</td><td>3</td><td>0</td><td>3</td><td>one rack</td><td>Unschedulable: no room</td>"},
	} {
		if !regexp.MustCompile(g.table).MatchString(tab) {
			t.Errorf("table lacks %q:\n%s", g.table, tab)
		}
		if !strings.Contains(page, g.page) {
			t.Errorf("page lacks %q", g.page)
		}
	}
}

func TestTheNodeTableShowsMemoryInTheUnitItWasAskedIn(t *testing.T) {
	tests := []struct {
		name                   string
		requested, allocatable int64
		want                   [2]string // the two memory columns
	}{
		{name: "a quarter of a Gi is 256Mi, not 0.2Gi", requested: 256 << 20, allocatable: 4 << 30, want: [2]string{"256Mi", "4.00Gi"}},
		{name: "one and a half Gi keeps both decimals", requested: 3 << 29, allocatable: 16 << 30, want: [2]string{"1.50Gi", "16.00Gi"}},
		{name: "a request in decimal megabytes is not rounded to a whole Mi", requested: 100e6, allocatable: 1 << 30, want: [2]string{"95.37Mi", "1.00Gi"}},
		{name: "less than a Mi is written in Ki", requested: 512 << 10, allocatable: 1 << 30, want: [2]string{"512Ki", "1.00Gi"}},
		{name: "nothing requested is 0", requested: 0, allocatable: 1 << 30, want: [2]string{"0", "1.00Gi"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := node("n1", 1, 500, 1000)
			n.RequestedResources.Memory, n.AllocatableResources.Memory = tt.requested, tt.allocatable
			r := &report.Report{Nodes: []report.NodeResult{n}}
			got := table(t, r, report.ShowAll)
			if !regexp.MustCompile(`n1 .*\s` + regexp.QuoteMeta(tt.want[0]) + `\s+` + regexp.QuoteMeta(tt.want[1]) + `\s`).MatchString(got) {
				t.Errorf("node line lacks memory %q of %q:\n%s", tt.want[0], tt.want[1], got)
			}
		})
	}
}
