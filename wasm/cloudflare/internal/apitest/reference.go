package apitest

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/picolm/picolm-wasm/engine"
	"github.com/picolm/picolm-wasm/engine/sample"
	"github.com/picolm/picolm-wasm/gguf"
)

// LoadModel parses and loads the GGUF file b, failing t if it cannot.
func LoadModel(t testing.TB, b []byte) *engine.Model {
	t.Helper()
	f, err := gguf.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	m, err := engine.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Greedy generates greedily with the engine directly, as the Worker should
// for a temperature-0 completion: BOS + prompt, n tokens.
func Greedy(t testing.TB, m *engine.Model, prompt string, n int) string {
	t.Helper()
	sess, err := m.NewSession(engine.SessionOptions{Context: 512, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	var b strings.Builder
	if _, err := sess.Generate(m.Tokenizer.Encode(prompt, true), engine.GenerateOptions{MaxTokens: n, Sampling: sample.Params{}},
		func(_ int, text []byte) bool { b.Write(text); return true }); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// Concurrent posts n completions requests at once to url (a
// /v1/completions endpoint) through c: request i asks for tokens greedy
// tokens after prompts[i%len(prompts)], streamed when i is even. It returns
// an error for each answer that is not a 200 whose text is want[prompt].
func Concurrent(c *http.Client, url string, n, tokens int, prompts []string, want map[string]string) []error {
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := prompts[i%len(prompts)]
			stream := i%2 == 0
			body := fmt.Sprintf(`{"prompt":%q,"max_tokens":%d,"temperature":0,"stream":%v}`, p, tokens, stream)
			res, err := c.Post(url, "application/json", strings.NewReader(body))
			if err != nil {
				errs <- err
				return
			}
			defer res.Body.Close()
			b, err := io.ReadAll(res.Body)
			if err != nil || res.StatusCode != http.StatusOK {
				errs <- fmt.Errorf("request %d: %d %v %s", i, res.StatusCode, err, b)
				return
			}
			got, err := answerText(b, stream)
			if err != nil {
				errs <- fmt.Errorf("request %d: %v", i, err)
			} else if got != want[p] {
				errs <- fmt.Errorf("request %d (%q, stream %v): %q, want %q", i, p, stream, got, want[p])
			}
		}()
	}
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	return all
}

// answerText is the text of a completion: a JSON one, or when stream an
// event stream that ended with [DONE].
func answerText(b []byte, stream bool) (string, error) {
	if stream {
		st, err := parseDone(b)
		return st.Text, err
	}
	c, err := DecodeCompletion(b)
	return c.Text(), err
}
