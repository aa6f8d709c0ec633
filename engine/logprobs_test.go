package engine

import (
	"math"
	"sort"
	"testing"

	"github.com/picolm/picolm-wasm/engine/sample"
)

// logSoftmax is the reference: log p(i) = l[i] - log sum exp(l), in float64.
func logSoftmax(logits []float32) []float64 {
	maxv := math.Inf(-1)
	for _, v := range logits {
		maxv = math.Max(maxv, float64(v))
	}
	var sum float64
	for _, v := range logits {
		sum += math.Exp(float64(v) - maxv)
	}
	out := make([]float64, len(logits))
	for i, v := range logits {
		out[i] = float64(v) - maxv - math.Log(sum)
	}
	return out
}

// TestLogprobs checks the reported log probabilities against the log-softmax
// of the raw logits, recomputed by running the generated tokens again: at
// temperature 1 without constraint, and in JSON mode, where the grammar
// masks the logits but the reported values are the model's own.
func TestLogprobs(t *testing.T) {
	m := loadModel(t, "stories260K.gguf")
	prompt := m.Tokenizer.Encode("Once upon a time", true)
	for _, c := range []struct {
		name string
		o    GenerateOptions
	}{
		{"sampled", GenerateOptions{MaxTokens: 24, Sampling: sample.Params{Temperature: 1, Seed: 3}}},
		{"greedy", GenerateOptions{MaxTokens: 24}},
		{"json", GenerateOptions{MaxTokens: 24, JSON: true, Sampling: sample.Params{Temperature: 1, Seed: 5}}},
	} {
		const top = 7
		lp := NewLogprobs(top)
		c.o.Logprobs = lp
		type step struct {
			id      int
			logprob float32
			top     []TokenLogprob
		}
		var steps []step
		s := newSession(t, m, SessionOptions{Context: 128, Threads: 1})
		if _, err := s.Generate(prompt, c.o, func(id int, _ []byte) bool {
			if id >= 0 {
				steps = append(steps, step{id, lp.Logprob, append([]TokenLogprob(nil), lp.Top...)})
			}
			return true
		}); err != nil {
			t.Fatal(err)
		}
		if len(steps) == 0 {
			t.Fatalf("%s: nothing generated", c.name)
		}
		ref := newSession(t, m, SessionOptions{Context: 128, Threads: 1})
		logits, err := ref.Prefill(prompt)
		if err != nil {
			t.Fatal(err)
		}
		below := 0
		for k, st := range steps {
			want := logSoftmax(logits)
			if d := math.Abs(float64(st.logprob) - want[st.id]); d > 1e-4 {
				t.Fatalf("%s: token %d (%d): logprob %v, want %v", c.name, k, st.id, st.logprob, want[st.id])
			}
			ids := make([]int, len(want))
			for i := range ids {
				ids[i] = i
			}
			sort.SliceStable(ids, func(a, b int) bool { return logits[ids[a]] > logits[ids[b]] })
			if len(st.top) != top {
				t.Fatalf("%s: %d alternatives, want %d", c.name, len(st.top), top)
			}
			for i, alt := range st.top {
				if alt.ID != ids[i] || math.Abs(float64(alt.Logprob)-want[ids[i]]) > 1e-4 {
					t.Fatalf("%s: token %d: alternative %d is %+v, want id %d logprob %v", c.name, k, i, alt, ids[i], want[ids[i]])
				}
			}
			if c.name == "greedy" && st.top[0].ID != st.id {
				t.Errorf("greedy token %d is %d, not the most likely %d", k, st.id, st.top[0].ID)
			}
			if st.logprob < st.top[top-1].Logprob {
				below++ // a token outside the top 7: the grammar forced it, or sampling drew it
			}
			if logits, err = ref.Forward(st.id); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("%s: %d tokens, %d of them outside the top %d", c.name, len(steps), below, top)
	}
}

func TestLogprobsAllocs(t *testing.T) {
	lp := NewLogprobs(MaxTopLogprobs)
	logits := make([]float32, 32000)
	for i := range logits {
		logits[i] = float32(math.Sin(float64(i)))
	}
	if a := testing.AllocsPerRun(20, func() { lp.observe(logits); lp.set(logits[5]) }); a != 0 {
		t.Errorf("%.1f allocations per token", a)
	}
	if len(lp.Top) != MaxTopLogprobs || lp.Top[0].Logprob < lp.Top[1].Logprob {
		t.Errorf("top %+v", lp.Top[:2])
	}
	var sum float64
	for _, v := range logSoftmax(logits) {
		sum += math.Exp(v)
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Fatalf("reference sums to %v", sum)
	}
	if NewLogprobs(-3).Top != nil && cap(NewLogprobs(-3).Top) != 0 || cap(NewLogprobs(99).Top) != MaxTopLogprobs {
		t.Errorf("NewLogprobs does not clamp")
	}
}
