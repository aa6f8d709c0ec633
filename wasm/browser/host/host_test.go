package host

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/picolm/picolm-wasm/engine/chat"
	"github.com/picolm/picolm-wasm/scripts/shareddata"
	"github.com/picolm/picolm-wasm/wasm/internal/defaultmodel"
)

func collect(t *testing.T, w *Worker, r GenerateRequest) (string, Done) {
	t.Helper()
	var b strings.Builder
	last := 0
	d, err := w.Generate(r, func(tok Token) bool {
		if tok.Count < last {
			t.Errorf("token count went back from %d to %d", last, tok.Count)
		}
		last = tok.Count
		b.WriteString(tok.Text)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String(), d
}

// The built-in model's greedy continuations are llama.cpp's.
func TestBuiltinGreedyMatchesLlamaCpp(t *testing.T) {
	w := New()
	info, err := w.LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	if !info.BuiltIn || info.VocabSize != 512 || info.Context != min(DefaultContext, info.TrainCtx) {
		t.Errorf("info = %+v", info)
	}
	for _, ref := range shareddata.References(t, "reference/stories260K-greedy.jsonl") {
		got, d := collect(t, w, GenerateRequest{Prompt: ref.Prompt, MaxTokens: ref.NPredict})
		if got != strings.TrimSuffix(ref.Continuation, "\n") && got != ref.Continuation {
			t.Errorf("%q:\n got %q\nwant %q", ref.Prompt, got, ref.Continuation)
		}
		if d.Generated != ref.NPredict || d.Stop != "max_tokens" || d.Prompt != ref.Prompt {
			t.Errorf("%q: done = %+v", ref.Prompt, d)
		}
	}
}

func TestTooLargeRefusedBeforeAllocating(t *testing.T) {
	w := New()
	err := w.Begin("huge.gguf", MaxModelBytes+1)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	if w.buf != nil {
		t.Error("a buffer was allocated")
	}
	if !strings.Contains(err.Error(), "huge.gguf") || !strings.Contains(err.Error(), "GB") {
		t.Errorf("message does not say what and how much: %v", err)
	}
	if err := w.Begin("empty.gguf", 0); !errors.Is(err, ErrLoading) {
		t.Errorf("empty file: err = %v", err)
	}
}

// A file streamed in uneven chunks loads and the model stays a view into the
// one buffer that Begin allocated.
func TestStreamedLoad(t *testing.T) {
	b, err := os.ReadFile(shareddata.Path(t, "llama-2-tiny-random.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	w := New()
	if err := w.Begin("tiny.gguf", int64(len(b))); err != nil {
		t.Fatal(err)
	}
	buf := w.buf
	for off, n := 0, 1; off < len(b); off, n = off+n, n*3 {
		n = min(n, len(b)-off)
		dst, err := w.Next(n)
		if err != nil {
			t.Fatal(err)
		}
		copy(dst, b[off:off+n])
	}
	info, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if info.Bytes != int64(len(b)) || info.BuiltIn || !strings.Contains(info.Name, "tiny.gguf") {
		t.Errorf("info = %+v", info)
	}
	if &w.file.Bytes()[0] != &buf[0] {
		t.Error("the parsed file is not the loading buffer")
	}
	if _, d := collect(t, w, GenerateRequest{Prompt: "Hello", MaxTokens: 8, Temperature: 0}); d.Generated == 0 {
		t.Errorf("done = %+v", d)
	}
}

func TestLoadProtocolErrors(t *testing.T) {
	w := New()
	if _, err := w.Next(1); !errors.Is(err, ErrLoading) {
		t.Errorf("chunk before begin: %v", err)
	}
	if _, err := w.Finish(); !errors.Is(err, ErrLoading) {
		t.Errorf("finish before begin: %v", err)
	}
	if err := w.Begin("a.gguf", 10); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Next(11); !errors.Is(err, ErrLoading) {
		t.Errorf("overflow: %v", err)
	}
	if err := w.Begin("a.gguf", 10); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Next(4); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Finish(); !errors.Is(err, ErrLoading) || !strings.Contains(err.Error(), "4 of the announced 10") {
		t.Errorf("short file: %v", err)
	}
}

// A malformed GGUF and a non-GGUF file become errors; the worker then loads
// and runs a model as before.
func TestBadFilesThenRecover(t *testing.T) {
	good := defaultmodel.Bytes()
	truncated := good[:len(good)/2]
	for name, b := range map[string][]byte{
		"truncated.gguf": truncated,
		"notes.txt":      []byte("this is not a model, just some text\n"),
	} {
		w := New()
		if _, err := w.LoadDefault(); err != nil {
			t.Fatal(err)
		}
		if err := w.Begin(name, int64(len(b))); err != nil {
			t.Fatal(err)
		}
		dst, _ := w.Next(len(b))
		copy(dst, b)
		_, err := w.Finish()
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: err = %v", name, err)
		}
		if _, ok := w.Info(); ok {
			t.Errorf("%s: a model is still loaded", name)
		}
		if _, err := w.Generate(GenerateRequest{Prompt: "x"}, func(Token) bool { return true }); !errors.Is(err, ErrNoModel) {
			t.Errorf("%s: generate without a model: %v", name, err)
		}
		if _, err := w.LoadDefault(); err != nil {
			t.Fatal(err)
		}
		if _, d := collect(t, w, GenerateRequest{Prompt: "Once", MaxTokens: 5}); d.Generated != 5 {
			t.Errorf("%s: after recovery: %+v", name, d)
		}
	}
}

// Stop ends a generation after the current token; the next one runs fully
// and reuses the cached prompt.
func TestStopThenGenerateAgain(t *testing.T) {
	w := New()
	if _, err := w.LoadDefault(); err != nil {
		t.Fatal(err)
	}
	n := 0
	d, err := w.Generate(GenerateRequest{Prompt: "Once upon a time", MaxTokens: 100}, func(tok Token) bool {
		n++
		if tok.Count == 10 {
			w.Stop()
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if d.Stop != "stopped" || d.Generated != 10 || n != 10 {
		t.Errorf("stopped run: %+v after %d tokens", d, n)
	}
	w.Stop() // no generation running: no effect on the next one
	_, d = collect(t, w, GenerateRequest{Prompt: "Once upon a time", MaxTokens: 20})
	if d.Stop != "max_tokens" || d.Generated != 20 || d.CachedTokens != d.PromptTokens-1 {
		t.Errorf("next run: %+v", d)
	}
}

func TestJSONOutputParses(t *testing.T) {
	w := New()
	if _, err := w.LoadDefault(); err != nil {
		t.Fatal(err)
	}
	for seed := uint64(1); seed <= 5; seed++ {
		got, d := collect(t, w, GenerateRequest{Prompt: "Once upon a time", JSON: true, MaxTokens: 64, Temperature: 0.8, TopP: 0.9, Seed: seed})
		if !json.Valid([]byte(got)) {
			t.Errorf("seed %d: not JSON (%s): %q", seed, d.Stop, got)
		}
	}
}

func TestBadParams(t *testing.T) {
	w := New()
	if _, err := w.LoadDefault(); err != nil {
		t.Fatal(err)
	}
	for _, r := range []GenerateRequest{{MaxTokens: -1}, {TopP: 1.5}, {Temperature: -1}, {TopK: -3}} {
		if _, err := w.Generate(r, func(Token) bool { return true }); !errors.Is(err, ErrBadParams) {
			t.Errorf("%+v: %v", r, err)
		}
	}
}

// withTemplate is the built-in model with a builtin chat template added.
func withTemplate(t *testing.T, family string) []byte {
	t.Helper()
	src, ok := chat.Builtin(family)
	if !ok {
		t.Fatalf("no builtin %s", family)
	}
	b, err := defaultmodel.WithChatTemplate(src)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func load(t *testing.T, w *Worker, name string, b []byte) ModelInfo {
	t.Helper()
	if err := w.Begin(name, int64(len(b))); err != nil {
		t.Fatal(err)
	}
	dst, err := w.Next(len(b))
	if err != nil {
		t.Fatal(err)
	}
	copy(dst, b)
	info, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func TestChatTemplates(t *testing.T) {
	msgs := []chat.Message{{Role: "user", Content: "Hi there"}, {Role: "assistant", Content: "Hello!"}, {Role: "user", Content: "Tell a story"}}
	for family, want := range map[string]string{
		"zephyr": "<|user|>\nHi there</s>\n<|assistant|>\nHello!</s>\n<|user|>\nTell a story</s>\n<|assistant|>\n",
		"chatml": "<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\nHello!<|im_end|>\n<|im_start|>user\nTell a story<|im_end|>\n<|im_start|>assistant\n",
		"llama2": "[INST] Hi there [/INST] Hello! </s><s>[INST] Tell a story [/INST]",
	} {
		w := New()
		info := load(t, w, family+".gguf", withTemplate(t, family))
		if info.ChatTemplate != family {
			t.Errorf("%s: recognised as %q", family, info.ChatTemplate)
		}
		got, err := w.Prompt(&GenerateRequest{Messages: msgs})
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s:\n got %q\nwant %q", family, got, want)
		}
		_, d := collect(t, w, GenerateRequest{Messages: msgs, MaxTokens: 5})
		if d.Prompt != want || d.Generated == 0 {
			t.Errorf("%s: done = %+v", family, d)
		}
	}
}

// Without a chat template the turns are formatted as the plain transcript.
func TestChatWithoutTemplate(t *testing.T) {
	w := New()
	info, err := w.LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	if info.ChatTemplate != "" {
		t.Errorf("stories260K has a chat template %q", info.ChatTemplate)
	}
	got, err := w.Prompt(&GenerateRequest{Messages: []chat.Message{{Role: "user", Content: "Once upon"}, {Role: "assistant", Content: "a time"}, {Role: "user", Content: "Go on"}}})
	if err != nil || got != "User: Once upon\nAssistant: a time\nUser: Go on\nAssistant:" {
		t.Errorf("got %q, %v", got, err)
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 999: "999 B", 1000: "1.0 KB", 1185376: "1.2 MB", 640e6: "640 MB", MaxModelBytes: "3.4 GB"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestSeedOf: a JS seed is the sampler's seed as the Cloudflare Worker
// makes it from its int64 seed (uint64(seed): two's complement).
func TestSeedOf(t *testing.T) {
	for _, s := range []int64{0, 1, 42, -1, -5, 1<<53 - 1, -(1<<53 - 1)} {
		if got, want := SeedOf(float64(s)), uint64(s); got != want {
			t.Errorf("SeedOf(%d) = %d, want %d", s, got, want)
		}
	}
}
