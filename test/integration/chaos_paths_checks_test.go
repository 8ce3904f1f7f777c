package integration

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	resourceapi "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ptrs "k8s.io/utils/ptr"

	fw "github.com/kubesched/kubesched/test/integration/framework"
)

// ---- waiting ----

// waitSettled waits until every pod the test keeps that fits is bound
// (its current UID; a volume pod pinned to a full node does not fit, see
// pinnedToFullNode); it returns those that are not, with their
// conditions, after timeout.
func (s *soak) waitSettled(timeout time.Duration) []string {
	deadline := time.Now().Add(timeout)
	for {
		stuck := s.unsettled()
		if len(stuck) == 0 || time.Now().After(deadline) {
			if len(stuck) > 20 {
				stuck = append(stuck[:20], fmt.Sprintf("... %d in all", len(stuck)))
			}
			return stuck
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func (s *soak) unsettled() []string {
	pods, err := s.c.CoreV1().Pods(soakNS).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return []string{err.Error()}
	}
	byName := map[string]*v1.Pod{}
	for i := range pods.Items {
		byName[pods.Items[i].Name] = &pods.Items[i]
	}
	pinned := s.pinnedToFullNode(pods.Items)
	s.mu.Lock()
	defer s.mu.Unlock()
	var stuck []string
	for name, p := range s.pods {
		if _, ok := pinned[name]; ok || p.gone || p.huge || s.gangs[p.group] == "unsatisfiable" {
			continue
		}
		cur := byName[name]
		switch {
		case cur == nil || cur.UID != p.uid:
			stuck = append(stuck, name+": not created yet")
		case cur.Spec.NodeName == "":
			msg := "no condition"
			if c := podScheduledCondition(cur); c != nil {
				msg = c.Reason + ": " + c.Message
			}
			stuck = append(stuck, name+": "+msg)
		}
	}
	sort.Strings(stuck)
	return stuck
}

// pinnedToFullNode returns the pending volume pods that cannot be placed,
// with why. A volume pod whose binding fails after its claim was
// provisioned (a Binding fault of the proxy, a node removed in PreBind)
// goes back to the queue pinned by its volume's node affinity to the
// selected node; other pods may take that node's attach slots meanwhile,
// and then it fits nowhere until one leaves: in kube-scheduler as in
// kubesched, and once the node churn and the completions stop, none
// leaves. It is counted from the API, not from kubesched: a pod whose
// volume's node has a free slot of soakCSIDriver is not in the answer.
// (The gangs' claims pin nothing: see soakNetClass.)
func (s *soak) pinnedToFullNode(pods []v1.Pod) map[string]string {
	ctx := context.Background()
	claimOf := map[string]string{}
	for _, p := range pods {
		if p.Spec.NodeName == "" && pathOf(p.Name) == "volume" && len(p.Spec.Volumes) > 0 && p.Spec.Volumes[0].PersistentVolumeClaim != nil {
			claimOf[p.Name] = p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName
		}
	}
	if len(claimOf) == 0 {
		return nil
	}
	pvcs, err1 := s.c.CoreV1().PersistentVolumeClaims(soakNS).List(ctx, metav1.ListOptions{})
	pvs, err2 := s.c.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	csiNodes, err3 := s.c.StorageV1().CSINodes().List(ctx, metav1.ListOptions{})
	if err1 != nil || err2 != nil || err3 != nil {
		return nil
	}
	pvcByName := map[string]*v1.PersistentVolumeClaim{}
	for i := range pvcs.Items {
		pvcByName[pvcs.Items[i].Name] = &pvcs.Items[i]
	}
	pvByName := map[string]*v1.PersistentVolume{}
	for i := range pvs.Items {
		pvByName[pvs.Items[i].Name] = &pvs.Items[i]
	}
	volumeOf := func(claim string) *v1.PersistentVolume {
		if pvc := pvcByName[claim]; pvc != nil && pvc.Spec.VolumeName != "" {
			if pv := pvByName[pvc.Spec.VolumeName]; pv != nil && pv.Spec.CSI != nil && pv.Spec.CSI.Driver == soakCSIDriver {
				return pv
			}
		}
		return nil
	}
	limits := map[string]int{}
	for _, cn := range csiNodes.Items {
		for _, d := range cn.Spec.Drivers {
			if d.Name == soakCSIDriver && d.Allocatable != nil && d.Allocatable.Count != nil {
				limits[cn.Name] = int(*d.Allocatable.Count)
			}
		}
	}
	// The node's volumes of soakCSIDriver used by bound pods, and by whom.
	used := map[string]map[string]string{}
	for _, p := range pods {
		if p.Spec.NodeName == "" {
			continue
		}
		for _, vol := range p.Spec.Volumes {
			if vol.PersistentVolumeClaim == nil {
				continue
			}
			if pv := volumeOf(vol.PersistentVolumeClaim.ClaimName); pv != nil {
				if used[p.Spec.NodeName] == nil {
					used[p.Spec.NodeName] = map[string]string{}
				}
				used[p.Spec.NodeName][pv.Spec.CSI.VolumeHandle] = p.Name
			}
		}
	}
	out := map[string]string{}
	for pod, claim := range claimOf {
		pv := volumeOf(claim)
		if pv == nil {
			continue
		}
		node := pvNode(pv)
		limit, ok := limits[node]
		if !ok || len(used[node]) < limit {
			continue
		}
		var holders []string
		for _, p := range used[node] {
			holders = append(holders, p)
		}
		sort.Strings(holders)
		out[pod] = fmt.Sprintf("%s: its volume %s is on %s, whose %d attach slots are held by %v", pod, pv.Name, node, limit, holders)
	}
	return out
}

// ---- invariants ----

// checker looks at the API every second for what must never be: nodes
// overcommitted, devices in two claims, claims shared, gangs that cannot
// fit with a member bound, pods on another node than their claim's.
func (s *soak) checker() { s.every(s.ctx, time.Second, s.checkOnce) }

func (s *soak) recordViolation(key, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.viol[key]; !ok {
		s.viol[key] = msg
	}
}

func (s *soak) checkOnce() {
	ctx := context.Background()
	// Pods first: a node listed after them has the status it had when
	// its pods were bound (a new node has no allocatable until its
	// status is written, and nothing may be bound to it before).
	pods, err2 := s.c.CoreV1().Pods(soakNS).List(ctx, metav1.ListOptions{})
	nodes, err1 := s.c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	claims, err3 := s.c.ResourceV1().ResourceClaims(soakNS).List(ctx, metav1.ListOptions{})
	pvcs, err4 := s.c.CoreV1().PersistentVolumeClaims(soakNS).List(ctx, metav1.ListOptions{})
	pvs, err5 := s.c.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	csiNodes, err6 := s.c.StorageV1().CSINodes().List(ctx, metav1.ListOptions{})
	for _, err := range []error{err1, err2, err3, err4, err5, err6} {
		if err != nil {
			return
		}
	}
	for _, v := range soakViolations(nodes.Items, pods.Items, claims.Items, pvcs.Items, pvs.Items, csiNodes.Items, s.unsatisfiable()) {
		s.recordViolation(v[0], v[1])
	}
}

func (s *soak) unsatisfiable() map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]bool{}
	for g, plan := range s.gangs {
		if plan == "unsatisfiable" {
			out[g] = true
		}
	}
	return out
}

