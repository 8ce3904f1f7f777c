package framework

import (
	v1 "k8s.io/api/core/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
)

// ExtenderName is the name a pod's unschedulable plugins carry when an
// extender rejected some of the nodes (upstream's framework.ExtenderName):
// no extender registers events, so any cluster event may wake the pod.
const ExtenderName = "Extender"

// Extender is a scheduler extender of KubeSchedulerConfiguration's
// extenders: a service called over HTTP after the Filter plugins, beside
// the Score plugins, before the Bind plugins and in preemption, as
// kube-scheduler v1.37's fwk.Extender.
type Extender interface {
	// Name identifies the extender (its URL prefix).
	Name() string
	// Filter returns the nodes of nodes that pass, and the ones that do
	// not with a message each; unresolvable ones are not worth preempting
	// for.
	Filter(pod *v1.Pod, nodes []*NodeInfo) (filtered []*NodeInfo, failed, failedAndUnresolvable extenderv1.FailedNodesMap, err error)
	// Prioritize scores nodes from 0 to extenderv1.MaxExtenderPriority;
	// the scheduler multiplies them by the weight and by
	// MaxNodeScore/MaxExtenderPriority.
	Prioritize(pod *v1.Pod, nodes []*NodeInfo) (hostPriorities *extenderv1.HostPriorityList, weight int64, err error)
	// Bind binds the pod in place of the Bind plugins.
	Bind(binding *v1.Binding) error
	IsBinder() bool
	IsFilter() bool
	IsPrioritizer() bool
	// IsInterested: the extender manages none of the resources, or one the
	// pod's containers (or init containers) request or limit.
	IsInterested(pod *v1.Pod) bool
	// ProcessPreemption narrows the preemption candidates: nodes to their
	// victims. nodeInfos resolves the pods an extender names by UID.
	ProcessPreemption(pod *v1.Pod, victims map[string]*extenderv1.Victims, nodeInfos NodeInfoLister) (map[string]*extenderv1.Victims, error)
	SupportsPreemption() bool
	// IsIgnorable: the extender's errors are logged and skipped instead of
	// failing the cycle.
	IsIgnorable() bool
}
