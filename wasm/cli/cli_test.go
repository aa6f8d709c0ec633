package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/picolm/picolm-wasm/engine"
	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

// TestCacheFlag: the first run saves the prompt's KV cache; a second run
// with a prompt sharing the prefix says how many tokens it skipped and
// prints what a run without the cache prints; a damaged file is refused
// with a message and the run still prints the right output.
func TestCacheFlag(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "prompt.kv")
	model := shareddata.Path(t, "stories260K.gguf")
	base := []string{model, "-n", "24", "-t", "0", "-j", "1", "--cache", cache}

	short, longer := "Once upon a time there was a dog", "Once upon a time there was a dog named Max"
	f, err := gguf.Open(model)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := engine.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	n1, n2 := len(m.Tokenizer.Encode(short, true)), len(m.Tokenizer.Encode(longer, true))

	_, stderr := runCLI(t, append(base, "-p", short))
	if !strings.Contains(stderr, fmt.Sprintf("saved %d prompt tokens", n1)) {
		t.Fatalf("first run did not save the cache: %s", stderr)
	}
	want, _ := runCLI(t, []string{model, "-n", "24", "-t", "0", "-j", "1", "-p", longer})
	got, stderr := runCLI(t, append(base, "-p", longer))
	if !strings.Contains(stderr, fmt.Sprintf("skipped %d of %d prompt tokens", n1, n2)) {
		t.Errorf("second run: %s", stderr)
	}
	if got != want {
		t.Errorf("with the cache %q, without %q", got, want)
	}

	b, err := os.ReadFile(cache)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x40
	if err := os.WriteFile(cache, b, 0o644); err != nil {
		t.Fatal(err)
	}
	got, stderr = runCLI(t, append(base, "-p", longer))
	if !strings.Contains(stderr, "checksum mismatch") || !strings.Contains(stderr, "continuing without it") || got != want {
		t.Errorf("corrupted cache: output %q\n%s", got, stderr)
	}

	q8 := shareddata.Path(t, "tinyllamas-stories-260k-q8_0.gguf")
	_, stderr = runCLI(t, []string{q8, "-n", "4", "--cache", cache, "-p", longer})
	if !strings.Contains(stderr, "different model") {
		t.Errorf("cache from another model: %s", stderr)
	}
}

// TestCLIErrors: bad input gives a clear message and a non-zero exit.
func TestCLIErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{shareddata.Path(t, "tinyllamas-stories-260k-f32.gguf"), "-p", "x"}, "GGUF v1"},
		{[]string{shareddata.Path(t, "no-such-file.gguf"), "-p", "x"}, "no such file"},
		{[]string{shareddata.Path(t, "ggml-vocab-llama-spm.gguf"), "-p", "x"}, "token_embd"},
		{[]string{"a.gguf", "b.gguf"}, "more than one model"},
		{[]string{"-n", "-3"}, "out of range"},
		{[]string{"-k", "1.5"}, "out of range"},
		{[]string{"--nope"}, "not defined"},
		{[]string{"-c", "3", "-p", "Once upon a time"}, "context"},
	} {
		var out, errb bytes.Buffer
		code := run(tc.args, strings.NewReader(""), &out, &errb)
		if code == 0 || !strings.Contains(strings.ToLower(errb.String()), strings.ToLower(tc.want)) {
			t.Errorf("%q: exit %d, stderr %q; want a message containing %q", tc.args, code, errb.String(), tc.want)
		}
	}
}

// TestFlagForms: picoLM's short flags, the long --model/--prompt forms and a
// positional model give the same run; the prompt may come from stdin.
func TestFlagForms(t *testing.T) {
	model := shareddata.Path(t, "stories260K.gguf")
	want, _ := runCLI(t, []string{model, "-p", "The little dog", "-n", "16", "-t", "0"})
	for _, args := range [][]string{
		{"--model", model, "--prompt", "The little dog", "-n", "16", "-t", "0"},
		{"-p", "The little dog", "-n", "16", model, "-t", "0"},
		{"-n", "16", "-t", "0", "-s", "7", "-k", "0.5", "-j", "2", model, "-p", "The little dog"},
	} {
		if got, _ := runCLI(t, args); got != want {
			t.Errorf("%q: %q, want %q", args, got, want)
		}
	}
	if got, _ := runCLIStdin(t, []string{model, "-n", "16", "-t", "0"}, "The little dog\n"); got != want {
		t.Errorf("prompt from stdin: %q, want %q", got, want)
	}
	// Sampling is deterministic per seed and differs across seeds.
	a, _ := runCLI(t, []string{"-p", "Once", "-n", "40", "-s", "1"})
	b, _ := runCLI(t, []string{"-p", "Once", "-n", "40", "-s", "1"})
	c, _ := runCLI(t, []string{"-p", "Once", "-n", "40", "-s", "2"})
	if a != b || a == c {
		t.Errorf("seed 1 twice: %q / %q; seed 2: %q", a, b, c)
	}
}
