package loading

import (
	"bytes"
	"sync"
	"unicode/utf8"

	v1 "k8s.io/api/core/v1"
)

// Equal members decode once. The pods of a workload differ in their
// metadata and, once bound, in spec.nodeName; the nodes of a pool differ
// in metadata alone. Rather than decoding each one's spec or status
// again (sigs.k8s.io/json and the maps it builds), a Pod's spec and a Node's status
// are keyed by their bytes (a pod's with its nodeName left out), decoded
// the first time and shared after: the next object with the same bytes is
// decoded without them and given a copy of the shared struct, whose
// slices and maps it shares (nothing writes through them: the loader's
// defaulting assigns fresh lists, see cloneForWrite, and is idempotent on
// what it sets in place, as every sharer would set the same).
//
// Anything the byte walk can't be sure to read as sigs.k8s.io/json does
// (an escaped key, a key twice, a key equal but for case, a member that
// is not an object, a nodeName that is not a plain UTF-8 string) is decoded in
// full, as is an object whose stripped decode reports anything, so every
// message is the full decode's.

// shareSpan is where a document's shareable member lies and its key.
type shareSpan struct {
	start, end int    // the member's value in the document
	key        []byte // the value's bytes, a pod's nodeName emptied
	nodeName   string // a pod's spec.nodeName
}

// keyBufs holds the buffers of keys with a nodeName cut out: a key is
// looked up without a copy (m[string(b)]) and copied only when filed.
var keyBufs = sync.Pool{New: func() any { return new([]byte) }}

// release returns span's key buffer, if it has one, to keyBufs.
func (span *shareSpan) release(buf *[]byte) {
	if buf != nil {
		*buf = span.key[:0]
		keyBufs.Put(buf)
	}
}

// sharedMember is the member of kind's objects worth sharing, "" if none.
func sharedMember(kind, apiVersion string) string {
	if apiVersion != "v1" {
		return ""
	}
	switch kind {
	case "Pod":
		return "spec"
	case "Node":
		return "status"
	}
	return ""
}

// offset is where sub, a subslice of data, starts in data.
func offset(data, sub []byte) int { return cap(data) - cap(sub) }

// findMember returns the value of obj's member named name (exact, once,
// no other key equal to it but for case) and whether the walk is sure.
func findMember(obj []byte, name string) (val []byte, sure bool) {
	sure = true
	found := false
	if !eachMember(obj, 0, func(key, v []byte) bool {
		if string(key) == name {
			if found {
				sure = false
				return false
			}
			found, val = true, v
		} else if bytes.EqualFold(key, []byte(name)) {
			sure = false
			return false
		}
		return true
	}) {
		return nil, false
	}
	return val, sure
}

// shareKey finds the shareable member of a valid JSON object js of kind;
// buf, when not nil, holds the key and goes back with span.release.
func shareKey(js []byte, kind, member string) (span shareSpan, buf *[]byte, ok bool) {
	val, sure := findMember(js, member)
	if !sure || len(val) < 2 || val[0] != '{' {
		return shareSpan{}, nil, false
	}
	span = shareSpan{start: offset(js, val), end: offset(js, val) + len(val), key: val}
	if kind != "Pod" {
		return span, nil, true
	}
	name, sure := findMember(val, "nodeName")
	if !sure {
		return shareSpan{}, nil, false
	}
	if name == nil {
		return span, nil, true
	}
	if name[0] != '"' {
		return shareSpan{}, nil, false
	}
	if _, escaped := stringEnd(name, 0); escaped || !utf8.Valid(name) {
		// encoding/json would unescape it, or replace the bytes that are
		// not UTF-8.
		return shareSpan{}, nil, false
	}
	span.nodeName = string(name[1 : len(name)-1])
	at := offset(val, name)
	buf = keyBufs.Get().(*[]byte)
	k := append((*buf)[:0], val[:at]...)
	k = append(k, `""`...)
	span.key = append(k, val[at+len(name):]...)
	return span, buf, true
}

// withoutMember is js with the member's value at span replaced by {}.
func withoutMember(js []byte, span shareSpan) []byte {
	out := make([]byte, 0, len(js)-(span.end-span.start)+2)
	out = append(out, js[:span.start]...)
	out = append(out, "{}"...)
	return append(out, js[span.end:]...)
}

// sharedSpec and sharedStatus look up a decoded member; remember files
// one. The interner's lock guards them.
func (in *interner) sharedSpec(key []byte) (v1.PodSpec, bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	s, ok := in.specs[string(key)]
	return s, ok
}

func (in *interner) sharedStatus(key []byte) (v1.NodeStatus, bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	s, ok := in.statuses[string(key)]
	return s, ok
}

// remember files obj's shareable member (after interning, so sharers get
// the shared resource lists too); a key already filed keeps its first.
func (in *interner) remember(key []byte, obj interface{}) {
	in.mu.Lock()
	defer in.mu.Unlock()
	switch o := obj.(type) {
	case *v1.Pod:
		if _, ok := in.specs[string(key)]; !ok {
			s := o.Spec
			s.NodeName = ""
			in.specs[string(key)] = s
		}
	case *v1.Node:
		if _, ok := in.statuses[string(key)]; !ok {
			in.statuses[string(key)] = o.Status
		}
	}
}

// decodeShared decodes js, whose member at span is filed, without that
// member and fills it in; ok is false when the stripped decode reports
// anything (the caller then decodes in full for the message).
func (in *interner) decodeShared(js []byte, kind, apiVersion string, span shareSpan) (obj interface{}, ok bool) {
	var spec v1.PodSpec
	var status v1.NodeStatus
	if kind == "Pod" {
		if spec, ok = in.sharedSpec(span.key); !ok {
			return nil, false
		}
	} else if status, ok = in.sharedStatus(span.key); !ok {
		return nil, false
	}
	o, strictErr, err := decodeStrict(withoutMember(js, span), kind, apiVersion)
	if err != nil || strictErr != nil {
		return nil, false
	}
	// Quantities are checked in what was decoded: the filed member passed
	// when it was, and metadata holds none.
	switch o := o.(type) {
	case *v1.Pod:
		if hasBadQuantity(&o.Status) {
			return nil, false
		}
		o.Spec = spec
		o.Spec.NodeName = span.nodeName
	case *v1.Node:
		if hasBadQuantity(&o.Spec) {
			return nil, false
		}
		o.Status = status
	}
	return o, true
}
