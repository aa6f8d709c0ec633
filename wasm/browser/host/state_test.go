package host

import (
	"errors"
	"os"
	"testing"

	"github.com/picolm/picolm-wasm/engine"
	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

// A state saved after a turn and restored into a fresh worker continues
// with the same tokens as the unbroken session, reusing the restored
// positions; a corrupted state or one of another model is refused.
func TestStateRestoredContinuesTheSame(t *testing.T) {
	first := GenerateRequest{Prompt: "Once upon a time", MaxTokens: 12, Temperature: 0.8, TopP: 0.9, Seed: 7}
	a := New()
	if _, err := a.LoadDefault(); err != nil {
		t.Fatal(err)
	}
	text1, _ := collect(t, a, first)
	state, err := a.SaveState()
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(state)) > a.MaxStateBytes() || len(a.sess.Tokens()) == 0 {
		t.Fatalf("state of %d bytes, %d positions", len(state), len(a.sess.Tokens()))
	}
	next := GenerateRequest{Prompt: "Once upon a time" + text1 + " Then", MaxTokens: 16, Temperature: 0.8, TopP: 0.9, Seed: 11}
	want, wd := collect(t, a, next)

	b := New()
	if _, err := b.LoadDefault(); err != nil {
		t.Fatal(err)
	}
	n, err := b.RestoreState(state)
	if err != nil || n == 0 {
		t.Fatalf("RestoreState = %d, %v", n, err)
	}
	got, gd := collect(t, b, next)
	if got != want || gd.CachedTokens != wd.CachedTokens || gd.CachedTokens == 0 {
		t.Errorf("restored: %q (cached %d), unbroken: %q (cached %d)", got, gd.CachedTokens, want, wd.CachedTokens)
	}

	bad := append([]byte(nil), state...)
	bad[len(bad)/2] ^= 1
	if _, err := b.RestoreState(bad); !errors.Is(err, ErrState) || !errors.Is(err, engine.ErrCacheFile) || Code(err) != CodeState {
		t.Errorf("corrupted state: %v (code %s)", err, Code(err))
	}
	if b.sess.Pos() != 0 {
		t.Errorf("a refused state left %d positions", b.sess.Pos())
	}

	other, err := os.ReadFile(shareddata.Path(t, "llama-2-tiny-random.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	c := New()
	if err := c.Begin("tiny.gguf", int64(len(other))); err != nil {
		t.Fatal(err)
	}
	dst, _ := c.Next(len(other))
	copy(dst, other)
	if _, err := c.Finish(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RestoreState(state); !errors.Is(err, ErrState) || Code(err) != CodeState {
		t.Errorf("another model's state: %v", err)
	}
	if _, err := New().SaveState(); !errors.Is(err, ErrNoModel) {
		t.Errorf("no model: %v", err)
	}
}
