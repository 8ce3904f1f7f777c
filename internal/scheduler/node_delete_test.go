package scheduler_test

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins"
)

// zoneGuard rejects every pod while a node named "blocker" exists, and
// registers Node/Delete with a hint that records whether the scheduler's
// cache still held the deleted node when the pod was moved.
type zoneGuard struct {
	cacheHadNode func(name string) bool
	// seenInCache is, per Node/Delete hint call, whether the node was
	// still in the cache at that moment.
	seenInCache []bool
}

func (*zoneGuard) Name() string { return "ZoneGuard" }
func (*zoneGuard) Filter(_ context.Context, _ *framework.CycleState, _ *v1.Pod, ni *framework.NodeInfo) *framework.Status {
	return framework.NewStatus(framework.Unschedulable, "blocked while blocker exists")
}
func (g *zoneGuard) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{{Event: framework.EventNodeDelete,
		QueueingHintFn: func(_ klog.Logger, _ *v1.Pod, oldObj, _ interface{}) (framework.QueueingHint, error) {
			g.seenInCache = append(g.seenInCache, g.cacheHadNode(oldObj.(*v1.Node).Name))
			return framework.Queue, nil
		}}}, nil
}

// TestAPodWokenByANodeDeletionIsTriedWithoutTheNode: the node leaves the
// cache before the pods its deletion wakes are moved, so a woken pod's
// next cycle never sees it (upstream moves first; a pod popped in between
// failed against the stale node and waited for an event that never came).
func TestAPodWokenByANodeDeletionIsTriedWithoutTheNode(t *testing.T) {
	g := &zoneGuard{}
	registry := plugins.NewInTreeRegistry()
	registry["ZoneGuard"] = func(context.Context, runtime.Object, framework.Handle) (framework.Plugin, error) { return g, nil }
	cfg := &configv1.KubeSchedulerConfiguration{Profiles: []configv1.KubeSchedulerProfile{{Plugins: &configv1.Plugins{
		MultiPoint: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "ZoneGuard"}}}}}}}
	e := newEnv(t, registry, cfg)
	g.cacheHadNode = func(name string) bool { _, ok := e.sched.Cache.Dump()[name]; return ok }
	e.add(t, st.MakeNode().Name("blocker").Capacity(rl{v1.ResourceCPU: "4"}).Obj(), st.MakePod().Name("p").Req(rl{v1.ResourceCPU: "1"}).Obj())
	e.drain()
	if _, _, u := e.sched.Queue.Counts(); u != 1 {
		t.Fatalf("unschedulablePods holds %d pods, want the rejected pod", u)
	}
	if err := e.store.DeleteNode("blocker"); err != nil {
		t.Fatal(err)
	}
	e.store.Flush()
	if len(g.seenInCache) != 1 || g.seenInCache[0] {
		t.Errorf("when the deletion moved the pod, the cache held the node: %v (want [false])", g.seenInCache)
	}
}
