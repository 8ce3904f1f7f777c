package helper

import "github.com/kubesched/kubesched/pkg/framework"

// changeTracker tells a NodeMemo which positions of a snapshot's node list
// to look at again: every position the first time, after the list was
// rebuilt, or when the list can't tell; else only those whose NodeInfo
// changed since the memo's last refresh (framework.NodeInfoChanges). The
// memo still compares each looked-at position's NodeInfo and generation,
// so a repeated position costs nothing.
type changeTracker struct {
	src    framework.NodeInfoChanges
	first  *framework.NodeInfo
	n      int
	mark   uint64
	synced bool
}

// since returns the positions of nodes to refresh, or all=true. nodes
// must be lister's List for the positions to be used; the tracker takes
// the new mark, so call it once per refresh.
func (t *changeTracker) since(lister framework.SharedLister, nodes []*framework.NodeInfo) (positions []int32, all bool) {
	var src framework.NodeInfoChanges
	var list []*framework.NodeInfo
	if lister != nil {
		nl := lister.NodeInfos()
		src, _ = nl.(framework.NodeInfoChanges)
		list, _ = nl.List()
	}
	if src == nil || len(nodes) == 0 || len(list) != len(nodes) || &list[0] != &nodes[0] {
		t.synced = false
		return nil, true
	}
	positions, next, ok := src.ChangesSince(t.mark)
	usable := ok && t.synced && t.src == src && t.first == nodes[0] && t.n == len(nodes)
	t.src, t.first, t.n, t.mark, t.synced = src, nodes[0], len(nodes), next, true
	if !usable {
		return nil, true
	}
	return positions, false
}