// soakViolations returns (key, message) pairs; a key's first word is its
// kind: cpu, memory, pods, devices, "volume attach", "claim shared",
// "node mismatch", "unsatisfiable gang bound".
func soakViolations(nodes []v1.Node, pods []v1.Pod, claims []resourceapi.ResourceClaim, pvcs []v1.PersistentVolumeClaim,
	pvs []v1.PersistentVolume, csiNodes []storagev1.CSINode, unsatisfiable map[string]bool) [][2]string {
	var out [][2]string
	add := func(kind, key, msg string) { out = append(out, [2]string{kind + ": " + key, msg}) }
	type usage struct {
		cpu, mem resource.Quantity
		pods     int64
		volumes  map[string]bool
	}
	used := map[string]*usage{}
	pvcByName := map[string]*v1.PersistentVolumeClaim{}
	for i := range pvcs {
		pvcByName[pvcs[i].Name] = &pvcs[i]
	}
	pvByName := map[string]*v1.PersistentVolume{}
	for i := range pvs {
		pvByName[pvs[i].Name] = &pvs[i]
	}
	claimUsers := map[string][]string{}
	for _, p := range pods {
		if p.Spec.NodeName == "" || p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		if p.Spec.SchedulingGroup != nil && unsatisfiable[ptrs.Deref(p.Spec.SchedulingGroup.PodGroupName, "")] {
			add("unsatisfiable gang bound", p.Name, fmt.Sprintf("pod %s of gang %s, which cannot fit, is bound to %s", p.Name, *p.Spec.SchedulingGroup.PodGroupName, p.Spec.NodeName))
		}
		u := used[p.Spec.NodeName]
		if u == nil {
			u = &usage{volumes: map[string]bool{}}
			used[p.Spec.NodeName] = u
		}
		for _, c := range p.Spec.Containers {
			u.cpu.Add(c.Resources.Requests[v1.ResourceCPU])
			u.mem.Add(c.Resources.Requests[v1.ResourceMemory])
		}
		u.pods++
		for _, vol := range p.Spec.Volumes {
			if vol.PersistentVolumeClaim == nil {
				continue
			}
			claimUsers[vol.PersistentVolumeClaim.ClaimName] = append(claimUsers[vol.PersistentVolumeClaim.ClaimName], p.Name)
			pvc := pvcByName[vol.PersistentVolumeClaim.ClaimName]
			if pvc == nil || pvc.Spec.VolumeName == "" {
				continue
			}
			pv := pvByName[pvc.Spec.VolumeName]
			if pv == nil || pv.Spec.CSI == nil || pv.Spec.CSI.Driver != soakCSIDriver {
				continue
			}
			u.volumes[pv.Name] = true
			if n := pvNode(pv); n != p.Spec.NodeName {
				add("node mismatch", p.Name+"/"+pv.Name, fmt.Sprintf("pod %s bound to %s uses volume %s of node %s", p.Name, p.Spec.NodeName, pv.Name, n))
			}
		}
	}
	for claim, users := range claimUsers {
		if len(users) > 1 {
			add("claim shared", "pvc "+claim, fmt.Sprintf("volume claim %s used by bound pods %v", claim, users))
		}
	}
	limits := map[string]int32{}
	for _, cn := range csiNodes {
		for _, d := range cn.Spec.Drivers {
			if d.Name == soakCSIDriver && d.Allocatable != nil && d.Allocatable.Count != nil {
				limits[cn.Name] = *d.Allocatable.Count
			}
		}
	}
	for _, n := range nodes {
		u := used[n.Name]
		if u == nil {
			continue
		}
		alloc := n.Status.Allocatable
		if alloc.Pods().Value() == 0 {
			// Status not written yet: listed before the pods were, or a
			// pod bound where no scheduler would bind it.
			add("pods", n.Name, fmt.Sprintf("node %s without allocatable has %d pods bound", n.Name, u.pods))
			continue
		}
		if u.cpu.Cmp(alloc[v1.ResourceCPU]) > 0 {
			add("cpu", n.Name, fmt.Sprintf("node %s: %s cpu requested of %s", n.Name, u.cpu.String(), ptrs.To(alloc[v1.ResourceCPU]).String()))
		}
		if u.mem.Cmp(alloc[v1.ResourceMemory]) > 0 {
			add("memory", n.Name, fmt.Sprintf("node %s: %s memory requested of %s", n.Name, u.mem.String(), ptrs.To(alloc[v1.ResourceMemory]).String()))
		}
		if u.pods > alloc.Pods().Value() {
			add("pods", n.Name, fmt.Sprintf("node %s: %d pods of %d", n.Name, u.pods, alloc.Pods().Value()))
		}
		if limit, ok := limits[n.Name]; ok && len(u.volumes) > int(limit) {
			add("volume attach", n.Name, fmt.Sprintf("node %s: %d volumes of %s attached, limit %d", n.Name, len(u.volumes), soakCSIDriver, limit))
		}
	}
	podNode := map[types.UID]string{}
	podName := map[types.UID]string{}
	for _, p := range pods {
		podNode[p.UID], podName[p.UID] = p.Spec.NodeName, p.Name
	}
	devices := map[string][]string{}
	for _, c := range claims {
		a := c.Status.Allocation
		if a == nil {
			continue
		}
		for _, r := range a.Devices.Results {
			d := r.Driver + "/" + r.Pool + "/" + r.Device
			devices[d] = append(devices[d], c.Name)
		}
		var consumers []string
		for _, ref := range c.Status.ReservedFor {
			if ref.Resource == "pods" {
				consumers = append(consumers, ref.Name)
			}
			if node := podNode[ref.UID]; node != "" && len(a.Devices.Results) > 0 && a.Devices.Results[0].Pool != node {
				add("node mismatch", c.Name+"/"+string(ref.UID), fmt.Sprintf("claim %s allocated on %s is reserved for pod %s bound to %s", c.Name, a.Devices.Results[0].Pool, podName[ref.UID], node))
			}
		}
		if len(consumers) > 1 {
			add("claim shared", "claim "+c.Name, fmt.Sprintf("claim %s reserved for pods %v", c.Name, consumers))
		}
	}
	for d, cs := range devices {
		if len(cs) > 1 {
			add("devices", d, fmt.Sprintf("device %s allocated in claims %v", d, cs))
		}
	}
	return out
}

