package main

import (
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
	stdout, _ := runCLI(t, []string{"refit", teacher, student, out})
	if !strings.Contains(stdout, "blk.0.ffn_down.weight") || !strings.Contains(stdout, "all refit tensors") {
		t.Errorf("stdout:\n%s", stdout)
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatal(err)
	}
	checkExits(t, []exitCase{
		{[]string{"refit", teacher, student}, 2, "usage"},
		{[]string{"refit", shareddata.Path(t, "synth/synth-small-Q8_0.gguf"), student, filepath.Join(dir, "x.gguf")}, 1, "not F32"},
		{[]string{"refit", teacher, student, student}, 1, "output is an input"},
	})
}
