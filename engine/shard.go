package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/quant"
)

// A model can be split over instances that cannot share memory (Go wasm
// instances in Web Workers, one thread each): every weight matrix by rows,
// LoadOptions.Part of Parts. The lead (part 0) runs the Session; the others
// run a Shard. Every part runs the same forward pass over its own rows,
// and the parts meet through a Mesh at the points where each needs the
// others' rows (an exchange: every part publishes its values and collects
// everyone else's). A batch of positions goes through in 4 exchanges per
// layer, plus one to start it and one for the logits:
//
//   - start: the lead publishes the batch (its first position, its size,
//     whether the logits are wanted, and the tokens' embeddings: only the
//     lead holds them); the shards publish nothing;
//   - attention: each part holds the q, k and v rows of its KV heads (and
//     their query heads, partHeads) and keeps those heads' slice of the KV
//     cache; from the layer's normed input it computes their q, k and v,
//     RoPE, the cache and their attention, and publishes its slice of the
//     attention output;
//   - wo: each part its rows of wo times the (whole) attention output;
//   - gate and up: each part its rows of both, and silu(gate)·up of
//     them (swigluPart: each value as the whole row's SwiGLU computes
//     it, which takes e^ in two ways by the value's place in the row);
//     it publishes that alone;
//   - down: each part its rows; then every part adds the whole result to
//     its copy of the residual stream and norms it for the next layer;
//   - the logits: each part its rows of the output matrix (only the lead
//     reads the others').
//
// So every part holds the whole residual stream and computes the norms,
// residual adds and quantization of each activation itself: the lead has
// no serial share in a layer but its own rows, and no part waits for
// another's request. Every row's dot, every head's attention and every
// element-wise step is the same computation wherever it runs (the same
// kernels, the same order), so the result is bit-identical to one
// instance's.

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

// A Peer is a part of the model served elsewhere (a Shard in another
// instance), as the lead's Session sees it when it is made.
type Peer interface {
	// Info reports what the peer serves; NewSession checks it once.
	Info() (ShardInfo, error)
}

