// Package memory is the simulated world: an in-memory store of Nodes and
// Pods that the scheduler writes to (bindings, status, evictions, events)
// and that notifies the scheduler's event handlers as informers would.
//
// Notifications are queued and delivered by Flush, at points the driver
// chooses, so a simulation is deterministic.
package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"

	"github.com/kubesched/kubesched/internal/cluster"
	"github.com/kubesched/kubesched/pkg/framework"
)

var podsResource = schema.GroupResource{Resource: "pods"}

// Event is an event the scheduler recorded.
type Event struct {
	Object  string // namespace/name
	Type    string
	Reason  string
	Action  string
	Message string
}

// Store is the in-memory world. It is safe for concurrent use.
type Store struct {
	mu      sync.Mutex
	clock   clock.PassiveClock
	nodes   map[string]*v1.Node
	pods    map[string]*v1.Pod
	pending []func(cluster.EventHandler)
	handler cluster.EventHandler
	events  [][]recorded // in chunks of eventChunk
	// Evicted records preemption victims by their namespace/name key.
	Evicted map[string]Eviction
	// evictions are the victims' keys in the order they were evicted.
	evictions []string
	// Bindings counts successful bindings.
	Bindings int
	// The ResourceClaims (claims.go).
	claims       map[string]*resourceapi.ResourceClaim
	claimVersion int64
	publish      func(obj interface{}) error
	// The storage objects' listers and publisher (volumes.go).
	volumeListers framework.Listers
	publishVolume func(obj interface{}) error
	volumeVersion int64
	// version counts notifications (Version).
	version uint64
	// removals counts pods deleted or evicted (Removals).
	removals uint64
	// podGroups are the PodGroups (podgroups.go).
	podGroups map[string]*schedulingv1beta1.PodGroup
	// journal, when set, records the old versions of what is written
	// (journal.go).
	journal *Journal
}

var _ cluster.World = &Store{}

// NewStore returns an empty store.
func NewStore(clk clock.PassiveClock) *Store {
	return &Store{clock: clk, nodes: map[string]*v1.Node{}, pods: map[string]*v1.Pod{}, Evicted: map[string]Eviction{}}
}

// SetHandler sets who is notified of changes.
func (s *Store) SetHandler(h cluster.EventHandler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handler = h
}

func key(ns, name string) string { return ns + "/" + name }

// compareKeys orders two objects as their keys (namespace/name) order as
// strings, without building the keys: a namespace holds no "/", so where
// one namespace is a prefix of the other, "/" against the longer one's
// next byte decides.
func compareKeys(ans, aname, bns, bname string) int {
	if ans == bns {
		return strings.Compare(aname, bname)
	}
	n := min(len(ans), len(bns))
	if c := strings.Compare(ans[:n], bns[:n]); c != 0 {
		return c
	}
	switch {
	case len(ans) < len(bns) && bns[n] != '/':
		return cmp.Compare('/', bns[n])
	case len(bns) < len(ans) && ans[n] != '/':
		return cmp.Compare(ans[n], '/')
	}
	return strings.Compare(key(ans, aname), key(bns, bname)) // an invalid namespace
}

func (s *Store) notify(fn func(cluster.EventHandler)) {
	s.pending = append(s.pending, fn)
	s.version++
}

// Version counts the changes made to the world so far: equal versions,
// nothing changed in between.
func (s *Store) Version() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version
}

// Flush delivers queued notifications in order; it returns how many.
func (s *Store) Flush() int {
	n := 0
	for {
		s.mu.Lock()
		batch := s.pending
		s.pending = nil
		h := s.handler
		s.mu.Unlock()
		if len(batch) == 0 {
			return n
		}
		for _, fn := range batch {
			if h != nil {
				fn(h)
			}
		}
		n += len(batch)
	}
}

// AddNode adds a node.
func (s *Store) AddNode(node *v1.Node) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.nodes[node.Name]; ok {
		return apierrors.NewAlreadyExists(schema.GroupResource{Resource: "nodes"}, node.Name)
	}
	s.journalNodeLocked(node.Name)
	s.nodes[node.Name] = node
	s.notify(func(h cluster.EventHandler) { h.OnNodeAdd(node) })
	return nil
}

// UpdateNode replaces a node (same name).
func (s *Store) UpdateNode(node *v1.Node) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.nodes[node.Name]
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "nodes"}, node.Name)
	}
	s.journalNodeLocked(node.Name)
	s.nodes[node.Name] = node
	s.notify(func(h cluster.EventHandler) { h.OnNodeUpdate(old, node) })
	return nil
}

