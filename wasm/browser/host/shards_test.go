package host

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/gguf/tools/split"
	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

// shardFiles splits the model file b into shards of at most max tensors, in
// memory, as `picolm split` writes them: the shards laid end to end and
// their Files.
func shardFiles(t *testing.T, b []byte, max int) ([]byte, Files) {
	t.Helper()
	f, err := gguf.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := split.Plan(f, split.Options{MaxTensors: max})
	if err != nil {
		t.Fatal(err)
	}
	kvs, ts := split.Shards(f, plan)
	var all bytes.Buffer
	var fs Files
	for k := range plan {
		n := all.Len()
		if err := gguf.Write(&all, kvs[k], ts[k], 0); err != nil {
			t.Fatal(err)
		}
		fs.Names = append(fs.Names, gguf.ShardName("q8", k, len(plan)))
		fs.Sizes = append(fs.Sizes, int64(all.Len()-n))
	}
	return all.Bytes(), fs
}

// TestShards: the shards of a split GGUF, streamed into the buffer one
// after the other or read through a reader by the lead and a shard
// instance, generate what the whole file does; a gap is refused by name.
func TestShards(t *testing.T) {
	b, err := os.ReadFile(shareddata.Path(t, "tinyllamas-stories-260k-q8_0.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	whole := New()
	load(t, whole, "q8.gguf", b)
	r := GenerateRequest{Prompt: "Once upon a time", MaxTokens: 40}
	want, _ := collect(t, whole, r)

	all, fs := shardFiles(t, b, 20)
	if len(fs.Sizes) != 3 {
		t.Fatalf("%d shards", len(fs.Sizes))
	}
	w := New()
	if err := w.BeginFiles(fs.Names[0], fs); err != nil {
		t.Fatal(err)
	}
	for off := 0; off < len(all); off += 100000 {
		p, err := w.Next(min(100000, len(all)-off))
		if err != nil {
			t.Fatal(err)
		}
		copy(p, all[off:])
	}
	info, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if info.Bytes != int64(len(all)) || !strings.Contains(info.Name, "q8-00001-of-00003.gguf") {
		t.Errorf("info %+v", info)
	}
	if got, _ := collect(t, w, r); got != want {
		t.Errorf("3 shards in one buffer: %q, want %q", got, want)
	}

	sh, err := LoadShardFiles(bytes.NewReader(all), fs, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	lead := New()
	peers, mesh := meshed(t, sh)
	if _, err := lead.LoadSplitFiles(fs.Names[0], bytes.NewReader(all), fs, peers, mesh); err != nil {
		t.Fatal(err)
	}
	if got, _ := collect(t, lead, r); got != want {
		t.Errorf("3 shards over 2 instances: %q, want %q", got, want)
	}

	// Shards 1 and 3: shard 2 is named as missing, and nothing is loaded.
	gap := append(append([]byte(nil), all[:fs.Sizes[0]]...), all[fs.Sizes[0]+fs.Sizes[1]:]...)
	gfs := Files{Names: []string{fs.Names[0], fs.Names[2]}, Sizes: []int64{fs.Sizes[0], fs.Sizes[2]}}
	if err := w.BeginFiles(gfs.Names[0], gfs); err != nil {
		t.Fatal(err)
	}
	p, _ := w.Next(len(gap))
	copy(p, gap)
	if _, err := w.Finish(); !errors.Is(err, gguf.ErrShardMissing) || !strings.Contains(err.Error(), "q8-00002-of-00003.gguf (shard 2 of 3) is missing") {
		t.Errorf("a gap: %v", err)
	}
	if _, ok := w.Info(); ok {
		t.Error("a model is loaded after the refusal")
	}
	if _, err := lead.LoadSplitFiles(gfs.Names[0], bytes.NewReader(gap), gfs, nil, nil); !errors.Is(err, gguf.ErrShardMissing) {
		t.Errorf("a gap through the reader: %v", err)
	}
	for _, bad := range []Files{{Names: []string{"a"}, Sizes: []int64{1, 2}}, {Names: []string{"a", "b"}, Sizes: []int64{5, 0}}} {
		if err := w.BeginFiles("a", bad); !errors.Is(err, ErrLoading) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}
