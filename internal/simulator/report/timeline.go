package report

import (
	"bytes"
	"fmt"
	"text/tabwriter"
	"time"
)

// TimelineReport is what a Scenario's replay adds to the report.
type TimelineReport struct {
	Scenario string       `json:"scenario"`
	Steps    []StepResult `json:"steps"`
	Samples  []Sample     `json:"samples"`
	// QueueingDelay is the time from a pod's creation to its binding, over
	// the pods bound during the run: 50th and 99th percentiles.
	QueueingDelay struct {
		P50 string `json:"p50"`
		P99 string `json:"p99"`
	} `json:"queueingDelay"`
}

// StepResult is one step: what it did, then what the scheduler did
// until the next step (or the end).
type StepResult struct {
	At      string `json:"at"`
	Name    string `json:"name"`
	Created int    `json:"created"` // pods, the controllers' included
	Deleted int    `json:"deleted"` // pods
	// Scheduled and Preempted count bindings and evictions after the step;
	// Pending is the pods left unscheduled when the next step begins.
	Scheduled int `json:"scheduled"`
	Preempted int `json:"preempted"`
	Pending   int `json:"pending"`

	// After is the step's virtual time since the start (At as a duration).
	After time.Duration `json:"-"`
}

// Sample is the cluster at one virtual time. CPU and Memory are the
// requested share of allocatable, in percent. Fragmentation is the share
// of free CPU (allocatable less requested) that sits on nodes too full
// for the median pending pod: less free CPU or memory than its median
// request, or no pod slot left (the pending pods' "Too many pods"):
// free capacity that exists but cannot take the typical waiting pod; 0
// with nothing pending.
type Sample struct {
	T             string  `json:"t"`
	Pending       int     `json:"pending"`
	Running       int     `json:"running"`
	CPU           float64 `json:"cpu"`
	Memory        float64 `json:"memory"`
	Fragmentation float64 `json:"fragmentation"`
}

// writeTable prints the steps, and the curves' extremes.
func (t *TimelineReport) writeTable(buf *bytes.Buffer) {
	buf.WriteString("\n")
	tw := tabwriter.NewWriter(buf, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "STEP (%s)\tAT\tCREATED\tDELETED\tTHEN SCHEDULED\tPREEMPTED\tPENDING\n", t.Scenario)
	for _, s := range t.Steps {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\n", s.Name, s.After, s.Created, s.Deleted, s.Scheduled, s.Preempted, s.Pending)
	}
	tw.Flush()
	var maxPending int
	var maxCPU, maxFrag float64
	for _, s := range t.Samples {
		maxPending = max(maxPending, s.Pending)
		maxCPU = max(maxCPU, s.CPU)
		maxFrag = max(maxFrag, s.Fragmentation)
	}
	fmt.Fprintf(buf, "over time: at most %d pending, cpu requested at most %.1f%%, fragmentation at most %.1f%%", maxPending, maxCPU, maxFrag)
	if t.QueueingDelay.P50 != "" {
		fmt.Fprintf(buf, "; queueing delay p50 %s, p99 %s", t.QueueingDelay.P50, t.QueueingDelay.P99)
	}
	buf.WriteString("\n")
}
