package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

func TestRefitCommand(t *testing.T) {
	dir := t.TempDir()
	teacher := shareddata.Path(t, "synth/synth-small-F32.gguf")
	student := shareddata.Path(t, "synth/synth-small-IQ4_XS.gguf")
	out := filepath.Join(dir, "out.gguf")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"refit", teacher, student, out}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "blk.0.ffn_down.weight") || !strings.Contains(stdout.String(), "all refit tensors") {
		t.Errorf("stdout:\n%s", stdout.String())
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"refit", teacher, student}, 2, "usage"},
		{[]string{"refit", shareddata.Path(t, "synth/synth-small-Q8_0.gguf"), student, filepath.Join(dir, "x.gguf")}, 1, "not F32"},
		{[]string{"refit", teacher, student, student}, 1, "output is an input"},
	} {
		stdout.Reset()
		stderr.Reset()
		if code := run(c.args, nil, &stdout, &stderr); code != c.code || !strings.Contains(stderr.String(), c.msg) {
			t.Errorf("%v: exit %d, stderr %q", c.args[1:], code, stderr.String())
		}
	}
}
