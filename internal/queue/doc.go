// Package queue is the scheduling queue: activeQ (a heap ordered by the
// profile's QueueSort plugin), backoffQ (a heap ordered by backoff expiry)
// and unschedulablePods (pods rejected by plugins, waiting for a cluster
// event that may help them), plus the nominator.
//
// Invariants:
//   - A pending pod is in exactly one of activeQ, backoffQ, unschedulablePods,
//     or in flight (popped and not yet reported back).
//   - Every timer reads the injected clock; nothing here sleeps.
//   - Lock order: PriorityQueue.lock, then Nominator.lock.
package queue
