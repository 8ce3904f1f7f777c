package difffuzz

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// shrinker shrinks a divergent case while its last step still diverges
// with the same first cause, within a time budget.
type shrinker struct {
	cause    string
	deadline time.Time
	runs     int
}

// diverges reports whether the case's last step diverges with the cause.
func (s *shrinker) diverges(c *Case) bool {
	if time.Now().After(s.deadline) || len(c.Pods) == 0 {
		return false
	}
	s.runs++
	steps, err := Run(c)
	if err != nil || len(steps) != len(c.Pods) {
		return false
	}
	return contains(Causes(steps[len(steps)-1].Diff), s.cause)
}

// Minimize shrinks a divergence (the last of steps) to a small case and
// renders it: the scenario file (the conformance format, pending pod
// annotated), upstream's answer in the expected.json schema, and the
// differences. A divergence that needs the earlier pods of the sequence
// in the same kubesched world (it does not reproduce with them as
// assigned pods of a fresh world) is shown as the cluster and the pods in
// order. budget bounds the time spent.
func Minimize(c *Case, steps []Step, budget time.Duration) string {
	last := steps[len(steps)-1]
	s := &shrinker{cause: Causes(last.Diff)[0], deadline: time.Now().Add(budget)}
	var cur *Case
	flat := Flatten(c, steps, len(steps)-1)
	fc := &Case{Cluster: flat, Pods: []*v1.Pod{flat.Pending}}
	flat.Pending = nil
	sequence := !s.diverges(fc)
	if sequence {
		cur = &Case{Cluster: c.Cluster.Clone(), Pods: clonePods(c.Pods[:len(steps)])}
		// Drop earlier pods of the stream.
		for i := len(cur.Pods) - 2; i >= 0; i-- {
			try := &Case{Cluster: cur.Cluster, Pods: append(clonePods(cur.Pods[:i]), cur.Pods[i+1:]...)}
			if s.diverges(try) {
				cur = try
			}
		}
	} else {
		cur = fc
	}
	s.shrinkCluster(cur)
	for i := range cur.Pods {
		i := i
		s.shrinkObject(cur.Pods[i], func(o runtime.Object) bool {
			try := &Case{Cluster: cur.Cluster, Pods: clonePods(cur.Pods)}
			try.Pods[i] = o.(*v1.Pod)
			if s.diverges(try) {
				cur.Pods[i] = o.(*v1.Pod)
				return true
			}
			return false
		})
	}
	final, err := Run(cur)
	if err != nil || len(final) == 0 {
		return fmt.Sprintf("(shrinking failed: %v)", err)
	}
	end := final[len(final)-1]
	var b strings.Builder
	fmt.Fprintf(&b, "minimal scenario (%d shrinking runs):\n", s.runs)
	if sequence || len(cur.Pods) > 1 {
		b.WriteString("--- reproduces only when the pods below are scheduled in order in one kubesched world (each placed on its best node, the last diverges):\n")
		b.WriteString(cur.Cluster.YAML("cluster", false))
		for i, p := range cur.Pods {
			fmt.Fprintf(&b, "--- # pending pod %d of %d", i+1, len(cur.Pods))
			if i < len(final) && final[i].Node != "" {
				fmt.Fprintf(&b, " (placed on %s)", final[i].Node)
			}
			b.WriteString("\n" + PodYAML(p))
		}
	} else {
		sc := cur.Cluster.Clone()
		sc.Pending = cur.Pods[0]
		b.WriteString(sc.YAML(fmt.Sprintf("difffuzz: %d nodes, %d pods; %s", len(sc.Nodes), len(sc.Pods), s.cause), true))
	}
	if end.Upstream != nil { // nil when a side failed with an error (the differences say which)
		b.WriteString("--- upstream's answer (expected.json):\n" + end.Upstream.JSON() + "\n")
	}
	b.WriteString("--- differences:\n  " + strings.Join(end.Diff, "\n  ") + "\n")
	return b.String()
}

