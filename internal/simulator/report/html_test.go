package report_test

import (
	"bytes"
	"context"
	"fmt"
	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/questions"
	"github.com/kubesched/kubesched/internal/simulator/report"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	"github.com/kubesched/kubesched/internal/simulator/timeline"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins"
)

// htmlReport simulates the example cluster, workloads and scenario and
// renders the HTML report, pending pods explained.
func htmlReport(t *testing.T) (*report.Report, []byte) {
	t.Helper()
	c, err := loading.Load([]string{"../../../examples/cluster.yaml", "../../../examples/workloads.yaml", "../../../examples/scenario.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := simulator.NewWorld(context.Background(), c, simtest.DefaultConfig(t), plugins.NewInTreeRegistry(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := timeline.Run(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	r := w.Report()
	if err := questions.ExplainPending(context.Background(), w, r); err != nil {
		t.Fatal(err)
	}
	return r, simtest.Render(t, r, "html")
}

func TestTheHTMLReportIsSelfContained(t *testing.T) {
	r, page := htmlReport(t)
	for _, ref := range []string{"src=", "href=", "http://", "https://", "@import"} {
		if bytes.Contains(page, []byte(ref)) {
			t.Errorf("the page holds %q: it must need nothing at view time", ref)
		}
	}
	if got := bytes.Count(page, []byte("<details>")); got == 0 || got > report.ExplainLimit {
		t.Errorf("%d explanations, want between 1 and %d", got, report.ExplainLimit)
	}
	if r.Summary.Unschedulable == 0 {
		t.Fatal("nothing pending: the report's reason chart is not exercised")
	}
}

// chromium finds Debian's chromium (or another Chrome); in CI its absence
// is a failure, elsewhere the test is skipped saying what to install.
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no chromium on PATH: install Debian's chromium package (apt-get install chromium) to run the HTML report's browser test"
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// renderDOM renders page in headless chromium and returns the DOM after
// the page's script ran.
func renderDOM(t *testing.T, page []byte) []byte {
	t.Helper()
	browser := chromium(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "report.html")
	if err := os.WriteFile(file, page, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--enable-logging=stderr", "--v=0", "--dump-dom", "file://"+file)
	var dom, logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &dom, &logs
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, logs.String())
	}
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, ":CONSOLE") {
			t.Errorf("console message: %s", line)
		}
	}
	return dom.Bytes()
}

func TestTheHTMLReportRendersInHeadlessChromium(t *testing.T) {
	r, page := htmlReport(t)
	dom := renderDOM(t, page)
	m := regexp.MustCompile(`data-rendered="([0-9,]*)"`).FindSubmatch(dom)
	if m == nil {
		t.Fatalf("the page's script did not run: no data-rendered in the DOM")
	}
	reasons := map[string]bool{}
	for _, p := range r.Pods {
		if p.Status == report.StatusUnschedulable || p.Status == report.StatusNotCreated {
			reasons[p.Message] = true
		}
	}
	want := fmt.Sprintf("%d,%d,%d,%d", len(r.Nodes), len(reasons), 2*len(r.Timeline.Samples), len(r.Pods))
	if got := string(m[1]); got != want {
		t.Errorf("marks (node cells, reason bars, timeline samples, pod rows) = %s, want %s", got, want)
	}
}

// A cluster of thousands of nodes gets a heat map of pools, not nodes,
// and its pod table shows a page at a time.
func TestTheHTMLReportOfALargeClusterAggregatesAndPages(t *testing.T) {
	r := &report.Report{Summary: report.Summary{Nodes: 1200}}
	for i := 0; i < 1200; i++ {
		r.Nodes = append(r.Nodes, report.NodeResult{Name: fmt.Sprintf("n%04d", i), Zone: []string{"a", "b"}[i%2], Pool: []string{"general", "gpu"}[i%3/2],
			RequestedResources: framework.Resource{MilliCPU: 500}, AllocatableResources: framework.Resource{MilliCPU: 1000}})
	}
	for i := 0; i < 1300; i++ {
		r.Pods = append(r.Pods, report.PodResult{Namespace: "default", Name: fmt.Sprintf("p%04d", i), Node: "n0001", Status: report.StatusScheduled})
	}
	page := simtest.Render(t, r, "html")
	if got := bytes.Count(page, []byte(`class="node-cell"`)); got != 0 {
		t.Errorf("%d node cells, want none past 1000 nodes", got)
	}
	dom := renderDOM(t, page)
	if m := regexp.MustCompile(`data-pools="([0-9]*)"`).FindSubmatch(dom); m == nil || string(m[1]) != "4" {
		t.Errorf("pool cells %q, want 4 (two pools in two zones)", m)
	}
	if m := regexp.MustCompile(`data-shown="([^"]*)"`).FindSubmatch(dom); m == nil || string(m[1]) != "500 1-500 of 1300 matching, 1300 pods" {
		t.Errorf("shown %q, want the first page of 500 rows", m)
	}
}