// DeleteNode deletes a node; its pods stay (as in a cluster, until the pod
// garbage collector removes them).
func (s *Store) DeleteNode(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.nodes[name]
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "nodes"}, name)
	}
	s.journalNodeLocked(name)
	delete(s.nodes, name)
	s.notify(func(h cluster.EventHandler) { h.OnNodeDelete(old) })
	return nil
}

// AddPod adds a pod.
func (s *Store) AddPod(pod *v1.Pod) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key(pod.Namespace, pod.Name)
	if _, ok := s.pods[k]; ok {
		return apierrors.NewAlreadyExists(podsResource, k)
	}
	s.journalPodLocked(k)
	s.pods[k] = pod
	s.notify(func(h cluster.EventHandler) { h.OnPodAdd(pod) })
	return nil
}

// Pods returns every pod, sorted by namespace/name.
func (s *Store) Pods() []*v1.Pod {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*v1.Pod, 0, len(s.pods))
	for _, p := range s.pods {
		out = append(out, p)
	}
	slices.SortFunc(out, ComparePods)
	return out
}

// ComparePods orders pods as Pods returns them: by namespace/name.
func ComparePods(a, b *v1.Pod) int { return compareKeys(a.Namespace, a.Name, b.Namespace, b.Name) }

// EachPod calls fn with every pod, in no particular order; fn must not
// call the store.
func (s *Store) EachPod(fn func(*v1.Pod)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.pods {
		fn(p)
	}
}

// Nodes returns every node, sorted by name.
func (s *Store) Nodes() []*v1.Node {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*v1.Node, 0, len(s.nodes))
	for _, n := range s.nodes {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// GetPod returns a pod by namespace and name.
func (s *Store) GetPod(ns, name string) (*v1.Pod, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pods[key(ns, name)]
	return p, ok
}

// GetNode returns a node by name.
func (s *Store) GetNode(name string) (*v1.Node, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.nodes[name]
	return n, ok
}

// Bind implements framework.Binder as the API server's pods/binding does:
// the pod must exist with that UID and not be bound yet.
func (s *Store) Bind(_ context.Context, b *v1.Binding) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key(b.Namespace, b.Name)
	old, ok := s.pods[k]
	if !ok || (b.UID != "" && old.UID != b.UID) {
		return apierrors.NewNotFound(podsResource, k)
	}
	if old.Spec.NodeName != "" {
		return apierrors.NewConflict(podsResource, k, fmt.Errorf("pod %v is already assigned to node %q", k, old.Spec.NodeName))
	}
	if _, ok := s.nodes[b.Target.Name]; !ok {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "nodes"}, b.Target.Name)
	}
	pod := shallowCopy(old)
	pod.Spec.NodeName = b.Target.Name
	setCondition(&pod.Status, &v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionTrue}, s.clock)
	s.journalPodLocked(k)
	s.pods[k] = pod
	s.Bindings++
	s.notify(func(h cluster.EventHandler) { h.OnPodUpdate(old, pod) })
	return nil
}

// UpdatePodStatus implements cluster.StatusWriter.
func (s *Store) UpdatePodStatus(_ context.Context, p *v1.Pod, cond *v1.PodCondition, nominated *string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key(p.Namespace, p.Name)
	old, ok := s.pods[k]
	if !ok {
		return apierrors.NewNotFound(podsResource, k)
	}
	pod := shallowCopy(old)
	changed := false
	if cond != nil {
		changed = setCondition(&pod.Status, cond, s.clock)
	}
	if nominated != nil && pod.Status.NominatedNodeName != *nominated {
		pod.Status.NominatedNodeName = *nominated
		changed = true
	}
	if !changed {
		return nil
	}
	s.journalPodLocked(k)
	s.pods[k] = pod
	s.notify(func(h cluster.EventHandler) { h.OnPodUpdate(old, pod) })
	return nil
}

// shallowCopy is the new version of a stored pod that a write changes in
// spec.nodeName, status.nominatedNodeName or its conditions only: the
// rest is shared with the old version, as nothing changes a stored pod in
// place (an informer's objects are read-only too); the conditions, which
// setCondition edits, are copied: a write copies only what it changes.
func shallowCopy(old *v1.Pod) *v1.Pod {
	pod := *old
	pod.Status.Conditions = slices.Clone(old.Status.Conditions)
	return &pod
}

