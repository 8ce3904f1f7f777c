// Package features holds kubesched's feature gates, set with
// --feature-gates as kube-scheduler's are.
package features

import (
	"fmt"
	"strings"

	"k8s.io/component-base/featuregate"
	"k8s.io/dynamic-resource-allocation/structured"
)

const (
	// EquivalenceCache keeps the Filter verdicts and raw scores of the
	// plugins that read only the pod and one node, per class of equal pods
	// and per node generation (internal/framework/runtime/equivalence.go).
	// Decisions are identical with it on or off.
	EquivalenceCache featuregate.Feature = "EquivalenceCache"

	// SchedulerAsyncPreemption is kube-scheduler's gate of the same name
	// (Beta, on by default since 1.33): preemption's API calls run in a
	// goroutine and the preemptor waits outside activeQ until they are
	// done. The simulator runs them in the cycle either way.
	SchedulerAsyncPreemption featuregate.Feature = "SchedulerAsyncPreemption"

	// TaintTolerationComparisonOperators is kube-scheduler's gate of the
	// same name (alpha in v1.37, off): tolerations with the operators Gt
	// and Lt compare a taint's value as an integer.
	TaintTolerationComparisonOperators featuregate.Feature = "TaintTolerationComparisonOperators"
)

// Pod groups: kube-scheduler v1.37.2's gates (pkg/features), at their
// defaults. GenericWorkload (pod groups, gang scheduling) is built;
// Unbuilt refuses turning the two alpha ones on (docs/podgroups.md).
const (
	GenericWorkload                 featuregate.Feature = "GenericWorkload"
	TopologyAwareWorkloadScheduling featuregate.Feature = "TopologyAwareWorkloadScheduling"
	WorkloadWithJob                 featuregate.Feature = "WorkloadWithJob"
	CompositePodGroup               featuregate.Feature = "CompositePodGroup"
)

// Dynamic resource allocation: kube-scheduler v1.37.2's gates, with their
// defaults and stages (pkg/features/kube_features.go). Those the structured
// allocator knows turn its features on and off (DRAFeatures); the others
// are accepted so a kube-scheduler command line works unchanged.
const (
	DynamicResourceAllocation    featuregate.Feature = "DynamicResourceAllocation"
	DRAAdminAccess               featuregate.Feature = "DRAAdminAccess"
	DRAConsumableCapacity        featuregate.Feature = "DRAConsumableCapacity"
	DRADerivedAttributes         featuregate.Feature = "DRADerivedAttributes"
	DRADeviceBindingConditions   featuregate.Feature = "DRADeviceBindingConditions"
	DRADeviceCompatibilityGroups featuregate.Feature = "DRADeviceCompatibilityGroups"
	DRADeviceTaintRules          featuregate.Feature = "DRADeviceTaintRules"
	DRADeviceTaints              featuregate.Feature = "DRADeviceTaints"
	DRAExtendedResource          featuregate.Feature = "DRAExtendedResource"
	DRAFractionalCapacityRange   featuregate.Feature = "DRAFractionalCapacityRange"
	DRAListTypeAttributes        featuregate.Feature = "DRAListTypeAttributes"
	DRANodeAllocatableResources  featuregate.Feature = "DRANodeAllocatableResources"
	DRAOptionalNodeOperations    featuregate.Feature = "DRAOptionalNodeOperations"
	DRAPartitionableDevices      featuregate.Feature = "DRAPartitionableDevices"
	DRAPartitionableDevicesType  featuregate.Feature = "DRAPartitionableDevicesType"
	DRAPrioritizedList           featuregate.Feature = "DRAPrioritizedList"
	DRAResourceClaimDeviceStatus featuregate.Feature = "DRAResourceClaimDeviceStatus"
	DRAResourcePoolStatus        featuregate.Feature = "DRAResourcePoolStatus"
	DRASchedulerFilterTimeout    featuregate.Feature = "DRASchedulerFilterTimeout"
	DRAWorkloadResourceClaims    featuregate.Feature = "DRAWorkloadResourceClaims"
)

