package questions

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
)

// HeadroomResult is capacity --headroom's answer: for each workload of the
// input, how many more replicas fit.
type HeadroomResult struct {
	Workloads []WorkloadHeadroom `json:"workloads"`
}

// WorkloadHeadroom is one workload's headroom: More replicas fit, each
// created as its controller would; Reason is why the next one does not
// (or that the count stopped at the limit).
type WorkloadHeadroom struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	More      int    `json:"more"`
	Reason    string `json:"reason"`
	// HPA is the HorizontalPodAutoscaler of the workload, if any: its
	// name, the replicas it leaves the workload with and its maxReplicas,
	// and whether the replicas up to that maximum fit (More counts up to
	// it at least, whatever the limit).
	HPA *HPAHeadroom `json:"hpa,omitempty"`
}

// HPAHeadroom is whether a workload's HPA can scale it out to its
// maxReplicas: Short is how many of those replicas do not fit (0: all
// fit).
type HPAHeadroom struct {
	Name        string `json:"name"`
	Replicas    int32  `json:"replicas"`
	MaxReplicas int32  `json:"maxReplicas"`
	Short       int    `json:"short"`
}

// headroomKinds are the workloads whose replicas can be added.
var headroomKinds = map[string]bool{"Deployment": true, "ReplicaSet": true, "StatefulSet": true, "ReplicationController": true, "Job": true}

// ownedByDeployment: wl is a ReplicaSet whose controller is a Deployment
// of the input (the Deployment's headroom counts its pods).
func ownedByDeployment(c *cluster.Cluster, wl cluster.Workload) bool {
	if wl.Kind != "ReplicaSet" {
		return false
	}
	o, ok := c.WorkloadObject(c.WorkloadIndex(wl.Kind, wl.Namespace, wl.Name)).(metav1.Object)
	if !ok {
		return false
	}
	ref := metav1.GetControllerOf(o)
	return ref != nil && ref.Kind == "Deployment" && c.WorkloadIndex("Deployment", wl.Namespace, ref.Name) >= 0
}

// Headroom answers, for every Deployment, ReplicaSet (not owned by a
// Deployment of the input), StatefulSet, ReplicationController and Job of
// the cluster, what WorkloadCapacity answers for it alone: the cluster is
// loaded and simulated afresh for each, the others left as they are.
// started, when set, is told of each workload as its count begins.
func Headroom(ctx context.Context, load func() (*cluster.Cluster, error), newWorld func(*cluster.Cluster) (*simulator.World, error), limit int, started func(i, n int, w cluster.Workload)) (*HeadroomResult, error) {
	first, err := load()
	if err != nil {
		return nil, err
	}
	var todo []cluster.Workload
	for _, wl := range first.Workloads {
		if headroomKinds[wl.Kind] && !ownedByDeployment(first, wl) {
			todo = append(todo, wl)
		}
	}
	if len(todo) == 0 {
		return nil, fmt.Errorf("the input has no Deployment, ReplicaSet, StatefulSet, ReplicationController or Job: no workload to add replicas to")
	}
	res := &HeadroomResult{Workloads: []WorkloadHeadroom{}}
	for i, wl := range todo {
		if started != nil {
			started(i, len(todo), wl)
		}
		c := first
		if i > 0 {
			// WorkloadCapacity changes the cluster it runs: each workload
			// gets a fresh one.
			if c, err = load(); err != nil {
				return nil, err
			}
		}
		w, err := newWorld(c)
		if err != nil {
			return nil, err
		}
		// An HPA's workload is counted up to its maxReplicas at least.
		hpa, replicas := c.HPAOf(wl.Kind, wl.Namespace, wl.Name)
		wlLimit := limit
		if hpa != nil {
			wlLimit = max(limit, int(hpa.Spec.MaxReplicas-replicas))
		}
		r, err := WorkloadCapacity(ctx, w, wl.Kind, wl.Namespace, wl.Name, wlLimit)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", wl, err)
		}
		h := WorkloadHeadroom{Kind: wl.Kind, Namespace: wl.Namespace, Name: wl.Name, More: r.Fits}
		if hpa != nil {
			h.HPA = &HPAHeadroom{Name: hpa.Name, Replicas: replicas, MaxReplicas: hpa.Spec.MaxReplicas,
				Short: max(0, int(hpa.Spec.MaxReplicas-replicas)-r.Fits)}
		}
		if r.Next != nil {
			h.Reason = r.Next.Message
		} else {
			h.Reason = fmt.Sprintf("stopped at --max %d; more may fit", wlLimit)
		}
		res.Workloads = append(res.Workloads, h)
	}
	return res, nil
}
