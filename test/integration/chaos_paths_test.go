package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	resourceapi "k8s.io/api/resource/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	ptrs "k8s.io/utils/ptr"

	st "github.com/kubesched/kubesched/internal/testing"
	fw "github.com/kubesched/kubesched/test/integration/framework"
)

// TestChaosSoakBindingPaths: one kubesched (built with -race, pod groups
// on) schedules pods of every binding path at once, through a fault
// proxy that fails a tenth of the Binding calls, while the test plays the
// actors that complete or break each path:
//
//   - plain pods: cpu, memory and the pod count only;
//   - volume pods: a WaitForFirstConsumer claim whose provisioning the
//     test's provisioner completes (a PV on the selected node, bound as
//     the PV controller binds it), delays, or fails (removes the
//     selected-node annotation, as a provisioner that gives up); nodes
//     have a CSI attach limit;
//   - DRA pods: a claim from a template (kube-controller-manager's
//     resourceclaim controller creates it) for a device with binding
//     conditions, which the test's driver meets, fails
//     (bindingFailureConditions) or never sets (bindingTimeout expires);
//   - gangs (GenericWorkload): PodGroups with minCount 3, whose members
//     the test deletes and creates again under their names (a new UID)
//     during the group's cycle, in PreBind, or before the group is
//     complete; some gangs cannot fit at all and must never bind;
//   - extender pods: sent to an ignorable HTTP extender that answers,
//     sleeps past its httpTimeout, or answers 500;
//
// and nodes are added and removed throughout (their pods deleted and
// created again, as controllers would). At the end: no pod bound twice;
// no node overcommitted in cpu, memory, pods, devices or CSI attachments
// (checked every second during the run too); no gang bound partly; no
// claim allocated to two pods; the cache equals the API; goroutines back
// to their count after the warm-up; no data race in kubesched's log. The
// per-path table is logged line by line (make soak greps it).
//
// Sizes: KUBESCHED_SOAK_PATHS_PODS (150), KUBESCHED_SOAK_PATHS_ROUNDS (3
// waves), KUBESCHED_SOAK_PATHS_SEED (1).
func TestChaosSoakBindingPaths(t *testing.T) {
	total := envInt("KUBESCHED_SOAK_PATHS_PODS", 150)
	waves := envInt("KUBESCHED_SOAK_PATHS_ROUNDS", 3)
	seed := int64(envInt("KUBESCHED_SOAK_PATHS_SEED", 1))
	start := time.Now()

	cp := fw.StartControlPlaneWith(t, "--runtime-config=scheduling.k8s.io/v1beta1=true", "--feature-gates=GenericWorkload=true")
	s := newSoak(t, cp.Client, seed)
	s.setup(max(8, total/12))
	fw.StartControllerManager(t, cp, "resourceclaim-controller")
	proxy := fw.StartFaultProxy(t, cp, 0.1, seed)
	ext := s.startExtender(soakExtenderTimeout)
	cfg := soakSchedulerConfig(t, ext, soakExtenderTimeout)
	k := fw.StartScheduler(t, cp, cfg, "--kubeconfig", proxy.Kubeconfig(t, cp), "--feature-gates=GenericWorkload=true")
	fw.Eventually(t, 60*time.Second, "kubesched /readyz", func() (bool, error) {
		code, _, err := k.Get("/readyz")
		return code == 200, err
	})
	s.startActors()

	// Warm-up: one pod of each path and one gang, without the test's own
	// faults, so the connections and lazily started goroutines exist
	// before the goroutines are counted.
	for _, path := range []string{"plain", "volume", "dra", "extender"} {
		s.createPod(&soakPod{name: soakPrefix[path] + "-warm", path: path})
	}
	s.runGang("gang-warm", "none")
	if stuck := s.waitSettled(2 * time.Minute); len(stuck) > 0 {
		t.Fatalf("the warm-up pods did not all bind: %v", stuck)
	}
	goroutinesStart, _ := idleGoroutines(k)
	t.Logf("warm-up done after %s: %v goroutines", time.Since(start).Round(time.Second), goroutinesStart)

	// The waves: each creates its share of every path in a seeded order,
	// gives them up to 20 s to bind (the next wave overlaps with what is
	// left), then deletes a share of the bound pods and gangs for good
	// (jobs that completed). After the last, node churn stops and every
	// pod that fits must be bound within 4 minutes.
	perWave := max(total/waves, 10)
	for w := 0; w < waves; w++ {
		s.wave(w, perWave)
		if w < waves-1 {
			s.waitSettled(20 * time.Second)
			s.complete(0.15)
		}
	}
	s.stopChurn()
	s.sweep()
	if stuck := s.waitSettled(4 * time.Minute); len(stuck) > 0 {
		t.Errorf("at the end: pods that fit are not bound after 4 minutes: %v", stuck)
	}
	s.checkOnce()
	// The actors stay until the checks are done: a pod whose binding
	// cycle is still running needs them.

	// Every pod bound at most once, every bound pod exactly once.
	injected, bound := proxy.PodCounts()
	pods, err := s.c.CoreV1().Pods(soakNS).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	doubles := 0
	boundUIDs := map[string]map[string]bool{}
	for key, n := range bound {
		name := strings.Split(key, "/")[1]
		if boundUIDs[pathOf(name)] == nil {
			boundUIDs[pathOf(name)] = map[string]bool{}
		}
		boundUIDs[pathOf(name)][key] = true
		if n > 1 {
			doubles++
			t.Errorf("pod %s: %d Bindings accepted", key, n)
		}
	}
	for _, p := range pods.Items {
		if key := soakNS + "/" + p.Name + "/" + string(p.UID); p.Spec.NodeName != "" && bound[key] != 1 {
			doubles++
			t.Errorf("pod %s bound to %s after %d accepted Bindings, want 1", key, p.Spec.NodeName, bound[key])
		}
	}
	for key, kinds := range injected {
		for kind, n := range kinds {
			s.faultN(pathOf(strings.Split(key, "/")[1]), "bind "+kind, n)
		}
	}

	// Gangs: all members bound, or none.
	partial := s.partialGangs(pods.Items)
	for _, g := range partial {
		t.Errorf("gang bound partly: %s", g)
	}

	// Violations seen by the checker during the run and at the end.
	viol := s.violationsByKind()
	for _, v := range s.violationList() {
		t.Errorf("invariant broken: %s", v)
	}

	// The cache equals the API.
	cacheDiffs, report := cacheDifferences(k)
	if cacheDiffs != 0 {
		t.Errorf("kubesched's cache differs from the API in %d ways:\n%s", cacheDiffs, report)
	}

	// Goroutines back to their count after the warm-up. What may differ:
	// idle keep-alive connections (two goroutines each) to the API server
	// through the proxy and to the extender, and a handful of timers.
	goroutinesEnd, m := waitGoroutines(k, goroutinesStart+soakGoroutineSlack)
	if goroutinesEnd > goroutinesStart+soakGoroutineSlack {
		t.Errorf("goroutines: %v after the warm-up, %v at the end (more than %d above)", goroutinesStart, goroutinesEnd, soakGoroutineSlack)
		if code, dump, err := k.GetWithin("/debug/pprof/goroutine?debug=1", 30*time.Second); err == nil && code == 200 {
			t.Logf("goroutines at the end:\n%s", dump)
		}
	}

	s.stopActors()

	// Data races in kubesched's log (the framework fails the test on one
	// too; counted and shown here).
	races := raceReports(k.LogPath)
	for i, r := range races {
		if i < 5 {
			t.Logf("data race %d of %d:\n%s", i+1, len(races), r)
		}
	}
	if len(races) > 0 {
		t.Errorf("%d data races in kubesched's log %s", len(races), k.LogPath)
	}

	// The table.
	failedAttempts, requeued := s.failedAttempts()
	t.Logf("binding paths soak: %d pods planned in %d waves, seed %d, %s", total, waves, seed, time.Since(start).Round(time.Second))
	t.Logf("%-9s %8s %6s %8s %8s %16s %9s  %s", "path", "created", "bound", "pending", "deleted", "failed attempts", "requeued", "faults injected")
	pending := map[string]int{}
	for _, p := range pods.Items {
		if p.Spec.NodeName == "" {
			pending[pathOf(p.Name)]++
		}
	}
	s.mu.Lock() // the extender may still be called
	for _, path := range soakPaths {
		t.Logf("%-9s %8d %6d %8d %8d %16d %9d  %s", path, s.created[path], len(boundUIDs[path]), pending[path], s.deleted[path],
			failedAttempts[path], requeued[path], formatCounts(s.faults[path]))
	}
	t.Logf("nodes: %d at the start, %d added, %d removed, %d at the end; %s", s.nodesStart, s.nodesAdded, s.nodesRemoved, len(s.nodes), formatCounts(s.faults["nodes"]))
	s.mu.Unlock()
	t.Logf("scheduling attempts: %s", attemptsByResult(m))
	t.Logf("checks: double binds %d; overcommitted nodes %d (cpu %d, memory %d, pods %d, devices %d, volume attach %d); gangs bound partly %d at the end, %d while a member was away, %d unsatisfiable with a member bound; claims allocated to two pods %d; pods on another node than their claim or volume %d; cache differences %d; goroutines %v at the start, %v at the end; data races %d",
		doubles, viol["overcommit nodes"], viol["cpu"], viol["memory"], viol["pods"], viol["devices"], viol["volume attach"], len(partial), viol["gang partial"], viol["unsatisfiable gang bound"],
		viol["claim shared"], viol["node mismatch"], cacheDiffs, goroutinesStart, goroutinesEnd, len(races))
}

