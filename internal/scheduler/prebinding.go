package scheduler

import (
	"context"
	"errors"
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// preBindings are the pods between Permit and Bind (waiting at Permit or
// in PreBind), each with the cancel of its binding cycle's context: the
// pod's delete event cancels it, so a PreBind that waits (for the PV
// controller, for a device's binding conditions) ends at once. Once a pod
// leaves the map, for Bind, it can no longer be cancelled.
type preBindings struct {
	mu   sync.Mutex
	pods map[types.UID]context.CancelCauseFunc
}

// errPodDeleted is why a deleted pod's binding cycle is cancelled.
var errPodDeleted = errors.New("pod deleted while binding")

func (s *Scheduler) addPreBinding(uid types.UID, cancel context.CancelCauseFunc) {
	p := &s.preBinding
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pods == nil {
		p.pods = map[types.UID]context.CancelCauseFunc{}
	}
	p.pods[uid] = cancel
}

func (s *Scheduler) removePreBinding(uid types.UID) {
	p := &s.preBinding
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.pods, uid)
}

// cancelPreBinding cancels the pod's binding cycle if it has not reached
// Bind; it reports whether it did.
func (s *Scheduler) cancelPreBinding(uid types.UID, cause error) bool {
	p := &s.preBinding
	p.mu.Lock()
	defer p.mu.Unlock()
	cancel, ok := p.pods[uid]
	if ok {
		cancel(cause)
		delete(p.pods, uid)
	}
	return ok
}
