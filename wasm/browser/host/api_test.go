package host

import (
	"encoding/json"
	"errors"
	"github.com/picolm/picolm-wasm/engine/grammar"
	"strings"
	"testing"

	"github.com/picolm/picolm-wasm/engine"
	"github.com/picolm/picolm-wasm/engine/chat"
)

func builtin(t testing.TB) *Worker {
	t.Helper()
	w := New()
	if _, err := w.LoadDefault(); err != nil {
		t.Fatal(err)
	}
	return w
}

// A stop sequence ends the generation at once: the text before it is
// emitted, the rest is not, and the stats say so.
func TestStopSequences(t *testing.T) {
	w := builtin(t)
	full, d := collect(t, w, GenerateRequest{Prompt: "Once upon a time", MaxTokens: 64})
	if d.Generated != 64 {
		t.Fatalf("reference run: %+v", d)
	}
	// A word from the middle of the greedy text, and one that never occurs.
	words := strings.Fields(full)
	stop := " " + words[len(words)/2]
	cut := strings.Index(full, stop)
	got, d := collect(t, w, GenerateRequest{Prompt: "Once upon a time", MaxTokens: 64, Stop: []string{"never in a story", stop}})
	if got != full[:cut] || d.Stop != StopSequence || d.Generated >= 64 {
		t.Errorf("stop %q: got %q (%+v), want %q", stop, got, d, full[:cut])
	}
	got, d = collect(t, w, GenerateRequest{Prompt: "Once upon a time", MaxTokens: 64, Stop: []string{"never in a story"}})
	if got != full || d.Stop != "max_tokens" {
		t.Errorf("a stop that never occurs: got %q (%+v)", got, d)
	}
	for _, stops := range [][]string{{""}, {strings.Repeat("x", MaxStopBytes+1)}, make([]string, MaxStops+1)} {
		_, err := w.Generate(GenerateRequest{Prompt: "Once", MaxTokens: 4, Stop: stops}, func(Token) bool { return true })
		if !errors.Is(err, ErrBadParams) || Code(err) != CodeBadRequest {
			t.Errorf("%d stops: %v", len(stops), err)
		}
	}
}

// A GBNF grammar and a JSON schema constrain the output; the schema's
// compiled grammar is kept for the next request; bad ones are bad requests.
func TestGrammarAndSchema(t *testing.T) {
	w := builtin(t)
	for seed := uint64(1); seed <= 4; seed++ {
		got, d := collect(t, w, GenerateRequest{Prompt: "Once upon a time", MaxTokens: 16, Temperature: 1, Seed: seed, Grammar: `root ::= "yes" | "no"`})
		if (got != "yes" && got != "no") || d.Stop != "grammar" {
			t.Errorf("seed %d: %q (%+v)", seed, got, d)
		}
	}
	schema := `{"type":"object","properties":{"n":{"type":"integer"},"ok":{"type":"boolean"}},"required":["n","ok"],"additionalProperties":false}`
	var first *grammar.GBNF
	for seed := uint64(1); seed <= 4; seed++ {
		got, d := collect(t, w, GenerateRequest{Prompt: "Once upon a time", MaxTokens: 64, Temperature: 1, Seed: seed, JSONSchema: schema})
		var v struct {
			N  *json.Number `json:"n"`
			OK *bool        `json:"ok"`
		}
		dec := json.NewDecoder(strings.NewReader(got))
		dec.DisallowUnknownFields()
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil || v.N == nil || v.OK == nil || strings.ContainsAny(v.N.String(), ".eE") {
			t.Errorf("seed %d: %q is not an instance (%v, %+v)", seed, got, err, d)
		}
		g, _ := w.grams.Lookup("schema\x00" + schema)
		if seed == 1 {
			first = g
		} else if g != first || g == nil {
			t.Errorf("seed %d: the schema was compiled again", seed)
		}
	}
	for _, r := range []GenerateRequest{
		{Grammar: `root ::= undefined`, MaxTokens: 8},
		{JSONSchema: `{"type":"object","frobnicate":1}`, MaxTokens: 8},
		{JSONSchema: `{"type":`, MaxTokens: 8},
		{Grammar: `root ::= "a"`, JSONSchema: `{}`, MaxTokens: 8},
		{Grammar: `root ::= "a"`, JSON: true, MaxTokens: 8},
		// The shortest sentence takes more tokens than max_tokens allows.
		{Grammar: `root ::= "abcdefghijklmnopqrstuvwxyz"`, MaxTokens: 2},
	} {
		r.Prompt = "Once"
		_, err := w.Generate(r, func(Token) bool { return true })
		if !errors.Is(err, ErrBadParams) || Code(err) != CodeBadRequest {
			t.Errorf("%+v: %v (code %s)", r, err, Code(err))
		}
	}
}

// A prompt longer than the context is context_full.
func TestContextFull(t *testing.T) {
	w := builtin(t)
	long := strings.Repeat("Once upon a time there was a dog. ", 400)
	_, err := w.Generate(GenerateRequest{Prompt: long, MaxTokens: 4}, func(Token) bool { return true })
	if !errors.Is(err, engine.ErrContext) || Code(err) != CodeContextFull {
		t.Errorf("long prompt: %v (code %s)", err, Code(err))
	}
	if _, err := New().Generate(GenerateRequest{Prompt: "a"}, func(Token) bool { return true }); Code(err) != CodeNoModel {
		t.Errorf("no model: %v", err)
	}
}

// A chat's next turn, sent with the earlier turns as they were generated,
// prefills only its new tokens: every token of the first turn's prompt and
// reply comes from the KV cache. Both with the plain transcript and with a
// chat template, replies of 12 to 300 tokens. (A reply in which
// the model generated a control token that has no text, as stories260K's BOS
// between two stories, is reused only up to that token: its text does not
// hold it. The plain transcript's 300-token reply has one at token 246.)
func TestChatTurnsReuseTheCache(t *testing.T) {
	plain := builtin(t)
	zephyr := New()
	load(t, zephyr, "zephyr.gguf", withTemplate(t, "zephyr"))
	for name, w := range map[string]*Worker{"plain": plain, "zephyr": zephyr} {
		for _, maxTokens := range []int{12, 60, 300} {
			if name == "plain" && maxTokens == 300 {
				continue
			}
			msgs := []chat.Message{{Role: "user", Content: "Tell me a story about a cat."}}
			reply, d1 := collect(t, w, GenerateRequest{Messages: msgs, MaxTokens: maxTokens})
			msgs = append(msgs, chat.Message{Role: "assistant", Content: reply}, chat.Message{Role: "user", Content: "And then?"})
			_, d2 := collect(t, w, GenerateRequest{Messages: msgs, MaxTokens: 8})
			t.Logf("%s, maxTokens %d: turn 1 %d+%d tokens (%s), turn 2 prefilled %d of %d", name, maxTokens, d1.PromptTokens, d1.Generated, d1.Stop, d2.PromptTokens-d2.CachedTokens, d2.PromptTokens)
			if d2.CachedTokens != d1.PromptTokens+d1.Generated || d2.PromptTokens <= d2.CachedTokens {
				t.Errorf("%s, maxTokens %d: turn 1 %d prompt + %d generated tokens (%s), turn 2 %d prompt tokens, %d cached",
					name, maxTokens, d1.PromptTokens, d1.Generated, d1.Stop, d2.PromptTokens, d2.CachedTokens)
			}
		}
	}
}
