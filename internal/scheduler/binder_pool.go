package scheduler

import "sync"

// maxConcurrentBindings bounds the Bind calls in flight (the binding
// cycle's WaitOnPermit and PreBind run on its own goroutine; only Bind, one
// API call, waits here). Unbounded, a backlog of bindings is hundreds of
// concurrent requests, past the API server's HTTP/2 stream limit, and the
// client opens extra TLS connections for them; a bound keeps the calls on
// one connection, in order. Scheduling never waits for the pool: its queue
// is unbounded.
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
