package server

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/picolm/picolm-wasm/engine"
	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/wasm/cloudflare/internal/apitest"
)

// TestJSONTinyMaxTokens: response_format json_object with max_tokens 1 to 4
// gives one complete JSON value within the budget, on both endpoints,
// streamed or not, on both test models: stories260K (built in, no "{}"
// token: a digit at 1) and llama-2-tiny-random (Llama 2's 32k vocabulary).
// The engine used to stop after "[" or "{" at max_tokens 1.
func TestJSONTinyMaxTokens(t *testing.T) {
	s, _ := newServer(t, Config{})
	f, err := gguf.Open("../../../../../shared/testdata/llama-2-tiny-random.gguf")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	m, err := engine.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	llama, err := New(m, Config{Context: 128}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for name, srv := range map[string]*Server{"stories260K": s, "llama-2-tiny-random": llama} {
		for n := 1; n <= 4; n++ {
			for seed := range 4 {
				for _, path := range []string{"/v1/completions", "/v1/chat/completions"} {
					input := `"prompt":"Once upon a time"`
					if path == "/v1/chat/completions" {
						input = `"messages":[{"role":"user","content":"Give JSON"}]`
					}
					stream := seed%2 == 1
					body := fmt.Sprintf(`{%s,"max_tokens":%d,"temperature":1,"seed":%d,"stream":%v,"response_format":{"type":"json_object"}}`,
						input, n, seed, stream)
					w := do(t, srv, "POST", path, body)
					if w.Code != 200 {
						t.Fatalf("%s %s: %d %s", name, body, w.Code, w.Body)
					}
					var text string
					if stream {
						text, _, _ = readSSE(t, w.Body.Bytes())
					} else {
						c := apitest.MustCompletion(t, w.Body.Bytes())
						text = c.Text()
						if c.Usage == nil || c.Usage.CompletionTokens > n {
							t.Errorf("%s %s: usage %+v", name, body, c.Usage)
						}
					}
					if !json.Valid([]byte(text)) {
						t.Errorf("%s %s: %q is not complete JSON", name, body, text)
					}
				}
			}
		}
	}
}
