package engine

import (
	"errors"
	"fmt"
	"time"

	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/quant"
)

// A model can be split over instances that cannot share memory (Go wasm
// instances in Web Workers, one thread each): every weight matrix by rows,
// LoadOptions.Part of Parts. The lead (part 0) runs the Session; the others
// are served by a Shard, which the lead reaches through a Peer. Per layer
// the lead asks every peer for four steps (Request), and computes its own
// share of each meanwhile:
//
//   - attention: each part holds the q, k and v rows of its KV heads (and
//     their query heads, partHeads) and keeps those heads' slice of the KV
//     cache; from the layer's normed input it computes their q, k and v,
//     RoPE, the cache and their attention, and replies with their slice of
//     the attention output;
//   - the products of wo, gate and up, and down: each part its rows of the
//     group's matrices times the quantized activations the lead sends (one
//     request per group, products.go).
//
// Then the output matrix. Every row's dot and every head's attention is
// the same computation wherever it runs (the same kernels, the same order),
// so the result is bit-identical to one instance's.
//
// A product request names its group by id (Model.groups, numbered at load
// in the order of the forward pass), which every part numbers alike; an
// attention request its layer.

// ErrShard reports a split model whose parts do not fit together, or a part
// that failed.
var ErrShard = errors.New("model part")

// maxParts bounds how many instances a model is split over.
const maxParts = 64

// ShardInfo says what a part of a model is: its model (Model.Identity),
// which part of how many, and the positions its KV cache holds.
type ShardInfo struct {
	Identity    [32]byte
	Part, Parts int
	Context     int
}

// Op is what a Request asks a part for.
type Op int

const (
	// OpProduct is the part's rows of a group's matrices times
	// activations in the group's format: Request.ID is the group.
	OpProduct Op = iota
	// OpAttention is the part's heads of a layer's attention for a batch
	// of consecutive positions: Request.ID is the layer, Request.Pos the
	// first position, Request.Acts the layer's normed inputs as float32
	// (quant.F32Bytes). The part's keys and values of those positions go
	// into its cache.
	OpAttention
)

// A Request is one step of a forward pass the lead asks a part for.
type Request struct {
	Op   Op
	ID   int      // the group (OpProduct) or the layer (OpAttention)
	Pos  int      // OpAttention: the position of the first activation
	Acts [][]byte // one activation per position (1 decoding, up to 16 for a prompt batch)
}

// A Peer is a part of the model served elsewhere (a Shard in another
// instance), as the lead's Session sees it: a transport to it.
type Peer interface {
	// Info reports what the peer serves; NewSession checks it once.
	Info() (ShardInfo, error)
	// Start asks for a step (Shard.Serve): out receives the reply. r.Acts
	// and out belong to the peer until Wait returns.
	Start(r Request, out []float32) error
	// Wait returns once out holds the started step's reply, or the peer
	// failed. It must not block forever on a peer that died.
	Wait() error
}

// Part returns which part of how many the model is (0 of 1 when whole).
func (m *Model) Part() (part, parts int) { return m.part, m.parts }

// MaxParts is the most parts the attention of the model in f divides
// into, one KV head each at least: its KV heads (capped at the most parts
// a model can be split into). More parts still divide the matrix products,
// but the parts past it compute no attention and keep no KV cache.
func MaxParts(f *gguf.File) (int, error) {
	c, err := readConfig(f)
	if err != nil {
		return 0, err
	}
	return min(c.KVHeads, maxParts), nil
}

// actBytes is the size of one activation for w: cols values in w's
// activation format.
func actBytes(w *matrix) int {
	vt := quant.TraitsOf(w.tr.VecDotType)
	return w.cols / vt.BlockSize * vt.TypeSize
}

// A Shard serves the steps of one part (1 ..) of a split model for the
// lead's Session: Serve is what a Peer's Start and Wait reach. It keeps
// the part's heads' KV cache.
type Shard struct {
	m    *Model
	s    *Session            // the part's attention state: its heads' q, k, v and KV cache
	outs [maxBatch][]float32 // Serve's view of its reply, by activation
}

// NewShard serves m, a part other than the lead of a split model, with the
// context the lead's session asks for in o (Context, MaxKVBytes, Threads;
// no Peers).
func NewShard(m *Model, o SessionOptions) (*Shard, error) {
	if m.part == 0 {
		return nil, fmt.Errorf("%w: part 0 of %d is the lead: it runs a Session, not a Shard", ErrShard, m.parts)
	}
	if len(o.Peers) != 0 {
		return nil, fmt.Errorf("%w: a shard has no peers", ErrShard)
	}
	s, err := m.newState(o)
	if err != nil {
		return nil, err
	}
	return &Shard{m: m, s: s}, nil
}

// Close stops the shard's worker goroutines.
func (sh *Shard) Close() { sh.s.Close() }

// Info says what the shard serves.
func (sh *Shard) Info() ShardInfo {
	return ShardInfo{Identity: sh.m.identity, Part: sh.m.part, Parts: sh.m.parts, Context: sh.s.ctx}
}

