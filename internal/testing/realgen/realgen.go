// Package realgen generates a cluster shaped like a real one: an EKS
// cluster of two managed node groups (general m6i.4xlarge and memory
// r6i.4xlarge) over three zones, labelled and sized as EKS does, running
// the real workloads of the repository's corpus of public manifests
// (microservices-demo's shop, kube-prometheus, Argo CD HA, ingress-nginx,
// Cassandra and PostgreSQL, a batch namespace) with EKS's add-ons
// (the VPC CNI, kube-proxy, a log agent and CoreDNS), the shop copied into
// several namespaces and the stateless services' replicas scaled to a
// target pod count, most of them already running.
//
// It is the input of the realistic-size measurements of capacity
// (hack/genreal writes it).
package realgen

import (
	"fmt"
	"math"
	"math/rand"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// Options shape the cluster.
type Options struct {
	// Nodes is the node count (default 510).
	Nodes int
	// Pods is the pod count aimed at (default 30,000): the scaled
	// services' replicas are what is left once the DaemonSets' and the
	// other workloads' pods are counted. ReplicasScale, when set, is the
	// factor itself and Pods is ignored.
	Pods          int
	ReplicasScale float64
	// Running is the share of each Deployment's and each StatefulSet's
	// (without volume claims) pods already bound to a node (default
	// 0.9); the rest, and the pods of StatefulSets with claims and of
	// Jobs, are created pending when the cluster is loaded. DaemonSet
	// pods all run.
	Running float64
	Seed    int64
	// Namespaces is how many copies of the shop run, each in its
	// namespace shop-N (default 3); the databases get one namespace
	// data-N per three shops, at least one.
	Namespaces int
	// Corpus is the corpus' folder (default DefaultCorpus()).
	Corpus string
}

// Defaults fills the options left zero.
func (o *Options) Defaults() {
	if o.Nodes == 0 {
		o.Nodes = 510
	}
	if o.Pods == 0 {
		o.Pods = 30000
	}
	if o.Namespaces == 0 {
		o.Namespaces = 3
	}
	if o.Corpus == "" {
		o.Corpus = DefaultCorpus()
	}
}

// Cluster is the generated cluster and what it holds.
type Cluster struct {
	Objects []runtime.Object
	// Scale is the factor the scaled services' replicas got.
	Scale float64
	// Pods counts the pods once loaded (workloads' replicas, Jobs'
	// parallelism, DaemonSet pods), Running those bound in the output,
	// DaemonPods the DaemonSets' pods.
	Pods, Running, DaemonPods int
	// Workloads counts the Deployments, StatefulSets and Jobs.
	Workloads int
}

// app is a part of the corpus installed in some namespaces.
type app struct {
	files []string
	// namespaces are its copies' namespaces.
	namespaces func(o Options) []string
	// scaled are the Deployments whose replicas follow the scale.
	scaled map[string]bool
	// replicas, when set, gives a Deployment's replicas from the options
	// (0: as the manifest says).
	replicas func(o Options, name string) int32
	// skip leaves an object of the files out.
	skip func(obj runtime.Object) bool
	// memoryPool: the app's pods select the memory node group.
	memoryPool bool
}

func one(ns string) func(Options) []string { return func(Options) []string { return []string{ns} } }

func numbered(prefix string, n func(Options) int) func(Options) []string {
	return func(o Options) []string {
		var out []string
		for i := 1; i <= n(o); i++ {
			out = append(out, fmt.Sprintf("%s-%d", prefix, i))
		}
		return out
	}
}

var apps = []app{
	{files: []string{"shop/deployments.yaml", "shop/autoscaling.yaml"}, namespaces: numbered("shop", func(o Options) int { return o.Namespaces }),
		scaled: map[string]bool{"frontend": true, "cartservice": true, "productcatalogservice": true, "checkoutservice": true, "recommendationservice": true}},
	{files: []string{"monitoring/10-operator.yaml", "monitoring/20-exporters.yaml"}, namespaces: one("monitoring")},
	{files: []string{"gitops/ha-install.yaml"}, namespaces: one("argocd")},
	// The admission webhook's Jobs ran at install and are gone.
	{files: []string{"ingress/deploy.yaml"}, namespaces: one("ingress-nginx"),
		replicas: func(o Options, name string) int32 { return int32(max(2, o.Nodes/20)) },
		skip:     func(obj runtime.Object) bool { _, job := obj.(*batchv1.Job); return job }},
	{files: []string{"databases/cassandra.yaml", "databases/postgres.yaml"}, namespaces: numbered("data", func(o Options) int { return max(1, o.Namespaces/3) }),
		memoryPool: true},
	// The batch namespace's Deployments and its Job; its CronJobs are
	// left out (their Jobs come and go).
	{files: []string{"batch/list.yaml", "batch/lists.json", "batch/cronjobs.yaml"}, namespaces: one("batch"),
		scaled: map[string]bool{"queue-worker": true}},
}

// Generate builds the cluster of o (defaults filled).
func Generate(o Options) (*Cluster, error) {
	o.Defaults()
	r := rand.New(rand.NewSource(o.Seed))
	g := &generator{o: o, r: r, nodes: nodes(o.Nodes), taken: map[string]bool{}}
	var objs []runtime.Object
	for _, a := range apps {
		for _, ns := range a.namespaces(o) {
			got, err := g.install(a, ns)
			if err != nil {
				return nil, err
			}
			objs = append(objs, got...)
		}
	}
	objs = append(addons(int32(max(2, o.Nodes/16))), objs...)
	g.scale(objs)
	c := &Cluster{Scale: g.factor}
	namespaces := map[string]bool{}
	var nsObjs, head, body []runtime.Object
	for _, obj := range objs {
		m, _ := obj.(metav1.Object)
		if ns := m.GetNamespace(); ns != "" && !namespaces[ns] {
			namespaces[ns] = true
			nsObjs = append(nsObjs, &v1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
				ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"kubernetes.io/metadata.name": ns}}})
		}
		switch obj.(type) {
		case *storagev1.StorageClass:
			head = append(head, obj)
		case *appsv1.Deployment, *appsv1.StatefulSet, *batchv1.Job:
			c.Workloads++
			body = append(body, obj)
		default:
			body = append(body, obj)
		}
	}
	c.Objects = append(append(nsObjs, head...), nodeObjects(g.nodes)...)
	c.Objects = append(c.Objects, body...)
	pods := g.run(objs)
	c.Objects = append(c.Objects, pods...)
	c.Pods, c.Running, c.DaemonPods = g.pods, g.running, g.daemonPods
	return c, nil
}

