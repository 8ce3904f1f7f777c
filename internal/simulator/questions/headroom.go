package questions

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

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

// HeadroomOptions are how Headroom counts and tells.
type HeadroomOptions struct {
	// Limit is how many more replicas of a workload are counted at most
	// (an HPA's workload: up to its maxReplicas at least).
	Limit int
	// Config is the scheduler's configuration; without it every
	// workload is counted one replica at a time.
	Config *configv1.KubeSchedulerConfiguration
	// Workers is how many workloads are counted one replica at a time at
	// once, each in its own world (0: GOMAXPROCS).
	Workers int
	// Planned, when set, is given the rows to come (kind, namespace,
	// name, HPA) before any is counted; Row, each row when it and every
	// row before it are known, in order.
	Planned func(rows []WorkloadHeadroom)
	Row     func(h WorkloadHeadroom)
	// Progress, when set, follows the count.
	Progress *HeadroomProgress
}

// HeadroomProgress is how far Headroom is, safe to read while it runs.
type HeadroomProgress struct {
	// Workloads is how many workloads are to be answered, Answered how
	// many are.
	Workloads, Answered atomic.Int64
	// Settled is how many were counted from the cluster simulated once;
	// Alone, how many are being counted one replica at a time in worlds
	// of their own, and Placed the replicas those placed so far.
	Settled, Alone, Placed atomic.Int64
}

// Headroom answers, for every Deployment, ReplicaSet (not owned by a
// Deployment of the input), StatefulSet, ReplicationController and Job of
// the cluster, what WorkloadCapacity answers for it alone, the others
// left as they are (without the next replica's explanation).
//
// The cluster is simulated once. A workload whose replicas each node
// takes independently of the others is counted from that settled world
// (headroom_fast.go): the same count and reason as one replica at a
// time. Every other workload is counted as WorkloadCapacity counts it, in
// a world of its own loaded and simulated afresh, o.Workers of them at
// once.
func Headroom(ctx context.Context, load func() (*cluster.Cluster, error), newWorld func(*cluster.Cluster) (*simulator.World, error), o HeadroomOptions) (*HeadroomResult, error) {
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
	progress := o.Progress
	if progress == nil {
		progress = &HeadroomProgress{}
	}
	progress.Workloads.Store(int64(len(todo)))
	// The rows as planned: an HPA's workload is counted up to its
	// maxReplicas at least.
	rows := make([]WorkloadHeadroom, len(todo))
	limits := make([]int, len(todo))
	for i, wl := range todo {
		rows[i] = WorkloadHeadroom{Kind: wl.Kind, Namespace: wl.Namespace, Name: wl.Name}
		limits[i] = o.Limit
		if hpa, replicas := first.HPAOf(wl.Kind, wl.Namespace, wl.Name); hpa != nil {
			rows[i].HPA = &HPAHeadroom{Name: hpa.Name, Replicas: replicas, MaxReplicas: hpa.Spec.MaxReplicas}
			limits[i] = max(o.Limit, int(hpa.Spec.MaxReplicas-replicas))
		}
	}
	if o.Planned != nil {
		o.Planned(slices.Clone(rows))
	}
	var mu sync.Mutex
	known := make([]bool, len(todo))
	next := 0
	answer := func(i, more int, reason string) {
		mu.Lock()
		defer mu.Unlock()
		rows[i].More, rows[i].Reason = more, reason
		if h := rows[i].HPA; h != nil {
			h.Short = max(0, int(h.MaxReplicas-h.Replicas)-more)
		}
		known[i] = true
		progress.Answered.Add(1)
		for ; next < len(rows) && known[next]; next++ {
			if o.Row != nil {
				o.Row(rows[next])
			}
		}
	}
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	g, gctx := errgroup.WithContext(ctx)
	// The workloads that can only be counted alone start at once, the
	// others once the cluster is simulated.
	sh := newShapes(first, o.Config)
	alone := make(chan int, len(todo))
	fromSettled := make([]int, 0, len(todo))
	for i, wl := range todo {
		if sh.alone(wl) {
			alone <- i
		} else {
			fromSettled = append(fromSettled, i)
		}
	}
	for range workers {
		g.Go(func() error {
			for i := range alone {
				more, reason, err := headroomAlone(gctx, load, newWorld, todo[i], limits[i], progress)
				if err != nil {
					return fmt.Errorf("%s: %w", todo[i], err)
				}
				answer(i, more, reason)
			}
			return nil
		})
	}
	g.Go(func() error {
		defer close(alone)
		if len(fromSettled) == 0 {
			return nil
		}
		w, err := newWorld(first)
		if err != nil {
			return err
		}
		if err := w.Run(gctx); err != nil {
			return err
		}
		s := newSettled(w, sh)
		for _, i := range fromSettled {
			wl := todo[i]
			if err := gctx.Err(); err != nil {
				return err
			}
			more, reason, ok, err := s.headroom(gctx, wl, limits[i])
			if err != nil {
				return fmt.Errorf("%s: %w", wl, err)
			}
			if !ok {
				alone <- i
				continue
			}
			progress.Settled.Add(1)
			answer(i, more, reason)
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return &HeadroomResult{Workloads: rows}, nil
}

// headroomAlone counts workload wl's headroom as WorkloadCapacity does,
// in a world of its own: the cluster loaded and simulated afresh.
func headroomAlone(ctx context.Context, load func() (*cluster.Cluster, error), newWorld func(*cluster.Cluster) (*simulator.World, error), wl cluster.Workload, limit int, progress *HeadroomProgress) (int, string, error) {
	progress.Alone.Add(1)
	defer progress.Alone.Add(-1)
	c, err := load()
	if err != nil {
		return 0, "", err
	}
	w, err := newWorld(c)
	if err != nil {
		return 0, "", err
	}
	r, err := workloadCapacity(ctx, w, wl.Kind, wl.Namespace, wl.Name, limit, false, &progress.Placed)
	if err != nil {
		return 0, "", err
	}
	if r.Next != nil {
		return r.Fits, r.Next.Message, nil
	}
	return r.Fits, fmt.Sprintf("stopped at --max %d; more may fit", limit), nil
}
