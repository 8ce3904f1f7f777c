package helper

import (
	"fmt"
)

// As converts a queueing hint's old and new objects to T; either may be
// nil (an addition has no old object, a deletion no new one).
func As[T any](oldObj, newObj interface{}) (T, T, error) {
	var oldT, newT T
	var ok bool
	if newObj != nil {
		if newT, ok = newObj.(T); !ok {
			return oldT, newT, fmt.Errorf("expected %T, got %T", newT, newObj)
		}
	}
	if oldObj != nil {
		if oldT, ok = oldObj.(T); !ok {
			return oldT, newT, fmt.Errorf("expected %T, got %T", oldT, oldObj)
		}
	}
	return oldT, newT, nil
}