func nodeObjects(ns []*v1.Node) []runtime.Object {
	out := make([]runtime.Object, len(ns))
	for i, n := range ns {
		out[i] = n
	}
	return out
}

type generator struct {
	o      Options
	r      *rand.Rand
	nodes  []*v1.Node
	factor float64
	// storageClasses are the cluster-scoped classes already installed.
	storageClasses map[string]bool
	// taken are the pod names in use, namespace/name.
	taken                     map[string]bool
	pods, running, daemonPods int
}

// install is one copy of app a in namespace ns: the objects of its files
// that scheduling reads (workloads, Services, HPAs, PDBs, StorageClasses),
// moved to ns.
func (g *generator) install(a app, ns string) ([]runtime.Object, error) {
	var out []runtime.Object
	for _, f := range a.files {
		objs, err := readManifests(g.o.Corpus, f)
		if err != nil {
			return nil, err
		}
		for _, obj := range objs {
			if a.skip != nil && a.skip(obj) {
				continue
			}
			switch o := obj.(type) {
			case *storagev1.StorageClass:
				// EKS's EBS CSI driver, not the corpus' GKE disks.
				if g.storageClasses == nil {
					g.storageClasses = map[string]bool{}
				}
				if g.storageClasses[o.Name] {
					continue
				}
				g.storageClasses[o.Name] = true
				o.Provisioner, o.Parameters = "ebs.csi.aws.com", map[string]string{"type": "gp3"}
				out = append(out, o)
				continue
			case *appsv1.Deployment:
				if a.memoryPool {
					memoryPool(&o.Spec.Template.Spec)
				}
				if a.replicas != nil {
					o.Spec.Replicas = ptr(a.replicas(g.o, o.Name))
				}
				if a.scaled[o.Name] {
					if o.Annotations == nil {
						o.Annotations = map[string]string{}
					}
					o.Annotations[scaledAnnotation] = "true"
				}
			case *appsv1.StatefulSet:
				if a.memoryPool {
					memoryPool(&o.Spec.Template.Spec)
				}
			case *batchv1.Job, *appsv1.DaemonSet, *v1.Service, *policyv1.PodDisruptionBudget,
				*autoscalingv1.HorizontalPodAutoscaler, *autoscalingv2.HorizontalPodAutoscaler:
			default:
				continue
			}
			obj.(metav1.Object).SetNamespace(ns)
			out = append(out, obj)
		}
	}
	return out, nil
}

