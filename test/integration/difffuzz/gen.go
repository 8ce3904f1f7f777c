package difffuzz

import (
	"fmt"
	"math/rand/v2"
	"regexp"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Generator draws API-valid clusters and pods from a seeded source. Every
// object goes through Admit (upstream's defaulting, PrepareForCreate and
// validation); rejected draws are counted and drawn again.
type Generator struct {
	r *rand.Rand
	// Drawn and Rejected count admitted and rejected draws; Rejections
	// counts the rejected draws by their first validation error's field.
	Drawn, Rejected int
	Rejections      map[string]int
	// Coverage records the field paths of every admitted object.
	Coverage *Coverage

	// The cluster being drawn: names the pod generator refers to.
	nodes      []string
	namespaces []string
	podSeq     int
	st         storageState
	dra        draState
	classes    []priorityClass
	workloads  []workload
	// cur is the cluster being drawn; the objects a pod needs (its
	// generated claims) join cur.Others. extra and statuses are the last
	// pod draw's objects and claim statuses.
	cur      *Scenario
	others   []runtime.Object
	extra    []runtime.Object
	statuses []v1.PodResourceClaimStatus
}

// NewGenerator returns a generator over math/rand/v2's PCG with this seed.
func NewGenerator(seed uint64) *Generator {
	return &Generator{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), Rejections: map[string]int{}, Coverage: NewCoverage()}
}

// index matches list indices in field paths, to group rejections.
var index = regexp.MustCompile(`\[[0-9]+\]`)

// maxTries bounds the redraws of one object.
const maxTries = 50

// admit draws with draw until Admit accepts, counting rejections.
func (g *Generator) admit(draw func() runtime.Object) runtime.Object {
	for range maxTries {
		o, errs := Admit(draw())
		if len(errs) == 0 {
			g.Drawn++
			g.Coverage.Record(o)
			return o
		}
		g.Rejected++
		g.Rejections[index.ReplaceAllString(errs[0].Field, "[]")+": "+string(errs[0].Type)]++
	}
	return nil
}

func (g *Generator) intn(n int) int        { return g.r.IntN(n) }
func (g *Generator) chance(p float64) bool { return g.r.Float64() < p }

// pick returns one of the values.
func pick[T any](g *Generator, vs ...T) T { return vs[g.r.IntN(len(vs))] }

// Zones, label keys and values the cluster and pods share.
var (
	zones      = []string{"zone-a", "zone-b", "zone-c"}
	podKeys    = []string{"app", "tier", "team", "version"}
	podValues  = []string{"web", "db", "cache", "a", "b"}
	nodeKeys   = []string{v1.LabelHostname, v1.LabelTopologyZone, "disktype", "gpu-count", "pool", "rack"}
	topoKeys   = []string{v1.LabelHostname, v1.LabelTopologyZone, v1.LabelTopologyZone, "rack", "pool"}
	extended   = v1.ResourceName("example.com/foo")
	hugepages  = v1.ResourceName("hugepages-2Mi")
	imageNames = []string{"nginx", "nginx:1.27", "nginx:latest", "docker.io/library/nginx:1.27", "redis:7", "registry.k8s.io/pause:3.10",
		"busybox", "nginx@sha256:0000000000000000000000000000000000000000000000000000000000000000", "example.com/app/big:v2"}
)

// DrawCluster draws a scenario's cluster: 3-8 nodes over zones, labelled
// namespaces, some Services and assigned pods.
func (g *Generator) DrawCluster() *Scenario {
	s := &Scenario{}
	g.namespaces = []string{"default", "team-a", "team-b", "team-c"}
	nsLabels := []map[string]string{nil, {"env": "prod"}, {"env": "dev", "tier": "x"}, {}}
	for i, ns := range g.namespaces {
		o := g.admit(func() runtime.Object {
			return &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: nsLabels[i]}}
		})
		s.Namespaces = append(s.Namespaces, o.(*v1.Namespace))
	}
	n := 3 + g.intn(6)
	g.nodes = nil
	for i := range n {
		name := fmt.Sprintf("n%d", i+1)
		g.nodes = append(g.nodes, name)
		if o := g.admit(func() runtime.Object { return g.drawNode(name, i) }); o != nil {
			s.Nodes = append(s.Nodes, o.(*v1.Node))
		}
	}
	g.cur = s
	g.others = nil
	g.others = append(g.others, g.drawStorage()...)
	g.others = append(g.others, g.drawDRA()...)
	g.others = append(g.others, g.drawWorkloads()...)
	s.Others = append(s.Others, g.others...)
	for i := range g.intn(3) {
		if o := g.admit(func() runtime.Object { return g.drawService(i) }); o != nil {
			s.Services = append(s.Services, o.(*v1.Service))
		}
	}
	for range g.intn(4 * n) {
		if p := g.DrawPod(true); p != nil {
			s.Pods = append(s.Pods, p)
		}
	}
	return s
}

