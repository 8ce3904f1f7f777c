package metrics

import "k8s.io/component-base/metrics"

// ResourceClaimCreatesTotal counts the ResourceClaims created, by status
// ("success", "failure"), admin access, and the owner's API group and
// kind: kube-scheduler creates the special claim of a pod's extended
// resources backed by DRA ("false", "", "Pod"). ALPHA, with the name
// k8s.io/dynamic-resource-allocation gives it in kube-scheduler and
// kube-controller-manager.
var ResourceClaimCreatesTotal = metrics.NewCounterVec(&metrics.CounterOpts{
	Subsystem:      "dynamic_resource_allocation",
	Name:           "resourceclaim_creates_total",
	Help:           "Number of ResourceClaims creation requests, categorized by creation status, admin access, and owning API group and kind (either Pod or scheduling.k8s.io/PodGroup)",
	StabilityLevel: metrics.ALPHA,
}, []string{"status", "admin_access", "owner_api_group", "owner_api_kind"})
