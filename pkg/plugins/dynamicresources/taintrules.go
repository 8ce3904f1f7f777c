package dynamicresources

import (
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// ResourceSlices implements framework.DRAManager: the published slices,
// with the taints of the DeviceTaintRules added to the devices they select
// (DRADeviceTaintRules, on by default in v1.37), as kube-scheduler's
// ResourceSlice tracker (k8s.io/dynamic-resource-allocation/resourceslice/
// tracker's applyPatches) does. The tracker needs its own informers and a
// clientset; the same patching here serves both worlds from the listers.
// Patched slices are kept until the next slice, class or rule event.
func (m *Manager) ResourceSlices() ([]*resourceapi.ResourceSlice, error) {
	if m.listers.ResourceSlices == nil {
		return nil, nil
	}
	m.mu.RLock()
	gen := m.sliceGen
	cached, ok := m.patched, m.patchedOK && m.patchedGen == gen
	m.mu.RUnlock()
	if ok {
		return cached, nil
	}
	slices, err := m.listers.ResourceSlices.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	var rules []*resourceapi.DeviceTaintRule
	if m.taintRules && m.listers.DeviceTaintRules != nil {
		if rules, err = m.listers.DeviceTaintRules.List(labels.Everything()); err != nil {
			return nil, err
		}
	}
	if len(rules) > 0 {
		out := make([]*resourceapi.ResourceSlice, len(slices))
		for i, s := range slices {
			out[i] = applyTaintRules(s, rules)
		}
		slices = out
	}
	m.mu.Lock()
	if m.sliceGen == gen {
		m.patched, m.patchedOK, m.patchedGen = slices, true, gen
	}
	m.mu.Unlock()
	return slices, nil
}

// applyTaintRules returns the slice with the rules' taints appended to the
// devices they select (driver, pool and device; a rule without a selector
// selects nothing), copied only when a rule applies.
func applyTaintRules(slice *resourceapi.ResourceSlice, rules []*resourceapi.DeviceTaintRule) *resourceapi.ResourceSlice {
	patched := slice
	for _, r := range rules {
		sel := r.Spec.DeviceSelector
		if sel == nil {
			continue
		}
		if sel.Driver != nil && *sel.Driver != slice.Spec.Driver {
			continue
		}
		if sel.Pool != nil && *sel.Pool != slice.Spec.Pool.Name {
			continue
		}
		for i, d := range slice.Spec.Devices {
			if sel.Device != nil && *sel.Device != d.Name {
				continue
			}
			if patched == slice {
				patched = slice.DeepCopy()
			}
			patched.Spec.Devices[i].Taints = append(patched.Spec.Devices[i].Taints, r.Spec.Taint)
		}
	}
	return patched
}
