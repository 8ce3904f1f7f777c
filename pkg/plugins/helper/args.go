package helper

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
)

// Args returns a plugin's arguments as *T: a deep copy of obj, or a new T
// when obj is nil, with upstream's defaults set. Another type is an error
// ("want args to be of type NodeResourcesFitArgs, got ...").
func Args[T any, PT interface {
	*T
	runtime.Object
}](obj runtime.Object) (PT, error) {
	out := PT(new(T))
	if obj != nil {
		a, ok := obj.(PT)
		if !ok {
			return nil, fmt.Errorf("want args to be of type %s, got %T", reflect.TypeOf(out).Elem().Name(), obj)
		}
		if a != nil {
			out = a.DeepCopyObject().(PT)
		}
	}
	SetDefaultsArgs(out)
	return out, nil
}