// Limits are the largest request and reply the lead sends: activations per
// request, bytes per activation, and floats per reply.
func (sh *Shard) Limits() (acts, actLen, outLen int) {
	c := &sh.m.Config
	actLen, outLen = 4*c.Dim, maxBatch*sh.s.qDim // attention
	for i := range sh.m.groups {
		g := &sh.m.groups[i]
		actLen = max(actLen, actBytes(g.mats[0]))
		outLen = max(outLen, maxBatch*g.replyRows(sh.m.part, sh.m.parts))
	}
	return maxBatch, actLen, outLen
}

// Serve computes the shard's reply to r into out, with the kernels the
// lead's session uses (MatVec for one activation, MatMul for several):
//
//   - OpProduct: the shard's rows [lo, hi) of each matrix of the group
//     times each activation: out holds, matrix after matrix,
//     W[r]·acts[b] at b*(hi-lo) + r-lo; for a layer's gate and up
//     (group.swiglu) only silu(gate[r]·acts[b])·(up[r]·acts[b]) there;
//   - OpAttention: the attention output of the shard's query heads for
//     each position: out[b*qDim:] is position Pos+b's slice of them.
//
// A request that does not fit the model (an unknown group or layer,
// activations of the wrong number or size, positions past the context, out
// of the wrong length) is an error, never a panic. Serve is not safe for
// concurrent use (it reuses the Shard's state): one call at a time, as a
// Worker's loop makes them.
func (sh *Shard) Serve(r Request, out []float32) error {
	if len(r.Acts) < 1 || len(r.Acts) > maxBatch {
		return fmt.Errorf("%w: %d activations (1 to %d)", ErrShard, len(r.Acts), maxBatch)
	}
	switch r.Op {
	case OpProduct:
		return sh.product(r, out)
	case OpAttention:
		return sh.attention(r, out)
	}
	return fmt.Errorf("%w: no operation %d", ErrShard, r.Op)
}

func (sh *Shard) product(r Request, out []float32) error {
	if r.ID < 0 || r.ID >= len(sh.m.groups) {
		return fmt.Errorf("%w: no group %d (the model has %d)", ErrShard, r.ID, len(sh.m.groups))
	}
	g := &sh.m.groups[r.ID]
	want := actBytes(g.mats[0])
	for _, a := range r.Acts {
		if len(a) != want {
			return fmt.Errorf("%w: group %d: a %d-byte activation, want %d", ErrShard, r.ID, len(a), want)
		}
	}
	if size := len(r.Acts) * g.replyRows(sh.m.part, sh.m.parts); len(out) != size {
		return fmt.Errorf("%w: group %d: a reply of %d values, want %d", ErrShard, r.ID, len(out), size)
	}
	outs := sh.outs[:len(r.Acts)]
	if g.swiglu { // gate into out, up into hb2, then silu(gate)·up into out
		gate, up := g.mats[0], g.mats[1]
		n := gate.hi - gate.lo
		if n == 0 {
			return nil
		}
		for b := range outs {
			outs[b] = out[b*n : (b+1)*n]
		}
		gate.mul(r.Acts, outs, gate.lo, gate.hi)
		ups := sh.s.hb2[:len(r.Acts)]
		up.mul(r.Acts, ups, up.lo, up.hi)
		for b := range outs {
			swigluPart(outs[b], ups[b][:n], gate.lo, gate.rows)
		}
		return nil
	}
	for _, w := range g.mats {
		n := w.hi - w.lo
		if n == 0 {
			continue
		}
		for b := range outs {
			outs[b] = out[b*n : (b+1)*n]
		}
		w.mul(r.Acts, outs, w.lo, w.hi)
		out = out[len(r.Acts)*n:]
	}
	return nil
}

func (sh *Shard) attention(r Request, out []float32) error {
	s, c := sh.s, &sh.m.Config
	n := len(r.Acts)
	switch {
	case r.ID < 0 || r.ID >= c.Layers:
		return fmt.Errorf("%w: no layer %d (the model has %d)", ErrShard, r.ID, c.Layers)
	case r.Pos < 0 || r.Pos > s.ctx-n:
		return fmt.Errorf("%w: positions %d to %d, the context holds %d", ErrShard, r.Pos, r.Pos+n-1, s.ctx)
	case len(out) != n*s.qDim:
		return fmt.Errorf("%w: attention: a reply of %d values, want %d", ErrShard, len(out), n*s.qDim)
	}
	for b, a := range r.Acts {
		if len(a) != 4*c.Dim {
			return fmt.Errorf("%w: attention: a %d-byte input, want %d", ErrShard, len(a), 4*c.Dim)
		}
		copy(quant.F32Bytes(s.xb[b]), a)
		s.acts[b].set(s.xb[b])
	}
	s.attendPart(r.ID, r.Pos, n)
	q0 := s.kvLo * c.KVMul * c.HeadDim
	for b := range n {
		copy(out[b*s.qDim:(b+1)*s.qDim], s.ao[b][q0:q0+s.qDim])
	}
	return nil
}