// A Mesh joins one part of a split model to all the others (the lead's
// session and every Shard has one, SessionOptions.Mesh): the transport of
// the exchanges. An exchange is a Publish, then a Collect: every part
// makes both calls for every exchange, in the same order.
type Mesh interface {
	// Publish makes mine (this part's values of the exchange) available to
	// the others. mine may be reused once Collect returns.
	Publish(mine []byte) error
	// Collect returns once every part has published its values of the
	// exchange, with part k's copied into theirs[k] (resliced to their
	// length; a nil theirs[k] is not read, nor is this part's own). It
	// must not block forever on a part that died, and once it has failed
	// (a part failed, or the mesh was closed) every later call fails.
	Collect(theirs [][]byte) error
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

// ExchangeBytes is the most bytes a part of m's split publishes in one
// exchange, or collects from one other part: the room a Mesh needs per
// part (the lead's start of a batch, or a part's rows of a batch).
func (m *Model) ExchangeBytes() int {
	c := &m.Config
	n := startBytes + 4*maxBatch*c.Dim
	L := &m.layers[0]
	for k := range m.parts {
		lo, hi := partHeads(c.KVHeads, k, m.parts)
		rows := (hi - lo) * c.KVMul * c.HeadDim
		for _, w := range []*matrix{&L.wo, &L.down} {
			lo, hi := w.partOf(k, m.parts)
			rows = max(rows, hi-lo)
		}
		lo, hi = L.gate.partOf(k, m.parts)
		rows = max(rows, hi-lo) // silu(gate)·up
		lo, hi = m.output.partOf(k, m.parts)
		n = max(n, 4*maxBatch*rows, 4*(hi-lo))
	}
	return n
}

// startBytes is the header of the lead's start of a batch: four int32s
// (opForward, the first position, the batch size, whether the logits are
// wanted), then the batch's embeddings as float32 (quant.F32Bytes).
const (
	startBytes = 16
	opForward  = 1
)

// A Shard runs the part of a split model's forward pass that one part (1
// ..) holds, batch after batch as the lead starts them (Step). It keeps the
// part's heads' KV cache.
type Shard struct {
	m *Model
	s *Session // the part's state: its heads' KV cache, its copy of the residual streams
}

// NewShard makes the state of m, a part other than the lead of a split
// model, with the context the lead's session asks for in o (Context,
// MaxKVBytes, Threads; no Peers, no Mesh: Step is given it).
func NewShard(m *Model, o SessionOptions) (*Shard, error) {
	if m.part == 0 {
		return nil, fmt.Errorf("%w: part 0 of %d is the lead: it runs a Session, not a Shard", ErrShard, m.parts)
	}
	if len(o.Peers) != 0 || o.Mesh != nil {
		return nil, fmt.Errorf("%w: a shard has no peers, and is given its mesh by Step", ErrShard)
	}
	s, err := m.newState(o)
	if err != nil {
		return nil, err
	}
	s.products.parts = newParts(m)
	return &Shard{m: m, s: s}, nil
}

// Close stops the shard's worker goroutines.
func (sh *Shard) Close() { sh.s.Close() }

// Info says what the shard serves.
func (sh *Shard) Info() ShardInfo {
	return ShardInfo{Identity: sh.m.identity, Part: sh.m.part, Parts: sh.m.parts, Context: sh.s.ctx}
}

// ExchangeBytes is the room the shard's mesh needs per part
// (Model.ExchangeBytes).
func (sh *Shard) ExchangeBytes() int { return sh.m.ExchangeBytes() }

// SplitStats reports where the shard's time went: as a Session's, and
// Idle, the time it waited for the lead to start a batch.
func (sh *Shard) SplitStats() SplitStats { return sh.s.products.parts.stats }

// Step runs one batch of the lead's forward pass over mesh: it waits for
// the lead to start it (however long that takes), then runs it through the
// layers with the other parts and, when the lead wants the logits, computes
// its rows of them. A start that does not fit the model (no positions or
// more than a batch, positions past the context, embeddings of the wrong
// size) is an error, never a panic; so is a failed exchange. After an
// error the split model is unusable (the mesh's owner fails it, so that
// the other parts stop waiting).
func (sh *Shard) Step(mesh Mesh) error {
	ps, s, c := sh.s.products.parts, sh.s, &sh.m.Config
	if ps.err != nil {
		return ps.err
	}
	ps.mesh = mesh
	t := time.Now()
	theirs := ps.theirs
	clear(theirs)
	theirs[0] = ps.bufs[0]
	err := mesh.Publish(nil)
	if err == nil {
		err = mesh.Collect(theirs)
	}
	ps.stats.Idle += time.Since(t)
	if err != nil {
		ps.err = fmt.Errorf("%w %d: %w", ErrShard, sh.m.part, err)
		return ps.err
	}
	ps.stats.Syncs++
	msg := theirs[0]
	if len(msg) < startBytes {
		return ps.fail(fmt.Errorf("%w %d: a start of %d bytes", ErrShard, sh.m.part, len(msg)))
	}
	op, pos := int(int32(binary.LittleEndian.Uint32(msg))), int(int32(binary.LittleEndian.Uint32(msg[4:])))
	n, logits := int(int32(binary.LittleEndian.Uint32(msg[8:]))), int32(binary.LittleEndian.Uint32(msg[12:]))
	switch {
	case op != opForward:
		return ps.fail(fmt.Errorf("%w %d: no operation %d", ErrShard, sh.m.part, op))
	case n < 1 || n > maxBatch:
		return ps.fail(fmt.Errorf("%w %d: a batch of %d positions (1 to %d)", ErrShard, sh.m.part, n, maxBatch))
	case pos < 0 || pos > s.ctx-n:
		return ps.fail(fmt.Errorf("%w %d: positions %d to %d, the context holds %d", ErrShard, sh.m.part, pos, pos+n-1, s.ctx))
	case logits != 0 && logits != 1:
		return ps.fail(fmt.Errorf("%w %d: logits %d", ErrShard, sh.m.part, logits))
	case len(msg) != startBytes+4*n*c.Dim:
		return ps.fail(fmt.Errorf("%w %d: a start of %d bytes for %d positions, want %d", ErrShard, sh.m.part, len(msg), n, startBytes+4*n*c.Dim))
	}
	for b := range n {
		copy(quant.F32Bytes(s.x[b]), msg[startBytes+4*b*c.Dim:])
	}
	s.layers(pos, n)
	if logits == 1 {
		s.classify(n - 1)
	}
	return ps.err
}

// SplitStats is where a part's time went, cumulative.
type SplitStats struct {
	Syncs      int           // exchanges (each a publish and a collect of every part)
	Attentions int           // of them attention exchanges
	Attention  time.Duration // its own heads' attention (q, k, v, RoPE, the cache, the heads)
	Products   time.Duration // its own rows of the other products
	Send       time.Duration // publishing its values (Mesh.Publish, and packing them)
	Wait       time.Duration // waiting for the others' values and copying them in (Mesh.Collect)
	Idle       time.Duration // a shard's: waiting for the lead to start a batch
}

// SplitStats reports where a split session's time went (zero for a whole
// model's session).
func (s *Session) SplitStats() SplitStats {
	if s.products.parts == nil {
		return SplitStats{}
	}
	return s.products.parts.stats
}

// parts is a part's side of a split model: the lead Session's, or a
// Shard's.
type parts struct {
	m       *Model
	mesh    Mesh
	part, n int
	mine    []byte   // this part's values of an exchange
	bufs    [][]byte // [part] room for its values (ExchangeBytes)
	theirs  [][]byte // Collect's argument
	cuts    []int    // [n+1] an exchange's slices: part k's values are [cuts[k], cuts[k+1]) of each row
	err     error    // the first failure; the model is unusable after it
	stats   SplitStats
}

func newParts(m *Model) *parts {
	size := m.ExchangeBytes()
	ps := &parts{m: m, part: m.part, n: m.parts, mine: make([]byte, size),
		bufs: make([][]byte, m.parts), theirs: make([][]byte, m.parts), cuts: make([]int, m.parts+1)}
	for k := range ps.bufs {
		if k != m.part {
			ps.bufs[k] = make([]byte, size)
		}
	}
	return ps
}

// fail records err as the part's failure and returns it.
func (ps *parts) fail(err error) error {
	if ps.err == nil {
		ps.err = err
	}
	return ps.err
}

// connect checks the peers serve the other parts of s's model, with s's
// context, and joins s to them through mesh.
func (s *Session) connect(peers []Peer, mesh Mesh) error {
	m := s.m
	if m.part != 0 {
		return fmt.Errorf("%w: part %d of %d is served by a Shard; only part 0 runs a Session", ErrShard, m.part, m.parts)
	}
	if len(peers) != m.parts-1 {
		return fmt.Errorf("%w: the model is split in %d parts but %d peers were given", ErrShard, m.parts, len(peers))
	}
	if m.parts == 1 {
		if mesh != nil {
			return fmt.Errorf("%w: a whole model has no mesh", ErrShard)
		}
		return nil
	}
	if mesh == nil {
		return fmt.Errorf("%w: a split model's session needs a mesh", ErrShard)
	}
	seen := make([]bool, m.parts)
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
		case seen[info.Part]:
			return fmt.Errorf("%w: two peers serve part %d", ErrShard, info.Part)
		case info.Context != s.ctx:
			return fmt.Errorf("%w: peer %d keeps %d positions, the session %d", ErrShard, i, info.Context, s.ctx)
		}
		seen[info.Part] = true
	}
	ps := newParts(m)
	ps.mesh = mesh
	s.products.parts = ps
	return nil
}

