package engine

import (
	"runtime"
	"sync/atomic"
	"time"
)

// pool splits matrix products over a fixed set of goroutines, made once per
// session. With one thread (always under wasm) it runs inline.
//
// A product's rows are cut into chunks (several per thread) which the
// calling goroutine and the workers claim one at a time from a shared
// counter, so a thread that the OS runs less (the machine is shared, or a
// worker wakes late) simply claims fewer chunks instead of holding the
// others up: the caller never waits for a worker that has not started,
// only for chunks already claimed. Each product is a generation; a worker
// woken for an old one finds its counter gone and claims nothing.
type pool struct {
	threads int
	wake    []chan job // one per worker; a pending wake-up is replaced, never queued
	next    atomic.Uint64
	_       [56]byte      // keep next and done on separate cache lines
	done    atomic.Uint32 // chunks of the current generation finished
	gen     uint32        // the current generation (only the caller writes it)
}

// job is one matrix product: out = W·act, or outs[b] = W·acts[b] for every
// b (a batch, see Session.Prefill), in chunks of chunk rows.
type job struct {
	out     []float32
	w       *matrix
	act     []byte
	outs    [][]float32 // a batch: out and act are unused
	acts    [][]byte
	each    func(i int) // not a product: each(i) for i < n, one per chunk
	lo      int         // the first row (a product over the rows [lo, lo+n) of w)
	n       int         // rows (or each's count)
	gen     uint32
	chunk   int // rows per chunk
	nchunks int
}

// runRows computes rows [j.lo+lo, j.lo+hi) of the product.
func (j *job) runRows(lo, hi int) {
	if j.each != nil {
		for i := lo; i < hi; i++ {
			j.each(i)
		}
		return
	}
	lo, hi = lo+j.lo, hi+j.lo
	w := j.w
	if j.outs != nil {
		runBatch(w, j.outs, j.acts, lo, hi)
		return
	}
	w.matVec(j.out[lo:hi], lo, j.act)
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
		j.runRows(c*j.chunk, min((c+1)*j.chunk, j.n))
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

// run computes the product j over the pool.
func (p *pool) run(j job) {
	rows := j.n
	switch {
	case p.threads <= 1 || rows < 2 || j.each == nil && rows < 2*minRowsPerChunk:
		j.runRows(0, rows)
		return
	case j.each != nil:
		j.chunk = 1
	case j.outs != nil:
		j.chunk = max(minRowsPerBatchChunk, (rows+p.threads*batchChunksPerThread-1)/(p.threads*batchChunksPerThread))
	default:
		j.chunk = max(minRowsPerChunk, (rows+p.threads*chunksPerThread-1)/(p.threads*chunksPerThread))
	}
	j.nchunks = (rows + j.chunk - 1) / j.chunk
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

// matvec computes out[r] = W[r]·act for the rows r this instance holds.
func (p *pool) matvec(out []float32, w *matrix, act []byte) {
	p.run(job{out: out, w: w, act: act, lo: w.lo, n: w.hi - w.lo})
}

// forEach runs f(i) for i < n over the pool's goroutines, one i at a time
// (f is made once, not per call: the hot path does not allocate).
func (p *pool) forEach(n int, f func(i int)) {
	p.run(job{each: f, n: n})
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
