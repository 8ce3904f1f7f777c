package difffuzz

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/profile"
)

// Oracle is upstream kube-scheduler v1.37.2's framework in process:
// scheduler.New with no configuration (the default profile and the
// default feature gates) over a fake clientset, with the scheduler's own
// informer factory, event handlers, cache and snapshot.
type Oracle struct {
	client   *fake.Clientset
	factory  informers.SharedInformerFactory
	sched    *scheduler.Scheduler
	snapshot *internalcache.Snapshot
	fw       framework.Framework
	cancel   context.CancelFunc
	ctx      context.Context
}

// NewOracle starts upstream's scheduler (without its scheduling loop) over
// these objects and waits until its cache holds them. Pods in phase
// Succeeded or Failed are left out, as the scheduler's pod informer's
// field selector leaves them out of a real cluster's list.
func NewOracle(objs []runtime.Object) (*Oracle, error) {
	ctx, cancel := context.WithCancel(context.Background())
	ctx = klog.NewContext(ctx, klog.Background().V(100))
	var kept []runtime.Object
	for _, o := range objs {
		if p, ok := o.(*v1.Pod); ok && (p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed) {
			continue
		}
		kept = append(kept, o.DeepCopyObject())
	}
	client := fake.NewSimpleClientset(kept...)
	factory := scheduler.NewInformerFactory(client, 0, nil)
	snapshot := internalcache.NewEmptySnapshot()
	recorders := profile.RecorderFactory(func(string) events.EventRecorderLogger { return events.NewFakeRecorder(0) })
	pct := int32(100)
	sched, err := scheduler.New(ctx, client, factory, nil, recorders,
		scheduler.WithPercentageOfNodesToScore(&pct), scheduler.WithNodeInfoSnapshot(snapshot))
	if err != nil {
		cancel()
		return nil, err
	}
	fw, ok := sched.Profiles[v1.DefaultSchedulerName]
	if !ok {
		cancel()
		return nil, fmt.Errorf("no default-scheduler profile")
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	if err := sched.WaitForHandlersSync(ctx); err != nil {
		cancel()
		return nil, err
	}
	return &Oracle{client: client, factory: factory, sched: sched, snapshot: snapshot, fw: fw, cancel: cancel, ctx: ctx}, nil
}

// Close stops the informers.
func (o *Oracle) Close() {
	o.cancel()
	o.factory.Shutdown()
}

// AddPod creates a pod (bound with spec.nodeName) through the clientset
// and waits until the scheduler's cache has it.
func (o *Oracle) AddPod(p *v1.Pod) error {
	if _, err := o.client.CoreV1().Pods(p.Namespace).Create(o.ctx, p.DeepCopy(), metav1.CreateOptions{}); err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(o.ctx, 200*time.Microsecond, 30*time.Second, true, func(context.Context) (bool, error) {
		_, err := o.sched.Cache.GetPod(p)
		return err == nil, nil
	})
}

// Explain answers for a pending pod as the conformance README describes:
// PreFilter; Filter on every node (the first rejecting plugin and its
// reasons; a PreFilter node restriction rejects the other nodes with the
// restricting plugins, a PreFilter rejection every node); PreScore (Skip
// drops a plugin), Score, NormalizeScore and weights over the feasible nodes
// (even one); the best nodes; the FitError message when none is feasible.
func (o *Oracle) Explain(pod *v1.Pod) (*Answer, error) {
	ctx := o.ctx
	logger := klog.FromContext(ctx)
	if err := o.sched.Cache.UpdateSnapshot(logger, o.snapshot); err != nil {
		return nil, err
	}
	all, err := o.snapshot.List()
	if err != nil {
		return nil, err
	}
	ans := &Answer{Pod: pod.Namespace + "/" + pod.Name, Nodes: []NodeAnswer{}, BestNodes: []string{}}
	state := framework.NewCycleState()
	state.Write(framework.PodsToActivateKey, framework.NewPodsToActivate())
	diagnosis := framework.Diagnosis{NodeToStatus: framework.NewDefaultNodeToStatus()}
	preRes, st, rejectors := o.fw.RunPreFilterPlugins(ctx, state, pod)
	diagnosis.UnschedulablePlugins = rejectors
	verdicts := map[string]*NodeAnswer{}
	var feasible []fwk.NodeInfo
	switch {
	case !st.IsSuccess():
		if !st.IsRejected() {
			return nil, fmt.Errorf("PreFilter: %w", st.AsError())
		}
		diagnosis.NodeToStatus.SetAbsentNodesStatus(st)
		diagnosis.PreFilterMsg = st.Message()
		diagnosis.AddPluginStatus(st)
		for _, ni := range all {
			verdicts[ni.Node().Name] = rejected(ni.Node().Name, st.Plugin(), st.Reasons())
		}
	default:
		nodes := all
		if !preRes.AllNodes() {
			nodes = nil
			restrictors := sets.List(rejectors)
			absent := fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", restrictors))
			diagnosis.NodeToStatus.SetAbsentNodesStatus(absent)
			for _, ni := range all {
				if preRes.NodeNames.Has(ni.Node().Name) {
					nodes = append(nodes, ni)
				} else {
					verdicts[ni.Node().Name] = rejected(ni.Node().Name, strings.Join(restrictors, ","), absent.Reasons())
				}
			}
		}
		for _, ni := range nodes {
			st := o.fw.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni)
			if st.Code() == fwk.Error {
				return nil, fmt.Errorf("Filter on %s: %w", ni.Node().Name, st.AsError())
			}
			if st.IsSuccess() {
				feasible = append(feasible, ni)
				continue
			}
			diagnosis.NodeToStatus.Set(ni.Node().Name, st)
			diagnosis.AddPluginStatus(st)
			verdicts[ni.Node().Name] = rejected(ni.Node().Name, st.Plugin(), st.Reasons())
		}
	}
	ans.FeasibleCount = len(feasible)
	if len(feasible) == 0 {
		fe := &framework.FitError{Pod: pod, NumAllNodes: len(all), Diagnosis: diagnosis}
		ans.Message = fe.Error()
	} else if err := o.score(pod, state, feasible, verdicts, ans); err != nil {
		return nil, err
	}
	for _, v := range verdicts {
		ans.Nodes = append(ans.Nodes, *v)
	}
	sort.Slice(ans.Nodes, func(i, j int) bool { return ans.Nodes[i].Name < ans.Nodes[j].Name })
	return ans, nil
}

