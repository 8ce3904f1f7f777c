package scheduler

import "sync"

// maxConcurrentBindings bounds the binding cycles in flight. kube-scheduler
// starts a goroutine per binding; with a backlog bound at 1,000 pods/s
// against a busy API server that is hundreds of concurrent requests, past
// the server's HTTP/2 stream limit, and the client then opens (and later
// drops) extra TLS connections: in a 5,000-node benchmark a fifth of
// kubesched's CPU went to TLS handshakes. 64 in flight keep one connection
// busy (at 30 ms per call, ~2,000 bindings/s) and the rest wait their turn
// in order. Scheduling never waits for them: the queue is unbounded.
const maxConcurrentBindings = 64

// binderPool runs submitted functions on at most maxConcurrentBindings
// goroutines, first in first out. Workers start on demand and exit when
// the queue is empty, so the pool needs no lifecycle of its own.
type binderPool struct {
	mu      sync.Mutex
	queue   []func()
	workers int
}

func (p *binderPool) submit(f func()) {
	p.mu.Lock()
	p.queue = append(p.queue, f)
	start := p.workers < maxConcurrentBindings
	if start {
		p.workers++
	}
	p.mu.Unlock()
	if start {
		go p.work()
	}
}

func (p *binderPool) work() {
	for {
		p.mu.Lock()
		if len(p.queue) == 0 {
			p.workers--
			p.mu.Unlock()
			return
		}
		f := p.queue[0]
		p.queue[0] = nil
		p.queue = p.queue[1:]
		p.mu.Unlock()
		f()
	}
}
