// Package cache keeps the scheduler's view of nodes and the pods on them,
// including pods it has assumed but whose binding is not yet confirmed.
//
// Invariants:
//   - Assume/Forget symmetry: every AssumePod is followed by exactly one of
//     ForgetPod (the binding failed), AddPod (the world confirmed it) or
//     expiry (binding finished but no confirmation came within the TTL).
//   - A pod is counted on at most one node at a time.
//   - Each NodeInfo's Generation grows on every change; UpdateSnapshot copies
//     only the NodeInfos newer than the snapshot, walking the most recently
//     changed first and stopping at the first older one.
//   - Lock order: Cache.mu only; no callbacks run under it.
package cache