// drawNode draws a node: hostname and zone labels (some missing), other
// labels, taints of each effect, allocatable (pods, extended, hugepages,
// zero, huge), images with sizes, unschedulable, declared features.
func (g *Generator) drawNode(name string, i int) *v1.Node {
	labels := map[string]string{}
	if !g.chance(0.1) {
		labels[v1.LabelHostname] = name
	}
	if !g.chance(0.15) {
		labels[v1.LabelTopologyZone] = zones[i%len(zones)]
	}
	if g.chance(0.5) {
		labels["disktype"] = pick(g, "ssd", "hdd")
	}
	if g.chance(0.5) {
		labels["gpu-count"] = pick(g, "0", "2", "8", "16")
	}
	if g.chance(0.4) {
		labels["pool"] = pick(g, "general", "spot", "gpu")
	}
	if g.chance(0.3) {
		labels["rack"] = pick(g, "r1", "r2")
	}
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	for range g.intn(3) {
		if g.chance(0.5) {
			break
		}
		t := v1.Taint{Key: pick(g, "dedicated", "gpu", "spot", "example.com/special"), Value: pick(g, "", "gpu", "true"),
			Effect: pick(g, v1.TaintEffectNoSchedule, v1.TaintEffectPreferNoSchedule, v1.TaintEffectNoExecute)}
		node.Spec.Taints = append(node.Spec.Taints, t)
	}
	node.Spec.Unschedulable = g.chance(0.1)
	alloc := v1.ResourceList{}
	if !g.chance(0.05) {
		alloc[v1.ResourceCPU] = resource.MustParse(pick(g, "2", "4", "8", "16", "3500m", "0", "1M"))
	}
	if !g.chance(0.05) {
		alloc[v1.ResourceMemory] = resource.MustParse(pick(g, "4Gi", "8Gi", "16Gi", "64Gi", "0", "8Pi", hugest(g)))
	}
	if !g.chance(0.05) {
		alloc[v1.ResourcePods] = resource.MustParse(pick(g, "110", "3", "1", "0", "1M"))
	}
	if g.chance(0.5) {
		alloc[v1.ResourceEphemeralStorage] = resource.MustParse(pick(g, "20Gi", "100Gi", "0"))
	}
	if g.chance(0.3) {
		alloc[hugepages] = resource.MustParse(pick(g, "0", "1Gi", "2Mi"))
	}
	if g.chance(0.3) {
		alloc[extended] = resource.MustParse(pick(g, "0", "1", "4"))
	}
	if g.chance(0.1) {
		alloc[draExtended] = resource.MustParse(pick(g, "0", "2"))
	}
	node.Status.Allocatable = alloc
	if g.chance(0.8) {
		node.Status.Capacity = alloc.DeepCopy()
	}
	for range g.intn(4) {
		img := v1.ContainerImage{SizeBytes: pick(g, int64(0), 50<<20, 500<<20, 1<<30, 3<<30)}
		for range 1 + g.intn(2) {
			img.Names = append(img.Names, pick(g, imageNames...))
		}
		node.Status.Images = append(node.Status.Images, img)
	}
	if g.chance(0.3) {
		node.Status.DeclaredFeatures = []string{pick(g, "UserNamespacesHostNetwork", "VolumeBindMountOptions", "RestartAllContainersOnContainerExits")}
	}
	return node
}

// drawService draws a Service whose selector may pick some pods (system
// default topology spreading) or none.
func (g *Generator) drawService(i int) *v1.Service {
	sel := map[string]string{"app": pick(g, podValues...)}
	if g.chance(0.3) {
		sel["tier"] = pick(g, podValues...)
	}
	return &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("svc%d", i), Namespace: pick(g, g.namespaces...)},
		Spec: v1.ServiceSpec{Selector: sel, Ports: []v1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: v1.ProtocolTCP}}}}
}

// DrawPod draws a pod, assigned to a node when assigned; nil when no
// valid draw was found.
func (g *Generator) DrawPod(assigned bool) *v1.Pod {
	g.podSeq++
	name := fmt.Sprintf("p%d", g.podSeq)
	o := g.admit(func() runtime.Object {
		p := g.drawPod(name, assigned)
		return p
	})
	if o == nil {
		return nil
	}
	p := o.(*v1.Pod)
	// The claims' statuses (set by the resource claim controller) and the
	// objects the pod needs (generated claims, an ephemeral volume's
	// claim), admitted as the API server stores them.
	p.Status.ResourceClaimStatuses = g.statuses
	for _, st := range g.statuses {
		if st.ResourceClaimName != nil {
			g.Coverage.Paths["Pod.status.resourceClaimStatuses[].resourceClaimName"]++
		}
	}
	for _, e := range g.extra {
		if a, errs := Admit(e); len(errs) == 0 {
			g.Drawn++
			g.Coverage.Record(a)
			g.cur.Others = append(g.cur.Others, a)
		} else {
			g.Rejected++
			g.Rejections[fmt.Sprintf("%T ", e)+index.ReplaceAllString(errs[0].Field, "[]")+": "+string(errs[0].Type)]++
		}
	}
	if assigned && g.chance(0.05) {
		p.Status.Phase = pick(g, v1.PodSucceeded, v1.PodFailed) // left by the informer
	}
	return p
}

// hugest is, rarely (1%), the largest memory quantity the API accepts (7Ei;
// up to 2^63-1 bytes), else 8Pi, whose milli-value still fits an int64.
func hugest(g *Generator) string {
	if g.chance(0.01) {
		return "7Ei"
	}
	return "8Pi"
}
