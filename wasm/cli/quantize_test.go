package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

// TestQuantizeCommand: `picolm quantize` writes what llama-quantize writes
// from the same F32 model, the result runs, and errors leave no file behind.
func TestQuantizeCommand(t *testing.T) {
	dir := t.TempDir()
	in := shareddata.Path(t, "synth/synth-small-F32.gguf")
	out := filepath.Join(dir, "q4km.gguf")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"quantize", in, out, "q4_k_m", "-j", "2"}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "[  21/  21]") || !strings.Contains(stderr.String(), "blk.1.ffn_down.weight") {
		t.Errorf("no progress on stderr: %s", stderr.String())
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(shareddata.Path(t, "synth/synth-small-Q4_K_M.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from llama-quantize's synth-small-Q4_K_M.gguf")
	}
	text, errs := runCLI(t, []string{out, "-n", "8", "-t", "0", "-j", "1", "--ids", "-p", "Hello"})
	if len(strings.Fields(text)) != 8 {
		t.Errorf("generated %q (%s)", text, errs)
	}

	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"quantize", in, filepath.Join(dir, "a.gguf"), "Q9_K"}, 2, "unknown file type"},
		{[]string{"quantize", shareddata.Path(t, "PROVENANCE.md"), filepath.Join(dir, "b.gguf"), "Q8_0"}, 1, "bad magic"},
		{[]string{"quantize", shareddata.Path(t, "synth/synth-small-Q8_0.gguf"), filepath.Join(dir, "c.gguf"), "Q4_0"}, 1, "--allow-requantize"},
		{[]string{"quantize", in, filepath.Join(dir, "d.gguf")}, 2, "usage"},
	} {
		stderr.Reset()
		if code := run(c.args, nil, &stdout, &stderr); code != c.code || !strings.Contains(stderr.String(), c.msg) {
			t.Errorf("%v: exit %d, %q; want %d and %q", c.args[1:], code, stderr.String(), c.code, c.msg)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("files left after errors: %v", ents)
	}
}
