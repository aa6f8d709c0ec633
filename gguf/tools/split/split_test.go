package split

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/quant"
)

// model writes a file of n F32 tensors of the given element counts (and
// an E8_IQ3 one when e8) and parses it.
func model(t *testing.T, elems []int, e8 bool) (*gguf.File, []byte) {
	t.Helper()
	kv := []gguf.KeyValue{
		{Key: "general.architecture", Value: gguf.String("llama")},
		{Key: "general.name", Value: gguf.String("m")},
	}
	var ts []gguf.TensorInfo
	for i, n := range elems {
		d := make([]byte, 4*n)
		for j := range d {
			d[j] = byte(i + 7*j)
		}
		ts = append(ts, gguf.TensorInfo{Name: "t" + string(rune('a'+i)), Dims: []uint64{uint64(n)}, Type: quant.F32, Data: d})
	}
	if e8 {
		kv = append(kv, gguf.KeyValue{Key: quant.E8IQ3Key, Value: gguf.Uint32(quant.E8IQ3Version)})
		tr := quant.TraitsOf(quant.E8_IQ3)
		ts = append(ts, gguf.TensorInfo{Name: "e8", Dims: []uint64{uint64(tr.BlockSize)}, Type: quant.E8_IQ3, Data: make([]byte, tr.TypeSize)})
	}
	var b bytes.Buffer
	if err := gguf.Write(&b, kv, ts, 0); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return f, b.Bytes()
}

// TestPlan: shards end where llama-gguf-split ends them.
func TestPlan(t *testing.T) {
	// Tensor data of 40, 40, 200, 8, 8, 8 bytes: padded to 32, 64 64 224 32 32 32.
	f, _ := model(t, []int{10, 10, 50, 2, 2, 2}, false)
	for _, c := range []struct {
		o    Options
		want [][]int
	}{
		{Options{}, [][]int{{0, 1, 2, 3, 4, 5}}}, // 128 tensors
		{Options{MaxTensors: 2}, [][]int{{0, 1}, {2, 3}, {4, 5}}},
		{Options{MaxTensors: 4}, [][]int{{0, 1, 2, 3}, {4, 5}}},
		{Options{MaxBytes: 128}, [][]int{{0, 1}, {2}, {3, 4, 5}}},               // 64+64; 224 alone; 32·3
		{Options{MaxBytes: 64}, [][]int{{0}, {1}, {2}, {3, 4}, {5}}},            // the 224-byte tensor alone
		{Options{MaxBytes: 1000, MaxTensors: 5}, [][]int{{0, 1, 2, 3, 4}, {5}}}, // either limit
	} {
		got, err := Plan(f, c.o)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%+v: %v %v, want %v", c.o, got, err, c.want)
		}
	}
	if _, err := Plan(f, Options{MaxBytes: -1}); !errors.Is(err, ErrOptions) {
		t.Errorf("negative limit: %v", err)
	}
	for _, c := range []struct {
		s    string
		want int64
	}{{"500M", 500e6}, {"2G", 2e9}, {"300K", 300e3}} {
		if n, err := ParseSize(c.s); n != c.want || err != nil {
			t.Errorf("ParseSize(%q) = %d, %v", c.s, n, err)
		}
	}
	for _, s := range []string{"", "M", "0M", "-1M", "5", "5m", "1.5G", "99999999999G"} {
		if _, err := ParseSize(s); !errors.Is(err, ErrOptions) {
			t.Errorf("ParseSize(%q): %v", s, err)
		}
	}
}

// TestShardsLayout: the first shard holds the model's metadata and the
// split keys in llama-gguf-split's order and types, the others the split
// keys, the set id and the extension keys of their tensors; each is a
// valid GGUF file and the set joins into the model.
func TestShardsLayout(t *testing.T) {
	f, _ := model(t, []int{4, 4, 4}, true)
	plan := [][]int{{0, 1}, {2, 3}}
	kvs, ts := Shards(f, plan)
	id := SetID(f)
	keys := func(kv []gguf.KeyValue) []string {
		var s []string
		for _, e := range kv {
			s = append(s, e.Key)
		}
		return s
	}
	if got, want := keys(kvs[0]), []string{"general.architecture", "general.name", quant.E8IQ3Key, "split.no", "split.count", "split.tensors.count", "picolm.split.id"}; !reflect.DeepEqual(got, want) {
		t.Errorf("first shard keys %v, want %v", got, want)
	}
	if got, want := keys(kvs[1]), []string{"split.no", "split.count", "split.tensors.count", "picolm.split.id", quant.E8IQ3Key}; !reflect.DeepEqual(got, want) {
		t.Errorf("second shard keys %v, want %v", got, want)
	}
	var sizes []int64
	var all []byte
	for k := range plan {
		var b bytes.Buffer
		if err := gguf.Write(&b, kvs[k], ts[k], 0); err != nil {
			t.Fatal(err)
		}
		g, err := gguf.Parse(b.Bytes())
		if err != nil {
			t.Fatalf("shard %d: %v", k+1, err)
		}
		no, _ := g.Uint(gguf.KeySplitNo)
		v, _ := g.Lookup(gguf.KeySplitCount)
		w, _ := g.Lookup(gguf.KeySplitTensors)
		s, _ := g.String(gguf.KeySplitID)
		if no != uint64(k) || v.Type() != gguf.TypeUint16 || w.Type() != gguf.TypeInt32 || s != id {
			t.Errorf("shard %d: split.no %d, split.count %v, split.tensors.count %v, id %q", k+1, no, v.Type(), w.Type(), s)
		}
		sizes = append(sizes, int64(b.Len()))
		all = append(all, b.Bytes()...)
	}
	j, err := gguf.ParseSet(all, sizes, []string{"m-00001-of-00002.gguf", "m-00002-of-00002.gguf"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range f.Tensors {
		if j.Tensors[i].Name != f.Tensors[i].Name || !bytes.Equal(j.Tensors[i].Data, f.Tensors[i].Data) {
			t.Errorf("tensor %d differs after the split", i)
		}
	}
	// Another model's id differs.
	g, _ := model(t, []int{4, 4, 5}, true)
	if SetID(g) == id {
		t.Error("two models have the same split id")
	}
}

// TestSplitMerge splits a file on disk, merges it back to the same bytes,
// and re-splits a split model.
func TestSplitMerge(t *testing.T) {
	_, b := model(t, []int{64, 8, 100, 3, 3}, false)
	dir := t.TempDir()
	in := filepath.Join(dir, "m.gguf")
	if err := os.WriteFile(in, b, 0o644); err != nil {
		t.Fatal(err)
	}
	paths, err := Split(in, filepath.Join(dir, "s"), Options{MaxBytes: 300})
	if err != nil || len(paths) != 3 {
		t.Fatalf("Split: %v %v", paths, err)
	}
	again, err := Split(paths[1], filepath.Join(dir, "r"), Options{MaxTensors: 1})
	if err != nil || len(again) != 5 {
		t.Fatalf("re-split: %v %v", again, err)
	}
	for _, p := range [][]string{paths, again} {
		out := filepath.Join(dir, filepath.Base(p[0])+".merged")
		if err := Merge(p[0], out, Options{}); err != nil {
			t.Fatal(err)
		}
		if m, _ := os.ReadFile(out); !bytes.Equal(m, b) {
			t.Errorf("%s merged: %d bytes, not the original's %d", filepath.Base(p[0]), len(m), len(b))
		}
	}
}
