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

func TestTheHTMLReportRendersInHeadlessChromium(t *testing.T) {
	browser := chromium(t)
	r, page := htmlReport(t)
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
	m := regexp.MustCompile(`data-rendered="([0-9,]*)"`).FindSubmatch(dom.Bytes())
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
