package engine

import (
	"bytes"
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
	// Start asks for the peer's rows of the n matrices id .. id+n-1 (n > 1
	// for matrices that take the same activations, as wq, wk and wv do)
	// times each activation of acts (one for a token, up to 16 for a prompt
	// batch; in the matrices' activation format): out receives them, matrix
	// after matrix, each [len(acts)][its rows]. acts and out belong to the
	// peer until Wait returns.
	Start(id, n int, acts [][]byte, out []float32) error
	// Wait returns once out holds the started products, or the peer failed.
	// It must not block forever on a peer that died.
	Wait() error
}

// Part returns which part of how many the model is (0 of 1 when whole).
func (m *Model) Part() (part, parts int) { return m.part, m.parts }

// actBytes is the size of one activation for w: cols values in w's
// activation format.
func actBytes(w *matrix) int {
	vt := quant.TraitsOf(w.tr.VecDotType)
	return w.cols / vt.BlockSize * vt.TypeSize
}

// sameActivation reports whether the matrices take the same activations.
func sameActivation(ws []*matrix) bool {
	for _, w := range ws[1:] {
		if w.cols != ws[0].cols || w.tr.VecDotType != ws[0].tr.VecDotType {
			return false
		}
	}
	return true
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

// Limits are the largest request and reply the lead sends: activations per
// request, bytes per activation, and floats per reply.
func (s *Shard) Limits() (acts, actLen, outLen int) {
	for id, w := range s.m.mats {
		actLen = max(actLen, actBytes(w))
		rows := 0
		for _, v := range s.m.mats[id : id+s.m.groups[id]] {
			rows += v.hi - v.lo
		}
		outLen = max(outLen, prefillBatch*rows)
	}
	return prefillBatch, actLen, outLen
}

// Serve computes the shard's rows [lo, hi) of the n matrices id .. id+n-1
// times each activation: out holds, matrix after matrix, W[r]·acts[b] at
// b*(hi-lo) + r-lo. A request that does not fit the model (an unknown id,
// matrices or activations of different sizes, out of the wrong length) is
// an error, never a panic.
func (s *Shard) Serve(id, n int, acts [][]byte, out []float32) error {
	if id < 0 || n < 1 || n > len(s.m.mats)-id {
		return fmt.Errorf("%w: no matrices %d to %d (the model has %d)", ErrShard, id, id+n-1, len(s.m.mats))
	}
	ws := s.m.mats[id : id+n]
	if !sameActivation(ws) {
		return fmt.Errorf("%w: matrices %d to %d take different activations", ErrShard, id, id+n-1)
	}
	if len(acts) < 1 || len(acts) > prefillBatch {
		return fmt.Errorf("%w: %d activations (1 to %d)", ErrShard, len(acts), prefillBatch)
	}
	want := actBytes(ws[0])
	for _, a := range acts {
		if len(a) != want {
			return fmt.Errorf("%w: matrix %d: a %d-byte activation, want %d", ErrShard, id, len(a), want)
		}
	}
	size := 0
	for _, w := range ws {
		size += len(acts) * (w.hi - w.lo)
	}
	if len(out) != size {
		return fmt.Errorf("%w: matrices %d to %d: a reply of %d values, want %d", ErrShard, id, id+n-1, len(out), size)
	}
	for _, w := range ws {
		rows := w.hi - w.lo
		serveRows(w, acts, out[:len(acts)*rows])
		out = out[len(acts)*rows:]
	}
	return nil
}

// serveRows computes out[b*(hi-lo) + r-lo] = W[r]·acts[b] for the rows
// [lo, hi) w holds: the same dot kernels as the lead's matvec (one
// activation) and matmul (a batch).
func serveRows(w *matrix, acts [][]byte, out []float32) {
	if len(acts) == 1 {
		w.matVec(out[:w.hi-w.lo], w.lo, acts[0])
		return
	}
	n := w.hi - w.lo
	var dots [prefillBatch]float32
	for r := w.lo; r < w.hi; r++ {
		w.tr.DotEach(w.cols, w.row(r), acts, dots[:len(acts)])
		for b := range acts {
			out[b*n+r-w.lo] = dots[b]
		}
	}
}

// parts is the lead Session's side of a split model.
type parts struct {
	m       *Model
	peers   []Peer      // peers[k] serves part k+1
	scratch [][]float32 // [peer][prefillBatch × its most rows of a group]: replies
	one     [1][]byte   // a single activation as a batch of one
	oneOut  [1][]float32
	err     error // the first failure; the session is unusable after it

	// The replies in scratch: matrices [first, end) times the activations
	// copied to acts (nacts of actLen bytes). A product of a later matrix
	// of the group on the same activations takes its reply from there.
	first, end int
	nacts      int
	actLen     int
	acts       []byte // [prefillBatch × the largest activation]
	started    int    // peers started and not yet waited for
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
	ps := &parts{m: m, peers: make([]Peer, len(peers)), scratch: make([][]float32, len(peers))}
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
	most, actLen := 0, 0
	for id, w := range m.mats {
		actLen = max(actLen, actBytes(w))
		for k := range ps.peers {
			rows := 0
			for _, v := range m.mats[id : id+m.groups[id]] {
				lo, hi := partRows(v.rows, k+1, m.parts)
				rows += hi - lo
			}
			most = max(most, rows)
		}
	}
	for k := range ps.scratch {
		ps.scratch[k] = make([]float32, prefillBatch*most)
	}
	ps.acts = make([]byte, prefillBatch*actLen)
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

// replied reports whether the peers' replies for w times acts are in
// scratch already (w came with an earlier matrix of its group).
func (ps *parts) replied(w *matrix, acts [][]byte) bool {
	if w.id <= ps.first || w.id >= ps.end || len(acts) != ps.nacts || len(acts[0]) != ps.actLen {
		return false
	}
	for b, a := range acts {
		if !bytes.Equal(a, ps.acts[b*ps.actLen:(b+1)*ps.actLen]) {
			return false
		}
	}
	return true
}

// start starts every peer on its rows of w's group times acts, into its
// scratch, and remembers what they compute.
func (ps *parts) start(w *matrix, acts [][]byte) {
	ps.first, ps.end = 0, 0
	if ps.err != nil {
		return
	}
	m := ps.m
	g := m.groups[w.id]
	for k, p := range ps.peers {
		size := 0
		for _, v := range m.mats[w.id : w.id+g] {
			lo, hi := partRows(v.rows, k+1, m.parts)
			size += len(acts) * (hi - lo)
		}
		if err := p.Start(w.id, g, acts, ps.scratch[k][:size]); err != nil {
			ps.err = fmt.Errorf("%w %d: %w", ErrShard, k+1, err)
			ps.started = k
			return
		}
	}
	ps.started = len(ps.peers)
	ps.first, ps.end, ps.nacts, ps.actLen = w.id, w.id+g, len(acts), len(acts[0])
	for b, a := range acts {
		copy(ps.acts[b*ps.actLen:], a)
	}
}

// wait waits for the started peers.
func (ps *parts) wait() {
	for k := range ps.started {
		if err := ps.peers[k].Wait(); err != nil && ps.err == nil {
			ps.err = fmt.Errorf("%w %d: %w", ErrShard, k+1, err)
		}
	}
	ps.started = 0
	if ps.err != nil {
		ps.first, ps.end = 0, 0
	}
}

// scatter copies the peers' rows of w (in scratch) into outs.
func (ps *parts) scatter(w *matrix, outs [][]float32) {
	m := ps.m
	for k := range ps.peers {
		off := 0
		for _, v := range m.mats[ps.first:w.id] {
			lo, hi := partRows(v.rows, k+1, m.parts)
			off += ps.nacts * (hi - lo)
		}
		lo, hi := partRows(w.rows, k+1, m.parts)
		n := hi - lo
		for b := range outs {
			copy(outs[b][lo:hi], ps.scratch[k][off+b*n:off+(b+1)*n])
		}
	}
}

// matvecParts is matvec over the parts: the peers' rows of out come from
// them (asked for with the first matrix of w's group), the lead's own from
// the pool.
func (s *Session) matvecParts(out []float32, w *matrix, act []byte) {
	ps := s.parts
	ps.one[0], ps.oneOut[0] = act, out
	s.productParts(ps.oneOut[:], w, ps.one[:], false)
}

// matmulParts is matmul over the parts.
func (s *Session) matmulParts(outs [][]float32, w *matrix, acts [][]byte) {
	s.productParts(outs, w, acts, true)
}

func (s *Session) productParts(outs [][]float32, w *matrix, acts [][]byte, batch bool) {
	ps := s.parts
	have := ps.replied(w, acts)
	if !have {
		ps.start(w, acts)
	}
	if batch {
		s.pool.matmul(outs, w, acts)
	} else {
		s.pool.matvec(outs[0], w, acts[0])
	}
	if !have {
		ps.wait()
	}
	if ps.err == nil {
		ps.scatter(w, outs)
	}
}
