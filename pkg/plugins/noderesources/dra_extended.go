package noderesources

import (
	"context"
	"sync"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins/helper"
)

// Extended resources backed by DRA (DRAExtendedResource, GA and locked on
// in v1.37): a pod may ask for an extended resource, e.g. example.com/gpu,
// that a DeviceClass provides (its spec.extendedResourceName, or the
// implicit deviceclass.resource.kubernetes.io/<class>). On a node whose
// allocatable does not have the resource (or has 0 of it), NodeResourcesFit
// leaves it to DynamicResources, which allocates devices of the class for
// it; a node with the resource in its allocatable (a device plugin's) is
// checked by Fit as before. Scoring counts such a resource by the class's
// devices on the node: how many there are, and how many are allocated.

// draResolver is the DRA manager of a handle, nil when there is none.
func draResolver(h framework.Handle) framework.DRAManager {
	if h == nil {
		return nil
	}
	return h.SharedDRAManager()
}

// delegatedOf marks the pod's scalar resources (in s.scalars' order) that a
// DeviceClass provides; nil when none is (no allocation then).
func (f *Fit) delegatedOf(s *preFilterState) []bool {
	if f.dra == nil {
		return nil
	}
	var out []bool
	for i, name := range s.scalars {
		if s.Scalar[name] == 0 || f.dra.DeviceClassFor(name) == nil {
			continue
		}
		if out == nil {
			out = make([]bool, len(s.scalars))
		}
		out[i] = true
	}
	return out
}

// withDelegation is the PreFilter state with the resources a DeviceClass
// provides marked (a copy: s may be shared by cycles).
func (f *Fit) withDelegation(s *preFilterState) *preFilterState {
	d := f.delegatedOf(s)
	if d == nil {
		return s
	}
	c := *s
	c.delegated = d
	return &c
}

// leftToDRA: the node has none of the i-th scalar resource in its
// allocatable, and a DeviceClass provides it (upstream's
// shouldDelegateResourceToDRA).
func (s *preFilterState) leftToDRA(i int, a *framework.Resource) bool {
	return s.delegated != nil && s.delegated[i] && a.Scalar[s.scalars[i]] <= 0
}

// requestsDRABacked reports whether the pod asks for a resource a
// DeviceClass provides: its verdicts and scores then depend on the classes,
// the slices and the claims, not on the NodeInfo alone (upstream's
// signature is disabled for such pods too).
func requestsDRABacked(dra framework.DRAManager, req *framework.Resource) bool {
	if dra == nil {
		return false
	}
	for name, q := range req.Scalar {
		if q != 0 && dra.DeviceClassFor(name) != nil {
			return true
		}
	}
	return false
}

// afterDeviceClassEvent is upstream's isSchedulableAfterDeviceClassEvent: a
// class added or updated that now provides a resource the pod requests
// (its implicit name only counts for an addition; an update that keeps
// the extendedResourceName changes nothing).
func (f *Fit) afterDeviceClassEvent(_ klog.Logger, pod *v1.Pod, oldObj, newObj interface{}) (framework.QueueingHint, error) {
	old, cur, err := helper.As[*resourceapi.DeviceClass](oldObj, newObj)
	if err != nil || cur == nil {
		return framework.Queue, err
	}
	reqs := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	if old != nil {
		if ptr.Deref(old.Spec.ExtendedResourceName, "") == ptr.Deref(cur.Spec.ExtendedResourceName, "") {
			return framework.QueueSkip, nil
		}
	} else if _, ok := reqs[v1.ResourceName(resourceapi.ResourceDeviceClassPrefix+cur.Name)]; ok {
		return framework.Queue, nil
	}
	if cur.Spec.ExtendedResourceName != nil {
		if _, ok := reqs[v1.ResourceName(*cur.Spec.ExtendedResourceName)]; ok {
			return framework.Queue, nil
		}
	}
	return framework.QueueSkip, nil
}

// draScoreState is what scoring needs to count the devices behind the
// scored extended resources: the classes, the devices taken, the slices
// (upstream's draPreScoreState). Nil when the pod asks for none of them.
type draScoreState struct {
	classes   []*resourceapi.DeviceClass // per scored resource, nil if none
	allocated *structured.AllocatedState
	slices    []*resourceapi.ResourceSlice
	features  structured.Features
	celCache  *cel.Cache
	// matches remembers whether a device matches a class's selectors
	// (class/driver/pool/device).
	matches sync.Map
}

