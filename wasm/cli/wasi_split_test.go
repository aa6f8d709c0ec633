//go:build !wasm

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

// TestWASISplitModel: the wasip1 build under wazero runs a split model from
// its first shard in the preopened directory and prints exactly what the
// native build prints for the unsplit file; a missing shard is named.
func TestWASISplitModel(t *testing.T) {
	w := buildWASI(t)
	in := shareddata.Path(t, "stories260K.gguf")
	paths := splitModel(t, in, filepath.Join(w.scratch, "stories"), 3, "--split-max-tensors", "20")
	args := []string{"-p", "Once upon a time", "-n", "24", "-t", "0", "-j", "1"}
	want, _ := runCLI(t, append([]string{in}, args...))
	first := "/work/" + filepath.Base(paths[0])
	got, stderr, code := w.run(t, append([]string{first}, args...), "")
	if code != 0 || got != want {
		t.Fatalf("wasip1 on %d shards: exit %d, printed %q, native unsplit %q (%s)", len(paths), code, got, want, stderr)
	}
	if err := os.Remove(paths[2]); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = w.run(t, append([]string{first}, args...), "")
	if missing := "/work/" + filepath.Base(paths[2]); code != 1 || !strings.Contains(stderr, "missing shard: "+missing) {
		t.Errorf("a missing shard under WASI: exit %d, stderr %q; want 1 and it named (%s)", code, stderr, missing)
	}
}