// scaledAnnotation marks, while generating, a Deployment whose replicas
// follow the scale; it is removed before the output.
const scaledAnnotation = "realgen/scaled"

// memoryPool has a pod select the memory node group.
func memoryPool(spec *v1.PodSpec) {
	if spec.NodeSelector == nil {
		spec.NodeSelector = map[string]string{}
	}
	spec.NodeSelector[nodegroupLabel] = "memory"
}

// hpaOf is the HPA of Deployment d among objs: its minReplicas and
// maxReplicas, and setters.
func hpaOf(objs []runtime.Object, d *appsv1.Deployment) (min, max int32, set func(min, max int32)) {
	for _, obj := range objs {
		switch h := obj.(type) {
		case *autoscalingv2.HorizontalPodAutoscaler:
			if h.Namespace == d.Namespace && h.Spec.ScaleTargetRef.Kind == "Deployment" && h.Spec.ScaleTargetRef.Name == d.Name {
				return deref(h.Spec.MinReplicas), h.Spec.MaxReplicas, func(min, max int32) { h.Spec.MinReplicas, h.Spec.MaxReplicas = &min, max }
			}
		case *autoscalingv1.HorizontalPodAutoscaler:
			if h.Namespace == d.Namespace && h.Spec.ScaleTargetRef.Kind == "Deployment" && h.Spec.ScaleTargetRef.Name == d.Name {
				return deref(h.Spec.MinReplicas), h.Spec.MaxReplicas, func(min, max int32) { h.Spec.MinReplicas, h.Spec.MaxReplicas = &min, max }
			}
		}
	}
	return 0, 0, nil
}

func deref(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}

// scale sets the replicas of every Deployment: an HPA's minReplicas
// when the manifest names none, then, for the scaled ones, that times
// the factor (Options.ReplicasScale, else what brings the cluster to
// Options.Pods), their HPAs' bounds by the same factor.
func (g *generator) scale(objs []runtime.Object) {
	daemons := 0
	var scaled []*appsv1.Deployment
	fixed, base := 0, 0
	for _, obj := range objs {
		switch o := obj.(type) {
		case *appsv1.DaemonSet:
			daemons++
		case *appsv1.Deployment:
			if min, _, set := hpaOf(objs, o); set != nil && o.Spec.Replicas == nil {
				o.Spec.Replicas = ptr(min)
			}
			if o.Annotations[scaledAnnotation] != "" {
				delete(o.Annotations, scaledAnnotation)
				scaled = append(scaled, o)
				base += int(deref(o.Spec.Replicas))
				continue
			}
			fixed += int(deref(o.Spec.Replicas))
		case *appsv1.StatefulSet:
			fixed += int(deref(o.Spec.Replicas))
		case *batchv1.Job:
			fixed += int(deref(o.Spec.Parallelism))
		}
	}
	g.factor = g.o.ReplicasScale
	if g.factor <= 0 {
		g.factor = max(1, float64(g.o.Pods-daemons*len(g.nodes)-fixed)/float64(max(base, 1)))
	}
	for _, d := range scaled {
		was := deref(d.Spec.Replicas)
		n := int32(max(1, math.Round(float64(was)*g.factor)))
		d.Spec.Replicas = &n
		if min, max, set := hpaOf(objs, d); set != nil {
			f := float64(n) / float64(was)
			set(int32(math.Round(float64(min)*f)), int32(math.Round(float64(max)*f)))
		}
	}
}

// uid is an object's UID, made from its kind, namespace and name.
func uid(kind string, m metav1.Object) types.UID {
	return types.UID(fmt.Sprintf("%s-%s-%s", kind, m.GetNamespace(), m.GetName()))
}
