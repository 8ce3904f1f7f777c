package cache

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/node/topology"
)

// nodeTree is the order in which a snapshot lists its nodes, kept as
// upstream's node tree keeps it (backend/cache/node_tree.go in v1.37.2):
// the zones in the order they were first seen (a zone that empties is
// forgotten, and one seen again goes last), each zone's nodes in the
// order they were added (a node whose zone changes goes last in its new
// zone), listed round-robin over the zones so that a partial search
// (percentageOfNodesToScore) sees every zone. The order matters past 100
// nodes: which nodes a pod's search evaluates depends on it.
//
// Zones are keyed as upstream keys them (topology.GetZoneKey: the beta
// failure-domain labels first, then the topology.kubernetes.io ones;
// region and zone). Not safe for concurrent use: the cache's lock guards
// it.
type nodeTree struct {
	zones  []string            // in the order first seen
	byZone map[string][]string // zone -> node names in the order added
	zoneOf map[string]string   // node name -> its zone in the tree
}

func newNodeTree() *nodeTree {
	return &nodeTree{byZone: map[string][]string{}, zoneOf: map[string]string{}}
}

// add files a node: a new one last in its zone; one already filed moves
// only when its zone changed (last in the new zone), as upstream's
// updateNode does.
func (t *nodeTree) add(n *v1.Node) (changed bool) {
	zone := topology.GetZoneKey(n)
	if old, ok := t.zoneOf[n.Name]; ok {
		if old == zone {
			return false
		}
		t.remove(n.Name)
	}
	names, ok := t.byZone[zone]
	if !ok {
		t.zones = append(t.zones, zone)
	}
	t.byZone[zone] = append(names, n.Name)
	t.zoneOf[n.Name] = zone
	return true
}

// remove takes a node out of its zone, and the zone out of the tree when
// it is left empty.
func (t *nodeTree) remove(name string) {
	zone, ok := t.zoneOf[name]
	if !ok {
		return
	}
	delete(t.zoneOf, name)
	names := t.byZone[zone]
	for i, n := range names {
		if n == name {
			names = append(names[:i], names[i+1:]...)
			break
		}
	}
	if len(names) > 0 {
		t.byZone[zone] = names
		return
	}
	delete(t.byZone, zone)
	for i, z := range t.zones {
		if z == zone {
			t.zones = append(t.zones[:i], t.zones[i+1:]...)
			break
		}
	}
}

// len is how many nodes the tree holds.
func (t *nodeTree) len() int { return len(t.zoneOf) }

// each calls fn with the nodes' names round-robin over the zones: the
// first node of every zone, then the second, and so on.
func (t *nodeTree) each(fn func(name string)) {
	for i, left := 0, len(t.zoneOf); left > 0; i++ {
		for _, z := range t.zones {
			if names := t.byZone[z]; i < len(names) {
				fn(names[i])
				left--
			}
		}
	}
}

// NodeOrder is a saved node order (Cache.NodeOrder).
type NodeOrder struct {
	zones  []string
	byZone map[string][]string
}

// save copies the tree's order.
func (t *nodeTree) save() NodeOrder {
	o := NodeOrder{zones: slices.Clone(t.zones), byZone: make(map[string][]string, len(t.byZone))}
	for z, names := range t.byZone {
		o.byZone[z] = slices.Clone(names)
	}
	return o
}

// restore puts a saved order back.
func (t *nodeTree) restore(o NodeOrder) {
	t.zones, t.byZone = slices.Clone(o.zones), make(map[string][]string, len(o.byZone))
	clear(t.zoneOf)
	for z, names := range o.byZone {
		t.byZone[z] = slices.Clone(names)
		for _, n := range names {
			t.zoneOf[n] = z
		}
	}
}
