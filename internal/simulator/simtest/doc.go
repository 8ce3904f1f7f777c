// Package simtest is what the simulator's tests share.
//
// It owns the default configuration and the pod-group and placement
// ones (DefaultConfig, PodGroupConfig, PlacementConfig, with their
// registries), the building of worlds from a cluster.Cluster (NewWorld,
// PodGroupWorld, PlacementWorld), builders' objects written as
// manifests and loaded as a user's files would be (Manifest,
// LoadObjects, WriteFile), and simulations that check the invariants on
// their result (Simulate, SimulateFiles, SimulatePodGroups,
// SimulatePlacements: every simulation a test runs is also an invariant
// test), with the renderings and traces tests read back (Render,
// DecodeTrace, ExplainFile).
//
// It imports the simulator's rooms (the World, cluster, loading,
// report); only their tests import it, never their code.
package simtest
