// Package sample picks the next token from a row of logits: greedy argmax, or temperature, top-k, min-p and
// top-p (nucleus) sampling driven by a small seeded PRNG, so a run is reproducible per seed.
//
// The pipeline, for Temperature > 0, is (as llama2.c and picoLM, plus top-k and min-p):
//
//	candidates  every token whose logit is not -Inf or NaN (the JSON grammar masks tokens with -Inf)
//	temperature w[i] = exp((logit[i] - max) / Temperature)        (unnormalised softmax; the max has w = 1)
//	top-k       keep the TopK highest logits (ties: the lower token id wins)
//	min-p       keep w[i] >= MinP * w[max] = MinP                 (the most likely token is always kept)
//	top-p       keep the smallest set of most likely tokens whose probability mass reaches TopP
//	draw        one token with probability w[i] / sum(w) over the kept set
//
// Sample allocates nothing: every buffer is sized for the vocabulary in New. Top-p does not sort the
// vocabulary: a token whose probability is below (1-TopP)/(n-1) can never be in the nucleus (all of them
// together hold less than 1-TopP of the mass), so only the candidates above that cutoff go into a heap, and
// the heap is popped only until the nucleus is complete.
package sample

import "math"

// Params are the sampling settings. The zero value of each filter turns it off.
type Params struct {
	Temperature float32 // <= 0 (or NaN): greedy argmax
	TopP        float32 // nucleus mass in (0, 1); <= 0 or >= 1: off
	TopK        int     // keep the K most likely tokens; <= 0: off
	MinP        float32 // keep tokens with p >= MinP * p(most likely); <= 0: off
	Seed        uint64  // PRNG seed; every seed (0 included) is valid
}

// DefaultParams returns picoLM's defaults: temperature 0.8, top-p 0.9, seed 42, top-k and min-p off.
func DefaultParams() Params {
	return Params{Temperature: 0.8, TopP: 0.9, Seed: 42}
}

// Sampler samples token ids. It is not safe for concurrent use; use one Sampler per generation stream.
type Sampler struct {
	p    Params
	rng  rng
	w    []float32 // [vocab] unnormalised probability of each candidate, indexed by token id
	cand []int32   // [vocab] candidate token ids (working set, filtered in place)
}

// New returns a sampler for a vocabulary of vocabSize tokens with all its buffers allocated.
func New(vocabSize int, p Params) *Sampler {
	if vocabSize < 0 {
		vocabSize = 0
	}
	s := &Sampler{p: p, w: make([]float32, vocabSize), cand: make([]int32, vocabSize)}
	s.rng.seed(p.Seed)
	return s
}

// Params returns the sampler's settings.
func (s *Sampler) Params() Params { return s.p }

// Reset restarts the random sequence from seed (the other settings are kept).
func (s *Sampler) Reset(seed uint64) {
	s.p.Seed = seed
	s.rng.seed(seed)
}

// Argmax returns the index of the largest logit, the lowest index on ties. NaN never wins. When every
// logit is -Inf or NaN (or logits is empty) it returns 0.
func Argmax(logits []float32) int {
	best := 0
	bv := float32(math.Inf(-1))
	for i, v := range logits {
		if v > bv {
			best, bv = i, v
		}
	}
	return best
}

