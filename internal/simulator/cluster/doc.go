// Package cluster is the simulated cluster's objects and the controllers
// that grow it.
//
// It owns Cluster (what a set of manifests describes: nodes, pods,
// workloads, the objects plugins read, the Scenario read with them), the
// workloads' controllers (Deployment, ReplicaSet, StatefulSet with its
// ordered creation, Job, DaemonSet, ReplicationController: the pods they
// create, named and labelled as upstream's controllers would, and what
// they remember between runs), and the ResourceClaims the resourceclaim
// controller makes from templates (their names, their content).
//
// It imports no other package of the simulator: loading fills a Cluster,
// the World (package simulator) runs one, and the timeline and the
// questions read it.
package cluster
