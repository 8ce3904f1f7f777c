package loading_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
)

// BenchmarkLoadLarge loads 2,000 nodes and 20,000 pods (half of them in
// one namespace-less List, half as documents, a tenth of them bound),
// the size the loader must stay fast at.
func BenchmarkLoadLarge(b *testing.B) {
	var docs, items []string
	for i := 0; i < 2000; i++ {
		docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: Node\nmetadata: {name: n%d, labels: {zone: z%d}}\nstatus: {capacity: {cpu: \"16\", memory: 64Gi, pods: \"110\"}}\n", i, i%3))
	}
	for i := 0; i < 20000; i++ {
		node := ""
		if i%10 == 0 {
			node = fmt.Sprintf(",\"nodeName\":\"n%d\"", i%2000)
		}
		pod := fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p%d","namespace":"ns%d","labels":{"app":"a%d"}},"spec":{"containers":[{"name":"c","image":"x","resources":{"requests":{"cpu":"100m","memory":"128Mi"}}}]%s}}`, i, i%20, i%50, node)
		if i%2 == 0 {
			items = append(items, pod)
		} else {
			docs = append(docs, pod+"\n")
		}
	}
	path := simtest.WriteFile(b, "big.yaml", strings.Join(docs, "---\n"))
	list := simtest.WriteFile(b, "list.json", `{"apiVersion":"v1","kind":"List","items":[`+strings.Join(items, ",")+`]}`)
	paths := []string{path, list}
	b.ResetTimer()
	for b.Loop() {
		c, err := loading.Load(paths)
		if err != nil {
			b.Fatal(err)
		}
		if len(c.Pods) != 20000 {
			b.Fatalf("%d pods", len(c.Pods))
		}
	}
}