// draScoreStateOf gathers the devices for the scored resources that the
// pod requests and a DeviceClass provides; nil when there are none.
func (r *resourceAllocationScorer) draScoreStateOf(podRequests []int64) (*draScoreState, *framework.Status) {
	if r.dra == nil {
		return nil, nil
	}
	var classes []*resourceapi.DeviceClass
	for i, name := range r.names {
		if podRequests[i] == 0 || !framework.IsDRAExtendedResourceName(name) {
			continue
		}
		if c := r.dra.DeviceClassFor(name); c != nil {
			if classes == nil {
				classes = make([]*resourceapi.DeviceClass, len(r.names))
			}
			classes[i] = c
		}
	}
	if classes == nil {
		return nil, nil
	}
	allocated, err := r.dra.AllocatedState()
	if err != nil {
		return nil, framework.AsStatus(err)
	}
	slices, err := r.dra.ResourceSlices()
	if err != nil {
		return nil, framework.AsStatus(err)
	}
	features, _ := r.dra.Features()
	return &draScoreState{classes: classes, allocated: allocated, slices: slices, features: features, celCache: r.celCache}, nil
}

// totals are the i-th scored resource's devices on the node: how many
// match its class, and how many of those are allocated (upstream's
// calculateDRAResourceTotals; an error counts as none).
func (d *draScoreState) totals(node *v1.Node, i int) (capacity, allocated int64) {
	class := d.classes[i]
	if class == nil || node == nil {
		return 0, 0
	}
	for _, slice := range d.slices {
		driver, pool := slice.Spec.Driver, slice.Spec.Pool.Name
		count := func(dev *resourceapi.Device) bool {
			ok, err := d.deviceMatches(class, driver, pool, dev)
			if err != nil {
				return false
			}
			if ok {
				capacity++
				if structured.IsDeviceAllocated(structured.MakeDeviceID(driver, pool, dev.Name), d.allocated) {
					allocated++
				}
			}
			return true
		}
		if ptr.Deref(slice.Spec.PerDeviceNodeSelection, false) {
			for j := range slice.Spec.Devices {
				dev := &slice.Spec.Devices[j]
				name, all := ptr.Deref(dev.NodeName, ""), ptr.Deref(dev.AllNodes, false)
				on := all || (name != "" && name == node.Name)
				if !on && dev.NodeSelector != nil {
					m, err := structured.NodeMatches(d.features, node, name, all, dev.NodeSelector)
					if err != nil {
						return 0, 0
					}
					on = m
				}
				if on && !count(dev) {
					return 0, 0
				}
			}
			continue
		}
		name, all := ptr.Deref(slice.Spec.NodeName, ""), ptr.Deref(slice.Spec.AllNodes, false)
		switch {
		case !all && name != node.Name && slice.Spec.NodeSelector != nil:
			m, err := structured.NodeMatches(d.features, node, name, all, slice.Spec.NodeSelector)
			if err != nil {
				return 0, 0
			}
			if !m {
				continue
			}
		case !all && name != "" && name != node.Name:
			continue
		}
		for j := range slice.Spec.Devices {
			if !count(&slice.Spec.Devices[j]) {
				return 0, 0
			}
		}
	}
	return capacity, allocated
}

type matchKey struct{ class, driver, pool, device string }

// deviceMatches: every CEL selector of the class accepts the device.
func (d *draScoreState) deviceMatches(class *resourceapi.DeviceClass, driver, pool string, dev *resourceapi.Device) (bool, error) {
	if len(class.Spec.Selectors) == 0 {
		return true, nil
	}
	key := matchKey{class.Name, driver, pool, dev.Name}
	if v, ok := d.matches.Load(key); ok {
		return v.(bool), nil
	}
	celDev := cel.Device{Driver: driver, Attributes: dev.Attributes, Capacity: dev.Capacity}
	for _, sel := range class.Spec.Selectors {
		if sel.CEL == nil {
			continue
		}
		res := d.celCache.GetOrCompile(sel.CEL.Expression)
		if res.Error != nil {
			return false, res.Error
		}
		ok, _, err := res.DeviceMatches(context.Background(), celDev)
		if err != nil {
			return false, err
		}
		if !ok {
			d.matches.Store(key, false)
			return false, nil
		}
	}
	d.matches.Store(key, true)
	return true, nil
}
