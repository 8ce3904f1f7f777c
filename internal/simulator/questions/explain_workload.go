package questions

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
)

// workloadKinds are the names kubectl takes for the workload kinds
// simulate plays (TYPE/NAME, as in kubectl logs deployment/web): the
// kind, its plural and its short name, any case.
var workloadKinds = map[string]string{
	"deployment": "Deployment", "deployments": "Deployment", "deploy": "Deployment",
	"replicaset": "ReplicaSet", "replicasets": "ReplicaSet", "rs": "ReplicaSet",
	"statefulset": "StatefulSet", "statefulsets": "StatefulSet", "sts": "StatefulSet",
	"daemonset": "DaemonSet", "daemonsets": "DaemonSet", "ds": "DaemonSet",
	"job": "Job", "jobs": "Job",
	"replicationcontroller": "ReplicationController", "replicationcontrollers": "ReplicationController", "rc": "ReplicationController",
}

// WorkloadRef reads TYPE/NAME (deployment/web, sts/db): the workload's
// kind and name, ok false when TYPE is no workload kind.
func WorkloadRef(ref string) (kind, name string, ok bool) {
	typ, name, found := strings.Cut(ref, "/")
	if !found || name == "" || strings.Contains(name, "/") {
		return "", "", false
	}
	kind, ok = workloadKinds[strings.ToLower(typ)]
	return kind, name, ok
}

// PodOfWorkload is the pod of the workload kind namespace/name to explain:
// the first it created that has no node (they share a template: any of
// them answers for the others; a StatefulSet's lowest ordinal waiting,
// one not created yet included), else, when all of them run, its first.
// An empty namespace finds the workload in any namespace, when only one
// has it. A workload with no pods (scaled to 0, or unknown) is an error
// naming the workloads of that kind the files hold.
func PodOfWorkload(c *cluster.Cluster, kind, namespace, name string) (*v1.Pod, error) {
	idx := -1
	var same, named []string
	for i, wl := range c.Workloads {
		if wl.Kind != kind {
			continue
		}
		if (namespace == "" || wl.Namespace == namespace) && wl.Name == name {
			idx = i
			named = append(named, wl.Namespace+"/"+wl.Name)
		}
		same = append(same, wl.Namespace+"/"+wl.Name)
	}
	if len(named) > 1 {
		return nil, fmt.Errorf("%s %s is in %d namespaces (%s): -n names the one to explain", kind, name, len(named), strings.Join(named, ", "))
	}
	if idx < 0 {
		if namespace == "" {
			namespace = "*"
		}
		if len(same) == 0 {
			return nil, fmt.Errorf("no %s %s/%s in the cluster files: they hold no %s", kind, namespace, name, kind)
		}
		if len(same) > 5 {
			same = append(same[:5], "...")
		}
		return nil, fmt.Errorf("no %s %s/%s in the cluster files (-n names the namespace; they hold %s)", kind, namespace, name, strings.Join(same, ", "))
	}
	var first *v1.Pod
	for _, p := range c.Pods {
		if i, ok := c.WorkloadOf[cluster.PodKey(p)]; !ok || i != idx {
			continue
		}
		if p.Spec.NodeName == "" {
			return p, nil
		}
		if first == nil {
			first = p
		}
	}
	for _, o := range c.Ordered {
		if o.Workload == idx && len(o.Waiting) > 0 {
			return o.Waiting[0], nil
		}
	}
	if first == nil {
		return nil, fmt.Errorf("%s has no pods to explain (its replicas are 0, or all of its pods have finished)", c.Workloads[idx])
	}
	return first, nil
}