var defaults = map[featuregate.Feature]featuregate.FeatureSpec{
	EquivalenceCache:                   {Default: true, PreRelease: featuregate.Beta},
	SchedulerAsyncPreemption:           {Default: true, PreRelease: featuregate.Beta},
	TaintTolerationComparisonOperators: {Default: false, PreRelease: featuregate.Alpha},

	GenericWorkload:                 {Default: false, PreRelease: featuregate.Beta},
	TopologyAwareWorkloadScheduling: {Default: false, PreRelease: featuregate.Alpha},
	CompositePodGroup:               {Default: false, PreRelease: featuregate.Alpha},
	// WorkloadWithJob is kube-controller-manager's (the Job controller
	// gives new Jobs a Workload and a PodGroup); simulate plays that
	// controller.
	WorkloadWithJob: {Default: false, PreRelease: featuregate.Alpha},

	DynamicResourceAllocation:    {Default: true, PreRelease: featuregate.GA, LockToDefault: true},
	DRAAdminAccess:               {Default: true, PreRelease: featuregate.GA, LockToDefault: true},
	DRAConsumableCapacity:        {Default: true, PreRelease: featuregate.Beta},
	DRADerivedAttributes:         {Default: false, PreRelease: featuregate.Alpha},
	DRADeviceBindingConditions:   {Default: true, PreRelease: featuregate.Beta},
	DRADeviceCompatibilityGroups: {Default: false, PreRelease: featuregate.Alpha},
	DRADeviceTaintRules:          {Default: true, PreRelease: featuregate.GA},
	DRADeviceTaints:              {Default: true, PreRelease: featuregate.GA},
	DRAExtendedResource:          {Default: true, PreRelease: featuregate.GA, LockToDefault: true},
	DRAFractionalCapacityRange:   {Default: true, PreRelease: featuregate.Beta},
	DRAListTypeAttributes:        {Default: false, PreRelease: featuregate.Alpha},
	DRANodeAllocatableResources:  {Default: false, PreRelease: featuregate.Alpha},
	DRAOptionalNodeOperations:    {Default: false, PreRelease: featuregate.Alpha},
	DRAPartitionableDevices:      {Default: true, PreRelease: featuregate.Beta},
	DRAPartitionableDevicesType:  {Default: false, PreRelease: featuregate.Alpha},
	DRAPrioritizedList:           {Default: true, PreRelease: featuregate.GA, LockToDefault: true},
	DRAResourceClaimDeviceStatus: {Default: true, PreRelease: featuregate.GA, LockToDefault: true},
	DRAResourcePoolStatus:        {Default: false, PreRelease: featuregate.Alpha},
	DRASchedulerFilterTimeout:    {Default: true, PreRelease: featuregate.Beta},
	DRAWorkloadResourceClaims:    {Default: false, PreRelease: featuregate.Beta},
}

// New returns a fresh gate with kubesched's features at their defaults.
func New() featuregate.MutableFeatureGate {
	g := featuregate.NewFeatureGate()
	if err := g.Add(defaults); err != nil {
		panic(err) // a programming error in the table above
	}
	// kube-scheduler v1.37.2's dependencies among these gates: turning one
	// on without what it needs fails as there ("X is enabled, but depends
	// on features that are disabled: [...]").
	if err := g.AddDependencies(map[featuregate.Feature][]featuregate.Feature{
		TopologyAwareWorkloadScheduling: {GenericWorkload},
		CompositePodGroup:               {GenericWorkload, TopologyAwareWorkloadScheduling},
		DRAWorkloadResourceClaims:       {DynamicResourceAllocation, GenericWorkload},
		WorkloadWithJob:                 {GenericWorkload},
	}); err != nil {
		panic(err)
	}
	return g
}

// Unbuilt returns an error naming every gate that is on and asks for what
// kubesched does not build yet.
func Unbuilt(g featuregate.FeatureGate) error {
	var on []string
	for _, f := range []featuregate.Feature{CompositePodGroup, DRAWorkloadResourceClaims} {
		if g.Enabled(f) {
			on = append(on, string(f)+"=true")
		}
	}
	if len(on) == 0 {
		return nil
	}
	return fmt.Errorf("--feature-gates: %s: composite pod groups and workload resource claims are not built in kubesched yet (GenericWorkload and TopologyAwareWorkloadScheduling are); kube-scheduler v1.37.2 has them off by default", strings.Join(on, ", "))
}

// DRAFeatures are the structured allocator's features as the gates set
// them (kube-scheduler's AllocatorFeatures), whether Filter's allocation
// has a timeout (DRASchedulerFilterTimeout) and whether DeviceTaintRules
// taint devices (DRADeviceTaintRules).
func DRAFeatures(g featuregate.FeatureGate) (f structured.Features, filterTimeout, taintRules bool) {
	on := func(x featuregate.Feature) bool { return g.Enabled(x) }
	return structured.Features{
		AdminAccess:             on(DRAAdminAccess),
		PrioritizedList:         on(DRAPrioritizedList),
		PartitionableDevices:    on(DRAPartitionableDevices),
		DeviceTaints:            on(DRADeviceTaints),
		DeviceBindingAndStatus:  on(DRADeviceBindingConditions) && on(DRAResourceClaimDeviceStatus),
		ConsumableCapacity:      on(DRAConsumableCapacity),
		FractionalCapacityRange: on(DRAFractionalCapacityRange),
		ListTypeAttributes:      on(DRAListTypeAttributes),
		OptionalNodeOperations:  on(DRAOptionalNodeOperations),
		DerivedAttributes:       on(DRADerivedAttributes),
		CompatibilityGroups:     on(DRADeviceCompatibilityGroups),
	}, on(DRASchedulerFilterTimeout), on(DRADeviceTaints) && on(DRADeviceTaintRules)
}
