package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	extenderv1 "k8s.io/kube-scheduler/extender/v1"
)

// spotExtender is a node-cache-capable extender that refuses the spot-*
// nodes and prefers compute-a-vgsdg; it counts its calls per verb.
type spotExtender struct{ filters, prioritizes, binds atomic.Int64 }

func (x *spotExtender) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var args extenderv1.ExtenderArgs
	_ = json.NewDecoder(r.Body).Decode(&args)
	switch r.URL.Path {
	case "/filter":
		x.filters.Add(1)
		res := extenderv1.ExtenderFilterResult{NodeNames: &[]string{}, FailedNodes: extenderv1.FailedNodesMap{}}
		for _, n := range *args.NodeNames {
			if strings.HasPrefix(n, "spot-") {
				res.FailedNodes[n] = "spot nodes are off limits"
			} else {
				*res.NodeNames = append(*res.NodeNames, n)
			}
		}
		_ = json.NewEncoder(w).Encode(res)
	case "/prioritize":
		x.prioritizes.Add(1)
		var list extenderv1.HostPriorityList
		for _, n := range *args.NodeNames {
			score := int64(0)
			if n == "compute-a-vgsdg" {
				score = 10
			}
			list = append(list, extenderv1.HostPriority{Host: n, Score: score})
		}
		_ = json.NewEncoder(w).Encode(list)
	default:
		x.binds.Add(1)
		w.WriteHeader(http.StatusInternalServerError)
	}
}

func TestSimulateAndExplainCallTheConfiguredExtender(t *testing.T) {
	x := &spotExtender{}
	srv := httptest.NewServer(x)
	defer srv.Close()
	cfg := writeFile(t, "config.yaml", fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
extenders:
- urlPrefix: %s
  filterVerb: filter
  prioritizeVerb: prioritize
  weight: 3
  bindVerb: bind
  nodeCacheCapable: true
`, srv.URL))

	code, out, errOut := run(t, "simulate", "-f", "../../../examples/cluster.yaml", "--config", cfg, "-o", "json")
	if code != 0 {
		t.Fatalf("simulate exited %d: %s", code, errOut)
	}
	var rep struct {
		Pods []struct{ Namespace, Name, Node, Status string }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	scheduled := 0
	for _, p := range rep.Pods {
		if p.Status != "Scheduled" {
			continue
		}
		scheduled++
		if strings.HasPrefix(p.Node, "spot-") {
			t.Errorf("%s/%s was scheduled to %s, which the extender refuses", p.Namespace, p.Name, p.Node)
		}
	}
	if scheduled == 0 || x.filters.Load() == 0 || x.prioritizes.Load() == 0 {
		t.Errorf("%d pods scheduled, %d filter and %d prioritize calls: want the extender consulted for the pods scheduled", scheduled, x.filters.Load(), x.prioritizes.Load())
	}
	if n := x.binds.Load(); n != 0 {
		t.Errorf("the simulation asked the extender to bind %d times; it binds in its own world", n)
	}

	code, out, errOut = run(t, "explain", "-f", "../../../examples/cluster.yaml", "--pod", "batch/worker-2fjfqlq4-8kltj", "--config", cfg, "-o", "json")
	if code != 0 {
		t.Fatalf("explain exited %d: %s", code, errOut)
	}
	var ex struct {
		Nodes []struct {
			Name     string
			Feasible bool
			Plugin   string
			Reasons  []string
			Scores   map[string]int64
		}
	}
	if err := json.Unmarshal([]byte(out), &ex); err != nil {
		t.Fatal(err)
	}
	sawRefusal, sawScore := false, false
	for _, n := range ex.Nodes {
		if strings.HasPrefix(n.Name, "spot-") && n.Plugin == srv.URL && strings.Join(n.Reasons, ";") == "spot nodes are off limits" {
			sawRefusal = true
		}
		if n.Name == "compute-a-vgsdg" && n.Feasible && n.Scores[srv.URL] == 10*3*10 {
			sawScore = true
		}
	}
	if !sawRefusal || !sawScore {
		t.Errorf("explain shows the extender's refusal of a spot node: %v, its weighted score 300 on compute-a-vgsdg: %v\n%s", sawRefusal, sawScore, out)
	}
}
