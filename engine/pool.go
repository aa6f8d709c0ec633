package engine

import "sync"

// pool splits matrix-vector products over a fixed set of goroutines, made
// once per session. With one thread (always under wasm) it runs inline.
type pool struct {
	threads int
	jobs    chan job
	wg      sync.WaitGroup
}

// job is one range of rows of out = W·act, or of outs[b] = W·acts[b] for
// every b (a batch, see Session.Prefill).
type job struct {
	out    []float32
	w      *matrix
	act    []byte
	lo, hi int
	outs   [][]float32 // a batch: out and act are unused
	acts   [][]byte
}

func (j *job) run() {
	w := j.w
	if j.outs != nil {
		j.runBatch()
		return
	}
	for r := j.lo; r < j.hi; r++ {
		j.out[r] = w.tr.Dot(w.cols, w.row(r), j.act)
	}
}

func newPool(threads int) *pool {
	p := &pool{threads: max(threads, 1)}
	if p.threads > 1 {
		p.jobs = make(chan job, p.threads)
		for i := 1; i < p.threads; i++ {
			go func() {
				for j := range p.jobs {
					j.run()
					p.wg.Done()
				}
			}()
		}
	}
	return p
}

// minRowsPerThread keeps tiny matrices on one goroutine, where handing rows
// out would cost more than computing them.
const minRowsPerThread = 16

func (p *pool) matvec(out []float32, w *matrix, act []byte) {
	n := p.threads
	if n > 1 && w.rows < n*minRowsPerThread {
		n = max(1, w.rows/minRowsPerThread)
	}
	if n <= 1 {
		j := job{out: out, w: w, act: act, lo: 0, hi: w.rows}
		j.run()
		return
	}
	chunk := (w.rows + n - 1) / n
	p.wg.Add(n - 1)
	for i := 1; i < n; i++ {
		p.jobs <- job{out: out, w: w, act: act, lo: i * chunk, hi: min((i+1)*chunk, w.rows)}
	}
	j := job{out: out, w: w, act: act, lo: 0, hi: chunk}
	j.run()
	p.wg.Wait()
}

func (p *pool) close() {
	if p.jobs != nil {
		close(p.jobs)
		p.jobs = nil
	}
}
