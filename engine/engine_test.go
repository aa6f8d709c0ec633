package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/picolm/picolm-wasm/engine/sample"
	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

// loadModel loads the shared test model name.
func loadModel(t testing.TB, name string) *Model {
	t.Helper()
	return loadPath(t, shareddata.Path(t, name))
}

// loadPath loads the whole model at path through gguf.Open (a mapping).
func loadPath(t testing.TB, path string) *Model {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	m, err := Load(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

func newSession(t testing.TB, m *Model, o SessionOptions) *Session {
	t.Helper()
	s, err := m.NewSession(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// greedy generates n tokens at temperature 0.
func greedy(t testing.TB, s *Session, prompt []int, n int) ([]int, string) {
	t.Helper()
	var ids []int
	var text []byte
	_, err := s.Generate(prompt, GenerateOptions{MaxTokens: n}, func(id int, b []byte) bool {
		if id >= 0 {
			ids = append(ids, id)
		}
		text = append(text, b...)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids, string(text)
}

// TestForwardAllocatesNothing: the per-token path (forward pass, sampling,
// grammar mask) and Prefill make no heap allocations.
func TestForwardAllocatesNothing(t *testing.T) {
	for _, name := range []string{"stories260K.gguf", "tinyllamas-stories-260k-q8_0.gguf", "synth/synth-small-Q4_K_M.gguf", "llama-2-tiny-random.gguf"} {
		m := loadModel(t, name)
		for _, threads := range []int{1, 2} {
			s := newSession(t, m, SessionOptions{Context: 256, Threads: threads})
			smp := sample.New(m.Config.VocabSize, sample.Params{Temperature: 0.8, TopP: 0.9, Seed: 1})
			g := m.jsonGrammar()
			gs := g.Start()
			tok := m.Tokenizer.BOS()
			dec := m.Tokenizer.NewDecoder()
			text := make([]byte, 0, 64)
			allocs := testing.AllocsPerRun(100, func() {
				logits, err := s.Forward(tok)
				if err != nil {
					t.Fatal(err)
				}
				g.Mask(&gs, logits, 1000)
				tok = smp.Sample(logits)
				if g.Accept(&gs, tok) != nil || gs.Done() {
					gs = g.Start()
				}
				text = dec.Append(text[:0], tok)
			})
			if allocs != 0 {
				t.Errorf("%s, %d threads: %.1f allocations per token", name, threads, allocs)
			}
			// a prompt of 20 tokens (a full batch and a partial one) after the
			// first batch made the batch buffers
			prompt := make([]int, 20)
			for i := range prompt {
				prompt[i] = 1 + i*37%(m.Config.VocabSize-1)
			}
			s = newSession(t, m, SessionOptions{Context: 256, Threads: threads})
			allocs = testing.AllocsPerRun(5, func() {
				if len(s.tokens)+len(prompt) > s.ctx {
					s.Rewind(0)
				}
				if _, err := s.Prefill(prompt); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Errorf("%s, %d threads: %.1f allocations per Prefill", name, threads, allocs)
			}
		}
	}
}

// TestJSONModeAlwaysValid: 200 sampled generations at temperature 1.0 on two
// models, with budgets from tiny to generous, are all complete valid JSON.
func TestJSONModeAlwaysValid(t *testing.T) {
	prompts := []string{"Once upon a time", "The cat", "{\"name\":", "Describe a dog as JSON", ""}
	budgets := []int{4, 6, 9, 16, 40, 120}
	valid, runs := 0, 0
	for _, name := range []string{"stories260K.gguf", "llama-2-tiny-random.gguf"} {
		m := loadModel(t, name)
		s := newSession(t, m, SessionOptions{Context: 512, Threads: 1})
		for i := 0; i < 100; i++ {
			prompt := m.Tokenizer.Encode(prompts[i%len(prompts)], true)
			n := budgets[i%len(budgets)]
			out, count, st, err := generateAll(s, prompt, GenerateOptions{MaxTokens: n, JSON: true,
				Sampling: sample.Params{Temperature: 1.0, TopP: 1.0, Seed: uint64(i + 1)}})
			if err != nil {
				t.Fatalf("%s run %d: %v", name, i, err)
			}
			runs++
			if count > n {
				t.Errorf("%s run %d: %d tokens over the budget of %d", name, i, count, n)
			}
			if json.Valid(out) {
				valid++
			} else {
				t.Errorf("%s run %d (n=%d, stop %s): invalid JSON %q", name, i, n, st.Stop, out)
			}
		}
	}
	t.Logf("%d/%d generations are valid JSON", valid, runs)
}

// TestQ8_0FlatRows: the Q8_0 stories260K stores ffn_down's 172-wide rows as
// one flat block stream. The engine runs it (dequantizing those tensors in
// flat order) and its greedy text stays close to the F32 model's.
func TestQ8_0FlatRows(t *testing.T) {
	f32 := loadModel(t, "stories260K.gguf")
	q8 := loadModel(t, "tinyllamas-stories-260k-q8_0.gguf")
	prompt := f32.Tokenizer.Encode("Once upon a time", true)
	want, wantText := greedy(t, newSession(t, f32, SessionOptions{Threads: 1}), prompt, 64)
	got, gotText := greedy(t, newSession(t, q8, SessionOptions{Threads: 1}), prompt, 64)
	same := 0
	for same < len(got) && same < len(want) && got[same] == want[same] {
		same++
	}
	t.Logf("F32: %q\nQ8_0: %q\nidentical for the first %d of %d tokens", wantText, gotText, same, len(want))
	if same < 20 {
		t.Errorf("the Q8_0 model agrees with F32 for only %d tokens", same)
	}
}

// TestKVCacheFile: a saved prompt state restores exactly (generation from it
// equals generation from scratch), and a file from another model, truncated
// or corrupted is refused.
func TestKVCacheFile(t *testing.T) {
	m := loadModel(t, "stories260K.gguf")
	prompt := m.Tokenizer.Encode("Once upon a time there was a dog", true)
	s := newSession(t, m, SessionOptions{Context: 128, Threads: 1})
	wantIDs, _ := greedy(t, s, prompt, 30)

	var buf bytes.Buffer
	if err := s.WriteCache(&buf, len(prompt)); err != nil {
		t.Fatal(err)
	}
	file := buf.Bytes()

	s2 := newSession(t, m, SessionOptions{Context: 128, Threads: 1})
	n, err := s2.ReadCache(file)
	if err != nil || n != len(prompt) {
		t.Fatalf("ReadCache: %d, %v", n, err)
	}
	var st Stats
	var ids []int
	st, err = s2.Generate(prompt, GenerateOptions{MaxTokens: 30}, func(id int, _ []byte) bool {
		if id >= 0 {
			ids = append(ids, id)
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.CachedTokens != len(prompt)-1 {
		t.Errorf("skipped %d prompt tokens, want %d", st.CachedTokens, len(prompt)-1)
	}
	if !slices.Equal(ids, wantIDs) {
		t.Errorf("from the cache: %v\nfrom scratch: %v", ids, wantIDs)
	}

	other := loadModel(t, "tinyllamas-stories-260k-q8_0.gguf")
	so := newSession(t, other, SessionOptions{Context: 128, Threads: 1})
	flip := bytes.Clone(file)
	flip[len(flip)/2] ^= 1
	small := newSession(t, m, SessionOptions{Context: 4, Threads: 1})
	for _, tc := range []struct {
		name string
		s    *Session
		b    []byte
	}{
		{"other model", so, file},
		{"truncated", s2, file[:len(file)-7]},
		{"corrupted", s2, flip},
		{"empty", s2, nil},
		{"not a cache file", s2, []byte("GGUF this is not a cache file at all, no no no no no no no no no no no no")},
		{"context too small", small, file},
	} {
		n, err := tc.s.ReadCache(tc.b)
		if !errors.Is(err, ErrCacheFile) || n != 0 || tc.s.Pos() != 0 {
			t.Errorf("%s: ReadCache = %d, %v; pos %d", tc.name, n, err, tc.s.Pos())
		} else {
			t.Logf("%s: %v", tc.name, err)
		}
	}
}

// TestContextFull: generation that reaches the end of the context stops with
// StopContext, never writing past the cache.
func TestContextFull(t *testing.T) {
	m := loadModel(t, "stories260K.gguf")
	s := newSession(t, m, SessionOptions{Context: 12, Threads: 1})
	prompt := m.Tokenizer.Encode("Once upon a time", true)
	st, err := s.Generate(prompt, GenerateOptions{MaxTokens: 100}, func(int, []byte) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	if st.Stop != StopContext || s.Pos() != 12 || st.Generated != 12-len(prompt) {
		t.Errorf("stop %s at pos %d after %d tokens", st.Stop, s.Pos(), st.Generated)
	}
	long := make([]int, 13)
	for i := range long {
		long[i] = 1
	}
	if _, err := s.Generate(long, GenerateOptions{MaxTokens: 1}, func(int, []byte) bool { return true }); !errors.Is(err, ErrContext) {
		t.Errorf("a 13-token prompt in a 12-token context: %v", err)
	}
}

// TestThreadsAgree: splitting matrix products over goroutines gives the
// same logits as one thread.
func TestThreadsAgree(t *testing.T) {
	m := loadModel(t, "synth/synth-small-Q4_K_M.gguf")
	prompt := m.Tokenizer.Encode("The cat sat on the mat", true)
	a, _ := greedy(t, newSession(t, m, SessionOptions{Threads: 1}), prompt, 20)
	b, _ := greedy(t, newSession(t, m, SessionOptions{Threads: 3}), prompt, 20)
	if !slices.Equal(a, b) {
		t.Errorf("1 thread %v, 3 threads %v", a, b)
	}
}
