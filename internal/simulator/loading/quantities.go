package loading

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The largest quantities the scheduler can count: cpu in milli-units,
// every other resource in units, each in an int64. The API server takes
// any non-negative quantity; kube-scheduler counts up to the same bounds
// (memory up to 8Ei is valid and counted).
var (
	maxMilliQuantity = resource.NewQuantity(math.MaxInt64/1000, resource.DecimalSI)
	maxQuantity      = resource.NewQuantity(math.MaxInt64, resource.DecimalSI)
)

// maxFor is the largest quantity of a resource the scheduler can count.
func maxFor(name v1.ResourceName) *resource.Quantity {
	if name == v1.ResourceCPU {
		return maxMilliQuantity
	}
	return maxQuantity
}

// quantityMaps are the JSON names of the v1.ResourceList fields of the
// kinds the loader reads, the lists hasBadQuantity walks in the typed
// object: a list it finds bad must be found here too, or the object would
// pass with nothing reported (allocatedResources, in a container's and a
// claim's status, was missing).
var quantityMaps = map[string]bool{"requests": true, "limits": true, "capacity": true, "allocatable": true, "overhead": true,
	"allocatedResources": true}

// checkQuantities parses every value of the resource lists in an object,
// so a bad quantity is reported with its field path rather than as a bare
// JSON error.
func checkQuantities(v interface{}, path string) (string, string) {
	switch t := v.(type) {
	case map[string]interface{}:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := k
			if path != "" {
				p = path + "." + k
			}
			if rl, ok := t[k].(map[string]interface{}); ok && quantityMaps[k] {
				names := make([]string, 0, len(rl))
				for n := range rl {
					names = append(names, n)
				}
				sort.Strings(names)
				for _, n := range names {
					s := fmt.Sprint(rl[n])
					q, err := resource.ParseQuantity(s)
					if err != nil {
						return p + "." + n, fmt.Sprintf("Invalid value: %q: %v", s, err)
					}
					// The API server refuses negative quantities
					// (ValidateResourceQuantityValue); taken as they are, a
					// negative request would make room on a node.
					if q.Sign() < 0 {
						return p + "." + n, fmt.Sprintf("Invalid value: %q: must be greater than or equal to 0", s)
					}
					// The scheduler counts cpu in milli-units in an int64;
					// a larger value would wrap around (found by fuzzing: a
					// node of 1e16 cpus counted as a negative allocatable).
					if max := maxFor(v1.ResourceName(n)); pastMax(&q, max) {
						return p + "." + n, fmt.Sprintf("Invalid value: %q: must be at most %s", s, max.String())
					}
				}
				continue
			}
			if fp, msg := checkQuantities(t[k], p); msg != "" {
				return fp, msg
			}
		}
	case []interface{}:
		for i, e := range t {
			if fp, msg := checkQuantities(e, fmt.Sprintf("%s[%d]", path, i)); msg != "" {
				return fp, msg
			}
		}
	}
	return "", ""
}

// badQuantity reports a quantity the API server would refuse or the
// scheduler could not count: negative, or past maxFor(name).
func badQuantity(name v1.ResourceName, q *resource.Quantity) bool {
	return q.Sign() < 0 || pastMax(q, maxFor(name))
}

// pastMax reports q > max. A quantity far past max (an approximate value
// over twice it, +Inf for an exponent past 308) is answered from that
// value: Quantity.Cmp scales max to q's exponent, and "1e31131108" (found
// by FuzzHostileQuantities) made it a power of ten of 31 million digits,
// 13 seconds of big-number squaring per comparison.
func pastMax(q, max *resource.Quantity) bool {
	if f := q.AsApproximateFloat64(); math.IsInf(f, 1) || f > 2*max.AsApproximateFloat64() {
		return true
	}
	return q.Cmp(*max) > 0
}

// hasBadQuantity reports whether any resource list of a decoded object
// holds a bad quantity (the lists checkQuantities checks in the generic
// form: every v1.ResourceList field, wherever it is nested). The walk
// visits only the fields whose types can hold a resource list.
func hasBadQuantity(obj interface{}) bool {
	return walkBad(reflect.ValueOf(obj))
}

var resourceListType = reflect.TypeOf(v1.ResourceList(nil))

var (
	// listFields holds, per struct type, the indexes of its exported
	// fields whose types can hold a v1.ResourceList. Written under
	// plansMu, read without it.
	listFields sync.Map // reflect.Type -> []int
	plansMu    sync.Mutex
	holdMemo   = map[reflect.Type]bool{} // under plansMu
)

// fieldsWithLists returns struct type t's fields that can hold a list.
func fieldsWithLists(t reflect.Type) []int {
	if f, ok := listFields.Load(t); ok {
		return f.([]int)
	}
	plansMu.Lock()
	defer plansMu.Unlock()
	var idx []int
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); f.IsExported() && holdsLocked(f.Type) {
			idx = append(idx, i)
		}
	}
	listFields.Store(t, idx)
	return idx
}

// holdsLocked reports whether a value of type t can hold a resource list.
// A type met again while its own answer is being worked out counts as
// holding one: at worst the walk visits a field for nothing.
func holdsLocked(t reflect.Type) bool {
	if b, ok := holdMemo[t]; ok {
		return b
	}
	holdMemo[t] = true
	b := false
	switch {
	case t == resourceListType:
		b = true
	case t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map:
		b = holdsLocked(t.Elem())
	case t.Kind() == reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if f := t.Field(i); f.IsExported() && holdsLocked(f.Type) {
				b = true
			}
		}
	}
	holdMemo[t] = b
	return b
}

func walkBad(v reflect.Value) bool {
	t := v.Type()
	if t == resourceListType {
		for name, q := range v.Interface().(v1.ResourceList) {
			if badQuantity(name, &q) {
				return true
			}
		}
		return false
	}
	switch t.Kind() {
	case reflect.Pointer:
		return !v.IsNil() && walkBad(v.Elem())
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if walkBad(v.Index(i)) {
				return true
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			if walkBad(it.Value()) {
				return true
			}
		}
	case reflect.Struct:
		for _, i := range fieldsWithLists(t) {
			if walkBad(v.Field(i)) {
				return true
			}
		}
	}
	return false
}