// violationsByKind counts the distinct violations per kind, and the
// overcommitted nodes ("overcommit nodes").
func (s *soak) violationsByKind() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	nodes := map[string]bool{}
	for key := range s.viol {
		kind, rest, _ := strings.Cut(key, ": ")
		out[kind]++
		switch kind {
		case "cpu", "memory", "pods", "volume attach":
			nodes[rest] = true
		case "devices":
			// driver/pool/device: the pool is the node.
			if parts := strings.Split(rest, "/"); len(parts) == 3 {
				nodes[parts[1]] = true
			}
		}
	}
	out["overcommit nodes"] = len(nodes)
	return out
}

func (s *soak) violationList() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, msg := range s.viol {
		out = append(out, msg)
	}
	sort.Strings(out)
	return out
}

// failedAttempts counts, per path, the FailedScheduling events (each a
// failed attempt, its series counted) and the pods that had one (each
// was put back in the queue).
func (s *soak) failedAttempts() (attempts, requeued map[string]int) {
	attempts, requeued = map[string]int{}, map[string]int{}
	evs, err := s.c.EventsV1().Events(soakNS).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		s.t.Errorf("listing events: %v", err)
		return
	}
	pods := map[string]bool{}
	for _, e := range evs.Items {
		if e.Reason != "FailedScheduling" {
			continue
		}
		path := pathOf(e.Regarding.Name)
		attempts[path] += eventCount(&e)
		if key := string(e.Regarding.UID); !pods[key] {
			pods[key] = true
			requeued[path]++
		}
	}
	return attempts, requeued
}

