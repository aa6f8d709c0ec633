// Command featref prints, as JSON, what the engine computes natively for the
// browser tests of web/openai.js to compare with (web/test/features.test.mjs):
// the embeddings of texts (engine.Session.Embed, text with BOS first) and the
// log-probabilities of a greedy generation (engine.Logprobs).
//
//	go run ./wasm/browser/worker/internal/featref -prompt "Once upon a time" -n 8 -top 3 [MODEL.gguf] TEXT...
//
// Without MODEL.gguf (a first argument ending in .gguf) the built-in
// stories260K is used.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/picolm/picolm-wasm/engine"
	"github.com/picolm/picolm-wasm/engine/sample"
	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/wasm/internal/defaultmodel"
)

type entry struct {
	Token   int     `json:"token"`
	Logprob float32 `json:"logprob"`
	Top     []struct {
		ID      int     `json:"id"`
		Logprob float32 `json:"logprob"`
	} `json:"top"`
}

func main() {
	prompt := flag.String("prompt", "", "generate greedily from this prompt and print the logprobs")
	n := flag.Int("n", 8, "tokens to generate")
	top := flag.Int("top", 3, "top_logprobs")
	flag.Parse()
	args := flag.Args()
	b := defaultmodel.Bytes()
	if len(args) > 0 && strings.HasSuffix(args[0], ".gguf") {
		var err error
		if b, err = os.ReadFile(args[0]); err != nil {
			fail(err)
		}
		args = args[1:]
	}
	f, err := gguf.Parse(b)
	if err != nil {
		fail(err)
	}
	m, err := engine.Load(f)
	if err != nil {
		fail(err)
	}
	s, err := m.NewSession(engine.SessionOptions{Context: 512, Threads: 1})
	if err != nil {
		fail(err)
	}
	out := struct {
		Embeddings [][]float32 `json:"embeddings"`
		Tokens     []int       `json:"tokens"`
		Logprobs   []entry     `json:"logprobs"`
	}{Embeddings: [][]float32{}, Tokens: []int{}, Logprobs: []entry{}}
	for _, text := range args {
		toks := m.Tokenizer.Encode(text, true)
		v := make([]float32, m.Config.Dim)
		if err := s.Embed(toks, v); err != nil {
			fail(err)
		}
		out.Embeddings = append(out.Embeddings, v)
		out.Tokens = append(out.Tokens, len(toks))
	}
	if *prompt != "" {
		lp := engine.NewLogprobs(*top)
		_, err := s.Generate(m.Tokenizer.Encode(*prompt, true), engine.GenerateOptions{MaxTokens: *n, Sampling: sample.Params{Temperature: 0}, Logprobs: lp}, func(id int, _ []byte) bool {
			if id >= 0 {
				e := entry{Token: id, Logprob: lp.Logprob}
				for _, t := range lp.Top {
					e.Top = append(e.Top, struct {
						ID      int     `json:"id"`
						Logprob float32 `json:"logprob"`
					}{t.ID, t.Logprob})
				}
				out.Logprobs = append(out.Logprobs, e)
			}
			return true
		})
		if err != nil {
			fail(err)
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "featref:", err)
	os.Exit(1)
}