// partsErr is the failure of a part, which leaves the session unusable.
func (s *Session) partsErr() error {
	if s.products.parts == nil {
		return nil
	}
	return s.products.parts.err
}

// start is the lead's start of a batch of n positions from pos on, whose
// embeddings are x ([n][dim]): logits says whether the parts compute the
// logits of its last position.
func (ps *parts) start(pos int, x [][]float32, logits bool) {
	if ps.err != nil {
		return
	}
	ps.stats.Syncs++
	t := time.Now()
	dim := ps.m.Config.Dim
	msg := ps.mine[:startBytes+4*len(x)*dim]
	binary.LittleEndian.PutUint32(msg, opForward)
	binary.LittleEndian.PutUint32(msg[4:], uint32(pos))
	binary.LittleEndian.PutUint32(msg[8:], uint32(len(x)))
	binary.LittleEndian.PutUint32(msg[12:], 0)
	if logits {
		binary.LittleEndian.PutUint32(msg[12:], 1)
	}
	for b := range x {
		copy(msg[startBytes+4*b*dim:], quant.F32Bytes(x[b]))
	}
	err := ps.mesh.Publish(msg)
	ps.stats.Send += time.Since(t)
	if err != nil {
		ps.fail(fmt.Errorf("%w: %w", ErrShard, err))
		return
	}
	t = time.Now()
	clear(ps.theirs)
	if err := ps.mesh.Collect(ps.theirs); err != nil {
		ps.fail(fmt.Errorf("%w: %w", ErrShard, err))
	}
	ps.stats.Wait += time.Since(t)
}

