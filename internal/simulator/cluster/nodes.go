package cluster

import (
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
)

// JoinNodes adds nodes to a loaded cluster as nodes joining it would be
// added: the DaemonSet controller gives each the pods of the DaemonSets
// that would run there (the questions that buy nodes: a new node carries
// its agents). It returns the pods created, which the caller defaults as
// the API server would (loading.DefaultPods).
func (c *Cluster) JoinNodes(nodes []*v1.Node) []*v1.Pod {
	c.Nodes = append(c.Nodes, nodes...)
	if c.controllers == nil {
		return nil
	}
	before := len(c.Pods)
	for _, in := range c.workloads {
		if ds, ok := in.obj.(*appsv1.DaemonSet); ok && !in.deleted {
			c.controllers.daemonSet(ds, in.source)
		}
	}
	return c.Pods[before:]
}
