package framework

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Resource is a compact, integer form of a ResourceList: cpu in millicores,
// the rest in their base units. Scalar holds extended resources, hugepages
// and attachable volumes.
type Resource struct {
	MilliCPU         int64
	Memory           int64
	EphemeralStorage int64
	// AllowedPodNumber is only meaningful for allocatable.
	AllowedPodNumber int64
	Scalar           map[v1.ResourceName]int64
}

// NewResource converts a ResourceList.
func NewResource(rl v1.ResourceList) *Resource {
	r := &Resource{}
	r.Add(rl)
	return r
}

// Add adds a ResourceList.
func (r *Resource) Add(rl v1.ResourceList) {
	for name, q := range rl {
		switch name {
		case v1.ResourceCPU:
			r.MilliCPU += q.MilliValue()
		case v1.ResourceMemory:
			r.Memory += q.Value()
		case v1.ResourceEphemeralStorage:
			r.EphemeralStorage += q.Value()
		case v1.ResourcePods:
			r.AllowedPodNumber += q.Value()
		default:
			if IsScalarResourceName(name) {
				r.SetScalar(name, r.Scalar[name]+q.Value())
			}
		}
	}
}

// AddResource adds another Resource.
func (r *Resource) AddResource(o *Resource) {
	r.MilliCPU += o.MilliCPU
	r.Memory += o.Memory
	r.EphemeralStorage += o.EphemeralStorage
	r.AllowedPodNumber += o.AllowedPodNumber
	for k, v := range o.Scalar {
		r.SetScalar(k, r.Scalar[k]+v)
	}
}

// SubResource subtracts another Resource.
func (r *Resource) SubResource(o *Resource) {
	r.MilliCPU -= o.MilliCPU
	r.Memory -= o.Memory
	r.EphemeralStorage -= o.EphemeralStorage
	r.AllowedPodNumber -= o.AllowedPodNumber
	for k, v := range o.Scalar {
		r.SetScalar(k, r.Scalar[k]-v)
	}
}

// SetScalar sets one scalar resource.
func (r *Resource) SetScalar(name v1.ResourceName, v int64) {
	if r.Scalar == nil {
		r.Scalar = map[v1.ResourceName]int64{}
	}
	r.Scalar[name] = v
}

// Get returns the amount of one resource (cpu in millicores).
func (r *Resource) Get(name v1.ResourceName) int64 {
	switch name {
	case v1.ResourceCPU:
		return r.MilliCPU
	case v1.ResourceMemory:
		return r.Memory
	case v1.ResourceEphemeralStorage:
		return r.EphemeralStorage
	case v1.ResourcePods:
		return r.AllowedPodNumber
	default:
		return r.Scalar[name]
	}
}

// Clone deep-copies r.
func (r *Resource) Clone() *Resource {
	out := *r
	out.Scalar = nil
	if len(r.Scalar) > 0 {
		out.Scalar = make(map[v1.ResourceName]int64, len(r.Scalar))
		for k, v := range r.Scalar {
			out.Scalar[k] = v
		}
	}
	return &out
}

// IsZero is true when nothing is requested.
func (r *Resource) IsZero() bool {
	if r.MilliCPU != 0 || r.Memory != 0 || r.EphemeralStorage != 0 {
		return false
	}
	for _, v := range r.Scalar {
		if v != 0 {
			return false
		}
	}
	return true
}

// ResourceList converts back, for reports. cpu is in millicores.
func (r *Resource) ResourceList() v1.ResourceList {
	rl := v1.ResourceList{
		v1.ResourceCPU:    *resource.NewMilliQuantity(r.MilliCPU, resource.DecimalSI),
		v1.ResourceMemory: *resource.NewQuantity(r.Memory, resource.BinarySI),
	}
	if r.EphemeralStorage != 0 {
		rl[v1.ResourceEphemeralStorage] = *resource.NewQuantity(r.EphemeralStorage, resource.BinarySI)
	}
	for k, v := range r.Scalar {
		rl[k] = *resource.NewQuantity(v, resource.DecimalSI)
	}
	return rl
}

// IsScalarResourceName is true for extended resources, hugepages, native
// prefixed resources and attachable volumes: the resources NodeResourcesFit
// checks besides cpu, memory, ephemeral-storage and pods.
func IsScalarResourceName(name v1.ResourceName) bool {
	return IsExtendedResourceName(name) || isPrefixed(name, v1.ResourceHugePagesPrefix) ||
		strings.Contains(string(name), v1.ResourceDefaultNamespacePrefix) || isPrefixed(name, "attachable-volumes-")
}

// IsExtendedResourceName: a fully-qualified name outside kubernetes.io/ and
// not a quota "requests." name (the API's definition).
func IsExtendedResourceName(name v1.ResourceName) bool {
	s := string(name)
	if !strings.Contains(s, "/") || strings.Contains(s, v1.ResourceDefaultNamespacePrefix) || strings.HasPrefix(s, v1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(v1.DefaultResourceRequestsPrefix+s)) == 0
}

func isPrefixed(name v1.ResourceName, prefix string) bool {
	return len(name) >= len(prefix) && string(name[:len(prefix)]) == prefix
}
