package engine

import (
	"errors"
	"fmt"

	"github.com/picolm/picolm-wasm/quant"
)

// A model can be split over instances that cannot share memory (Go wasm
// instances in Web Workers, one thread each): every weight matrix by rows,
// LoadOptions.Part of Parts. The lead (part 0) runs the Session; for each
// group of a product (products.go) it starts its Peers (the other parts) on
// the same quantized activations, computes its own rows, and waits for
// theirs. Each row's dot is the same computation wherever it runs (the
// same kernels), so the result is bit-identical to one instance's.
//
// A request names its group by id (Model.groups, numbered at load in the
// order of the forward pass), which every part numbers alike.

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
	// Start asks for the peer's rows of the matrices of group times each
	// activation of acts (one for a token, up to 16 for a prompt batch; in
	// the group's activation format): out receives them, matrix after
	// matrix, each [len(acts)][its rows]. acts and out belong to the peer
	// until Wait returns.
	Start(group int, acts [][]byte, out []float32) error
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

// A Shard serves the products of one part (1 ..) of a split model for the
// lead's Session: Serve is what a Peer's Start and Wait reach.
type Shard struct {
	m    *Model
	outs [maxBatch][]float32 // Serve's view of its reply, by activation
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
	for i := range s.m.groups {
		g := &s.m.groups[i]
		actLen = max(actLen, actBytes(g.mats[0]))
		outLen = max(outLen, maxBatch*g.rowsOf(s.m.part, s.m.parts))
	}
	return maxBatch, actLen, outLen
}

// Serve computes the shard's rows [lo, hi) of each matrix of group times
// each activation, with the kernels the lead's products use (MatVec for one
// activation, MatMul for several): out holds, matrix after matrix,
// W[r]·acts[b] at b*(hi-lo) + r-lo. A request that does not fit the model
// (an unknown group, activations of the wrong number or size, out of the
// wrong length) is an error, never a panic. Serve is not safe for
// concurrent use (it reuses the Shard's views of out): one call at a time,
// as a Worker's loop makes them.
func (s *Shard) Serve(group int, acts [][]byte, out []float32) error {
	if group < 0 || group >= len(s.m.groups) {
		return fmt.Errorf("%w: no group %d (the model has %d)", ErrShard, group, len(s.m.groups))
	}
	g := &s.m.groups[group]
	if len(acts) < 1 || len(acts) > maxBatch {
		return fmt.Errorf("%w: %d activations (1 to %d)", ErrShard, len(acts), maxBatch)
	}
	want := actBytes(g.mats[0])
	for _, a := range acts {
		if len(a) != want {
			return fmt.Errorf("%w: group %d: a %d-byte activation, want %d", ErrShard, group, len(a), want)
		}
	}
	if size := len(acts) * g.rowsOf(s.m.part, s.m.parts); len(out) != size {
		return fmt.Errorf("%w: group %d: a reply of %d values, want %d", ErrShard, group, len(out), size)
	}
	outs := s.outs[:len(acts)]
	for _, w := range g.mats {
		n := w.hi - w.lo
		for b := range outs {
			outs[b] = out[b*n : (b+1)*n]
		}
		w.mul(acts, outs, w.lo, w.hi)
		out = out[len(acts)*n:]
	}
	return nil
}

// parts is the lead Session's side of a split model.
type parts struct {
	m       *Model
	peers   []Peer      // peers[k] serves part k+1
	replies [][]float32 // [peer][maxBatch × its most rows of a group]
	started int         // peers started and not yet waited for
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
	ps := &parts{m: m, peers: make([]Peer, len(peers)), replies: make([][]float32, len(peers))}
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
	most := 0
	for i := range m.groups {
		for k := range ps.peers {
			most = max(most, m.groups[i].rowsOf(k+1, m.parts))
		}
	}
	for k := range ps.replies {
		ps.replies[k] = make([]float32, maxBatch*most)
	}
	s.products.parts = ps
	return nil
}

// partsErr is the failure of a peer, which leaves the session unusable.
func (s *Session) partsErr() error {
	if s.products.parts == nil {
		return nil
	}
	return s.products.parts.err
}

// start starts every peer on its rows of g times acts, into its reply.
func (ps *parts) start(g *group, acts [][]byte) {
	if ps.err != nil {
		return
	}
	for k, p := range ps.peers {
		out := ps.replies[k][:len(acts)*g.rowsOf(k+1, ps.m.parts)]
		if err := p.Start(g.id, acts, out); err != nil {
			ps.err = fmt.Errorf("%w %d: %w", ErrShard, k+1, err)
			return
		}
		ps.started++
	}
}

// finish waits for the started peers and copies their rows of g's matrices
// into outs (outs[i] is [batch][the i-th matrix's rows]).
func (ps *parts) finish(g *group, outs [][][]float32) {
	for k := range ps.started {
		if err := ps.peers[k].Wait(); err != nil && ps.err == nil {
			ps.err = fmt.Errorf("%w %d: %w", ErrShard, k+1, err)
		}
	}
	ps.started = 0
	if ps.err != nil {
		return
	}
	for k := range ps.peers {
		reply := ps.replies[k]
		for i, w := range g.mats {
			lo, hi := partRows(w.rows, k+1, ps.m.parts)
			n := hi - lo
			for b, out := range outs[i] {
				copy(out[lo:hi], reply[b*n:(b+1)*n])
			}
			reply = reply[len(outs[i])*n:]
		}
	}
}
