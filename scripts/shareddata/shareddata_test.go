package shareddata

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestPathAndReferences(t *testing.T) {
	dir := Dir(t)
	if _, err := os.Stat(filepath.Join(dir, "PROVENANCE.md")); err != nil {
		t.Errorf("Dir = %s: %v", dir, err)
	}
	if got, want := Path(t, "synth/greedy.jsonl"), filepath.Join(dir, "synth", "greedy.jsonl"); got != want {
		t.Errorf("Path = %s, want %s", got, want)
	}
	// Reference models are in the directory itself, the synth ones beside
	// their JSONL file.
	for rel, modelDir := range map[string]string{"reference/stories260K-greedy.jsonl": dir, "synth/greedy.jsonl": filepath.Join(dir, "synth")} {
		refs := References(t, rel)
		for _, r := range refs {
			if r.File != filepath.Join(modelDir, r.Model) || len(r.PromptIDs) == 0 || len(r.IDs) == 0 || len(r.Margins) != len(r.IDs) {
				t.Fatalf("%s: %+v", rel, r)
			}
			if _, err := os.Stat(r.File); err != nil {
				t.Error(err)
			}
		}
	}
	if r := References(t, "reference/stories260K-greedy.jsonl")[0]; !strings.HasSuffix(r.Continuation, "\n") || r.NPredict != len(r.IDs) {
		t.Errorf("continuation %q, n_predict %d for %d ids", r.Continuation, r.NPredict, len(r.IDs))
	}
}

func TestReadJSONLFailures(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"bad.jsonl":   "{\"model\": \"a\"}\n{\"model\": 3}\n",
		"empty.jsonl": "\n\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for path, want := range map[string]string{
		filepath.Join(dir, "bad.jsonl"):     "bad.jsonl:2: json: cannot unmarshal number",
		filepath.Join(dir, "empty.jsonl"):   "empty.jsonl: no cases",
		filepath.Join(dir, "missing.jsonl"): "open " + filepath.Join(dir, "missing.jsonl"),
	} {
		if got := failure(t, func(tb testing.TB) { ReadJSONL[Reference](tb, path) }); !strings.Contains(got, want) {
			t.Errorf("%s: failed with %q, want %q", path, got, want)
		}
	}
	t.Chdir(dir) // no go.mod above
	if got := failure(t, func(tb testing.TB) { Dir(tb) }); !strings.Contains(got, "no go.mod at or above") {
		t.Errorf("outside the module: %q", got)
	}
}

// failing is a testing.TB whose Fatal and Fatalf record the message and end
// the goroutine.
type failing struct {
	testing.TB
	msg string
}

func (f *failing) Helper()                   {}
func (f *failing) Fatal(args ...any)         { f.msg = fmt.Sprint(args...); runtime.Goexit() }
func (f *failing) Fatalf(s string, a ...any) { f.msg = fmt.Sprintf(s, a...); runtime.Goexit() }

// failure runs fn and returns the message it failed with ("" if none).
func failure(t *testing.T, fn func(testing.TB)) string {
	f := &failing{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	return f.msg
}