// setCondition updates or appends a condition; false when nothing changed.
func setCondition(st *v1.PodStatus, c *v1.PodCondition, clk clock.PassiveClock) bool {
	now := metav1.NewTime(clk.Now())
	for i := range st.Conditions {
		cur := &st.Conditions[i]
		if cur.Type != c.Type {
			continue
		}
		if cur.Status == c.Status && cur.Reason == c.Reason && cur.Message == c.Message {
			return false
		}
		if cur.Status != c.Status {
			cur.LastTransitionTime = now
		}
		cur.Status, cur.Reason, cur.Message = c.Status, c.Reason, c.Message
		cur.LastProbeTime = now
		return true
	}
	nc := *c
	nc.LastTransitionTime, nc.LastProbeTime = now, now
	st.Conditions = append(st.Conditions, nc)
	return true
}

// Eviction is a preemption: who preempted the victim, on which node.
type Eviction struct {
	Preemptor string
	Node      string
	// Pod is the victim as it was when evicted.
	Pod *v1.Pod
}

// Evict implements cluster.Evictor: the victim is deleted.
func (s *Store) Evict(_ context.Context, victim *v1.Pod, preemptor framework.Preemptor) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key(victim.Namespace, victim.Name)
	old, ok := s.pods[k]
	if !ok {
		return apierrors.NewNotFound(podsResource, k)
	}
	s.journalPodLocked(k)
	delete(s.pods, k)
	s.removals++
	s.releaseClaimsLocked(old)
	s.Evicted[k] = Eviction{Preemptor: key(preemptor.Namespace, preemptor.Name), Node: old.Spec.NodeName, Pod: old}
	s.evictions = append(s.evictions, k)
	s.notify(func(h cluster.EventHandler) { h.OnPodDelete(old) })
	return nil
}

// EvictionsSince returns the keys (namespace/name) of the pods evicted
// after the first i evictions, in order, and the count so far: the
// simulator's trace lists each attempt's victims with it.
func (s *Store) EvictionsSince(i int) ([]string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i >= len(s.evictions) {
		return nil, len(s.evictions)
	}
	return append([]string(nil), s.evictions[i:]...), len(s.evictions)
}

// DeletePod deletes a pod.
func (s *Store) DeletePod(ns, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key(ns, name)
	old, ok := s.pods[k]
	if !ok {
		return apierrors.NewNotFound(podsResource, k)
	}
	s.journalPodLocked(k)
	delete(s.pods, k)
	s.removals++
	s.releaseClaimsLocked(old)
	s.notify(func(h cluster.EventHandler) { h.OnPodDelete(old) })
	return nil
}

// Removals counts the pods deleted or evicted so far. Between two equal
// counts every pod the store held is still there: a pod leaves it only so
// (its binding and status change, its phase and deletion timestamp do not).
func (s *Store) Removals() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.removals
}

// EventRecorder implements cluster.World.
func (s *Store) EventRecorder(string) events.EventRecorder { return recorder{s} }

// Events returns the recorded events in order.
func (s *Store) Events() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Event
	for _, chunk := range s.events {
		for _, r := range chunk {
			e := r.Event
			e.Message = fmt.Sprintf(r.note, r.args...)
			out = append(out, e)
		}
	}
	return out
}

// eventChunk is how many events one chunk of Store.events holds: the
// events are appended in chunks, so the thousands a simulation records
// are never copied to a grown slice (2 us a binding on SchedulingBasic).
const eventChunk = 512

// recorded is an event whose message is formatted when read: the
// simulator records one per binding and reads them only in tests.
type recorded struct {
	Event
	note string
	args []interface{}
}

type recorder struct{ s *Store }

func (r recorder) Eventf(regarding, _ runtime.Object, eventtype, reason, action, note string, args ...interface{}) {
	obj := ""
	if m, err := metaAccessor(regarding); err == nil {
		obj = key(m.GetNamespace(), m.GetName())
	}
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	ev := &r.s.events
	if n := len(*ev); n == 0 || len((*ev)[n-1]) == eventChunk {
		*ev = append(*ev, make([]recorded, 0, eventChunk))
	}
	last := &(*ev)[len(*ev)-1]
	*last = append(*last, recorded{Event: Event{Object: obj, Type: eventtype, Reason: reason, Action: action}, note: note, args: args})
}

func metaAccessor(obj runtime.Object) (metav1.Object, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("%T has no metadata", obj)
	}
	return m, nil
}
