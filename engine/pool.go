package engine

import "sync"

// pool splits matrix-vector products over a fixed set of goroutines, made
// once per session. With one thread (always under wasm) it runs inline.
type pool struct {
	threads int
	jobs    chan job
	wg      sync.WaitGroup
}

// job is one range of rows of out = W·act.
type job struct {
	out    []float32
	w      *matrix
	act    []byte
	lo, hi int
}

func (j *job) run() {
	w := j.w
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
		j := job{out, w, act, 0, w.rows}
		j.run()
		return
	}
	chunk := (w.rows + n - 1) / n
	p.wg.Add(n - 1)
	for i := 1; i < n; i++ {
		p.jobs <- job{out, w, act, i * chunk, min((i+1)*chunk, w.rows)}
	}
	j := job{out, w, act, 0, chunk}
	j.run()
	p.wg.Wait()
}

func (p *pool) close() {
	if p.jobs != nil {
		close(p.jobs)
		p.jobs = nil
	}
}
