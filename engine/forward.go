package engine

import (
	"fmt"
	"time"

	"github.com/picolm/picolm-wasm/quant"
)

// maxBatch is the number of consecutive positions one forward pass runs
// together: a prompt goes through in batches of maxBatch, each weight row
// read once per batch and dotted with every position's activation while it
// is in cache; decoding is a batch of one.
const maxBatch = 16

// Forward runs one token at the next position through the model and returns
// the logits over the vocabulary ([vocab], owned by the session, valid until
// the next call).
func (s *Session) Forward(token int) ([]float32, error) {
	if pos := len(s.tokens); pos >= s.ctx {
		return nil, fmt.Errorf("%w: all %d positions are used", ErrContext, s.ctx)
	}
	if token < 0 || token >= s.m.Config.VocabSize {
		return nil, fmt.Errorf("token id %d outside the vocabulary of %d", token, s.m.Config.VocabSize)
	}
	s.one[0] = token
	return s.eval(s.one[:])
}

// Prefill runs tokens through the model at the next positions and returns
// the logits after the last one ([vocab], owned by the session, valid until
// the next call). It computes exactly what calling Forward for each token
// does, bit for bit, in batches of maxBatch positions: every matrix product
// of a batch reads each weight row once.
func (s *Session) Prefill(tokens []int) ([]float32, error) {
	if len(tokens) == 0 {
		return nil, ErrEmptyPrompt
	}
	if pos := len(s.tokens); len(tokens) > s.ctx-pos {
		return nil, fmt.Errorf("%w: %d tokens at position %d, the context holds %d", ErrContext, len(tokens), pos, s.ctx)
	}
	for _, tok := range tokens {
		if tok < 0 || tok >= s.m.Config.VocabSize {
			return nil, fmt.Errorf("token id %d outside the vocabulary of %d", tok, s.m.Config.VocabSize)
		}
	}
	return s.eval(tokens)
}

// eval runs checked tokens at the next positions, a batch of up to maxBatch
// at a time, and returns the logits after the last one.
func (s *Session) eval(tokens []int) ([]float32, error) {
	if err := s.partsErr(); err != nil {
		return nil, err
	}
	pos := len(s.tokens)
	for at := 0; at < len(tokens); at += maxBatch {
		end := min(at+maxBatch, len(tokens))
		s.forward(tokens[at:end], pos+at, end == len(tokens))
	}
	if err := s.partsErr(); err != nil {
		return nil, err
	}
	s.tokens = append(s.tokens, tokens...)
	return s.logits[0], nil
}

// forward runs a batch of n <= maxBatch tokens at positions pos .. pos+n-1
// through the layers: it stores their keys and values in the cache and
// leaves their residual streams in x[:n], and with logits the logits of
// the last one in logits[0]. In a split model the lead starts the other
// parts on the batch (they run layers and classify with it).
func (s *Session) forward(tokens []int, pos int, logits bool) {
	n := len(tokens)
	x := s.x[:n] // [n][dim]

	// x = the tokens' embedding rows
	for b, tok := range tokens {
		s.m.tokEmbd.tr.Dequantize(x[b], s.m.tokEmbd.row(tok))
	}
	if ps := s.products.parts; ps != nil {
		ps.start(pos, x, logits)
	}
	s.layers(pos, n)
	if logits {
		s.classify(n - 1)
	}
}

// layers runs the residual streams x[:n] of positions pos .. pos+n-1
// through the layers. Every step is done for each position of the batch
// (row b is position pos+b); each matrix product multiplies the batch's n
// activations at once. In a split model every part runs it, each over the
// rows it holds, and the parts exchange their results (exchange).
func (s *Session) layers(pos, n int) {
	c := &s.m.Config
	x, xb, xb2, ao := s.x[:n], s.xb[:n], s.xb2[:n], s.ao[:n] // [n][dim]
	hb, hb2 := s.hb[:n], s.hb2[:n]                           // [n][hidden]
	acts := s.acts[:n]

	for l := range s.m.layers {
		L := &s.m.layers[l]

		// Attention: xb = rmsnorm(x); ao = the attention of every head
		// (attend: in a split model each part computes its heads')
		for b := range n {
			rmsnorm(xb[b], x[b], L.attnNorm, c.NormEps)
			acts[b].set(xb[b])
		}
		s.attend(l, pos, n)

		// x += Wo ao + bo
		for b := range n {
			acts[b].set(ao[b])
		}
		s.products.run(L.attnOut, acts, xb2)
		s.exchange(&L.wo, xb2)
		for b := range n {
			add(xb2[b], L.bo)
			add(x[b], xb2[b])
		}

		// FFN: x += W2 (silu(W1 xb) * W3 xb), xb = rmsnorm(x)
		for b := range n {
			rmsnorm(xb[b], x[b], L.ffnNorm, c.NormEps)
			acts[b].set(xb[b])
		}
		s.products.run(L.gateUp, acts, hb, hb2)
		s.swiglu(L, n) // hb = silu(hb) * hb2
		for b := range n {
			acts[b].set(hb[b])
		}
		s.products.run(L.ffnOut, acts, xb2)
		s.exchange(&L.down, xb2)
		for b := range n {
			add(x[b], xb2[b])
		}
	}
}

