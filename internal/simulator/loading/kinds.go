package loading

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// readKind is a kind the simulator reads: the versions it decodes (of
// those kube-apiserver v1.37.2 serves), and its scope.
type readKind struct {
	versions   []string
	namespaced bool
}

// readKinds are the kinds the simulator reads, by group and kind. A kind
// of the same name in another group (a custom resource: Volcano's Job) is
// not one of them. The groups and versions are those kube-apiserver
// v1.37.2 serves (pkg/controlplane/instance.go and pkg/registry/*/rest):
// any other version of a group here is not served, and an object in it is
// refused as kubectl apply refuses it (no matches for kind). Deployments,
// DaemonSets and ReplicaSets were also served in extensions/v1beta1
// (until v1.16), hence that group's entries with no version.
var readKinds = map[schema.GroupKind]readKind{
	{Kind: "Node"}:                  {versions: []string{"v1"}},
	{Kind: "Pod"}:                   {versions: []string{"v1"}, namespaced: true},
	{Kind: "Namespace"}:             {versions: []string{"v1"}},
	{Kind: "Service"}:               {versions: []string{"v1"}, namespaced: true},
	{Kind: "ReplicationController"}: {versions: []string{"v1"}, namespaced: true},
	{Kind: "PersistentVolumeClaim"}: {versions: []string{"v1"}, namespaced: true},
	{Kind: "PersistentVolume"}:      {versions: []string{"v1"}},

	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}: {versions: []string{"v1"}},
	// scheduling.k8s.io/v1beta1 is served with --runtime-config (the
	// GenericWorkload gate's PodGroups).
	{Group: "scheduling.k8s.io", Kind: "PodGroup"}: {versions: []string{"v1beta1"}, namespaced: true},

	{Group: "apps", Kind: "Deployment"}:  {versions: []string{"v1"}, namespaced: true},
	{Group: "apps", Kind: "ReplicaSet"}:  {versions: []string{"v1"}, namespaced: true},
	{Group: "apps", Kind: "StatefulSet"}: {versions: []string{"v1"}, namespaced: true},
	{Group: "apps", Kind: "DaemonSet"}:   {versions: []string{"v1"}, namespaced: true},

	{Group: "extensions", Kind: "Deployment"}: {namespaced: true},
	{Group: "extensions", Kind: "ReplicaSet"}: {namespaced: true},
	{Group: "extensions", Kind: "DaemonSet"}:  {namespaced: true},

	{Group: "batch", Kind: "Job"}:     {versions: []string{"v1"}, namespaced: true},
	{Group: "batch", Kind: "CronJob"}: {versions: []string{"v1"}, namespaced: true},

	{Group: "policy", Kind: "PodDisruptionBudget"}: {versions: []string{"v1"}, namespaced: true},

	// autoscaling/v1 is read as the API server serves it in v2
	// (cluster.HPAFromV1).
	{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}: {versions: []string{"v2", "v1"}, namespaced: true},

	{Group: "storage.k8s.io", Kind: "StorageClass"}:       {versions: []string{"v1"}},
	{Group: "storage.k8s.io", Kind: "CSINode"}:            {versions: []string{"v1"}},
	{Group: "storage.k8s.io", Kind: "CSIDriver"}:          {versions: []string{"v1"}},
	{Group: "storage.k8s.io", Kind: "VolumeAttachment"}:   {versions: []string{"v1"}},
	{Group: "storage.k8s.io", Kind: "CSIStorageCapacity"}: {versions: []string{"v1"}, namespaced: true},

	{Group: "resource.k8s.io", Kind: "DeviceClass"}:           {versions: []string{"v1"}},
	{Group: "resource.k8s.io", Kind: "ResourceSlice"}:         {versions: []string{"v1"}},
	{Group: "resource.k8s.io", Kind: "DeviceTaintRule"}:       {versions: []string{"v1"}},
	{Group: "resource.k8s.io", Kind: "ResourceClaim"}:         {versions: []string{"v1"}, namespaced: true},
	{Group: "resource.k8s.io", Kind: "ResourceClaimTemplate"}: {versions: []string{"v1"}, namespaced: true},
}

// optInVersions are versions of kinds the simulator reads that
// kube-apiserver v1.37.2 serves only when --runtime-config turns them on
// (beta and alpha versions, off by default) and that the simulator does
// not decode: it reads the version kubectl get returns, the preferred
// one.
var optInVersions = map[schema.GroupVersionKind]bool{}

