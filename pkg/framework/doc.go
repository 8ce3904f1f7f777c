// Package framework is kubesched's public plugin API: one interface per
// extension point, the Status a plugin returns, the CycleState it shares
// within one scheduling cycle, and the NodeInfo it reads.
//
// Invariants:
//   - A nil *Status means Success; every method of Status is nil-safe.
//   - Filter and Score run concurrently over nodes: they must only read the
//     CycleState (written in PreFilter/PreScore) and the NodeInfo they are
//     given, and should not allocate.
//   - NodeInfos handed to plugins belong to a Snapshot and are never mutated
//     during a cycle.
package framework