// SplitStats is where a split session's time went on the lead, cumulative.
type SplitStats struct {
	Syncs      int           // steps started on the peers (each a request to every peer and a reply from each)
	Attentions int           // of them attention steps
	Attention  time.Duration // the lead's own heads' attention (q, k, v, RoPE, the cache, the heads)
	Products   time.Duration // the lead's own rows of the other products
	Send       time.Duration // sending the requests (Peer.Start)
	Wait       time.Duration // waiting for the peers' replies and copying them in
}

// SplitStats reports where a split session's time went (zero for a whole
// model's session).
func (s *Session) SplitStats() SplitStats {
	if s.products.parts == nil {
		return SplitStats{}
	}
	return s.products.parts.stats
}

// parts is the lead Session's side of a split model.
type parts struct {
	m       *Model
	peers   []Peer           // peers[k] serves part k+1
	replies [][]float32      // [peer][maxBatch × its largest reply]
	floats  [maxBatch][]byte // an attention request's inputs, as bytes
	started int              // peers started and not yet waited for
	err     error            // the first failure; the session is unusable after it
	stats   SplitStats
}

// connect checks the peers serve the other parts of s's model, with s's
// context, and orders them by part.
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
		case info.Context != s.ctx:
			return fmt.Errorf("%w: peer %d keeps %d positions, the session %d", ErrShard, i, info.Context, s.ctx)
		}
		ps.peers[info.Part-1] = p
	}
	c := &m.Config
	for k := range ps.replies {
		lo, hi := partHeads(c.KVHeads, k+1, m.parts)
		most := (hi - lo) * c.KVMul * c.HeadDim
		for i := range m.groups {
			most = max(most, m.groups[i].replyRows(k+1, m.parts))
		}
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
	ps.startAll(Request{Op: OpProduct, ID: g.id, Acts: acts})
}

// startAttention starts every peer on its heads' attention of layer l for
// the batch from position pos on, whose normed inputs are xb.
func (ps *parts) startAttention(l, pos int, xb [][]float32) {
	acts := ps.floats[:len(xb)]
	for b := range xb {
		acts[b] = quant.F32Bytes(xb[b])
	}
	ps.stats.Attentions++
	ps.startAll(Request{Op: OpAttention, ID: l, Pos: pos, Acts: acts})
}

// startAll sends r to every peer, into its reply.
func (ps *parts) startAll(r Request) {
	if ps.err != nil {
		return
	}
	ps.stats.Syncs++
	t := time.Now()
	for k, p := range ps.peers {
		if err := p.Start(r, ps.replies[k][:ps.replySize(r, k+1)]); err != nil {
			ps.err = fmt.Errorf("%w %d: %w", ErrShard, k+1, err)
			break
		}
		ps.started++
	}
	ps.stats.Send += time.Since(t)
}

// replySize is the number of values part k replies to r with.
func (ps *parts) replySize(r Request, k int) int {
	if r.Op == OpAttention {
		c := &ps.m.Config
		lo, hi := partHeads(c.KVHeads, k, ps.m.parts)
		return len(r.Acts) * (hi - lo) * c.KVMul * c.HeadDim
	}
	return len(r.Acts) * ps.m.groups[r.ID].replyRows(k, ps.m.parts)
}

// wait waits for the started peers; it reports whether they all replied.
func (ps *parts) wait() bool {
	for k := range ps.started {
		if err := ps.peers[k].Wait(); err != nil && ps.err == nil {
			ps.err = fmt.Errorf("%w %d: %w", ErrShard, k+1, err)
		}
	}
	ps.started = 0
	return ps.err == nil
}

// finish waits for the started peers and copies their rows of g's matrices
// (g.replyMats) into outs (outs[i] is [batch][the i-th matrix's rows]).
func (ps *parts) finish(g *group, outs [][][]float32) {
	t := time.Now()
	ok := ps.wait()
	ps.stats.Wait += time.Since(t)
	if !ok {
		return
	}
	for k := range ps.peers {
		reply := ps.replies[k]
		for i, w := range g.replyMats() {
			lo, hi := w.partOf(k+1, ps.m.parts)
			n := hi - lo
			for b, out := range outs[i] {
				copy(out[lo:hi], reply[b*n:(b+1)*n])
			}
			reply = reply[len(outs[i])*n:]
		}
	}
}

// finishAttention waits for the started peers and copies their heads'
// attention outputs into ao ([batch][dim]).
func (ps *parts) finishAttention(m *Model, ao [][]float32) {
	t := time.Now()
	ok := ps.wait()
	ps.stats.Wait += time.Since(t)
	if !ok {
		return
	}
	c := &m.Config
	for k := range ps.peers {
		lo, hi := partHeads(c.KVHeads, k+1, m.parts)
		q0, q1 := lo*c.KVMul*c.HeadDim, hi*c.KVMul*c.HeadDim
		n := q1 - q0
		for b, out := range ao {
			copy(out[q0:q1], ps.replies[k][b*n:(b+1)*n])
		}
	}
}
