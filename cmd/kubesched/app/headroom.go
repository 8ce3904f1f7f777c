package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/internal/simulator"
	simcluster "github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/questions"
)

// capacityHeadroom answers capacity --headroom: the table's rows are
// written as they are known (in the input's order), with a progress line
// below them on a terminal; JSON is written whole at the end.
func capacityHeadroom(ctx context.Context, s streams, load func() (*simcluster.Cluster, error), newWorld func(*simcluster.Cluster) (*simulator.World, error), progress *questionProgress, max int, output string, cfg *configv1.KubeSchedulerConfiguration) error {
	var hp questions.HeadroomProgress
	out := newLinesAbove(s, func() string { return headroomLine(&hp, progress) })
	opts := questions.HeadroomOptions{Limit: max, Config: cfg, Progress: &hp}
	var table headroomTable
	if output != "json" {
		opts.Planned = func(rows []questions.WorkloadHeadroom) {
			table = newHeadroomTable(rows, max)
			out.println(table.header())
		}
		opts.Row = func(h questions.WorkloadHeadroom) { out.println(table.row(h)) }
	}
	res, err := questions.Headroom(ctx, load, newWorld, opts)
	out.stop()
	if err != nil || output != "json" {
		return err
	}
	return writeJSON(s, res)
}

// headroomLine is --headroom's progress line: how many workloads are
// answered, then the simulation of the cluster, or the workloads counted
// one replica at a time.
func headroomLine(hp *questions.HeadroomProgress, q *questionProgress) string {
	n, answered, settled := hp.Workloads.Load(), hp.Answered.Load(), hp.Settled.Load()
	line := fmt.Sprintf("headroom: %d of %d workloads answered (%d from the cluster simulated once)", answered, n, settled)
	switch alone := hp.Alone.Load(); {
	case n == 0:
		return q.line()
	case alone > 0:
		line += fmt.Sprintf("; %d counted one replica at a time, each in a world of its own: %d replicas placed so far", alone, hp.Placed.Load())
	case answered == 0:
		line += "; " + q.line()
	}
	return line
}

// headroomTable lays out --headroom's table before its rows are known:
// each column as wide as its widest possible cell (names from the plan,
// counts up to the limit, HPA cells up to their maxReplicas), two spaces
// apart, as text/tabwriter would lay out the whole table.
type headroomTable struct {
	widths [5]int
}

func newHeadroomTable(rows []questions.WorkloadHeadroom, limit int) headroomTable {
	t := headroomTable{widths: [5]int{len("KIND"), len("NAMESPACE"), len("NAME"), len("MORE"), len("HPA MAX")}}
	widen := func(i int, cell string) { t.widths[i] = max(t.widths[i], len(cell)) }
	for _, r := range rows {
		widen(0, r.Kind)
		widen(1, r.Namespace)
		widen(2, r.Name)
		most := limit
		if h := r.HPA; h != nil {
			room := int(h.MaxReplicas - h.Replicas)
			most = max(most, room)
			widen(4, hpaMax(&questions.HPAHeadroom{MaxReplicas: h.MaxReplicas, Short: room}))
		}
		widen(3, strconv.Itoa(most))
	}
	return t
}

func (t headroomTable) line(cells ...string) string {
	var b strings.Builder
	for i, c := range cells[:len(cells)-1] {
		b.WriteString(c)
		b.WriteString(strings.Repeat(" ", t.widths[i]-len(c)+2))
	}
	b.WriteString(cells[len(cells)-1])
	return b.String()
}

func (t headroomTable) header() string {
	return t.line("KIND", "NAMESPACE", "NAME", "MORE", "HPA MAX", "REASON")
}

func (t headroomTable) row(h questions.WorkloadHeadroom) string {
	return t.line(h.Kind, h.Namespace, h.Name, strconv.Itoa(h.More), hpaMax(h.HPA), h.Reason)
}

// hpaMax is the HPA MAX cell: whether the workload's HPA can scale it to
// its maxReplicas ("12 fit", "12: 4 short"), "-" without an HPA.
func hpaMax(h *questions.HPAHeadroom) string {
	switch {
	case h == nil:
		return "-"
	case h.Short == 0:
		return fmt.Sprintf("%d fit", h.MaxReplicas)
	}
	return fmt.Sprintf("%d: %d short", h.MaxReplicas, h.Short)
}

// linesAbove writes lines to the output while a progress line is drawn
// below them on stderr, when stderr is a terminal: the progress line is
// cleared before a line is written and drawn again at the next tick, the
// two never interleaved.
type linesAbove struct {
	mu   sync.Mutex
	out  io.Writer
	term *os.File // nil: no progress line
	done chan struct{}
	// finished is closed when the drawing goroutine has cleared the line.
	finished chan struct{}
}

func newLinesAbove(s streams, line func() string) *linesAbove {
	l := &linesAbove{out: s.out}
	f, ok := s.errOut.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return l
	}
	l.term, l.done, l.finished = f, make(chan struct{}), make(chan struct{})
	go func() {
		defer close(l.finished)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-l.done:
				l.mu.Lock()
				fmt.Fprint(f, "\r\033[K")
				l.mu.Unlock()
				return
			case <-tick.C:
				if text := line(); text != "" {
					l.mu.Lock()
					fmt.Fprint(f, "\r\033[K"+text)
					l.mu.Unlock()
				}
			}
		}
	}()
	return l
}

// println writes a line above the progress line.
func (l *linesAbove) println(text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.term != nil {
		fmt.Fprint(l.term, "\r\033[K")
	}
	fmt.Fprintln(l.out, text)
}

// stop clears the progress line for good.
func (l *linesAbove) stop() {
	if l.term != nil {
		close(l.done)
		<-l.finished
	}
}
