// Package queuesort holds PrioritySort, the default order of activeQ.
package queuesort

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/pkg/framework"
)

// Name of the plugin.
const Name = "PrioritySort"

// PrioritySort orders pods by priority (higher first), then by the time
// they entered the queue (earlier first).
type PrioritySort struct{}

var _ framework.QueueSortPlugin = &PrioritySort{}

// New builds the plugin.
func New(context.Context, runtime.Object, framework.Handle) (framework.Plugin, error) {
	return &PrioritySort{}, nil
}

// Name implements framework.Plugin.
func (*PrioritySort) Name() string { return Name }

// Less implements framework.QueueSortPlugin.
func (*PrioritySort) Less(a, b *framework.QueuedPodInfo) bool {
	pa, pb := a.Priority, b.Priority // corev1helpers.PodPriority, computed once
	if pa != pb {
		return pa > pb
	}
	// Upstream orders by the time the pod entered the queue; exact ties
	// (one instant of the simulator's clock) go by arrival order, as a
	// real clock would order them.
	if !a.Timestamp.Equal(b.Timestamp) {
		return a.Timestamp.Before(b.Timestamp)
	}
	return a.Seq < b.Seq
}
