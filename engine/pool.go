package engine

import (
	"runtime"
	"sync/atomic"
	"time"
)

// pool splits work over a fixed set of goroutines, made once per session:
// the rows of a matrix product (products.go), the (position, head) pairs
// of attention, the positions of a batch. With one thread (always under
// wasm) it runs inline.
//
// A job's items are cut into chunks (several per thread) which the calling
// goroutine and the workers claim one at a time from a shared counter, so a
// thread that the OS runs less (the machine is shared, or a worker wakes
// late) simply claims fewer chunks instead of holding the others up: the
// caller never waits for a worker that has not started, only for chunks
// already claimed. Each job is a generation; a worker woken for an old one
// finds its counter gone and claims nothing.
type pool struct {
	threads int
	wake    []chan job // one per worker; a pending wake-up is replaced, never queued
	next    atomic.Uint64
	_       [56]byte      // keep next and done on separate cache lines
	done    atomic.Uint32 // chunks of the current generation finished
	gen     uint32        // the current generation (only the caller writes it)
}

// A task is what a job's items are: run does items [lo, hi).
type task interface {
	run(lo, hi int)
}

// eachTask is f(i) per item i (f is made once, not per call: the hot path
// does not allocate).
type eachTask func(i int)

func (f eachTask) run(lo, hi int) {
	for i := lo; i < hi; i++ {
		f(i)
	}
}

// job is one run of a task over items [0, n) in chunks of chunk items.
type job struct {
	task    task
	n       int
	chunk   int
	nchunks int
	gen     uint32
}

func newPool(threads int) *pool {
	p := &pool{threads: max(threads, 1)}
	for i := 1; i < p.threads; i++ {
		c := make(chan job, 1)
		p.wake = append(p.wake, c)
		go func() {
			for {
				j, ok := wait(c)
				if !ok {
					return
				}
				p.work(&j)
			}
		}()
	}
	return p
}

// work claims and runs chunks of j until none is left (or j is over).
func (p *pool) work(j *job) {
	for {
		v := p.next.Load()
		c := int(uint32(v))
		if uint32(v>>32) != j.gen || c >= j.nchunks {
			return
		}
		if !p.next.CompareAndSwap(v, v+1) {
			continue
		}
		j.task.run(c*j.chunk, min((c+1)*j.chunk, j.n))
		p.done.Add(1)
	}
}

// minRowsPerChunk keeps tiny matrices on one goroutine, where handing rows
// out would cost more than computing them; chunksPerThread is how finely a
// product is cut for balancing. A batch (prefill) is cut more coarsely: a
// DotRowsN kernel prepares the batch's activations once per chunk, which
// costs about as much as 16 rows (quant.Traits.MatMul), and each chunk is
// long enough that balancing needs fewer of them.
const (
	minRowsPerChunk      = 16
	chunksPerThread      = 8
	minRowsPerBatchChunk = 64
	batchChunksPerThread = 2
)

// productChunk is the chunk of a product of rows rows times acts
// activations: all of them (run inline) when the matrix is tiny.
func (p *pool) productChunk(rows, acts int) int {
	switch {
	case rows < 2*minRowsPerChunk:
		return rows
	case acts > 1:
		return max(minRowsPerBatchChunk, (rows+p.threads*batchChunksPerThread-1)/(p.threads*batchChunksPerThread))
	default:
		return max(minRowsPerChunk, (rows+p.threads*chunksPerThread-1)/(p.threads*chunksPerThread))
	}
}

// run runs t over items [0, n), chunk items at a time, on the pool; inline
// when there is one thread or one chunk.
func (p *pool) run(t task, n, chunk int) {
	if p.threads <= 1 || n <= chunk {
		t.run(0, n)
		return
	}
	j := job{task: t, n: n, chunk: chunk}
	j.nchunks = (n + chunk - 1) / chunk
	p.gen++
	j.gen = p.gen
	p.done.Store(0)
	p.next.Store(uint64(j.gen) << 32)
	for _, c := range p.wake {
		select {
		case c <- j:
		default: // a stale wake-up is pending: replace it
			select {
			case <-c:
			default:
			}
			c <- j
		}
	}
	p.work(&j)
	// Every chunk is claimed; wait for those the workers are running.
	for spins := 0; p.done.Load() != uint32(j.nchunks); spins++ {
		if spins > 64 {
			runtime.Gosched()
		}
	}
}

// forEach runs f(i) for i < n over the pool's goroutines, one i at a time.
func (p *pool) forEach(n int, f func(i int)) {
	p.run(eachTask(f), n, 1)
}

func (p *pool) close() {
	for _, c := range p.wake {
		close(c)
	}
	p.wake = nil
}

// spinWait is how long a worker polls for the next product before it
// parks: the products of one token follow each other within microseconds,
// and waking a parked goroutine on another core takes longer than that.
const spinWait = 200 * time.Microsecond

// wait returns the next job sent on c (ok false once c is closed).
func wait(c chan job) (j job, ok bool) {
	start := time.Now()
	for spins := 0; ; spins++ {
		select {
		case j, ok = <-c:
			return j, ok
		default:
		}
		if spins&15 == 15 {
			if time.Since(start) > spinWait {
				break
			}
			runtime.Gosched()
		}
	}
	j, ok = <-c
	return j, ok
}