// cutRows sets the exchange's slices to the parts' rows of w.
func (ps *parts) cutRows(w *matrix) {
	for k := range ps.n {
		ps.cuts[k], ps.cuts[k+1] = w.partOf(k, ps.n)
	}
}

// cutHeads sets the exchange's slices to the parts' query heads' values.
func (ps *parts) cutHeads() {
	c := &ps.m.Config
	for k := range ps.n {
		lo, hi := partHeads(c.KVHeads, k, ps.n)
		ps.cuts[k], ps.cuts[k+1] = lo*c.KVMul*c.HeadDim, hi*c.KVMul*c.HeadDim
	}
}

// exchange publishes this part's slice (cuts) of every row of each of
// sets (each [batch][width]) and, when read, fills in the other parts'
// slices from theirs.
func (ps *parts) exchange(read bool, sets ...[][]float32) {
	if ps.err != nil {
		return
	}
	ps.stats.Syncs++
	t := time.Now()
	lo, hi := ps.cuts[ps.part], ps.cuts[ps.part+1]
	mine := ps.mine[:0]
	for _, rows := range sets {
		for _, r := range rows {
			mine = append(mine, quant.F32Bytes(r[lo:hi])...)
		}
	}
	err := ps.mesh.Publish(mine)
	ps.stats.Send += time.Since(t)
	if err != nil {
		ps.fail(fmt.Errorf("%w: %w", ErrShard, err))
		return
	}
	t = time.Now()
	theirs := ps.theirs
	for k := range theirs {
		theirs[k] = nil
		if read && k != ps.part {
			theirs[k] = ps.bufs[k]
		}
	}
	if err := ps.mesh.Collect(theirs); err != nil {
		ps.fail(fmt.Errorf("%w: %w", ErrShard, err))
	} else if read {
		for k, v := range theirs {
			if k == ps.part {
				continue
			}
			lo, hi := ps.cuts[k], ps.cuts[k+1]
			w := 4 * (hi - lo)
			if want := len(sets) * len(sets[0]) * w; len(v) != want {
				ps.fail(fmt.Errorf("%w %d: %d bytes exchanged, want %d", ErrShard, k, len(v), want))
				break
			}
			for _, rows := range sets {
				for _, r := range rows {
					copy(quant.F32Bytes(r[lo:hi]), v)
					v = v[w:]
				}
			}
		}
	}
	ps.stats.Wait += time.Since(t)
}
