package engine

import (
	"errors"
	"fmt"

	"github.com/picolm/picolm-wasm/quant"
)

// A model can be split over instances that cannot share memory (Go wasm
// instances in Web Workers, one thread each): every weight matrix by rows,
// LoadOptions.Part of Parts. The lead (part 0) runs the Session; for each
// matrix product it starts its Peers (the other parts) on the same quantized
// activations, computes its own rows, and waits for theirs. Each row's dot
// is the same computation wherever it runs, so the result is bit-identical
// to one instance's.
//
// Matrices are named by id: layer l's wq, wk, wv, wo, gate, up, down are
// 7l .. 7l+6, the output matrix is 7·layers.

// ErrShard reports a split model whose parts do not fit together, or a part
// that failed.
var ErrShard = errors.New("model part")

// maxParts bounds how many instances a model is split over.
const maxParts = 64

// ShardInfo says what a part of a model is: its model (Model.Identity) and
// which part of how many.
type ShardInfo struct {
	Identity    [32]byte
	Part, Parts int
}

// A Peer is a part of the model served elsewhere (a Shard in another
// instance), as the lead's Session sees it: a transport to it.
type Peer interface {
	// Info reports what the peer serves; NewSession checks it once.
	Info() (ShardInfo, error)
	// Start asks for the peer's rows [lo, hi) of matrix id times each
	// activation of acts (one for a token, up to 16 for a prompt batch; each
	// in the matrix's activation format): out, [len(acts)][hi-lo], receives
	// them. acts and out belong to the peer until Wait returns.
	Start(id int, acts [][]byte, out []float32) error
	// Wait returns once out holds the started product, or the peer failed.
	// It must not block forever on a peer that died.
	Wait() error
}

// PartRows is the rows [lo, hi) of a matrix of rows rows that part k of n
// holds.
func PartRows(rows, k, n int) (lo, hi int) { return partRows(rows, k, n) }

// Part returns which part of how many the model is (0 of 1 when whole).
func (m *Model) Part() (part, parts int) { return m.part, m.parts }

// Matrices is the number of matrix ids of the model.
func (m *Model) Matrices() int { return len(m.mats) }

// actBytes is the size of one activation for w: cols values in w's
// activation format.
func actBytes(w *matrix) int {
	vt := quant.TraitsOf(w.tr.VecDotType)
	return w.cols / vt.BlockSize * vt.TypeSize
}

// A Shard serves the products of one part (1 ..) of a split model for the
// lead's Session: Serve is what a Peer's Start and Wait reach.
type Shard struct {
	m *Model
}

// NewShard serves m, a part other than the lead of a split model.
func NewShard(m *Model) (*Shard, error) {
	if m.part == 0 {
		return nil, fmt.Errorf("%w: part 0 of %d is the lead: it runs a Session, not a Shard", ErrShard, m.parts)
	}
	return &Shard{m: m}, nil
}

// Info says what the shard serves.
func (s *Shard) Info() ShardInfo {
	return ShardInfo{Identity: s.m.identity, Part: s.m.part, Parts: s.m.parts}
}

// Limits are the largest request and reply: activations per request, bytes
// per activation, and floats per reply.
func (s *Shard) Limits() (acts, actLen, outLen int) {
	for _, w := range s.m.mats {
		actLen = max(actLen, actBytes(w))
		outLen = max(outLen, prefillBatch*(w.hi-w.lo))
	}
	return prefillBatch, actLen, outLen
}

// Serve computes the shard's rows [lo, hi) of matrix id times each
// activation: out[b*(hi-lo) + r-lo] = W[r]·acts[b]. A request that does not
// fit the model (an unknown id, activations of the wrong size, out of the
// wrong length) is an error, never a panic.
func (s *Shard) Serve(id int, acts [][]byte, out []float32) error {
	if id < 0 || id >= len(s.m.mats) {
		return fmt.Errorf("%w: no matrix %d (the model has %d)", ErrShard, id, len(s.m.mats))
	}
	w := s.m.mats[id]
	n := w.hi - w.lo
	if len(acts) < 1 || len(acts) > prefillBatch {
		return fmt.Errorf("%w: %d activations (1 to %d)", ErrShard, len(acts), prefillBatch)
	}
	if len(out) != len(acts)*n {
		return fmt.Errorf("%w: matrix %d: a reply of %d values, want %d", ErrShard, id, len(out), len(acts)*n)
	}
	want := actBytes(w)
	for _, a := range acts {
		if len(a) != want {
			return fmt.Errorf("%w: matrix %d: a %d-byte activation, want %d", ErrShard, id, len(a), want)
		}
	}
	if len(acts) == 1 {
		for r := w.lo; r < w.hi; r++ {
			out[r-w.lo] = w.tr.Dot(w.cols, w.row(r), acts[0])
		}
		return nil
	}
	var dots [prefillBatch]float32
	for r := w.lo; r < w.hi; r++ {
		w.tr.DotEach(w.cols, w.row(r), acts, dots[:len(acts)])
		for b := range acts {
			out[b*n+r-w.lo] = dots[b]
		}
	}
	return nil
}