// score runs PreScore, Score (with NormalizeScore and weights) and the raw
// scores over the feasible nodes and fills their verdicts and the best nodes.
func (o *Oracle) score(pod *v1.Pod, state *framework.CycleState, feasible []fwk.NodeInfo, verdicts map[string]*NodeAnswer, ans *Answer) error {
	ctx := o.ctx
	if st := o.fw.RunPreScorePlugins(ctx, state, pod, feasible); !st.IsSuccess() {
		return fmt.Errorf("PreScore: %w", st.AsError())
	}
	scores, st := o.fw.RunScorePlugins(ctx, state, pod, feasible)
	if !st.IsSuccess() {
		return fmt.Errorf("Score: %w", st.AsError())
	}
	best := int64(-1)
	for _, ns := range scores {
		total := ns.TotalScore
		v := &NodeAnswer{Name: ns.Name, Feasible: true, Reasons: []string{}, Score: &total, Scores: map[string]int64{}, RawScores: map[string]int64{}}
		for _, ps := range ns.Scores {
			v.Scores[ps.Name] = ps.Score
		}
		verdicts[ns.Name] = v
		if total > best {
			best, ans.BestNodes = total, ans.BestNodes[:0]
		}
		if total == best {
			ans.BestNodes = append(ans.BestNodes, ns.Name)
		}
	}
	sort.Strings(ans.BestNodes)
	for _, ni := range feasible {
		raw, st := o.fw.RunRawScorePlugins(ctx, state, pod, ni)
		if !st.IsSuccess() {
			return fmt.Errorf("raw Score on %s: %w", ni.Node().Name, st.AsError())
		}
		for _, ps := range raw {
			verdicts[ni.Node().Name].RawScores[ps.Name] = ps.Score
		}
	}
	return nil
}

// rejected is an infeasible node's verdict.
func rejected(name, plugin string, reasons []string) *NodeAnswer {
	if reasons == nil {
		reasons = []string{}
	}
	return &NodeAnswer{Name: name, Plugin: plugin, Reasons: reasons}
}
