package engine

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

// MaxTopLogprobs is the most alternatives Logprobs reports per token
// (OpenAI's limit for top_logprobs).
const MaxTopLogprobs = 20

// TokenLogprob is a token and its log-probability.
type TokenLogprob struct {
	ID      int
	Logprob float32
}

// Logprobs receives, for each sampled token, its log-probability under the
// model's own distribution: the log-softmax of the raw logits, before any
// grammar mask, temperature or filter changes them (so a token the grammar
// forced can have a low one). Generate fills it just before each call of
// emit with a token id (not the final flush, id -1). Make one with
// NewLogprobs; filling it allocates nothing.
type Logprobs struct {
	Logprob float32        // of the token emit receives
	Top     []TokenLogprob // the most likely tokens at that step, most likely first (ties: lower id); len is the number asked for
	top     []TokenLogprob // [n] working copy, filled by observe
	lse     float64        // log of the sum of exp(logit) of the last observed row
}

// NewLogprobs returns a Logprobs that reports top alternatives per token
// (clamped to 0..MaxTopLogprobs).
func NewLogprobs(top int) *Logprobs {
	top = min(max(top, 0), MaxTopLogprobs)
	return &Logprobs{Top: make([]TokenLogprob, 0, top), top: make([]TokenLogprob, 0, top)}
}

// observe reads a row of raw logits: its log-sum-exp and its top tokens.
// NaN logits count as -Inf.
func (l *Logprobs) observe(logits []float32) {
	maxv := float32(math.Inf(-1))
	for _, v := range logits {
		if v > maxv {
			maxv = v
		}
	}
	var sum float64
	for _, v := range logits {
		if v > float32(math.Inf(-1)) {
			sum += math.Exp(float64(v - maxv))
		}
	}
	l.lse = float64(maxv) + math.Log(sum)
	if math.IsInf(float64(maxv), 0) || math.IsNaN(l.lse) {
		l.lse = float64(maxv)
	}
	// Top n by insertion into a sorted list: a logit below the list's last
	// is one comparison.
	n := cap(l.top)
	top := l.top[:0]
	for id, v := range logits {
		if n == 0 || !(v > float32(math.Inf(-1))) {
			continue
		}
		if len(top) == n && v <= top[n-1].Logprob {
			continue
		}
		if len(top) < n {
			top = append(top, TokenLogprob{})
		}
		i := len(top) - 1
		for i > 0 && v > top[i-1].Logprob {
			top[i] = top[i-1]
			i--
		}
		top[i] = TokenLogprob{ID: id, Logprob: v}
	}
	l.top = top
}

// set fills the reported values for token id, whose raw logit is raw.
func (l *Logprobs) set(raw float32) {
	l.Logprob = float32(float64(raw) - l.lse)
	l.Top = l.Top[:len(l.top)]
	for i, t := range l.top {
		l.Top[i] = TokenLogprob{ID: t.ID, Logprob: float32(float64(t.Logprob) - l.lse)}
	}
}

// TokenText is token id's text and bytes as a log-probability entry shows
// them: the bytes it adds to the output (a control token's own text, such as
// "</s>"), and as text those bytes when they are valid UTF-8, else "bytes:"
// and their escapes (\xe2...), as OpenAI writes a token that holds part of a
// character.
func (m *Model) TokenText(id int) (string, []int) {
	tk := m.Tokenizer
	p := tk.Piece(id)
	if len(p) == 0 && tk.IsControl(id) {
		p = []byte(tk.Text(id))
	}
	b := make([]int, len(p))
	for i, c := range p {
		b[i] = int(c)
	}
	if utf8.Valid(p) {
		return string(p), b
	}
	var sb strings.Builder
	sb.WriteString("bytes:")
	for _, c := range p {
		fmt.Fprintf(&sb, "\\x%02x", c)
	}
	return sb.String(), b
}
