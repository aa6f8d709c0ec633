package engine

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/picolm/picolm-wasm/engine/synth"
	"github.com/picolm/picolm-wasm/gguf"
)

// archRef is one line of testdata/arch-refs.jsonl: llama.cpp's greedy
// continuation of a prompt on a synthetic model of some architecture, with the
// spec the model is generated from (see scripts/llamaref/README.md).
type archRef struct {
	Model     string     `json:"model"`
	Spec      synth.Spec `json:"spec"`
	SHA256    string     `json:"sha256"`
	Prompt    string     `json:"prompt"`
	PromptIDs []int      `json:"prompt_ids"`
	IDs       []int      `json:"ids"`
	Margins   []float64  `json:"margins"`
}

// TestArchitecturesMatchLlamaCpp regenerates every synthetic model of
// testdata/arch-refs.jsonl (Llama 3 rope_freqs, Qwen2 biases and NeoX rope,
// Phi-3 fused QKV and gate/up, SmolLM tied output), checks it is the file
// llama.cpp ran, and compares the prompt's tokens and the greedy continuation
// with llama.cpp's, token for token. A divergence is accepted only at a step
// whose llama.cpp top-1/top-2 margin was below 0.01.
func TestArchitecturesMatchLlamaCpp(t *testing.T) {
	refs := readArchRefs(t)
	dir := t.TempDir()
	models := map[string]*Model{}
	matched := map[string][2]int{}
	var order []string
	for _, r := range refs {
		m, ok := models[r.Model]
		if !ok {
			m = writeArchModel(t, dir, r)
			models[r.Model] = m
			order = append(order, r.Model)
		}
		if got := m.Tokenizer.Encode(r.Prompt, true); !slices.Equal(got, r.PromptIDs) {
			t.Errorf("%s %q: prompt tokens %v, llama.cpp %v", r.Model, r.Prompt, got, r.PromptIDs)
		}
		s := newSession(t, m, SessionOptions{Threads: 1})
		var logits []float32
		var err error
		for _, id := range r.PromptIDs {
			if logits, err = s.Forward(id); err != nil {
				t.Fatal(err)
			}
		}
		full := true
		for i, want := range r.IDs {
			got, _ := top2(logits)
			if got != want {
				full = false
				if r.Margins[i] < 0.01 {
					t.Logf("%s %q: diverged at step %d where llama.cpp's margin is %.4g (accepted)", r.Model, r.Prompt, i, r.Margins[i])
				} else {
					t.Errorf("%s %q: step %d: token %d, llama.cpp %d (margin %.4g)", r.Model, r.Prompt, i, got, want, r.Margins[i])
				}
				break
			}
			if logits, err = s.Forward(want); err != nil {
				t.Fatal(err)
			}
		}
		n := matched[r.Model]
		n[1]++
		if full {
			n[0]++
		}
		matched[r.Model] = n
	}
	for _, name := range order {
		t.Logf("%s (%s): %d of %d prompts match llama.cpp for all tokens", name, models[name].Config.Arch, matched[name][0], matched[name][1])
	}
}

func readArchRefs(t *testing.T) []archRef {
	t.Helper()
	fh, err := os.Open(filepath.Join("testdata", "arch-refs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var refs []archRef
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r archRef
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if len(r.IDs) == 0 || len(r.Margins) != len(r.IDs) {
			t.Fatalf("%s %q: %d ids, %d margins", r.Model, r.Prompt, len(r.IDs), len(r.Margins))
		}
		refs = append(refs, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(refs) < 10 {
		t.Fatalf("only %d reference cases", len(refs))
	}
	return refs
}

// writeArchModel generates r's model, checks its bytes are those llama.cpp
// ran, and loads it.
func writeArchModel(t *testing.T, dir string, r archRef) *Model {
	t.Helper()
	path := filepath.Join(dir, r.Model+".gguf")
	if err := r.Spec.Write(path, testdata); err != nil {
		t.Fatalf("%s: %v", r.Model, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != r.SHA256 {
		t.Fatalf("%s: the generator now writes other bytes (sha256 %x, llama.cpp ran %s): regenerate the references (scripts/llamaref/README.md)", r.Model, sum, r.SHA256)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	m, err := Load(f)
	if err != nil {
		t.Fatalf("%s: %v", r.Model, err)
	}
	return m
}
