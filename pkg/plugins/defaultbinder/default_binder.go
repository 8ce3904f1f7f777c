// Package defaultbinder holds DefaultBinder: it binds through the world's
// Binder (the pods/binding subresource in a cluster).
package defaultbinder

import (
	"context"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/pkg/framework"
)

// Name of the plugin.
const Name = "DefaultBinder"

// DefaultBinder is a Bind plugin.
type DefaultBinder struct {
	binder framework.Binder
}

var _ framework.BindPlugin = &DefaultBinder{}

// New builds the plugin.
func New(_ context.Context, _ runtime.Object, h framework.Handle) (framework.Plugin, error) {
	return &DefaultBinder{binder: h.Binder()}, nil
}

// Name implements framework.Plugin.
func (*DefaultBinder) Name() string { return Name }

// Bind POSTs a Binding for the pod.
func (b *DefaultBinder) Bind(ctx context.Context, _ *framework.CycleState, p *v1.Pod, nodeName string) *framework.Status {
	framework.Logger(ctx).V(3).Info("Attempting to bind pod to node", "pod", p.Namespace+"/"+p.Name, "node", nodeName)
	binding := &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name, UID: p.UID},
		Target:     v1.ObjectReference{Kind: "Node", Name: nodeName},
	}
	if err := b.binder.Bind(ctx, binding); err != nil {
		return framework.AsStatus(err)
	}
	return nil
}