// soakExtenderTimeout is the extender's httpTimeout; a gang's cycle held
// by the extender for a member's deletion is held soakHoldAfterDelete
// after it, for kubesched's informer to deliver it.
const (
	soakExtenderTimeout = 500 * time.Millisecond
	soakHoldAfterDelete = 250 * time.Millisecond
)

// soakGoroutineSlack: how far above its count after the warm-up
// kubesched's goroutines may end (idle keep-alive connections).
const soakGoroutineSlack = 40

const (
	soakNS        = "soak"
	soakCSIDriver = "soak.csi.example.com"
	soakDRADriver = "soak-gpu.example.com"
	soakExtRes    = "example.com/soak-ext"
	soakClass     = "soak-wffc"
	soakGangMin   = 3
)

var soakPaths = []string{"plain", "volume", "dra", "gang", "extender"}

// soakPrefix names each path's pods.
var soakPrefix = map[string]string{"plain": "plain", "volume": "vol", "dra": "dra", "gang": "gang", "extender": "ext"}

func pathOf(name string) string {
	for path, prefix := range soakPrefix {
		if strings.HasPrefix(name, prefix+"-") {
			return path
		}
	}
	return "other"
}

func soakSchedulerConfig(t *testing.T, extenderURL string, httpTimeout time.Duration) string {
	t.Helper()
	cfg := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
clientConnection:
  qps: 100
  burst: 200
podInitialBackoffSeconds: 1
podMaxBackoffSeconds: 2
profiles:
- schedulerName: %s
  pluginConfig:
  - name: DynamicResources
    args:
      bindingTimeout: 6s
  - name: VolumeBinding
    args:
      bindTimeoutSeconds: 60
extenders:
- urlPrefix: %s
  filterVerb: filter
  prioritizeVerb: prioritize
  weight: 1
  httpTimeout: %s
  ignorable: true
  managedResources:
  - name: %s
    ignoredByScheduler: true
`, sched, extenderURL, httpTimeout, soakExtRes)
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// soakPod is a pod the test keeps alive: created again (gen+1, a new UID)
// when it is deleted by a fault, until it is deleted for good.
type soakPod struct {
	name  string
	path  string
	gen   int
	group string // a gang's PodGroup
	huge  bool   // fits nowhere (an unsatisfiable gang's member)
	pvc   bool   // has a WaitForFirstConsumer claim
	ext   bool   // asks for the extender's resource
	uid   types.UID
	gone  bool // deleted for good
}

func (p *soakPod) pvcName() string { return fmt.Sprintf("%s-g%d", p.name, p.gen) }

// soak is the harness.
type soak struct {
	t    *testing.T
	c    kubernetes.Interface
	seed int64
	rng  *rand.Rand // the main goroutine's

	mu      sync.Mutex
	pods    map[string]*soakPod
	gangs   map[string]string // name -> plan
	created map[string]int
	deleted map[string]int
	faults  map[string]map[string]int
	viol    map[string]string // key -> message
	// holds: the extender runs holds[pod] (once) while it holds the
	// first filter call about pod.
	holds  map[string]func()
	nodes  map[string]bool
	nextID int

	nodesStart, nodesAdded, nodesRemoved int

	// opMu serializes the pods' lifecycles (create, delete, create again).
	opMu sync.Mutex

	ctx        context.Context
	cancel     context.CancelFunc
	churnStop  context.CancelFunc
	actors     sync.WaitGroup
	churnDone  chan struct{}
	gangWaiter sync.WaitGroup
}

func newSoak(t *testing.T, c kubernetes.Interface, seed int64) *soak {
	ctx, cancel := context.WithCancel(context.Background())
	s := &soak{t: t, c: c, seed: seed, rng: rand.New(rand.NewSource(seed)), pods: map[string]*soakPod{}, gangs: map[string]string{},
		created: map[string]int{}, deleted: map[string]int{}, faults: map[string]map[string]int{}, viol: map[string]string{},
		holds: map[string]func(){}, nodes: map[string]bool{}, ctx: ctx, cancel: cancel}
	t.Cleanup(s.stopActors)
	return s
}

// draw is a deterministic number in [0, 1) for a decision about an
// object: the same seed and keys give the same choice whatever the
// timing.
func (s *soak) draw(keys ...any) float64 {
	h := fnv.New64a()
	fmt.Fprint(h, s.seed)
	for _, k := range keys {
		fmt.Fprint(h, "/", k)
	}
	// splitmix64's finalizer: FNV's high bits barely move between keys
	// that differ in their last characters.
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11) / (1 << 53)
}

func (s *soak) fault(path, kind string) { s.faultN(path, kind, 1) }

func (s *soak) faultN(path, kind string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.faults[path] == nil {
		s.faults[path] = map[string]int{}
	}
	s.faults[path][kind] += n
}

// errorf reports a harness error (an API call that should not fail) from
// any goroutine, while the test runs.
func (s *soak) errorf(format string, args ...any) {
	if s.ctx.Err() != nil {
		return
	}
	s.t.Errorf(format, args...)
}

func isWarm(name string) bool {
	return strings.HasSuffix(name, "-warm") || strings.Contains(name, "-warm-")
}

// ---- cluster objects ----

func (s *soak) setup(nodes int) {
	t, ctx := s.t, context.Background()
	fw.CreateNamespace(t, s.c, soakNS)
	mode := storagev1.VolumeBindingWaitForFirstConsumer
	if _, err := s.c.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: soakClass},
		Provisioner: soakCSIDriver, VolumeBindingMode: &mode}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.c.ResourceV1().DeviceClasses().Create(ctx, st.DeviceClass("soak-gpu", soakDRADriver), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tmpl := st.ClaimTemplate("soak-gpu", "soak-gpu", 1)
	tmpl.Namespace = soakNS
	if _, err := s.c.ResourceV1().ResourceClaimTemplates(soakNS).Create(ctx, tmpl, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < nodes; i++ {
		if err := s.addNode(); err != nil {
			t.Fatal(err)
		}
	}
	s.nodesStart, s.nodesAdded = nodes, 0
}

// addNode creates a node (8 cpu, 16Gi, 16 pods) with its CSINode (4 CSI
// attachments) and its ResourceSlice (3 devices with binding conditions).
func (s *soak) addNode() error {
	ctx := context.Background()
	s.mu.Lock()
	name := fmt.Sprintf("node-%03d", s.nextID)
	s.nextID++
	s.mu.Unlock()
	n, err := s.c.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelHostname: name}}}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	rl := v1.ResourceList{v1.ResourceCPU: resource.MustParse("8"), v1.ResourceMemory: resource.MustParse("16Gi"), v1.ResourcePods: resource.MustParse("16")}
	n.Status = v1.NodeStatus{Capacity: rl, Allocatable: rl, Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue, LastHeartbeatTime: metav1.Now()}}}
	if _, err := s.c.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		return err
	}
	if _, err := s.c.StorageV1().CSINodes().Create(ctx, &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: soakCSIDriver, NodeID: name,
			Allocatable: &storagev1.VolumeNodeResources{Count: ptrs.To[int32](4)}}}}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	slice := st.MakeSlice(name, soakDRADriver).Device("gpu-0").Device("gpu-1").Device("gpu-2").Obj()
	for i := range slice.Spec.Devices {
		slice.Spec.Devices[i].BindingConditions = []string{"Attached"}
		slice.Spec.Devices[i].BindingFailureConditions = []string{"AttachFailed"}
	}
	if _, err := s.c.ResourceV1().ResourceSlices().Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		return err
	}
	s.mu.Lock()
	s.nodes[name] = true
	s.nodesAdded++
	s.mu.Unlock()
	return nil
}

// removeNode deletes a node's slice, CSINode and the node, then its pods
// (the pod garbage collector's part), which are created again.
func (s *soak) removeNode(name string) error {
	ctx := context.Background()
	s.mu.Lock()
	delete(s.nodes, name)
	s.nodesRemoved++
	s.mu.Unlock()
	if err := s.c.ResourceV1().ResourceSlices().Delete(ctx, name+"-"+soakDRADriver, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if err := s.c.StorageV1().CSINodes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if err := s.c.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	l, err := s.c.CoreV1().Pods(soakNS).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + name})
	if err != nil {
		return err
	}
	for _, p := range l.Items {
		if s.recreate(p.Name, p.UID) {
			s.fault("nodes", "pods deleted with their node")
		}
	}
	return nil
}

func (s *soak) nodeList() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.nodes))
	for n := range s.nodes {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// ---- pods ----

func (s *soak) podObject(p *soakPod) *v1.Pod {
	cpu := []string{"100m", "250m", "500m", "1"}[int(s.draw("cpu", p.name, p.gen)*4)]
	mem := []string{"64Mi", "256Mi", "512Mi", "1Gi"}[int(s.draw("mem", p.name, p.gen)*4)]
	switch p.path {
	case "gang":
		cpu, mem = "500m", "256Mi"
		if p.huge {
			cpu = "1000"
		}
	case "volume", "dra", "extender":
		cpu, mem = "200m", "128Mi"
	}
	pod := fw.PodSpec(soakNS, p.name, sched, cpu, mem)
	pod.Labels = map[string]string{"soak-path": p.path}
	pod.Spec.TerminationGracePeriodSeconds = ptrs.To[int64](0)
	if p.pvc {
		pod.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: p.pvcName()}}}}
	}
	switch p.path {
	case "dra":
		pod.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptrs.To("soak-gpu")}}
		pod.Spec.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: "gpu"}}
	case "gang":
		pod.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: ptrs.To(p.group)}
	}
	if p.path == "extender" || p.ext {
		one := resource.MustParse("1")
		pod.Spec.Containers[0].Resources.Requests[soakExtRes] = one
		pod.Spec.Containers[0].Resources.Limits = v1.ResourceList{soakExtRes: one}
	}
	return pod
}

// createPod registers p and creates it (and its claim).
func (s *soak) createPod(p *soakPod) {
	s.opMu.Lock()
	defer s.opMu.Unlock()
	if p.path == "volume" {
		p.pvc = true
	}
	s.mu.Lock()
	s.pods[p.name] = p
	s.mu.Unlock()
	s.createLocked(p)
}

// createLocked creates the pod of p's generation (opMu held); an error is
// the test's.
func (s *soak) createLocked(p *soakPod) {
	ctx := context.Background()
	if p.pvc {
		class := soakClass
		pvc := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: p.pvcName(), Namespace: soakNS}, Spec: v1.PersistentVolumeClaimSpec{
			StorageClassName: &class, AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}}}}
		if _, err := s.c.CoreV1().PersistentVolumeClaims(soakNS).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
			s.errorf("creating claim %s: %v", p.pvcName(), err)
			return
		}
	}
	obj := s.podObject(p)
	var created *v1.Pod
	var err error
	// A pod deleted with no grace period is gone at once; the name is
	// free again unless the API is slow to say so.
	for i := 0; i < 50; i++ {
		if created, err = s.c.CoreV1().Pods(soakNS).Create(ctx, obj, metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		s.errorf("creating pod %s: %v", p.name, err)
		return
	}
	s.mu.Lock()
	p.uid = created.UID
	s.created[p.path]++
	s.mu.Unlock()
}

// deleteLocked deletes p's pod (if it is still uid) and its claim and
// volume (opMu held); it reports whether that pod was deleted.
func (s *soak) deleteLocked(p *soakPod, uid types.UID) bool {
	ctx := context.Background()
	err := s.c.CoreV1().Pods(soakNS).Delete(ctx, p.name, metav1.DeleteOptions{GracePeriodSeconds: ptrs.To[int64](0), Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil {
		if !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			s.errorf("deleting pod %s: %v", p.name, err)
		}
		return false
	}
	if p.pvc {
		s.deleteVolume(p.pvcName())
	}
	return true
}

// deleteVolume deletes a claim and its provisioned volume, finalizers
// removed (no kube-controller-manager protection controllers run).
func (s *soak) deleteVolume(claim string) {
	ctx := context.Background()
	noFinalizers := []byte(`{"metadata":{"finalizers":null}}`)
	pvc, err := s.c.CoreV1().PersistentVolumeClaims(soakNS).Get(ctx, claim, metav1.GetOptions{})
	if err != nil {
		return
	}
	_, _ = s.c.CoreV1().PersistentVolumeClaims(soakNS).Patch(ctx, claim, types.MergePatchType, noFinalizers, metav1.PatchOptions{})
	_ = s.c.CoreV1().PersistentVolumeClaims(soakNS).Delete(ctx, claim, metav1.DeleteOptions{})
	pv := "pv-" + string(pvc.UID)
	_, _ = s.c.CoreV1().PersistentVolumes().Patch(ctx, pv, types.MergePatchType, noFinalizers, metav1.PatchOptions{})
	_ = s.c.CoreV1().PersistentVolumes().Delete(ctx, pv, metav1.DeleteOptions{})
}

// recreate deletes the pod named name if it is still uid, and creates it
// again (a new UID, a new claim) unless it is gone for good; it reports
// whether it did.
func (s *soak) recreate(name string, uid types.UID) bool {
	s.opMu.Lock()
	defer s.opMu.Unlock()
	s.mu.Lock()
	p := s.pods[name]
	s.mu.Unlock()
	if p == nil || p.gone || p.uid != uid {
		return false
	}
	if !s.deleteLocked(p, uid) {
		return false
	}
	s.mu.Lock()
	p.gen++
	s.mu.Unlock()
	s.createLocked(p)
	return true
}

// remove deletes the pod for good.
func (s *soak) remove(name string) {
	s.opMu.Lock()
	defer s.opMu.Unlock()
	s.mu.Lock()
	p := s.pods[name]
	s.mu.Unlock()
	if p == nil || p.gone {
		return
	}
	s.mu.Lock()
	p.gone = true
	s.mu.Unlock()
	if s.deleteLocked(p, p.uid) {
		s.mu.Lock()
		s.deleted[p.path]++
		s.mu.Unlock()
	}
}

func (s *soak) current(name string) (soakPod, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pods[name]
	if !ok {
		return soakPod{}, false
	}
	return *p, true
}

// ---- waves ----

// wave creates n pods: 35% plain, 15% volume, 15% DRA, 20% gang members
// (gangs of 3), 15% extender, in a seeded order; gangs run their plans in
// goroutines.
func (s *soak) wave(w, n int) {
	type item struct{ path, name string }
	var items []item
	counts := map[string]int{"plain": n * 35 / 100, "volume": n * 15 / 100, "dra": n * 15 / 100, "gang": max(1, n*20/100/soakGangMin), "extender": n * 15 / 100}
	for _, path := range soakPaths {
		for i := 0; i < counts[path]; i++ {
			items = append(items, item{path, fmt.Sprintf("%s-w%d-%d", soakPrefix[path], w, i)})
		}
	}
	s.rng.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
	for _, it := range items {
		if it.path != "gang" {
			s.createPod(&soakPod{name: it.name, path: it.path})
			continue
		}
		plan := gangPlans[int(s.draw("gang plan", it.name)*float64(len(gangPlans)))]
		s.gangWaiter.Add(1)
		go func() {
			defer s.gangWaiter.Done()
			s.runGang(it.name, plan)
		}()
	}
	s.gangWaiter.Wait()
	s.t.Logf("wave %d: %d pods and gangs created; nodes %d", w, len(items), len(s.nodeList()))
}

// complete deletes a share of the bound pods and of the gangs for good.
func (s *soak) complete(share float64) {
	pods, err := s.c.CoreV1().Pods(soakNS).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		s.errorf("listing pods: %v", err)
		return
	}
	groups := map[string]bool{}
	for _, p := range pods.Items {
		if isWarm(p.Name) || p.Spec.NodeName == "" {
			continue
		}
		if p.Spec.SchedulingGroup != nil && p.Spec.SchedulingGroup.PodGroupName != nil {
			g := *p.Spec.SchedulingGroup.PodGroupName
			if !groups[g] && s.rng.Float64() < share {
				groups[g] = true
			}
			continue
		}
		if s.rng.Float64() < share {
			s.remove(p.Name)
		}
	}
	for g := range groups {
		s.mu.Lock()
		var members []string
		for name, p := range s.pods {
			if p.group == g {
				members = append(members, name)
			}
		}
		delete(s.gangs, g)
		s.mu.Unlock()
		for _, m := range members {
			s.remove(m)
		}
		_ = s.c.SchedulingV1beta1().PodGroups(soakNS).Delete(context.Background(), g, metav1.DeleteOptions{})
	}
}

// ---- gangs ----

// The gangs' plans: how the test disturbs each one.
var gangPlans = []string{
	"none",
	"recreate during the cycle",
	"recreate during the cycle",
	"recreate in PreBind",
	"recreate in PreBind",
	"delete before complete, recreate late",
	"delete while placed, recreate late",
	"delete while placed, recreate late",
	"group after members",
	"unsatisfiable",
}

// runGang creates a PodGroup (minCount 3) and its three members and
// applies the plan.
func (s *soak) runGang(name, plan string) {
	ctx := context.Background()
	s.mu.Lock()
	s.gangs[name] = plan
	s.mu.Unlock()
	if plan != "none" {
		s.fault("gang", plan)
	}
	group := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: soakNS, Name: name},
		Spec: schedulingv1beta1.PodGroupSpec{SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: soakGangMin}}}}
	createGroup := func() {
		if _, err := s.c.SchedulingV1beta1().PodGroups(soakNS).Create(ctx, group, metav1.CreateOptions{}); err != nil {
			s.errorf("creating pod group %s: %v", name, err)
		}
	}
	if plan != "group after members" {
		createGroup()
	}
	members := make([]string, soakGangMin)
	for i := range members {
		members[i] = fmt.Sprintf("%s-m%d", name, i)
	}
	// The victim is one of the first members (created before the last).
	victim := members[int(s.draw("victim", name)*(soakGangMin-1))]
	var held chan struct{}
	var heldFor time.Duration
	if plan == "delete while placed, recreate late" {
		// The members ask for the extender's resource: when the extender
		// is asked to filter the last member, the group's cycle has
		// begun, the victim is (or is about to be) placed in it; the
		// extender holds the call while the victim is deleted.
		held = make(chan struct{})
		last := members[soakGangMin-1]
		s.mu.Lock()
		s.holds[last] = func() {
			// Not under opMu: the call must end within httpTimeout, or
			// kubesched goes on without the extender and the deletion may
			// come after the group passed Permit (then two bound is no
			// fault). heldFor tells.
			defer close(held)
			start := time.Now()
			defer func() { heldFor = time.Since(start) }()
			p, ok := s.current(victim)
			if !ok {
				return
			}
			if s.deleteLocked(&p, p.uid) {
				s.mu.Lock()
				s.pods[victim].gen++
				s.mu.Unlock()
			}
		}
		s.mu.Unlock()
	}
	for i, m := range members {
		p := &soakPod{name: m, path: "gang", group: name, pvc: plan == "recreate in PreBind", huge: plan == "unsatisfiable" && i == soakGangMin-1,
			ext: plan == "delete while placed, recreate late"}
		if plan == "delete before complete, recreate late" && i == soakGangMin-1 {
			// The victim goes before the last member comes: the group
			// never has minCount members until it is created again.
			s.deleteLater(victim)
		}
		s.createPod(p)
	}
	switch plan {
	case "delete while placed, recreate late":
		select {
		case <-held:
		case <-time.After(60 * time.Second):
			s.mu.Lock()
			_, waiting := s.holds[members[soakGangMin-1]]
			delete(s.holds, members[soakGangMin-1])
			s.mu.Unlock()
			if waiting {
				s.fault("gang", plan+": the extender was not asked about the last member")
				return
			}
			<-held // running now
		}
		time.Sleep(time.Duration(1000+s.draw("late", name)*1000) * time.Millisecond)
		s.opMu.Lock()
		defer s.opMu.Unlock()
		// The group has had two members of three since the victim went:
		// none may be bound (they wait at Permit for the third).
		if heldFor > soakExtenderTimeout-soakHoldAfterDelete-100*time.Millisecond {
			s.fault("gang", plan+": the deletion took too long to hold the cycle")
		} else if bound := s.boundMembers(name); len(bound) > 0 {
			s.recordViolation("gang partial: "+name, fmt.Sprintf("gang %s bound %v while %s was deleted (during the group's cycle) and not yet created again", name, bound, victim))
		}
		s.mu.Lock()
		cur := s.pods[victim]
		s.mu.Unlock()
		if !cur.gone {
			s.createLocked(cur)
		}
	case "group after members":
		createGroup()
	case "recreate during the cycle":
		time.Sleep(time.Duration(s.draw("delay", name)*50) * time.Millisecond)
		s.recreateNamed(victim)
	case "recreate in PreBind":
		// The members wait in PreBind for their volumes: the first one
		// whose claim has a selected node (its binding cycle runs) and
		// that is not bound yet is created again.
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) && s.ctx.Err() == nil {
			if m := s.memberInPreBind(members); m != "" {
				s.recreateNamed(m)
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		s.fault("gang", "recreate in PreBind: no member seen in PreBind")
	case "unsatisfiable":
		// Members that fit come and go while the group cannot be placed.
		for i := 0; i < 2; i++ {
			time.Sleep(time.Duration(200+s.draw("delay", name, i)*800) * time.Millisecond)
			s.recreateNamed(members[i])
		}
	}
}

// deleteLater is the first half of "delete before complete, recreate
// late": victim (already created) is deleted now and created again after
// 1-2 s; meanwhile no member of its gang may bind.
func (s *soak) deleteLater(victim string) {
	p, ok := s.current(victim)
	if !ok {
		return
	}
	s.opMu.Lock()
	deleted := s.deleteLocked(&p, p.uid)
	s.opMu.Unlock()
	if !deleted {
		return
	}
	s.gangWaiter.Add(1)
	go func() {
		defer s.gangWaiter.Done()
		time.Sleep(time.Duration(1000+s.draw("late", victim)*1000) * time.Millisecond)
		s.opMu.Lock()
		defer s.opMu.Unlock()
		s.mu.Lock()
		cur := s.pods[victim]
		if cur.gone {
			s.mu.Unlock()
			return
		}
		cur.gen++
		group := cur.group
		s.mu.Unlock()
		// Before it comes back, the group had two members of three: none
		// may be bound.
		if bound := s.boundMembers(group); len(bound) > 0 {
			s.recordViolation("gang partial: "+group, fmt.Sprintf("gang %s bound %v while it had %d of %d members", group, bound, soakGangMin-1, soakGangMin))
		}
		s.createLocked(cur)
	}()
}

func (s *soak) recreateNamed(name string) {
	if p, ok := s.current(name); ok {
		s.recreate(name, p.uid)
	}
}

// memberInPreBind returns a member whose claim has a selected node and
// that is not bound.
func (s *soak) memberInPreBind(members []string) string {
	for _, m := range members {
		p, ok := s.current(m)
		if !ok || p.uid == "" {
			continue
		}
		pvc, err := s.c.CoreV1().PersistentVolumeClaims(soakNS).Get(context.Background(), p.pvcName(), metav1.GetOptions{})
		if err != nil || pvc.Annotations["volume.kubernetes.io/selected-node"] == "" {
			continue
		}
		pod, err := s.c.CoreV1().Pods(soakNS).Get(context.Background(), m, metav1.GetOptions{})
		if err == nil && pod.UID == p.uid && pod.Spec.NodeName == "" {
			return m
		}
	}
	return ""
}

func (s *soak) boundMembers(group string) []string {
	pods, err := s.c.CoreV1().Pods(soakNS).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return nil
	}
	var out []string
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" && p.Spec.SchedulingGroup != nil && ptrs.Deref(p.Spec.SchedulingGroup.PodGroupName, "") == group {
			out = append(out, p.Name)
		}
	}
	return out
}

// partialGangs lists the gangs with some but fewer than minCount members
// bound.
func (s *soak) partialGangs(pods []v1.Pod) []string {
	bound, all := map[string][]string{}, map[string]int{}
	for _, p := range pods {
		if p.Spec.SchedulingGroup == nil {
			continue
		}
		g := ptrs.Deref(p.Spec.SchedulingGroup.PodGroupName, "")
		all[g]++
		if p.Spec.NodeName != "" {
			bound[g] = append(bound[g], p.Name)
		}
	}
	var out []string
	for g, b := range bound {
		if len(b) < soakGangMin {
			s.mu.Lock()
			plan := s.gangs[g]
			s.mu.Unlock()
			out = append(out, fmt.Sprintf("%s (%s): %d of %d members bound (%v), minCount %d", g, plan, len(b), all[g], b, soakGangMin))
		}
	}
	sort.Strings(out)
	return out
}

// ---- waiting ----

// waitSettled waits until every pod the test keeps that fits is bound
// (its current UID); it returns those that are not, with their
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
	s.mu.Lock()
	defer s.mu.Unlock()
	var stuck []string
	for name, p := range s.pods {
		if p.gone || p.huge || s.gangs[p.group] == "unsatisfiable" {
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

// ---- actors ----

func (s *soak) startActors() {
	churnCtx, churnStop := context.WithCancel(s.ctx)
	s.churnStop = churnStop
	s.churnDone = make(chan struct{})
	for _, actor := range []func(){s.provisioner, s.driver, s.checker} {
		s.actors.Add(1)
		go func() {
			defer s.actors.Done()
			actor()
		}()
	}
	go func() {
		defer close(s.churnDone)
		s.churn(churnCtx)
	}()
}

func (s *soak) stopChurn() {
	if s.churnStop != nil {
		s.churnStop()
		<-s.churnDone
	}
}

func (s *soak) stopActors() {
	s.stopChurn()
	s.cancel()
	s.actors.Wait()
	s.gangWaiter.Wait()
}

func (s *soak) every(ctx context.Context, d time.Duration, f func()) {
	tick := time.NewTicker(d)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			f()
		}
	}
}

// churn adds a node and removes another, in turn, every 5 s (each node
// lives about a minute and a half at the default size), keeping the
// count within one of the start's; and sweeps.
func (s *soak) churn(ctx context.Context) {
	i := 0
	s.every(ctx, 5*time.Second, func() {
		i++
		nodes := s.nodeList()
		if i%2 == 1 || len(nodes) < s.nodesStart {
			if err := s.addNode(); err != nil {
				s.errorf("adding a node: %v", err)
			}
		} else {
			if err := s.removeNode(nodes[int(s.draw("remove", i)*float64(len(nodes)))]); err != nil {
				s.errorf("removing a node: %v", err)
			}
		}
		s.sweep()
	})
}

// sweep is the pod garbage collector's part: pods bound to a node that
// is gone, and pending pods whose provisioned volume is on a node that is
// gone, are deleted and created again.
func (s *soak) sweep() {
	ctx := context.Background()
	pods, err := s.c.CoreV1().Pods(soakNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	nodes := map[string]bool{}
	for _, n := range s.nodeList() {
		nodes[n] = true
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" && !nodes[p.Spec.NodeName] {
			if s.recreate(p.Name, p.UID) {
				s.fault("nodes", "pods bound to a removed node")
			}
			continue
		}
		if p.Spec.NodeName != "" || len(p.Spec.Volumes) == 0 || p.Spec.Volumes[0].PersistentVolumeClaim == nil {
			continue
		}
		pvc, err := s.c.CoreV1().PersistentVolumeClaims(soakNS).Get(ctx, p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName, metav1.GetOptions{})
		if err != nil || pvc.Spec.VolumeName == "" {
			continue
		}
		pv, err := s.c.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
		if err == nil && !nodes[pvNode(pv)] {
			if s.recreate(p.Name, p.UID) {
				s.fault("nodes", "pending pods whose volume's node was removed")
			}
		}
	}
}

func pvNode(pv *v1.PersistentVolume) string {
	if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
		return ""
	}
	for _, term := range pv.Spec.NodeAffinity.Required.NodeSelectorTerms {
		for _, e := range term.MatchExpressions {
			if e.Key == v1.LabelHostname && len(e.Values) == 1 {
				return e.Values[0]
			}
		}
	}
	return ""
}

// provisioner plays an external provisioner and the PV controller: for
// each claim of the class with a selected node, a seeded choice per
// attempt: provision at once (55%), after 1-3 s (20%), or give up
// (25%: the annotation removed); a claim's third attempt always
// succeeds, and a selected node that is gone is given up at once.
func (s *soak) provisioner() {
	type attempt struct {
		node   string
		action string
		due    time.Time
	}
	current := map[types.UID]*attempt{}
	tries := map[types.UID]int{}
	s.every(s.ctx, 200*time.Millisecond, func() {
		list, err := s.c.CoreV1().PersistentVolumeClaims(soakNS).List(s.ctx, metav1.ListOptions{})
		if err != nil {
			return
		}
		nodes := map[string]bool{}
		for _, n := range s.nodeList() {
			nodes[n] = true
		}
		now := time.Now()
		for i := range list.Items {
			pvc := &list.Items[i]
			node := pvc.Annotations["volume.kubernetes.io/selected-node"]
			if pvc.Spec.VolumeName != "" || node == "" || pvc.DeletionTimestamp != nil {
				continue
			}
			a := current[pvc.UID]
			if a == nil || a.node != node {
				tries[pvc.UID]++
				a = &attempt{node: node, action: "provisioned", due: now}
				r := s.draw("provision", pvc.Name, tries[pvc.UID])
				switch {
				case isWarm(pvc.Name) || tries[pvc.UID] >= 3:
				case r < 0.55:
				case r < 0.75:
					a.action, a.due = "provisioning delayed", now.Add(time.Duration(1000+r*2000)*time.Millisecond)
				default:
					a.action = "provisioning failed"
				}
				if !nodes[node] {
					a.action = "selected node gone"
				}
				current[pvc.UID] = a
				s.fault("volume", a.action)
			}
			if now.Before(a.due) {
				continue
			}
			switch a.action {
			case "provisioning failed", "selected node gone":
				delete(current, pvc.UID)
				s.unselect(pvc)
			default:
				// A conflict (the scheduler wrote the claim meanwhile) is
				// tried again at the next look, as the PV controller would.
				if err := s.provision(pvc, node); err != nil && s.ctx.Err() == nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
					s.t.Logf("provisioning %s: %v (tried again)", pvc.Name, err)
				}
			}
		}
	})
}

// unselect removes the selected-node annotation (a provisioner giving up).
func (s *soak) unselect(pvc *v1.PersistentVolumeClaim) {
	patch := []byte(`{"metadata":{"annotations":{"volume.kubernetes.io/selected-node":null}}}`)
	if _, err := s.c.CoreV1().PersistentVolumeClaims(soakNS).Patch(s.ctx, pvc.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
		s.t.Logf("removing %s's selected node: %v", pvc.Name, err)
	}
}

// provision creates the claim's volume on node and binds both as the PV
// controller does.
func (s *soak) provision(pvc *v1.PersistentVolumeClaim, node string) error {
	ctx := s.ctx
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-" + string(pvc.UID), Annotations: map[string]string{"pv.kubernetes.io/provisioned-by": soakCSIDriver}},
		Spec: v1.PersistentVolumeSpec{
			StorageClassName: soakClass,
			Capacity:         v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			ClaimRef: &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: pvc.Namespace, Name: pvc.Name,
				UID: pvc.UID},
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimDelete,
			PersistentVolumeSource:        v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: soakCSIDriver, VolumeHandle: "vol-" + string(pvc.UID)}},
			NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{node}}}}}}},
		},
	}
	created, err := s.c.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		created, err = s.c.CoreV1().PersistentVolumes().Get(ctx, pv.Name, metav1.GetOptions{})
	}
	if err != nil {
		return err
	}
	if created.Status.Phase != v1.VolumeBound {
		created.Status.Phase = v1.VolumeBound
		if _, err := s.c.CoreV1().PersistentVolumes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	cur, err := s.c.CoreV1().PersistentVolumeClaims(soakNS).Get(ctx, pvc.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if cur.UID != pvc.UID || cur.Annotations["volume.kubernetes.io/selected-node"] != node {
		return nil // deleted, or another attempt
	}
	cur.Spec.VolumeName = pv.Name
	metav1.SetMetaDataAnnotation(&cur.ObjectMeta, "pv.kubernetes.io/bind-completed", "yes")
	metav1.SetMetaDataAnnotation(&cur.ObjectMeta, "pv.kubernetes.io/bound-by-controller", "yes")
	updated, err := s.c.CoreV1().PersistentVolumeClaims(soakNS).Update(ctx, cur, metav1.UpdateOptions{})
	if err != nil {
		return err
	}
	updated.Status.Phase = v1.ClaimBound
	updated.Status.AccessModes = pv.Spec.AccessModes
	updated.Status.Capacity = pv.Spec.Capacity
	_, err = s.c.CoreV1().PersistentVolumeClaims(soakNS).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	return err
}

// driver plays the DRA driver: for each allocation of a device with
// binding conditions, a seeded choice per attempt: the condition met
// (after up to 1.5 s, 55%), failed (AttachFailed, 25%), or never set
// (20%: the scheduler's bindingTimeout expires); a claim's third
// allocation always attaches.
func (s *soak) driver() {
	decided := map[string]bool{}
	written := map[string]bool{}
	type pendingWrite struct {
		due       time.Time
		condition string
	}
	pending := map[string]pendingWrite{}
	tries := map[types.UID]int{}
	s.every(s.ctx, 200*time.Millisecond, func() {
		list, err := s.c.ResourceV1().ResourceClaims(soakNS).List(s.ctx, metav1.ListOptions{})
		if err != nil {
			return
		}
		now := time.Now()
		for i := range list.Items {
			claim := &list.Items[i]
			a := claim.Status.Allocation
			if a == nil || len(a.Devices.Results) == 0 || len(a.Devices.Results[0].BindingConditions) == 0 {
				continue
			}
			// An allocation is its claim and timestamp (to the second, as
			// the API keeps it): a claim deallocated after a failed
			// condition and allocated again within the second has the
			// same, but no device status (deallocation clears it) after
			// this driver wrote one.
			key := string(claim.UID) + "/"
			if a.AllocationTimestamp != nil {
				key += a.AllocationTimestamp.UTC().Format(time.RFC3339)
			}
			if written[key] && len(claim.Status.Devices) == 0 {
				delete(decided, key)
				delete(written, key)
			}
			owner := ""
			if len(claim.OwnerReferences) > 0 {
				owner = claim.OwnerReferences[0].Name
			}
			if !decided[key] {
				decided[key] = true
				tries[claim.UID]++
				r := s.draw("attach", owner, claim.Name, tries[claim.UID])
				w := pendingWrite{due: now.Add(time.Duration(r*1500) * time.Millisecond), condition: "Attached"}
				kind := "binding condition met"
				switch {
				case isWarm(owner) || tries[claim.UID] >= 3:
				case r < 0.55:
				case r < 0.80:
					w, kind = pendingWrite{due: now, condition: "AttachFailed"}, "binding condition failed"
				default:
					w.condition, kind = "", "binding condition never set (timeout)"
				}
				s.fault("dra", kind)
				if w.condition != "" {
					pending[key] = w
				}
			}
			if w, ok := pending[key]; ok && !now.Before(w.due) {
				err := s.setCondition(claim, w.condition)
				switch {
				case err == nil:
					delete(pending, key)
					written[key] = true
				case apierrors.IsNotFound(err):
					delete(pending, key)
				case s.ctx.Err() == nil && !apierrors.IsConflict(err):
					s.t.Logf("setting %s on claim %s: %v (tried again)", w.condition, claim.Name, err)
				}
			}
		}
	})
}

func (s *soak) setCondition(claim *resourceapi.ResourceClaim, condition string) error {
	c := claim.DeepCopy()
	c.Status.Devices = nil
	for _, r := range c.Status.Allocation.Devices.Results {
		c.Status.Devices = append(c.Status.Devices, resourceapi.AllocatedDeviceStatus{Driver: r.Driver, Pool: r.Pool, Device: r.Device,
			Conditions: []metav1.Condition{{Type: condition, Status: metav1.ConditionTrue, Reason: condition, Message: "by the soak's driver", LastTransitionTime: metav1.Now()}}})
	}
	_, err := s.c.ResourceV1().ResourceClaims(soakNS).UpdateStatus(s.ctx, c, metav1.UpdateOptions{})
	return err
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

// ---- the extender ----

// startExtender serves an ignorable extender's filter and prioritize
// verbs; each call, by a seeded choice per pod, verb and call: answers
// (60%), sleeps past httpTimeout (20%), or answers 500 (20%). Its
// answers leave out one node (when there are two or more) and score the
// others.
func (s *soak) startExtender(httpTimeout time.Duration) string {
	var mu sync.Mutex
	calls := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		verb := strings.TrimPrefix(r.URL.Path, "/")
		var a extenderv1.ExtenderArgs
		if err := json.NewDecoder(r.Body).Decode(&a); err != nil || a.Pod == nil || a.Nodes == nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		mu.Lock()
		n := calls[a.Pod.Name+"/"+verb]
		calls[a.Pod.Name+"/"+verb]++
		mu.Unlock()
		s.mu.Lock()
		hold := s.holds[a.Pod.Name]
		if verb == "filter" {
			delete(s.holds, a.Pod.Name)
		}
		s.mu.Unlock()
		kind := "answered"
		if hold != nil && verb == "filter" {
			// A gang's cycle held here (within httpTimeout) while the
			// test deletes a member, and for kubesched to see it.
			hold()
			time.Sleep(soakHoldAfterDelete)
			kind = "held for a deletion"
		} else if d := s.draw("extender", a.Pod.Name, verb, n); !isWarm(a.Pod.Name) && d < 0.2 {
			kind = "timed out"
		} else if !isWarm(a.Pod.Name) && d < 0.4 {
			kind = "500"
		}
		s.fault("extender", verb+" "+kind)
		switch kind {
		case "timed out":
			select {
			case <-time.After(httpTimeout + 300*time.Millisecond):
			case <-r.Context().Done():
			}
			http.Error(w, "too late", http.StatusGatewayTimeout)
			return
		case "500":
			http.Error(w, "injected by the soak's extender", http.StatusInternalServerError)
			return
		}
		var out any
		switch verb {
		case "filter":
			res := extenderv1.ExtenderFilterResult{Nodes: &v1.NodeList{}, FailedNodes: extenderv1.FailedNodesMap{}}
			skip := -1
			if len(a.Nodes.Items) > 1 {
				skip = int(s.draw("extender skip", a.Pod.Name, n) * float64(len(a.Nodes.Items)))
			}
			for i, node := range a.Nodes.Items {
				if i == skip {
					res.FailedNodes[node.Name] = "the soak's extender leaves this node out"
				} else {
					res.Nodes.Items = append(res.Nodes.Items, node)
				}
			}
			out = res
		case "prioritize":
			var res extenderv1.HostPriorityList
			for _, node := range a.Nodes.Items {
				res = append(res, extenderv1.HostPriority{Host: node.Name, Score: int64(s.draw("extender score", a.Pod.Name, node.Name) * 10)})
			}
			out = res
		default:
			http.Error(w, "unknown verb", http.StatusNotFound)
			return
		}
		_ = json.NewEncoder(w).Encode(out)
	}))
	s.t.Cleanup(srv.Close)
	return srv.URL
}
