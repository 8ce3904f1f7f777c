package app

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/term"

	schedconfig "github.com/kubesched/kubesched/cmd/kubesched/app/config"

	"github.com/kubesched/kubesched/internal/simulator"
	simcluster "github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/loading"
)

// progressLine draws line() on stderr every 200 ms while a long command
// runs, when stderr is a terminal (never into a file, a pipe or a test's
// buffer); the returned function clears it.
func progressLine(s streams, line func() string) (stop func()) {
	f, ok := s.errOut.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				fmt.Fprint(f, "\r\033[K")
				return
			case <-tick.C:
				if l := line(); l != "" {
					fmt.Fprint(f, "\r\033[K"+l)
				}
			}
		}
	}()
	return func() { close(done); <-finished }
}

// showProgress draws the simulation's progress line while w runs.
func showProgress(s streams, w *simulator.World) (stop func()) {
	return progressLine(s, func() string { return worldProgress(w) })
}

// worldProgress is a world's progress: a bar of the pods bound, and the
// virtual time.
func worldProgress(w *simulator.World) string {
	total, bound, virtual := w.Progress()
	const width = 30
	filled := 0
	if total > 0 {
		filled = int(min(bound, total) * width / total)
	}
	return fmt.Sprintf("[%s%s] %d/%d pods bound, virtual time +%s",
		strings.Repeat("#", filled), strings.Repeat(".", width-filled), bound, total, virtual.Round(time.Second))
}

// questionProgress follows the worlds a capacity question builds, for its
// progress line: the simulation of the cluster, then the copies placed
// one at a time (--pod, --workload), or each candidate count of new nodes
// simulated (--add-nodes).
type questionProgress struct {
	// nodes is the loaded cluster's node count: a world with more was
	// given that many more (--add-nodes).
	nodes int
	cur   atomic.Pointer[progressWorld]
	made  atomic.Int64
}

type progressWorld struct {
	w *simulator.World
	// pods is the pods the world was made with; more are copies or new
	// replicas.
	pods  int64
	added int
}

// watch wraps newWorld so that each world it makes is followed.
func (q *questionProgress) watch(newWorld func(*simcluster.Cluster) (*simulator.World, error)) func(*simcluster.Cluster) (*simulator.World, error) {
	return func(c *simcluster.Cluster) (*simulator.World, error) {
		w, err := newWorld(c)
		if err == nil {
			total, _, _ := w.Progress()
			q.made.Add(1)
			q.cur.Store(&progressWorld{w: w, pods: total, added: len(c.Nodes) - q.nodes})
		}
		return w, err
	}
}

// line is the progress line: the current world's, and what the question
// added to it.
func (q *questionProgress) line() string {
	cur := q.cur.Load()
	if cur == nil {
		return ""
	}
	total, _, _ := cur.w.Progress()
	switch {
	case cur.added > 0 || q.made.Load() > 1:
		return fmt.Sprintf("simulation %d, with %d node(s) added: %s", q.made.Load(), cur.added, worldProgress(cur.w))
	case total > cur.pods:
		return fmt.Sprintf("placing copies: %d tried so far", total-cur.pods)
	}
	return "simulating the cluster: " + worldProgress(cur.w)
}

// questionWorlds is what a question's command sets up: the cluster loaded
// once (its warnings printed), a loader for more copies, and a world
// maker whose worlds the progress line follows.
type questionWorlds struct {
	// load returns cluster the first time it is called, then reads the
	// files again: the first simulation of a question needs no second
	// reading (~10 s at 15,000 nodes), the others decode the documents
	// kept as JSON (docs) without reading and converting the YAML again.
	// A command uses either cluster or load, or reads only what a
	// simulation does not change (the nodes' annotations) from cluster
	// once load has given it out.
	load     func() (*simcluster.Cluster, error)
	docs     *loading.Documents
	cluster  *simcluster.Cluster
	progress *questionProgress
	newWorld func(*simcluster.Cluster) (*simulator.World, error)
}

// setUpQuestion loads the cluster files and builds the world maker of
// the completed configuration.
func setUpQuestion(ctx context.Context, s streams, command string, files []string, cc schedconfig.CompletedConfig) (*questionWorlds, error) {
	lo := loadOptions(cc.Config)
	lo.Documents = loading.NewDocuments()
	read := func() (*simcluster.Cluster, error) { return loading.LoadWith(files, s.in, lo) }
	c, err := read()
	if err != nil {
		return nil, err
	}
	reportSkipped(s, c, cc.Features)
	reportTimelineIgnored(s, c, command)
	var first atomic.Pointer[simcluster.Cluster]
	first.Store(c)
	q := &questionWorlds{docs: lo.Documents, load: func() (*simcluster.Cluster, error) {
		if c := first.Swap(nil); c != nil {
			return c, nil
		}
		return read()
	}}
	q.cluster = c
	q.progress = &questionProgress{nodes: len(c.Nodes)}
	q.newWorld = q.progress.watch(func(c *simcluster.Cluster) (*simulator.World, error) {
		return simulator.NewWorld(ctx, c, cc.ComponentConfig, cc.Registry, cc.Seed, cc.SchedulerOptions()...)
	})
	return q, nil
}

// stepProgress is a progress line that says which step of a question
// runs (set), then, when withWorld, the current world's progress.
func stepProgress(s streams, q *questionProgress, withWorld bool) (set func(string), stop func()) {
	var current atomic.Pointer[string]
	stop = progressLine(s, func() string {
		c := current.Load()
		switch {
		case c == nil:
			return q.line()
		case withWorld:
			return *c + ": " + q.line()
		}
		return *c
	})
	return func(step string) { current.Store(&step) }, stop
}
