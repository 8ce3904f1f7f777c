package simulator

import (
	"bufio"
	"encoding/json"
	"io"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/internal/scheduler"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/report"
	"github.com/kubesched/kubesched/pkg/framework"
)

// attempts is what the world keeps of the scheduler's attempts: the
// trace it writes, the watched pod's last view, and how many evictions
// earlier attempts accounted for.
type attempts struct {
	trace         *tracer
	watch         *watch
	evictionsSeen int
}

// tracer writes one TraceLine per attempt, in the order the scheduler
// made them; the first write error is kept and ends the trace.
type tracer struct {
	out *bufio.Writer
	enc *json.Encoder
	err error
}

// watch is the pod whose attempts are captured (WatchPod), and the state
// its last attempt saw.
type watch struct {
	key  string
	last *Seen
}

// Seen is the world as one attempt of a pod saw it: the nodes, the bound
// pods (preemption's victims of that attempt put back) and the pod
// itself, for explaining it later.
type Seen struct {
	At    report.LastAttempt
	Pod   *v1.Pod
	Nodes []*v1.Node
	Pods  []*v1.Pod
}

// TraceTo writes the simulation's attempts to out as JSON lines; call it
// before Run, and Flush after.
func (w *World) TraceTo(out io.Writer) {
	b := bufio.NewWriter(out)
	w.attempts.trace = &tracer{out: b, enc: json.NewEncoder(b)}
}

// FlushTrace writes out what the trace buffered and returns the first
// error the trace met.
func (w *World) FlushTrace() error {
	t := w.attempts.trace
	if t == nil {
		return nil
	}
	if err := t.out.Flush(); err != nil && t.err == nil {
		t.err = err
	}
	return t.err
}

// WatchPod makes the world remember the state each scheduling attempt of
// pod namespace/name saw (LastSeen). Call it before Run.
func (w *World) WatchPod(key string) { w.attempts.watch = &watch{key: key} }

// LastSeen is the watched pod (WatchPod) and the state its last attempt
// saw, nil if it was never attempted.
func (w *World) LastSeen() (key string, last *Seen) {
	if w.attempts.watch == nil {
		return "", nil
	}
	return w.attempts.watch.key, w.attempts.watch.last
}

// observe is the scheduler's attempt observer.
func (w *World) observe(a scheduler.Attempt) {
	w.book.attempts.Add(1)
	if a.Status.IsSuccess() {
		w.book.progressBound.Add(1)
		w.scheduleFinish(a.Pod)
		if w.timeline != nil {
			w.timeline.Bound(cluster.PodKey(a.Pod))
		}
	}
	t, wa := w.attempts.trace, w.attempts.watch
	watched := wa != nil && wa.key != "" && cluster.PodKey(a.Pod) == wa.key
	if !watched && (t == nil || t.err != nil) {
		return
	}
	victims, n := w.Store.EvictionsSince(w.attempts.evictionsSeen)
	w.attempts.evictionsSeen = n
	if victims == nil {
		victims = []string{}
	}
	line := report.TraceLine{
		T:       w.Clock.Now().UTC().Format(time.RFC3339Nano),
		Pod:     cluster.PodKey(a.Pod),
		Attempt: a.Attempts,
		Node:    a.Node,
		Victims: victims,
	}
	switch {
	case a.Status.IsSuccess():
		line.Result = report.TraceScheduled
	case a.Status.Code() == framework.Error:
		line.Result, line.Message = report.TraceError, a.Status.Message()
	default:
		line.Result, line.Message = report.TraceUnschedulable, a.Status.Message()
		if a.Nominated != nil && *a.Nominated != "" {
			line.Result, line.Node = report.TracePreempted, *a.Nominated
		}
	}
	if watched {
		w.capture(a, report.LastAttempt{T: line.T, Attempt: line.Attempt, Result: line.Result, Node: line.Node}, victims)
	}
	if t != nil && t.err == nil {
		t.err = t.enc.Encode(line)
	}
}

// capture records the state an attempt of the watched pod saw; victims
// are the pods the attempt evicted.
func (w *World) capture(a scheduler.Attempt, line report.LastAttempt, victims []string) {
	wa := w.attempts.watch
	s := &Seen{At: line, Pod: a.Pod.DeepCopy(), Nodes: w.Store.Nodes()}
	s.Pod.Spec.NodeName = ""
	for _, p := range w.Store.Pods() {
		if p.Spec.NodeName != "" && cluster.PodKey(p) != wa.key {
			s.Pods = append(s.Pods, p)
		}
	}
	for _, k := range victims {
		if ev, ok := w.Store.Evicted[k]; ok && ev.Pod != nil {
			s.Pods = append(s.Pods, ev.Pod)
		}
	}
	wa.last = s
}
