package framework

import (
	"context"
	"math/rand"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Score bounds: every plugin's normalized score lies in [MinNodeScore, MaxNodeScore].
const (
	MaxNodeScore int64 = 100
	MinNodeScore int64 = 0
	// MaxTotalScore bounds the weighted sum.
	MaxTotalScore int64 = 1<<63 - 1
)

// Plugin is the parent of all plugins.
type Plugin interface {
	Name() string
}

// PreEnqueuePlugin gates a pod before it enters activeQ. Success lets the
// pod in; any other code keeps it in unschedulablePods until an event.
type PreEnqueuePlugin interface {
	Plugin
	PreEnqueue(ctx context.Context, pod *v1.Pod) *Status
}

// QueueSortPlugin orders activeQ. Only one may be enabled, and all profiles
// must agree on it.
type QueueSortPlugin interface {
	Plugin
	Less(a, b *QueuedPodInfo) bool
}

// PreFilterResult narrows the nodes to evaluate; nil NodeNames means all.
type PreFilterResult struct {
	NodeNames sets.Set[string]
	// Restrictors names the plugins that restricted the nodes (set by the runtime).
	Restrictors []string
}

// AllNodes is true when the result does not restrict nodes.
func (r *PreFilterResult) AllNodes() bool { return r == nil || r.NodeNames == nil }

// Merge intersects two results.
func (r *PreFilterResult) Merge(o *PreFilterResult) *PreFilterResult {
	if r.AllNodes() && o.AllNodes() {
		return nil
	}
	if r.AllNodes() {
		return &PreFilterResult{NodeNames: o.NodeNames.Clone()}
	}
	if o.AllNodes() {
		return &PreFilterResult{NodeNames: r.NodeNames.Clone()}
	}
	return &PreFilterResult{NodeNames: r.NodeNames.Intersection(o.NodeNames)}
}

// PreFilterPlugin runs once per cycle before Filter. Success: go on;
// Skip: this plugin's Filter is not run for this pod; Unschedulable(AndUnresolvable):
// the pod fits no node; Error: the cycle fails and the pod backs off.
type PreFilterPlugin interface {
	Plugin
	PreFilter(ctx context.Context, state *CycleState, pod *v1.Pod, nodes []*NodeInfo) (*PreFilterResult, *Status)
	// PreFilterExtensions may be nil; preemption uses them to add and
	// remove pods from the state speculatively.
	PreFilterExtensions() PreFilterExtensions
}

// PreFilterExtensions update precomputed state when pods are added or
// removed speculatively (preemption, nominated pods).
type PreFilterExtensions interface {
	AddPod(ctx context.Context, state *CycleState, podToSchedule *v1.Pod, podInfoToAdd *PodInfo, nodeInfo *NodeInfo) *Status
	RemovePod(ctx context.Context, state *CycleState, podToSchedule *v1.Pod, podInfoToRemove *PodInfo, nodeInfo *NodeInfo) *Status
}

// FilterPlugin decides if the pod fits one node. Success: fits;
// Unschedulable: does not fit, preemption may help; UnschedulableAndUnresolvable:
// does not fit and preemption cannot help; Error: the cycle fails.
// Filter runs concurrently over nodes: read-only, allocation-free.
type FilterPlugin interface {
	Plugin
	Filter(ctx context.Context, state *CycleState, pod *v1.Pod, nodeInfo *NodeInfo) *Status
}

// PostFilterPlugin runs when no node fits (e.g. preemption). Success with a
// nominated node makes the pod wait for it; Unschedulable: nothing helped.
type PostFilterPlugin interface {
	Plugin
	PostFilter(ctx context.Context, state *CycleState, pod *v1.Pod, filteredNodeStatusMap NodeToStatusReader) (*PostFilterResult, *Status)
}

// PostFilterReplayer is a PostFilter plugin whose outcome, when it
// nominates no node, is a function of the pod's equivalence class (the
// signatures of the profile's EquivalencePlugins, when they are the only
// filter plugins that run for it), its priority and preemption policy,
// the snapshot, the nominated pods and the draws from Handle.Rand. The
// scheduler then answers the next pod of that class, with nothing of these
// changed, with the same outcome, without calling PostFilter (the same
// number of draws is taken from Rand); it calls ReplayPostFilter instead,
// for what the plugin records per call besides (its metrics).
type PostFilterReplayer interface {
	PostFilterPlugin
	ReplayPostFilter(pod *v1.Pod)
}

// PostFilterResult carries the nominated node.
type PostFilterResult struct {
	NominatedNodeName string
}

// PreScorePlugin runs once per cycle over the feasible nodes. Skip: this
// plugin's Score is not run and it adds nothing.
type PreScorePlugin interface {
	Plugin
	PreScore(ctx context.Context, state *CycleState, pod *v1.Pod, nodes []*NodeInfo) *Status
}

// ScorePlugin ranks one feasible node; concurrent, read-only, allocation-free.
type ScorePlugin interface {
	Plugin
	Score(ctx context.Context, state *CycleState, pod *v1.Pod, nodeInfo *NodeInfo) (int64, *Status)
	// ScoreExtensions may be nil.
	ScoreExtensions() ScoreExtensions
}

// ScoreExtensions normalizes a plugin's scores to [MinNodeScore, MaxNodeScore].
type ScoreExtensions interface {
	NormalizeScore(ctx context.Context, state *CycleState, pod *v1.Pod, scores NodeScoreList) *Status
}

// NodeScore is one node's score.
type NodeScore struct {
	Name  string
	Score int64
}

// NodeScoreList is a plugin's scores, one per feasible node.
type NodeScoreList []NodeScore

// NodePluginScores is one node's per-plugin weighted scores and total.
type NodePluginScores struct {
	Name       string
	Scores     []PluginScore
	TotalScore int64
}

// PluginScore is one plugin's weighted score.
type PluginScore struct {
	Name  string
	Score int64
}

// ReservePlugin claims resources for the pod on the chosen node. A failed
// Reserve fails the cycle; Unreserve must undo Reserve and be idempotent.
type ReservePlugin interface {
	Plugin
	Reserve(ctx context.Context, state *CycleState, pod *v1.Pod, nodeName string) *Status
	Unreserve(ctx context.Context, state *CycleState, pod *v1.Pod, nodeName string)
}

// PermitPlugin may delay binding. Success: bind now; Wait (with a timeout):
// the binding cycle waits for Allow or Reject; Unschedulable: reject.
type PermitPlugin interface {
	Plugin
	Permit(ctx context.Context, state *CycleState, pod *v1.Pod, nodeName string) (*Status, time.Duration)
}

// PreBindPlugin runs before Bind; a failure aborts binding and unreserves.
type PreBindPlugin interface {
	Plugin
	PreBind(ctx context.Context, state *CycleState, pod *v1.Pod, nodeName string) *Status
}

// BindPlugin binds the pod. Skip passes to the next binder.
type BindPlugin interface {
	Plugin
	Bind(ctx context.Context, state *CycleState, pod *v1.Pod, nodeName string) *Status
}

// PostBindPlugin is informational, after a successful bind.
type PostBindPlugin interface {
	Plugin
	PostBind(ctx context.Context, state *CycleState, pod *v1.Pod, nodeName string)
}

// EnqueueExtensions declares which cluster events may make a pod that the
// plugin rejected schedulable again, each with an optional queueing hint
// that looks at the pod and the changed object and may say QueueSkip.
type EnqueueExtensions interface {
	Plugin
	EventsToRegister(ctx context.Context) ([]ClusterEventWithHint, error)
}

// QueueingHint says whether an event may make a rejected pod schedulable.
type QueueingHint int

// The hints.
const (
	// QueueSkip: the event cannot help this pod; it stays unschedulable.
	QueueSkip QueueingHint = iota
	// Queue: the pod is retried (after its backoff).
	Queue
)

// QueueingHintFn decides for one pod and one event; oldObj is nil for an
// addition, newObj nil for a deletion. An error counts as Queue.
type QueueingHintFn func(logger klog.Logger, pod *v1.Pod, oldObj, newObj interface{}) (QueueingHint, error)

// ClusterEventWithHint is a registered event; a nil QueueingHintFn always
// queues.
type ClusterEventWithHint struct {
	Event          ClusterEvent
	QueueingHintFn QueueingHintFn
}

// Events wraps events without hints.
func Events(evs ...ClusterEvent) []ClusterEventWithHint {
	out := make([]ClusterEventWithHint, len(evs))
	for i, e := range evs {
		out[i] = ClusterEventWithHint{Event: e}
	}
	return out
}

// NodeInfoLister lists the snapshot's NodeInfos.
type NodeInfoLister interface {
	List() ([]*NodeInfo, error)
	// HavePodsWithAffinityList lists, in List's order, the nodes with at
	// least one pod with pod affinity or anti-affinity.
	HavePodsWithAffinityList() ([]*NodeInfo, error)
	// HavePodsWithRequiredAntiAffinityList: the nodes with at least one
	// pod with required anti-affinity.
	HavePodsWithRequiredAntiAffinityList() ([]*NodeInfo, error)
	Get(nodeName string) (*NodeInfo, error)
}

// SharedLister is the snapshot as plugins see it.
type SharedLister interface {
	NodeInfos() NodeInfoLister
}

// NodeInfoChanges is implemented by a NodeInfoLister that can tell which
// positions of its List changed: a plugin's memo that follows the list
// (per-node contributions to cluster-wide counts) then looks at those
// nodes only, instead of comparing every node's generation in every cycle.
type NodeInfoChanges interface {
	// ChangesSince returns the positions of List whose NodeInfo changed
	// after mark, a value it returned before, and the mark to pass next.
	// ok is false when it can't tell (the list was rebuilt, or mark is too
	// old): the caller then looks at every position. Positions may repeat;
	// the slice is read-only and valid until the list changes again.
	ChangesSince(mark uint64) (positions []int32, next uint64, ok bool)
}

// Binder writes a binding to the world (the API, or the in-memory store).
type Binder interface {
	Bind(ctx context.Context, binding *v1.Binding) error
}

// WaitingPod is a pod held at Permit.
type WaitingPod interface {
	GetPod() *v1.Pod
	GetPendingPlugins() []string
	Allow(pluginName string)
	Reject(pluginName, msg string)
	// Preempt ends the wait with an Error (the pod backs off and is
	// retried, not parked as unschedulable); false when the wait had
	// already ended.
	Preempt(pluginName, msg string) bool
}

// Handle is what a plugin gets from the framework at construction: the
// snapshot, the world's roles it may use, and the waiting pods.
type Handle interface {
	// ProfileName is the profile's schedulerName (metrics' profile label).
	ProfileName() string
	// SnapshotSharedLister is the scheduling cycle's snapshot of the
	// nodes and their pods. Read it only from the scheduling cycle
	// (PreEnqueue aside: PreFilter to Permit, PostFilter, the group's
	// extension points): the next cycle rewrites it in place while a
	// binding cycle runs, so WaitOnPermit, PreBind, Bind and PostBind,
	// which run on their own goroutines, must read the world with GetNode
	// and GetPod instead (upstream's binding-cycle plugins read informers'
	// listers too). The race detector reports a read from there.
	SnapshotSharedLister() SharedLister
	// Binder is nil for plugins that have no business binding.
	Binder() Binder
	EventRecorder() events.EventRecorder
	IterateOverWaitingPods(fn func(WaitingPod))
	GetWaitingPod(uid string) WaitingPod
	Parallelism() int
	// Rand is the scheduler's seeded random source (the same seed gives
	// the same choices). Use it only from the scheduling cycle.
	Rand() *rand.Rand
	// Listers reads cluster objects other than nodes and pods.
	Listers() Listers
	// NominatedPodsForNode lists the pods nominated to a node (preemptors
	// waiting for their victims to go). The slice is shared: read it, do
	// not modify it.
	NominatedPodsForNode(nodeName string) []*PodInfo
	// Evict deletes a preemption victim; the API's NotFound when it is
	// already gone.
	Evict(ctx context.Context, victim *v1.Pod, preemptor Preemptor) error
	// ClearNominatedNodeName clears a pod's status.nominatedNodeName.
	ClearNominatedNodeName(ctx context.Context, pod *v1.Pod) error
	// AsyncPreemption is true when preemption's API calls (evictions,
	// cleared nominations) should run in the background, the preemptor
	// kept out of activeQ until they are done: the SchedulerAsyncPreemption
	// feature gate, on by default as in kube-scheduler v1.37. A world whose
	// API calls complete at once (the simulator) runs them in the cycle.
	AsyncPreemption() bool
	// Features are the feature gates the plugins read.
	Features() Features
	// Extenders are the scheduler's extenders (preemption asks the ones
	// that support it to narrow its candidates).
	Extenders() []Extender
	// Activate moves pods waiting in the queue (unschedulable or backing
	// off) to activeQ; a pod in flight is retried when its attempt ends.
	Activate(pods ...*v1.Pod)
	// GetPod reads the world's current version of a pod (the informer's
	// in a cluster); ok is false when it is gone.
	GetPod(namespace, name string) (pod *v1.Pod, ok bool)
	// GetNode reads the world's current version of a node (the informer's
	// in a cluster); ok is false when it is gone. Safe from any goroutine:
	// the binding cycle reads nodes here.
	GetNode(name string) (node *v1.Node, ok bool)
	// VolumeWriter writes volume bindings (VolumeBinding's PreBind).
	VolumeWriter() VolumeWriter
	// Clock is the scheduler's clock: a plugin that waits (PreBind for a
	// controller) waits on it, so a simulation or a test steps it.
	Clock() clock.WithTicker
	// SharedDRAManager is the scheduler-wide state of device allocation.
	SharedDRAManager() DRAManager
	// ClaimWriter writes ResourceClaims (DynamicResources' PreBind); nil
	// where nothing is written (explain).
	ClaimWriter() ClaimWriter
	// RunFilterPluginsWithNominatedPods runs the Filter plugins on a node,
	// as if the higher-or-equal priority pods nominated to it were there.
	RunFilterPluginsWithNominatedPods(ctx context.Context, state *CycleState, pod *v1.Pod, info *NodeInfo) *Status
	// RunPreFilterExtensionAddPod and RunPreFilterExtensionRemovePod update
	// the PreFilter state of every plugin for a pod added to or removed
	// from a node speculatively.
	RunPreFilterExtensionAddPod(ctx context.Context, state *CycleState, podToSchedule *v1.Pod, podInfoToAdd *PodInfo, nodeInfo *NodeInfo) *Status
	RunPreFilterExtensionRemovePod(ctx context.Context, state *CycleState, podToSchedule *v1.Pod, podInfoToRemove *PodInfo, nodeInfo *NodeInfo) *Status
	// PodGroupManager reads the pod groups and their states (nil unless
	// the GenericWorkload feature gate is on).
	PodGroupManager() PodGroupManager
}

// VolumeWriter updates PersistentVolumes and PersistentVolumeClaims and
// returns them as written (their new resourceVersion tells a reader when
// its informer has caught up): the API in a cluster, where the PV
// controller and the provisioners complete the binding later; in a
// simulation the store plays the PV controller and completes it at once.
type VolumeWriter interface {
	UpdatePersistentVolume(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error)
	UpdatePersistentVolumeClaim(ctx context.Context, pvc *v1.PersistentVolumeClaim) (*v1.PersistentVolumeClaim, error)
}

// PluginFactory builds a plugin from its (decoded, defaulted) args.
type PluginFactory func(ctx context.Context, args runtime.Object, h Handle) (Plugin, error)

// Registry maps plugin names to their factories.
type Registry map[string]PluginFactory

// Logger returns the logger of ctx.
func Logger(ctx context.Context) klog.Logger { return klog.FromContext(ctx) }

// Features are the feature gates that change what a plugin decides (the
// part of kube-scheduler's feature.Features that kubesched's plugins read
// from the handle; gates with a scheduler-wide effect are scheduler
// options). The zero value is v1.37's defaults.
type Features struct {
	// TaintTolerationComparisonOperators lets a toleration compare a
	// taint's value with Gt and Lt (alpha in v1.37, off by default): when
	// off, such a toleration tolerates nothing, as in kube-scheduler.
	TaintTolerationComparisonOperators bool
	// GenericWorkload: pod groups are scheduled as one (beta in v1.37,
	// off by default).
	GenericWorkload bool
	// TopologyAwareWorkloadScheduling: a pod group's cycle tries candidate
	// placements (alpha in v1.37, off by default; needs GenericWorkload).
	TopologyAwareWorkloadScheduling bool
}
