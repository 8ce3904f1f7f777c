package scheduler

import (
	"sync"
	"sync/atomic"
	"testing"
)

func TestBinderPoolRunsEverythingWithBoundedConcurrency(t *testing.T) {
	tests := []struct {
		name string
		jobs int
	}{
		{name: "fewer jobs than workers run at once", jobs: 10},
		{name: "a backlog far past the bound runs, never more than the bound at a time", jobs: 5 * maxConcurrentBindings},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p binderPool
			var running, peak, done atomic.Int64
			var wg sync.WaitGroup
			release := make(chan struct{})
			wg.Add(tt.jobs)
			for i := 0; i < tt.jobs; i++ {
				p.submit(func() {
					defer wg.Done()
					n := running.Add(1)
					for {
						old := peak.Load()
						if n <= old || peak.CompareAndSwap(old, n) {
							break
						}
					}
					<-release
					running.Add(-1)
					done.Add(1)
				})
			}
			close(release)
			wg.Wait()
			if done.Load() != int64(tt.jobs) {
				t.Errorf("%d of %d jobs ran", done.Load(), tt.jobs)
			}
			if peak.Load() > maxConcurrentBindings {
				t.Errorf("%d jobs ran at once, more than %d", peak.Load(), maxConcurrentBindings)
			}
			p.mu.Lock()
			defer p.mu.Unlock()
			if len(p.queue) != 0 {
				t.Errorf("%d jobs left in the queue", len(p.queue))
			}
		})
	}
}