// Sample returns the next token id. Only the first vocabSize logits are read, and logits is not modified.
// A logit of -Inf (a token masked by the grammar) or NaN is never chosen while any other token remains;
// if every logit is -Inf or NaN, Sample returns Argmax(logits), which is 0 (the caller's grammar guarantees
// at least one allowed token, so this only happens on misuse). With Temperature <= 0 it is Argmax and the
// random sequence does not advance; otherwise exactly one random number is drawn per call.
func (s *Sampler) Sample(logits []float32) int {
	if len(logits) > len(s.w) {
		logits = logits[:len(s.w)]
	}
	if !(s.p.Temperature > 0) {
		return Argmax(logits)
	}
	u := s.rng.float64() // drawn first so the sequence advances once per call whatever the filters do

	// Candidates and the maximum logit.
	cand := s.cand[:0]
	maxv := float32(math.Inf(-1))
	for i, v := range logits {
		if v > float32(math.Inf(-1)) { // false for -Inf and NaN
			cand = append(cand, int32(i))
			if v > maxv {
				maxv = v
			}
		}
	}
	if len(cand) == 0 {
		return Argmax(logits)
	}
	if math.IsInf(float64(maxv), 1) { // +Inf dominates everything: the first such token
		return Argmax(logits)
	}

	// Top-k on the logits (the order of logits and of probabilities is the same).
	if k := s.p.TopK; k > 0 && k < len(cand) {
		cand = topK(cand, logits, k)
	}

	// Temperature and the unnormalised softmax.
	inv := 1 / float64(s.p.Temperature)
	var sum float64
	for _, id := range cand {
		e := expNeg((float64(logits[id]) - float64(maxv)) * inv)
		s.w[id] = e
		sum += float64(e)
	}

	// Min-p: w[max] is exactly 1, so the threshold is MinP itself.
	if mp := s.p.MinP; mp > 0 && len(cand) > 1 {
		n := 0
		sum = 0
		for _, id := range cand {
			if e := s.w[id]; e >= mp || logits[id] == maxv {
				cand[n] = id
				n++
				sum += float64(e)
			}
		}
		cand = cand[:n]
	}

	// Top-p.
	if tp := s.p.TopP; tp > 0 && tp < 1 && len(cand) > 1 {
		cand, sum = s.nucleus(cand, logits, float64(tp), sum)
	}

	// Draw.
	r := u * sum
	var acc float64
	for _, id := range cand {
		acc += float64(s.w[id])
		if acc > r {
			return int(id)
		}
	}
	// Rounding put r at (or past) the total: the last candidate with weight.
	for i := len(cand) - 1; i >= 0; i-- {
		if s.w[cand[i]] > 0 {
			return int(cand[i])
		}
	}
	return int(cand[0])
}

// better reports whether token a ranks above token b: a higher logit, or the same logit and a lower id.
func better(logits []float32, a, b int32) bool {
	la, lb := logits[a], logits[b]
	return la > lb || (la == lb && a < b)
}

// topK moves the k best candidates (by better) to cand[:k] and returns it. It keeps a min-heap of the k best
// seen so far in cand[:k] (the root is the worst of them): O(n log k), no worst case.
func topK(cand []int32, logits []float32, k int) []int32 {
	h := cand[:k]
	worse := func(a, b int32) bool { return better(logits, b, a) }
	for i := k/2 - 1; i >= 0; i-- {
		siftDown(h, i, worse)
	}
	for _, id := range cand[k:] {
		if better(logits, id, h[0]) {
			h[0] = id
			siftDown(h, 0, worse)
		}
	}
	return h
}

// siftDown restores the heap property below i, where before(a, b) means a belongs nearer the root.
func siftDown(h []int32, i int, before func(a, b int32) bool) {
	n := len(h)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if c+1 < n && before(h[c+1], h[c]) {
			c++
		}
		if !before(h[c], h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// nucleus returns the smallest set of best candidates whose weight reaches tp*sum, and that set's weight.
// Ties in probability are broken as in better, so the set is exactly defined.
func (s *Sampler) nucleus(cand []int32, logits []float32, tp, sum float64) ([]int32, float64) {
	// The candidates below the cutoff, other than the most likely one, are at most n-1 tokens each lighter
	// than the cutoff: together they weigh less than (1-tp)*sum, so they are never needed.
	cutoff := float32((1 - tp) * sum / float64(len(cand)-1))
	n := 0
	for _, id := range cand {
		if s.w[id] >= cutoff || s.w[id] == 1 { // w == 1: a most likely token

			cand[n] = id
			n++
		}
	}
	h := cand[:n]
	before := func(a, b int32) bool { return better(logits, a, b) }
	for i := n/2 - 1; i >= 0; i-- {
		siftDown(h, i, before)
	}
	// Pop the best to the end of h until the mass is reached; the nucleus is h[end:].
	target := tp * sum
	var acc float64
	end := n
	for end > 0 {
		end--
		h[0], h[end] = h[end], h[0]
		acc += float64(s.w[h[end]])
		if acc >= target {
			break
		}
		siftDown(h[:end], 0, before)
	}
	if acc < target { // rounding: everything above the cutoff was taken
		return h, acc
	}
	return h[end:], acc
}

// rng is xorshift64* (Vigna), seeded through splitmix64 so that every seed, 0 included, gives a good
// non-zero state.
type rng struct{ x uint64 }

func (r *rng) seed(seed uint64) {
	z := seed + 0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	z ^= z >> 31
	if z == 0 {
		z = 0x9E3779B97F4A7C15
	}
	r.x = z
}

func (r *rng) next() uint64 {
	r.x ^= r.x >> 12
	r.x ^= r.x << 25
	r.x ^= r.x >> 27
	return r.x * 0x2545F4914F6CDD1D
}

// float64 returns a uniform number in [0, 1) with 53 random bits.
func (r *rng) float64() float64 {
	return float64(r.next()>>11) * (1.0 / (1 << 53))
}