// classify sets logits[0] = Wout rmsnorm(x[last]) (in a split model the
// lead's; the other parts compute their rows of it for the lead).
func (s *Session) classify(last int) {
	rmsnorm(s.xb[last], s.x[last], s.m.outNorm, s.m.Config.NormEps)
	s.acts[last].set(s.xb[last])
	s.products.run(s.m.cls, s.acts[last:last+1], s.logits)
	if ps := s.products.parts; ps != nil {
		ps.cutRows(&s.m.output)
		ps.exchange(ps.part == 0, s.logits)
	}
}

// swiglu sets hb[b] = silu(hb[b]) * hb2[b] for b < n, from layer L's
// gate and up products. In a split model each part does it for its own
// rows of gate and up (split alike), each value as the whole row's SwiGLU
// computes it (swigluPart), and the parts exchange hb alone.
func (s *Session) swiglu(L *layer, n int) {
	ps := s.products.parts
	if ps == nil {
		s.pool.forEach(n, s.swigluStep)
		return
	}
	t := time.Now()
	if w := &L.gate; w.hi > w.lo {
		for b := range n {
			swigluPart(s.hb[b][w.lo:w.hi], s.hb2[b][w.lo:w.hi], w.lo, w.rows)
		}
	}
	ps.stats.Products += time.Since(t)
	s.exchange(&L.gate, s.hb[:n])
}

// exchange, in a split model, gives every part the whole of each of sets
// ([n][w's rows]) of which each part computed its own rows (split as w's);
// in a whole model it does nothing.
func (s *Session) exchange(w *matrix, sets ...[][]float32) {
	if ps := s.products.parts; ps != nil {
		ps.cutRows(w)
		ps.exchange(true, sets...)
	}
}

// attend sets ao[b], for b < n, to the attention output of position pos+b
// in layer l, all heads, from the normed inputs xb[:n] (their activations
// set): this part's heads here (attendPart), and in a split model every
// other part's, each over its slice of the KV cache, exchanged.
func (s *Session) attend(l, pos, n int) {
	ps := s.products.parts
	if ps == nil {
		s.attendPart(l, pos, n)
		return
	}
	t := time.Now()
	s.attendPart(l, pos, n)
	ps.stats.Attention += time.Since(t)
	ps.stats.Attentions++
	ps.cutHeads()
	ps.exchange(true, s.ao[:n])
}

// attendPart is attention for this part's heads: q, k, v = Wq xb + bq,
// Wk xb + bk, Wv xb + bv (their rows of this part's heads), RoPE, the keys
// and values into the cache, and ao[b]'s slices of these heads.
func (s *Session) attendPart(l, pos, n int) {
	if s.kvHi == s.kvLo { // a part beyond the model's KV heads has none
		return
	}
	c := &s.m.Config
	L := &s.m.layers[l]
	q, k, v := s.q[:n], s.k[:n], s.v[:n] // [n][qDim], [n][kvDim], [n][kvDim]
	half := c.RopeDim / 2
	s.products.local(L.qkv, s.acts[:n], q, k, v)
	bq, bk, bv := biasPart(L.bq, L.wq), biasPart(L.bk, L.wk), biasPart(L.bv, L.wv)
	for b := range n {
		// (the biases are qwen2's; other models have none and add nothing)
		add(q[b], bq)
		add(k[b], bk)
		add(v[b], bv)

		// Rotate the leading ropeDim dims of every query and key head,
		// the architecture's pairs of dims, by position pos+b's angles.
		p := pos + b
		cos := s.ropeCos[p*half : (p+1)*half]
		sin := s.ropeSin[p*half : (p+1)*half]
		s.rope(q[b], c.HeadDim, cos, sin)
		s.rope(k[b], c.HeadDim, cos, sin)

		// Store the position's key and value in the fp16 cache.
		base := (l*s.ctx + p) * s.kvDim
		kc := s.keyCache[base : base+s.kvDim]
		vc := s.valCache[base : base+s.kvDim]
		for i := range kc {
			kc[i] = quant.FP32ToFP16(k[b][i])
			vc[i] = quant.FP32ToFP16(v[b][i])
		}
	}

	// ao = attention of each position over positions 0 .. its own, per
	// query head (the batch's later positions are in the cache already but
	// not looked at)
	s.attention(l, pos, n)
}

// biasPart is the slice of bias (nil when the model has none) for the rows
// of w this instance holds.
func biasPart(bias []float32, w matrix) []float32 {
	if bias == nil {
		return nil
	}
	return bias[w.lo:w.hi]
}