func eventCount(e *eventsv1.Event) int {
	if e.Series != nil && e.Series.Count > 1 {
		return int(e.Series.Count)
	}
	return 1
}

// ---- kubesched ----

// idleGoroutines is go_goroutines once no binding is in flight.
func idleGoroutines(s *fw.Scheduler) (float64, string) {
	deadline := time.Now().Add(time.Minute)
	for {
		m, err := s.Metrics()
		if err == nil && (fw.MetricSum(m, "scheduler_goroutines", `operation="binding"`) == 0 || time.Now().After(deadline)) {
			return fw.MetricSum(m, "go_goroutines"), m
		}
		if time.Now().After(deadline) {
			return -1, ""
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitGoroutines waits up to two minutes (idle connections close after
// 90 s) for the goroutines to come down to want; it returns the last
// count and metrics.
func waitGoroutines(s *fw.Scheduler, want float64) (float64, string) {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		n, m := idleGoroutines(s)
		if (n >= 0 && n <= want) || time.Now().After(deadline) {
			return n, m
		}
		time.Sleep(time.Second)
	}
}

var cacheDiffCount = regexp.MustCompile(`differences from the API: (\d+)`)

// cacheDifferences polls /debug/cache for up to 30 s until it shows no
// difference (a pod in its binding cycle is assumed: a difference until
// it is bound); it returns the last count and report.
func cacheDifferences(s *fw.Scheduler) (int, string) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		// 200 without differences, 409 with.
		code, body, err := s.GetWithin("/debug/cache", 10*time.Second)
		n := -1
		if m := cacheDiffCount.FindStringSubmatch(body); err == nil && m != nil {
			n, _ = strconv.Atoi(m[1])
		} else if err != nil {
			body = err.Error()
		} else {
			body = fmt.Sprintf("%d: %s", code, body)
		}
		if n == 0 || time.Now().After(deadline) {
			return n, body
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// raceReports returns each "WARNING: DATA RACE" report of a log.
func raceReports(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []string
	for _, part := range strings.Split(string(b), "WARNING: DATA RACE")[1:] {
		if i := strings.Index(part, "=================="); i >= 0 {
			part = part[:i]
		}
		out = append(out, "WARNING: DATA RACE"+part)
	}
	return out
}

func attemptsByResult(m string) string {
	var parts []string
	for _, r := range []string{"scheduled", "unschedulable", "error"} {
		parts = append(parts, fmt.Sprintf("%s %v", r, fw.MetricSum(m, "scheduler_schedule_attempts_total", `result="`+r+`"`)))
	}
	return strings.Join(parts, ", ")
}

func formatCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}
