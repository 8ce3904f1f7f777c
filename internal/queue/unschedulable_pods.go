package queue

import (
	"slices"
	"strings"

	"github.com/kubesched/kubesched/pkg/framework"
)

// unschedulablePods is unschedulablePods: the pods that wait for an event.
// Besides the pods by key, it groups them by the plugins an event must
// concern to wake them (the plugins that rejected the pod or left it
// Pending, and the PreEnqueue plugin gating it), so that an event looks
// only at the groups it can wake, not at every pod: thousands of pods
// rejected by NodeResourcesFit are not walked for a Service or a PVC.
type unschedulablePods struct {
	pods    map[string]*framework.QueuedPodInfo
	groupOf map[string]*podGroup // pod key -> its group
	groups  map[string]*podGroup // group signature -> group
}

// podGroup is the pods that share the plugins an event must concern.
type podGroup struct {
	sig string
	// gate is the PreEnqueue plugin holding the pods back, "" for none.
	gate string
	// plugins are the plugins that rejected the pods or left them
	// Pending.
	plugins []string
	pods    map[string]*framework.QueuedPodInfo
}

func newUnschedulablePods() *unschedulablePods {
	return &unschedulablePods{
		pods:    map[string]*framework.QueuedPodInfo{},
		groupOf: map[string]*podGroup{},
		groups:  map[string]*podGroup{},
	}
}

func (u *unschedulablePods) get(key string) (*framework.QueuedPodInfo, bool) {
	p, ok := u.pods[key]
	return p, ok
}

func (u *unschedulablePods) len() int { return len(u.pods) }

// add puts p under key, in the group of its current plugins: a pod added
// again after its plugins changed moves to their group.
func (u *unschedulablePods) add(key string, p *framework.QueuedPodInfo) {
	u.delete(key)
	plugins := make([]string, 0, p.UnschedulablePlugins.Len()+p.PendingPlugins.Len())
	add := func(p *framework.QueuedPodInfo) {
		for pl := range p.UnschedulablePlugins {
			plugins = append(plugins, pl)
		}
		for pl := range p.PendingPlugins {
			if !p.UnschedulablePlugins.Has(pl) {
				plugins = append(plugins, pl)
			}
		}
	}
	if p.Group != nil {
		// A group waits on what its members wait on; a member no plugin
		// rejected is woken by any event, and so is its group.
		for _, m := range p.Group.Members {
			if m.UnschedulablePlugins.Len()+m.PendingPlugins.Len() == 0 {
				plugins = plugins[:0]
				break
			}
			add(m)
		}
	} else {
		add(p)
	}
	slices.Sort(plugins)
	plugins = slices.Compact(plugins)
	sig := p.GatingPlugin + "\x00" + strings.Join(plugins, "\x00")
	g, ok := u.groups[sig]
	if !ok {
		g = &podGroup{sig: sig, gate: p.GatingPlugin, plugins: plugins, pods: map[string]*framework.QueuedPodInfo{}}
		u.groups[sig] = g
	}
	g.pods[key] = p
	u.pods[key] = p
	u.groupOf[key] = g
}

func (u *unschedulablePods) delete(key string) {
	g, ok := u.groupOf[key]
	if !ok {
		return
	}
	delete(g.pods, key)
	if len(g.pods) == 0 {
		delete(u.groups, g.sig)
	}
	delete(u.groupOf, key)
	delete(u.pods, key)
}

// mayWake is false when the event cannot wake any pod of g: it concerns
// neither g's gate nor any of g's plugins (by the events they
// registered). It says nothing of the hints, which the caller asks per
// pod; it only spares the pods of groups the event cannot concern.
func (q *PriorityQueue) mayWake(g *podGroup, event framework.ClusterEvent) bool {
	if event.IsWildCard() {
		return true
	}
	if g.gate != "" && !q.registered(g.gate, event) {
		return false
	}
	if len(g.plugins) == 0 {
		return true
	}
	for _, pl := range g.plugins {
		if q.registered(pl, event) {
			return true
		}
	}
	return false
}

// registered: plugin registered an event that event matches.
func (q *PriorityQueue) registered(plugin string, event framework.ClusterEvent) bool {
	for _, e := range q.opts.EventInterest[plugin] {
		if e.Event.Match(event) {
			return true
		}
	}
	return false
}
