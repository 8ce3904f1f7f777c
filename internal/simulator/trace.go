package simulator

import (
	"bufio"
	"encoding/json"
	"io"
	"time"

	"github.com/kubesched/kubesched/internal/scheduler"
	"github.com/kubesched/kubesched/pkg/framework"
)

// Trace results: what one scheduling attempt came to.
const (
	// TraceScheduled: the pod was bound to node.
	TraceScheduled = "Scheduled"
	// TraceUnschedulable: no node fits (the FitError, or a plugin's
	// rejection) and preemption made no room.
	TraceUnschedulable = "Unschedulable"
	// TracePreempted: no node fits yet, but preemption nominated node and
	// evicted victims there; the pod is retried when they are gone.
	TracePreempted = "Preempted"
	// TraceError: the attempt failed with an error (a plugin's, or the
	// binding's: then node is the node it was meant for).
	TraceError = "Error"
)

// TraceLine is one line of --trace: one scheduling attempt.
type TraceLine struct {
	// T is the virtual time of the attempt's end, RFC 3339.
	T       string   `json:"t"`
	Pod     string   `json:"pod"`
	Attempt int      `json:"attempt"`
	Result  string   `json:"result"`
	Node    string   `json:"node,omitempty"`
	Message string   `json:"message,omitempty"`
	Victims []string `json:"victims"`
}

// tracer writes one TraceLine per attempt, in the order the scheduler
// made them; the first write error is kept and ends the trace.
type tracer struct {
	out *bufio.Writer
	enc *json.Encoder
	err error
}

// TraceTo writes the simulation's attempts to out as JSON lines; call it
// before Run, and Flush after.
func (w *World) TraceTo(out io.Writer) {
	b := bufio.NewWriter(out)
	w.trace = &tracer{out: b, enc: json.NewEncoder(b)}
}

// FlushTrace writes out what the trace buffered and returns the first
// error the trace met.
func (w *World) FlushTrace() error {
	t := w.trace
	if t == nil {
		return nil
	}
	if err := t.out.Flush(); err != nil && t.err == nil {
		t.err = err
	}
	return t.err
}

// observe is the scheduler's attempt observer.
func (w *World) observe(a scheduler.Attempt) {
	if a.Status.IsSuccess() {
		w.progressBound.Add(1)
		w.scheduleFinish(a.Pod)
		if c, ok := w.created[podKey(a.Pod)]; ok && w.tl != nil {
			w.delays = append(w.delays, w.Clock.Now().Sub(c))
		}
	}
	t := w.trace
	watched := w.watch != "" && podKey(a.Pod) == w.watch
	if !watched && (t == nil || t.err != nil) {
		return
	}
	victims, n := w.Store.EvictionsSince(w.evictionsSeen)
	w.evictionsSeen = n
	if victims == nil {
		victims = []string{}
	}
	line := TraceLine{
		T:       w.Clock.Now().UTC().Format(time.RFC3339Nano),
		Pod:     podKey(a.Pod),
		Attempt: a.Attempts,
		Node:    a.Node,
		Victims: victims,
	}
	switch {
	case a.Status.IsSuccess():
		line.Result = TraceScheduled
	case a.Status.Code() == framework.Error:
		line.Result, line.Message = TraceError, a.Status.Message()
	default:
		line.Result, line.Message = TraceUnschedulable, a.Status.Message()
		if a.Nominated != nil && *a.Nominated != "" {
			line.Result, line.Node = TracePreempted, *a.Nominated
		}
	}
	if watched {
		w.capture(a, LastAttempt{T: line.T, Attempt: line.Attempt, Result: line.Result, Node: line.Node}, victims)
	}
	if t != nil && t.err == nil {
		t.err = t.enc.Encode(line)
	}
}