// parts is the lead Session's side of a split model.
type parts struct {
	peers   []Peer      // peers[k] serves part k+1
	n       int         // parts
	scratch [][]float32 // [peer][prefillBatch × its most rows]: batch replies
	one     [1][]byte   // a single activation as a batch of one
	err     error       // the first failure; the session is unusable after it
}

// connect checks the peers serve the other parts of s's model and orders
// them by part.
func (s *Session) connect(peers []Peer) error {
	m := s.m
	if m.part != 0 {
		return fmt.Errorf("%w: part %d of %d is served by a Shard; only part 0 runs a Session", ErrShard, m.part, m.parts)
	}
	if len(peers) != m.parts-1 {
		return fmt.Errorf("%w: the model is split in %d parts but %d peers were given", ErrShard, m.parts, len(peers))
	}
	if m.parts == 1 {
		return nil
	}
	ps := &parts{peers: make([]Peer, len(peers)), n: m.parts, scratch: make([][]float32, len(peers))}
	for i, p := range peers {
		if p == nil {
			return fmt.Errorf("%w: peer %d is nil", ErrShard, i)
		}
		info, err := p.Info()
		if err != nil {
			return fmt.Errorf("%w: peer %d: %w", ErrShard, i, err)
		}
		switch {
		case info.Identity != m.identity:
			return fmt.Errorf("%w: peer %d serves another model", ErrShard, i)
		case info.Parts != m.parts || info.Part < 1 || info.Part >= m.parts:
			return fmt.Errorf("%w: peer %d serves part %d of %d; the lead is part 0 of %d", ErrShard, i, info.Part, info.Parts, m.parts)
		case ps.peers[info.Part-1] != nil:
			return fmt.Errorf("%w: two peers serve part %d", ErrShard, info.Part)
		}
		ps.peers[info.Part-1] = p
	}
	for k := range ps.peers {
		most := 0
		for _, w := range m.mats {
			lo, hi := partRows(w.rows, k+1, m.parts)
			most = max(most, hi-lo)
		}
		ps.scratch[k] = make([]float32, prefillBatch*most)
	}
	s.parts = ps
	return nil
}

// partsErr is the failure of a peer, which leaves the session unusable.
func (s *Session) partsErr() error {
	if s.parts == nil {
		return nil
	}
	return s.parts.err
}

// start starts every peer on its rows of w times acts: into single (out's
// rows) for one activation, else into its scratch. It returns how many it
// started.
func (ps *parts) start(w *matrix, acts [][]byte, single []float32) int {
	if ps.err != nil {
		return 0
	}
	for k, p := range ps.peers {
		lo, hi := partRows(w.rows, k+1, ps.n)
		var out []float32
		if single != nil {
			out = single[lo:hi]
		} else {
			out = ps.scratch[k][:len(acts)*(hi-lo)]
		}
		if err := p.Start(w.id, acts, out); err != nil {
			ps.err = fmt.Errorf("%w %d: %w", ErrShard, k+1, err)
			return k
		}
	}
	return len(ps.peers)
}

// wait waits for the first started peers.
func (ps *parts) wait(started int) {
	for k := range started {
		if err := ps.peers[k].Wait(); err != nil && ps.err == nil {
			ps.err = fmt.Errorf("%w %d: %w", ErrShard, k+1, err)
		}
	}
}

// matvecParts is matvec over the parts: out's rows [lo, hi) of each part
// come from its peer, the lead's own from the pool.
func (s *Session) matvecParts(out []float32, w *matrix, act []byte) {
	ps := s.parts
	ps.one[0] = act
	started := ps.start(w, ps.one[:], out)
	s.pool.matvec(out, w, act)
	ps.wait(started)
}

// matmulParts is matmul over the parts.
func (s *Session) matmulParts(outs [][]float32, w *matrix, acts [][]byte) {
	ps := s.parts
	started := ps.start(w, acts, nil)
	s.pool.matmul(outs, w, acts)
	ps.wait(started)
	if ps.err != nil {
		return
	}
	for k := range ps.peers {
		lo, hi := partRows(w.rows, k+1, ps.n)
		n := hi - lo
		for b := range outs {
			copy(outs[b][lo:hi], ps.scratch[k][b*n:(b+1)*n])
		}
	}
}
