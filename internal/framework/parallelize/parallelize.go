// Package parallelize runs a function over pieces with a fixed number of
// workers, as the scheduler's Filter and Score do over nodes.
package parallelize

import (
	"context"
	"math"
	"runtime"

	"k8s.io/client-go/util/workqueue"
)

// DefaultParallelism is upstream's default worker count.
const DefaultParallelism = 16

// Parallelizer holds the worker count.
type Parallelizer struct {
	parallelism int
}

// New returns a Parallelizer with p workers (at least 1).
func New(p int) Parallelizer {
	if p < 1 {
		p = 1
	}
	return Parallelizer{parallelism: p}
}

// Parallelism returns the worker count.
func (p Parallelizer) Parallelism() int { return p.parallelism }

// chunkSizeFor balances per-chunk overhead against load balance: about
// sqrt(n), and no more than n/parallelism+1.
func chunkSizeFor(n, parallelism int) int {
	s := int(math.Sqrt(float64(n)))
	if r := n/parallelism + 1; s > r {
		s = r
	}
	if s < 1 {
		s = 1
	}
	return s
}

// Until runs do(i) for i in [0, pieces) on the workers until done or ctx ends.
func (p Parallelizer) Until(ctx context.Context, pieces int, do func(i int)) {
	if pieces <= 0 {
		return
	}
	// The work is CPU-bound: more workers than the Go scheduler can run at
	// once only add goroutines to start and wake, every phase of every
	// cycle (16 on a 2-core machine, by default). Results never depend on
	// the worker count.
	workers := min(p.parallelism, runtime.GOMAXPROCS(0))
	if workers == 1 || pieces == 1 {
		for i := 0; i < pieces && ctx.Err() == nil; i++ {
			do(i)
		}
		return
	}
	workqueue.ParallelizeUntil(ctx, workers, pieces, do, workqueue.WithChunkSize(chunkSizeFor(pieces, workers)))
}

// Serially is Until in the calling goroutine, for passes whose work is a
// few loads and compares per piece (results in the equivalence cache).
func Serially(ctx context.Context, pieces int, do func(i int)) {
	for i := 0; i < pieces && ctx.Err() == nil; i++ {
		do(i)
	}
}