// shrinkCluster drops assigned pods, the storage, DRA, scheduling and
// apps objects, Services, nodes (with their pods)
// and namespaces one at a time while the case still diverges, then
// shrinks each remaining node and assigned pod.
func (s *shrinker) shrinkCluster(c *Case) {
	try := func(edit func(sc *Scenario)) {
		sc := c.Cluster.Clone()
		edit(sc)
		if s.diverges(&Case{Cluster: sc, Pods: c.Pods}) {
			c.Cluster = sc
		}
	}
	for i := len(c.Cluster.Pods) - 1; i >= 0; i-- {
		try(func(sc *Scenario) { sc.Pods = append(sc.Pods[:i], sc.Pods[i+1:]...) })
	}
	for i := len(c.Cluster.Others) - 1; i >= 0; i-- {
		try(func(sc *Scenario) { sc.Others = append(sc.Others[:i], sc.Others[i+1:]...) })
	}
	for i := len(c.Cluster.Services) - 1; i >= 0; i-- {
		try(func(sc *Scenario) { sc.Services = append(sc.Services[:i], sc.Services[i+1:]...) })
	}
	for i := len(c.Cluster.Nodes) - 1; i >= 0; i-- {
		try(func(sc *Scenario) {
			name := sc.Nodes[i].Name
			sc.Nodes = append(sc.Nodes[:i], sc.Nodes[i+1:]...)
			var kept []*v1.Pod
			for _, p := range sc.Pods {
				if p.Spec.NodeName != name {
					kept = append(kept, p)
				}
			}
			sc.Pods = kept
		})
	}
	for i := len(c.Cluster.Namespaces) - 1; i >= 0; i-- {
		try(func(sc *Scenario) { sc.Namespaces = append(sc.Namespaces[:i], sc.Namespaces[i+1:]...) })
	}
	for i := range c.Cluster.Nodes {
		s.shrinkObject(c.Cluster.Nodes[i], func(o runtime.Object) bool {
			sc := c.Cluster.Clone()
			sc.Nodes[i] = o.(*v1.Node)
			if s.diverges(&Case{Cluster: sc, Pods: c.Pods}) {
				c.Cluster = sc
				return true
			}
			return false
		})
	}
	for i := range c.Cluster.Pods {
		s.shrinkObject(c.Cluster.Pods[i], func(o runtime.Object) bool {
			sc := c.Cluster.Clone()
			sc.Pods[i] = o.(*v1.Pod)
			if s.diverges(&Case{Cluster: sc, Pods: c.Pods}) {
				c.Cluster = sc
				return true
			}
			return false
		})
	}
}

// shrinkObject deletes one JSON member or list element of an object's
// labels, spec and status at a time (outermost first); a deletion is kept
// when the object, defaulted again, still validates and keep accepts it.
func (s *shrinker) shrinkObject(obj runtime.Object, keep func(runtime.Object) bool) {
	data, err := json.Marshal(obj)
	if err != nil {
		return
	}
	var tree map[string]any
	if json.Unmarshal(data, &tree) != nil {
		return
	}
	for i := 0; ; i++ {
		if time.Now().After(s.deadline) {
			return
		}
		cand, ok := deleteNth(tree, i)
		if !ok {
			return
		}
		raw, _ := json.Marshal(cand)
		o := fresh(obj)
		if json.Unmarshal(raw, o) != nil {
			continue
		}
		Default(o)
		if len(Validate(o)) > 0 {
			continue
		}
		if keep(o) {
			tree = cand
			i--
		}
	}
}

// fresh returns an empty object of obj's type (unmarshalling into a copy
// would merge rather than replace).
func fresh(obj runtime.Object) runtime.Object {
	switch obj.(type) {
	case *v1.Pod:
		return &v1.Pod{}
	case *v1.Node:
		return &v1.Node{}
	}
	return obj.DeepCopyObject()
}

// deleteNth returns a copy of tree without its n-th deletable element (in
// pre-order over metadata.labels, spec and status), or false past the end.
func deleteNth(tree map[string]any, n int) (map[string]any, bool) {
	cp := deepCopyJSON(tree).(map[string]any)
	count := 0
	// walk counts map members and list elements; lists are handled by
	// their parent map so that an element can be cut out.
	var walk func(v any) bool
	walk = func(v any) bool {
		x, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for _, k := range sortedKeys(x) {
			if count == n {
				delete(x, k)
				return true
			}
			count++
			l, isList := x[k].([]any)
			if !isList {
				if walk(x[k]) {
					return true
				}
				continue
			}
			for j := range l {
				if count == n {
					x[k] = append(append([]any{}, l[:j]...), l[j+1:]...)
					return true
				}
				count++
				if walk(l[j]) {
					return true
				}
			}
		}
		return false
	}
	for _, root := range []string{"metadata", "spec", "status"} {
		m, ok := cp[root].(map[string]any)
		if !ok {
			continue
		}
		if root == "metadata" {
			if l, ok := m["labels"].(map[string]any); ok && walk(l) {
				return cp, true
			}
			continue
		}
		if walk(m) {
			return cp, true
		}
	}
	return nil, false
}

func deepCopyJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopyJSON(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = deepCopyJSON(e)
		}
		return l
	}
	return v
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func clonePods(ps []*v1.Pod) []*v1.Pod {
	out := make([]*v1.Pod, len(ps))
	for i, p := range ps {
		out[i] = p.DeepCopy()
	}
	return out
}
