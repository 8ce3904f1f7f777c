package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// readNodeTypes reads the Node manifests of a --node-types file, by name.
func readNodeTypes(t *testing.T, path string) map[string]*v1.Node {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*v1.Node{}
	for _, doc := range bytes.Split(data, []byte("\n---")) {
		var n v1.Node
		if err := yaml.Unmarshal(doc, &n); err != nil {
			t.Fatal(err)
		}
		if n.Name != "" {
			out[n.Name] = &n
		}
	}
	return out
}

// The answer of capacity --node-types holds however its nodes are named
// and ordered and however the scheduler breaks ties: kube-scheduler draws
// at random among equally scored nodes, and the nodes a user adds have
// names and an order of their own. The inputs are the peer benchmark's
// mix: at 450 pods (go run ./hack/genplanner -pods 450 -seed 3), whose
// answer in the search's own order alone left pods pending in some of
// these checks; at 60 pods (-pods 60 -seed 2), a small question (400
// pending pods at most) with too many candidates for the exact search,
// whose answer (3.055/h) left a pod pending in 2 of the search's 8 other
// orders and was reported, not repaired, before 2026-12-07; repaired,
// 3.439/h, where the rounds' answer, polished, is 2.94/h and placed in
// every order (each small question's answers the exact search does not
// judge are now completed, robust included, and the cheapest kept).
func TestNodeTypesAnswerPlacesEveryPodInOtherOrdersAndTieBreaks(t *testing.T) {
	for _, tc := range []struct {
		input   string
		maxCost float64 // 0: not checked
	}{
		{input: "genplanner-450-seed3"},
		{input: "genplanner-60-seed2", maxCost: 3.0},
	} {
		t.Run(tc.input, func(t *testing.T) {
			answerPlacesEveryPodInOtherOrders(t, filepath.Join("testdata", tc.input), tc.maxCost)
		})
	}
}

func answerPlacesEveryPodInOtherOrders(t *testing.T, dir string, maxCost float64) {
	cluster, types := filepath.Join(dir, "cluster.yaml"), filepath.Join(dir, "types.yaml")
	table, res := nodeTypesRun(t, cluster, types, "auto")
	if len(res.Pending) != 0 || len(res.Add) == 0 {
		t.Fatalf("the answer adds %v and leaves %v pending: want every pod placed", res.Add, res.Pending)
	}
	if maxCost > 0 && res.HourlyCost > maxCost {
		t.Errorf("the answer costs %.3f/h (%v): want at most %.2f/h", res.HourlyCost, res.Add, maxCost)
	}
	const want = "Checked in 8 other orders of the new nodes and draws between equally scored nodes (kube-scheduler breaks such ties at random): each places as many pods."
	if res.Orders != 8 || res.OrdersShort != 0 || !strings.Contains(table, want) {
		t.Fatalf("orders %d, short %d, table:\n%s\nwant 8 orders, none short: %q", res.Orders, res.OrdersShort, table, want)
	}
	tmpl := readNodeTypes(t, types)
	// nodes are the answer's nodes named <prefix>-<i>, in the answer's
	// order or shuffled by order (0: not).
	nodes := func(t *testing.T, prefix string, order uint64) string {
		var objs []runtime.Object
		for _, a := range res.Add {
			for range a.Count {
				n := tmpl[a.Type].DeepCopy()
				n.Annotations = nil
				n.Labels[v1.LabelTopologyZone] = a.Zone
				objs = append(objs, n)
			}
		}
		if order != 0 {
			r := rand.New(rand.NewPCG(order, 0))
			r.Shuffle(len(objs), func(a, b int) { objs[a], objs[b] = objs[b], objs[a] })
		}
		for i, o := range objs {
			n := o.(*v1.Node)
			n.Name = fmt.Sprintf("%s-%04d", prefix, i)
			n.Labels[v1.LabelHostname] = n.Name
		}
		return writeObjects(t, "nodes.yaml", objs...)
	}
	tests := []struct {
		name   string
		prefix string
		order  uint64
		seed   int
	}{
		{name: "named after their index in the answer's order, the default seed", prefix: "kubesched", seed: 1},
		{name: "named after their index in the answer's order, another seed", prefix: "kubesched", seed: 2},
		{name: "shuffled once, the default seed", prefix: "node", order: 1, seed: 1},
		{name: "shuffled once, another seed", prefix: "node", order: 1, seed: 2},
		{name: "shuffled twice, the default seed", prefix: "ip-10-0", order: 2, seed: 1},
		{name: "shuffled twice, another seed", prefix: "ip-10-0", order: 2, seed: 2},
		{name: "shuffled a third way, a third seed", prefix: "worker", order: 3, seed: 3},
		{name: "shuffled a fourth way, a fourth seed", prefix: "worker", order: 4, seed: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := run(t, "simulate", "-f", cluster, "-f", nodes(t, tt.prefix, tt.order), "--seed", strconv.Itoa(tt.seed), "-o", "json")
			if code != 0 {
				t.Fatalf("simulate: exit %d: %s", code, errOut)
			}
			var r struct {
				Pods []struct{ Namespace, Name, Status, Message string } `json:"pods"`
			}
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatal(err)
			}
			for _, p := range r.Pods {
				if p.Status != "Scheduled" {
					t.Errorf("%s/%s %s: %s", p.Namespace, p.Name, p.Status, p.Message)
				}
			}
		})
	}
}
