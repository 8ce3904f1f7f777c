package framework

import (
	"encoding/binary"

	v1 "k8s.io/api/core/v1"
)

// EquivalencePlugin is a Filter and/or Score plugin whose verdict and raw
// (pre-normalization) score on a node are a function of what it reads from
// the pod and of that node's NodeInfo alone: not of other nodes, listers,
// time or randomness, and nothing that can change while the NodeInfo's
// Generation stays the same. Its PreFilter/PreScore state, when it has
// one, is a function of the pod too (so is its Skip decision).
//
// The runtime's equivalence cache keeps such a plugin's Filter status and
// raw Score per (pod signature, node) while the node's Generation is
// unchanged: pods with equal signatures for every equivalence plugin share
// them. A plugin that reads anything else must not implement this.
type EquivalencePlugin interface {
	Plugin
	// AppendPodSignature appends to b an encoding of every field the
	// plugin reads of pi.Pod or of what pi derives from it (two pods with
	// equal encodings must get equal verdicts and scores on every
	// NodeInfo), or returns ok=false when this plugin's results for this
	// pod must not be cached (it then runs every cycle, as a plugin
	// without the interface). It runs once per cycle: it may allocate, but
	// should be cheap.
	AppendPodSignature(b []byte, pi *PodInfo) (_ []byte, ok bool)
}

// Signature helpers: each field is length-prefixed so that concatenations
// never collide ("ab"+"c" vs "a"+"bc").

// AppendSigString appends a length-prefixed string.
func AppendSigString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// AppendSigInt appends a signed integer.
func AppendSigInt(b []byte, v int64) []byte { return binary.AppendVarint(b, v) }

// AppendSigBytes appends length-prefixed bytes (e.g. a JSON encoding).
func AppendSigBytes(b []byte, p []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(p)))
	return append(b, p...)
}

// AppendSigTolerations appends the pod's tolerations, in order.
func AppendSigTolerations(b []byte, tols []v1.Toleration) []byte {
	b = binary.AppendUvarint(b, uint64(len(tols)))
	for i := range tols {
		t := &tols[i]
		b = AppendSigString(b, t.Key)
		b = AppendSigString(b, string(t.Operator))
		b = AppendSigString(b, t.Value)
		b = AppendSigString(b, string(t.Effect))
		if t.TolerationSeconds != nil {
			b = append(b, 1)
			b = AppendSigInt(b, *t.TolerationSeconds)
		} else {
			b = append(b, 0)
		}
	}
	return b
}

// AppendSigResource appends a Resource (scalars in the given order, which
// the caller keeps sorted).
func AppendSigResource(b []byte, r *Resource, scalars []v1.ResourceName) []byte {
	b = AppendSigInt(b, r.MilliCPU)
	b = AppendSigInt(b, r.Memory)
	b = AppendSigInt(b, r.EphemeralStorage)
	b = AppendSigInt(b, r.AllowedPodNumber)
	b = binary.AppendUvarint(b, uint64(len(scalars)))
	for _, n := range scalars {
		b = AppendSigString(b, string(n))
		b = AppendSigInt(b, r.Scalar[n])
	}
	return b
}