func init() {
	for version, kinds := range map[string][]string{
		"resource.k8s.io/v1beta1":    {"DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice"},
		"resource.k8s.io/v1beta2":    {"DeviceClass", "DeviceTaintRule", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice"},
		"resource.k8s.io/v1alpha3":   {"DeviceTaintRule"},
		"scheduling.k8s.io/v1alpha3": {"PodGroup"},
	} {
		for _, kind := range kinds {
			optInVersions[schema.FromAPIVersionAndKind(version, kind)] = true
		}
	}
}

// readKindOf is the kind the simulator reads that apiVersion and kind
// name, if any.
func readKindOf(apiVersion, kind string) (readKind, bool) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return readKind{}, false
	}
	rk, ok := readKinds[schema.GroupKind{Group: gv.Group, Kind: kind}]
	return rk, ok
}

// checkVersion refuses a kind the simulator reads in a version it does
// not decode: one kube-apiserver v1.37.2 does not serve, with kubectl
// apply's message, or one it serves only on demand, naming the version to
// write. The message follows the field, apiVersion.
func checkVersion(rk readKind, apiVersion, kind string) string {
	gvk := schema.FromAPIVersionAndKind(apiVersion, kind)
	for _, v := range rk.versions {
		if gvk.Version == v {
			return ""
		}
	}
	served := servedAs(gvk.GroupKind())
	if optInVersions[gvk] {
		return fmt.Sprintf("Unsupported value: %q: supported values: %s (kube-apiserver v1.37 serves %s in %s only with --runtime-config, and kubectl get returns it in %s)",
			apiVersion, quoteAll(served), kind, apiVersion, served[0])
	}
	msg := fmt.Sprintf("no matches for kind %q in version %q", kind, apiVersion)
	if len(served) == 0 {
		// extensions/v1beta1: its kinds moved to apps.
		served = servedAs(schema.GroupKind{Group: "apps", Kind: kind})
	}
	return msg + fmt.Sprintf(" (kube-apiserver v1.37 serves %s in %s)", kind, strings.Join(served, " and "))
}

// servedAs are the apiVersions the simulator reads gk in.
func servedAs(gk schema.GroupKind) []string {
	var out []string
	for _, v := range readKinds[gk].versions {
		out = append(out, gk.WithVersion(v).GroupVersion().String())
	}
	return out
}

func quoteAll(s []string) string {
	q := make([]string, len(s))
	for i, x := range s {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, ", ")
}

// namespaceOf is the namespace a namespaced object read with namespace ns
// (its metadata.namespace) is created in, as kubectl apply [-n] creates
// it: its own, else the -n one (want), else default. An object naming
// another namespace than -n is refused with kubectl's message; msg is
// that message, after the field metadata.namespace.
func namespaceOf(ns, want string) (namespace, msg string) {
	switch {
	case want == "" && ns == "":
		return v1.NamespaceDefault, ""
	case want == "" || ns == want:
		return ns, ""
	case ns == "":
		return want, ""
	}
	return ns, fmt.Sprintf("the namespace from the provided object %q does not match the namespace %q. You must pass '--namespace=%s' to perform this operation.", ns, want, ns)
}

// setNamespace sets the object's namespace: the one namespaceOf gave a
// namespaced object, none for a cluster-scoped one (the API server clears
// it: k8s.io/apiserver's EnsureObjectNamespaceMatchesRequestNamespace).
func setNamespace(obj any, ns string) {
	if m, ok := obj.(metav1.Object); ok && m.GetNamespace() != ns {
		m.SetNamespace(ns)
	}
}

// helmHookAnnotation lists the Helm hooks an object is (comma-separated).
const helmHookAnnotation = "helm.sh/hook"

// helmTestHook: the object is a Helm test hook only (test, or its older
// names test-success and test-failure): helm install does not create it,
// helm test does. A hook also listed for another event (pre-install...)
// is created then and kept.
func helmTestHook(obj any) (hooks string, ok bool) {
	m, isMeta := obj.(metav1.Object)
	if !isMeta {
		return "", false
	}
	hooks, has := m.GetAnnotations()[helmHookAnnotation]
	if !has {
		return "", false
	}
	test := false
	for _, h := range strings.Split(hooks, ",") {
		switch strings.ToLower(strings.TrimSpace(h)) {
		case "test", "test-success", "test-failure":
			test = true
		case "":
		default:
			return hooks, false
		}
	}
	return hooks, test
}
