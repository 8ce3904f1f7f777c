package scheduler

import (
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/kubesched/kubesched/pkg/framework"
)

// The cache debugger, as upstream's (pkg/scheduler/backend/cache/debugger)
// and a little further: kube-scheduler compares node names and pod UIDs
// with its informers; this compares with a fresh list of the world and
// also checks where each pod is counted, what each node has requested,
// and that every pending pod is somewhere in the queue.

// CompareWithWorld returns every difference between the cache and queue
// and the nodes and pods given (a fresh LIST). Pods of other schedulers
// count in the cache; only pods of our profiles must be queued. An empty
// result means the cache and queue agree with the world.
func (s *Scheduler) CompareWithWorld(nodes []*v1.Node, pods []*v1.Pod) []string {
	var diffs []string
	dump := s.Cache.Dump()

	apiNodes := map[string]bool{}
	for _, n := range nodes {
		apiNodes[n.Name] = true
		if ni, ok := dump[n.Name]; !ok || ni.Node() == nil {
			diffs = append(diffs, fmt.Sprintf("node %s: in the API, not in the cache", n.Name))
		}
	}
	for name, ni := range dump {
		if ni.Node() != nil && !apiNodes[name] {
			diffs = append(diffs, fmt.Sprintf("node %s: in the cache, not in the API", name))
		}
	}

	type placed struct {
		node string
		pod  *v1.Pod
	}
	cached := map[string]placed{}
	for name, ni := range dump {
		for _, pi := range ni.Pods() {
			cached[string(pi.Pod.UID)] = placed{name, pi.Pod}
		}
	}
	queued := map[string]bool{}
	for _, p := range s.Queue.PendingPods() {
		queued[string(p.UID)] = true
	}
	for _, p := range s.Queue.InFlightPods() {
		queued[string(p.UID)] = true
	}

	want := map[string]*framework.Resource{}
	count := map[string]int{}
	seen := map[string]bool{}
	for _, p := range pods {
		if terminal(p) {
			continue
		}
		uid := string(p.UID)
		seen[uid] = true
		key := p.Namespace + "/" + p.Name
		c, inCache := cached[uid]
		switch {
		case assigned(p):
			if want[p.Spec.NodeName] == nil {
				want[p.Spec.NodeName] = &framework.Resource{}
			}
			pi := framework.NewPodInfo(p)
			want[p.Spec.NodeName].AddResource(&pi.Requests)
			count[p.Spec.NodeName]++
			if !inCache {
				diffs = append(diffs, fmt.Sprintf("pod %s: bound to %s in the API, not in the cache", key, p.Spec.NodeName))
			} else if c.node != p.Spec.NodeName {
				diffs = append(diffs, fmt.Sprintf("pod %s: bound to %s in the API, counted on %s in the cache", key, p.Spec.NodeName, c.node))
			}
			if queued[uid] {
				diffs = append(diffs, fmt.Sprintf("pod %s: bound to %s in the API, still in the queue", key, p.Spec.NodeName))
			}
		case inCache:
			diffs = append(diffs, fmt.Sprintf("pod %s: pending in the API, counted on %s in the cache (assumed: %v)", key, c.node, s.Cache.IsAssumedPod(p)))
		case s.ResponsibleForPod(p) && p.DeletionTimestamp == nil && !queued[uid]:
			diffs = append(diffs, fmt.Sprintf("pod %s: pending in the API, not in the queue", key))
		}
	}
	for uid, c := range cached {
		if !seen[uid] {
			diffs = append(diffs, fmt.Sprintf("pod %s/%s: counted on %s in the cache, not in the API", c.pod.Namespace, c.pod.Name, c.node))
		}
	}
	for _, p := range s.Queue.PendingPods() {
		if !seen[string(p.UID)] {
			diffs = append(diffs, fmt.Sprintf("pod %s/%s: in the queue, not in the API", p.Namespace, p.Name))
		}
	}
	for name, ni := range dump {
		if ni.Node() == nil {
			continue
		}
		w := want[name]
		if w == nil {
			w = &framework.Resource{}
		}
		if ni.Requested().MilliCPU != w.MilliCPU || ni.Requested().Memory != w.Memory || len(ni.Pods()) != count[name] {
			diffs = append(diffs, fmt.Sprintf("node %s: the cache counts %d pods, %dm cpu, %d bytes; the API %d pods, %dm cpu, %d bytes",
				name, len(ni.Pods()), ni.Requested().MilliCPU, ni.Requested().Memory, count[name], w.MilliCPU, w.Memory))
		}
	}
	sort.Strings(diffs)
	return diffs
}

// DebugReport dumps the cache and queue and compares them with the world,
// as text (what SIGUSR2 logs and /debug/cache serves), with the differences.
func (s *Scheduler) DebugReport(nodes []*v1.Node, pods []*v1.Pod) (string, []string) {
	var b strings.Builder
	dump := s.Cache.Dump()
	names := make([]string, 0, len(dump))
	for n := range dump {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(&b, "cache: %d nodes\n", len(names))
	for _, n := range names {
		ni := dump[n]
		fmt.Fprintf(&b, "  node %s: %d pods, requested %dm cpu, %d bytes memory", n, len(ni.Pods()), ni.Requested().MilliCPU, ni.Requested().Memory)
		if ni.Node() == nil {
			b.WriteString(" (node deleted; pods still counted)")
		}
		b.WriteString("\n")
	}
	active, backoff, unsched := s.Queue.Counts()
	fmt.Fprintf(&b, "queue: %d active, %d backoff, %d unschedulable, %d in flight\n", active, backoff, unsched, s.Queue.InFlight())
	diffs := s.CompareWithWorld(nodes, pods)
	fmt.Fprintf(&b, "differences from the API: %d\n", len(diffs))
	for _, d := range diffs {
		b.WriteString("  " + d + "\n")
	}
	return b.String(), diffs
}

// LogDebugReport logs the report, as kube-scheduler does on SIGUSR2.
func (s *Scheduler) LogDebugReport(logger klog.Logger, nodes []*v1.Node, pods []*v1.Pod) {
	report, diffs := s.DebugReport(nodes, pods)
	if len(diffs) == 0 {
		logger.Info("Cache comparison: no differences from the API")
	} else {
		logger.Info("Cache mismatch", "differences", diffs)
	}
	logger.Info("Dump of cache and scheduling queue", "report", report)
}
