package host

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/picolm/picolm-wasm/engine"
	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

// shardPeer is a Shard's Info, as the lead sees it.
type shardPeer struct{ sh *engine.Shard }

func (p shardPeer) Info() (engine.ShardInfo, error) { return p.sh.Info(), nil }

// meshed runs sh, part 1 of 2, in a goroutine joined to the lead by an
// in-process mesh (the browser's is a SharedArrayBuffer between Workers,
// in the bridge): the lead's peers and mesh.
func meshed(t *testing.T, sh *engine.Shard) ([]engine.Peer, engine.Mesh) {
	m := engine.NewLocalMesh(2)
	go func() {
		for sh.Step(m.End(1)) == nil {
		}
		m.Fail(nil)
	}()
	t.Cleanup(func() { m.Fail(nil) })
	return []engine.Peer{shardPeer{sh}}, m.End(0)
}

// TestLoadSplit: a model loaded through a reader in two parts (the lead and
// a shard) generates what the whole model does, and a shard of another model
// is refused, leaving no model loaded.
func TestLoadSplit(t *testing.T) {
	b, err := os.ReadFile(shareddata.Path(t, "tinyllamas-stories-260k-q8_0.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	whole := New()
	if err := whole.Begin("q8.gguf", int64(len(b))); err != nil {
		t.Fatal(err)
	}
	dst, _ := whole.Next(len(b))
	copy(dst, b)
	if _, err := whole.Finish(); err != nil {
		t.Fatal(err)
	}
	r := GenerateRequest{Prompt: "Once upon a time", MaxTokens: 60}
	want, _ := collect(t, whole, r)

	sh, err := LoadShard(bytes.NewReader(b), int64(len(b)), 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	w := New()
	peers, mesh := meshed(t, sh)
	info, err := w.LoadSplit("q8.gguf", bytes.NewReader(b), int64(len(b)), peers, mesh)
	if err != nil {
		t.Fatal(err)
	}
	if info.Workers != 2 || info.Bytes != int64(len(b)) {
		t.Fatalf("info %+v", info)
	}
	got, _ := collect(t, w, r)
	if got != want || len(got) < 20 {
		t.Fatalf("split model: %q\nwhole model: %q", got, want)
	}

	other, err := os.ReadFile(shareddata.Path(t, "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	osh, err := LoadShard(bytes.NewReader(other), int64(len(other)), 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	peers, mesh = meshed(t, osh)
	if _, err := w.LoadSplit("q8.gguf", bytes.NewReader(b), int64(len(b)), peers, mesh); !errors.Is(err, engine.ErrShard) {
		t.Fatalf("a shard of another model: %v", err)
	}
	if _, ok := w.Info(); ok {
		t.Fatal("a model is loaded after a failed load")
	}
	if _, err := LoadShard(bytes.NewReader(b[:1000]), 1000, 1, 2); err == nil {
		t.Fatal("a truncated file loaded as a shard")
	}

	// The Workers the page splits a model over at most: its KV heads.
	wi, _ := whole.Info()
	if n, err := SplitWorkers("q8.gguf", bytes.NewReader(b), int64(len(b))); err != nil || n != wi.KVHeads || n < 1 {
		t.Fatalf("SplitWorkers: %d, %v; the model has %d KV heads", n, err, wi.KVHeads)
	}
	if _, err := SplitWorkers("cut.gguf", bytes.NewReader(b[:1000]), 1000); err == nil || !strings.Contains(err.Error(), "cut.gguf") {
		t.Fatalf("SplitWorkers of a truncated file: %v", err)
	}
	if _, err := SplitWorkers("huge.gguf", bytes.NewReader(b), MaxModelBytes+1); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("SplitWorkers of a file too large: %v", err)
	}
}
