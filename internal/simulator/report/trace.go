package report

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
