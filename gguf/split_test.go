package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/picolm/picolm-wasm/quant"
)

// smallModel is a tiny file's metadata and tensors (F32, distinct bytes).
func smallModel() ([]KeyValue, []TensorInfo) {
	kv := []KeyValue{
		{Key: "general.architecture", Value: String("llama")},
		{Key: "general.name", Value: String("tiny")},
		{Key: "llama.block_count", Value: Uint32(2)},
	}
	var ts []TensorInfo
	for i, name := range []string{"token_embd.weight", "blk.0.attn_q.weight", "blk.0.ffn_up.weight", "blk.1.attn_q.weight", "output.weight"} {
		data := make([]byte, 4*8*(i+1))
		for j := range data {
			data[j] = byte(i*31 + j)
		}
		ts = append(ts, TensorInfo{Name: name, Dims: []uint64{8, uint64(i + 1)}, Type: quant.F32, Data: data})
	}
	return kv, ts
}

// shardSet writes kv and ts as a split model in gguf-split's layout: shard k
// holds the tensors plan[k]; edit, when set, changes each shard's metadata.
func shardSet(t testing.TB, kv []KeyValue, ts []TensorInfo, plan [][]int, edit func(k int, kv []KeyValue) []KeyValue) [][]byte {
	t.Helper()
	var out [][]byte
	for k, idx := range plan {
		var skv []KeyValue
		if k == 0 {
			skv = append(skv, kv...)
		}
		skv = append(skv,
			KeyValue{Key: KeySplitNo, Value: Uint16(uint16(k))},
			KeyValue{Key: KeySplitCount, Value: Uint16(uint16(len(plan)))},
			KeyValue{Key: KeySplitTensors, Value: Int32(int32(len(ts)))})
		if edit != nil {
			skv = edit(k, skv)
		}
		var st []TensorInfo
		for _, i := range idx {
			st = append(st, ts[i])
		}
		var b bytes.Buffer
		if err := Write(&b, skv, st, 0); err != nil {
			t.Fatal(err)
		}
		out = append(out, b.Bytes())
	}
	return out
}

func concat(shards [][]byte) ([]byte, []int64) {
	var b []byte
	var sizes []int64
	for _, s := range shards {
		b = append(b, s...)
		sizes = append(sizes, int64(len(s)))
	}
	return b, sizes
}

func shardNames(prefix string, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = ShardName(prefix, i, n)
	}
	return names
}

var plan3 = [][]int{{0, 1}, {2}, {3, 4}}

func TestShardName(t *testing.T) {
	if got := ShardName("/models/ggml-model-q4_0", 1, 4); got != "/models/ggml-model-q4_0-00002-of-00004.gguf" {
		t.Errorf("ShardName = %q", got) // llama_split_path's documented example
	}
	for _, c := range []struct {
		name      string
		prefix    string
		no, count int
		ok        bool
	}{
		{"/models/ggml-model-q4_0-00002-of-00004.gguf", "/models/ggml-model-q4_0", 1, 4, true},
		{"m-00001-of-00001.gguf", "m", 0, 1, true},
		{"https://x/y/Model-Q4_K_M-00003-of-00003.gguf", "https://x/y/Model-Q4_K_M", 2, 3, true},
		{"-00001-of-00002.gguf", "", 0, 0, false},       // empty prefix
		{"m-00003-of-00002.gguf", "", 0, 0, false},      // past the count
		{"m-00001-of-70000.gguf", "", 0, 0, false},      // split.count is a u16
		{"m-00000-of-00002.gguf", "", 0, 0, false},      // numbered from 1
		{"m-0001-of-00002.gguf", "", 0, 0, false},       // four digits
		{"m-00001-of-00002.GGUF", "", 0, 0, false},      // the extension is lower case
		{"m-00001-of-0000x.gguf", "", 0, 0, false},      // not digits
		{"m-00001_of-00002.gguf", "", 0, 0, false},      // separator
		{"model.gguf", "", 0, 0, false},                 // not a shard
		{"m-00001-of-00002.gguf.part", "", 0, 0, false}, // a suffix after it
	} {
		p, no, n, ok := ParseShardName(c.name)
		if p != c.prefix || no != c.no || n != c.count || ok != c.ok {
			t.Errorf("ParseShardName(%q) = %q, %d, %d, %v; want %q, %d, %d, %v", c.name, p, no, n, ok, c.prefix, c.no, c.count, c.ok)
		}
		if ok && ShardName(p, no, n) != c.name {
			t.Errorf("ShardName does not give back %q", c.name)
		}
	}
}

// TestJoin: a set of three parsed from one buffer is the model: every
// tensor with its data, in order, Pos at its bytes, the first shard's
// metadata; through ParseHeaderSet the same positions.
func TestJoin(t *testing.T) {
	kv, ts := smallModel()
	shards := shardSet(t, kv, ts, plan3, nil)
	b, sizes := concat(shards)
	names := shardNames("dir/tiny", 3)
	f, err := ParseSet(b, sizes, names)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Shards) != 3 || len(f.Tensors) != len(ts) || f.Size() != int64(len(b)) {
		t.Fatalf("%d shards, %d tensors, size %d", len(f.Shards), len(f.Tensors), f.Size())
	}
	if s, _ := f.String("general.name"); s != "tiny" || f.DataOffset != f.Shards[0].DataOffset {
		t.Errorf("metadata not the first shard's: name %q", s)
	}
	wantShard := []int{0, 0, 1, 2, 2}
	for i := range ts {
		g, ok := f.Tensor(ts[i].Name)
		if !ok || g != &f.Tensors[i] {
			t.Fatalf("tensor %s not found in order", ts[i].Name)
		}
		if g.Shard != wantShard[i] || !bytes.Equal(g.Data, ts[i].Data) {
			t.Errorf("%s: shard %d (want %d), data equal %v", g.Name, g.Shard, wantShard[i], bytes.Equal(g.Data, ts[i].Data))
		}
		if p := f.Pos(g); !bytes.Equal(b[p:p+uint64(len(g.Data))], ts[i].Data) {
			t.Errorf("%s: Pos %d is not its data", g.Name, p)
		}
	}
	h, err := ParseHeaderSet(bytes.NewReader(b), sizes, names)
	if err != nil {
		t.Fatal(err)
	}
	for i := range h.Tensors {
		if h.Tensors[i].Data != nil || h.Pos(&h.Tensors[i]) != f.Pos(&f.Tensors[i]) {
			t.Errorf("ParseHeaderSet: %s at %d, ParseSet at %d", h.Tensors[i].Name, h.Pos(&h.Tensors[i]), f.Pos(&f.Tensors[i]))
		}
	}
	if err := f.Close(); err != nil || f.Tensors[0].Data != nil || f.Shards[2].Tensors[0].Data != nil {
		t.Errorf("Close: %v", err)
	}

	// A file that is not a shard, and a set of one, are themselves.
	var one bytes.Buffer
	if err := Write(&one, kv, ts, 0); err != nil {
		t.Fatal(err)
	}
	g, err := ParseSet(one.Bytes(), []int64{int64(one.Len())}, []string{"tiny.gguf"})
	if err != nil || g.Shards != nil || len(g.Tensors) != len(ts) {
		t.Errorf("single file: %v", err)
	}
	solo := shardSet(t, kv, ts, [][]int{{0, 1, 2, 3, 4}}, nil)
	if g, err := ParseSet(solo[0], []int64{int64(len(solo[0]))}, []string{"renamed.gguf"}); err != nil || g.Shards != nil {
		t.Errorf("a set of one: %v", err)
	}
}

// TestSplitErrors: every bad set is refused with an error naming the
// problem and the files.
func TestSplitErrors(t *testing.T) {
	kv, ts := smallModel()
	good := shardSet(t, kv, ts, plan3, nil)
	names := shardNames("m", 3)
	other := func() [][]byte { // the same layout, another model's name
		kv2 := append([]KeyValue(nil), kv...)
		kv2[1].Value = String("other")
		return shardSet(t, kv2, ts, plan3, func(k int, kv []KeyValue) []KeyValue {
			if k == 0 {
				return kv
			}
			return append(kv, KeyValue{Key: "general.name", Value: String("other")})
		})
	}
	withID := func(id func(k int) string) [][]byte {
		return shardSet(t, kv, ts, plan3, func(k int, kv []KeyValue) []KeyValue {
			if s := id(k); s != "" {
				kv = append(kv, KeyValue{Key: KeySplitID, Value: String(s)})
			}
			return kv
		})
	}
	edited := func(edit func(k int, kv []KeyValue) []KeyValue) [][]byte { return shardSet(t, kv, ts, plan3, edit) }
	set := func(keys []int, from ...[][]byte) [][]byte {
		var out [][]byte
		for i, k := range keys {
			src := good
			if i < len(from) && from[i] != nil {
				src = from[i]
			}
			out = append(out, src[k])
		}
		return out
	}
	notGGUF := []byte("<!DOCTYPE html><html>404 Not Found</html>")
	for _, c := range []struct {
		name   string
		shards [][]byte
		names  []string
		is     error
		want   []string
	}{
		{"gap", set([]int{0, 2}), []string{names[0], names[2]}, ErrShardMissing, []string{"m-00002-of-00003.gguf", "is missing"}},
		{"last missing", set([]int{0, 1}), names[:2], ErrShardMissing, []string{"m-00003-of-00003.gguf"}},
		{"only the first", set([]int{0}), names[:1], ErrShardMissing, []string{"m-00002-of-00003.gguf, m-00003-of-00003.gguf"}},
		{"not the first", set([]int{1, 2}), names[1:], ErrSplit, []string{"m-00002-of-00003.gguf is shard 2 of 3, not the first", "m-00001-of-00003.gguf"}},
		{"repeated shard", set([]int{0, 1, 1}), []string{names[0], names[1], names[1]}, ErrSplit, []string{"holds shard 2 of 3, which m-00002-of-00003.gguf holds too"}},
		{"too many", append(set([]int{0, 1, 2}), good[2]), append(names, "m-00004-of-00003.gguf"), ErrSplit, []string{"4 files given", "3 shards"}},
		{"counts differ", set([]int{0, 1, 2}, nil, edited(func(k int, kv []KeyValue) []KeyValue {
			kv[1].Value = Uint16(4)
			return kv
		})), names, ErrSplit, []string{"m-00002-of-00003.gguf says the model has 4 shards", "different split models"}},
		{"split.no wrong", set([]int{0, 1, 2}, nil, nil, edited(func(k int, kv []KeyValue) []KeyValue {
			if k == 2 {
				kv[0].Value = Uint16(1)
			}
			return kv
		})), names, ErrSplit, []string{"m-00003-of-00003.gguf is named as shard 3 of 3 but holds shard 2 of 3"}},
		{"tensor count", edited(func(k int, kv []KeyValue) []KeyValue {
			for i := range kv {
				if kv[i].Key == KeySplitTensors {
					kv[i].Value = Int32(6)
				}
			}
			return kv
		}), names, ErrSplit, []string{"m-00001-of-00003.gguf says the model has 6 tensors", "the 3 shards hold 5"}},
		{"no tensor count", edited(func(k int, kv []KeyValue) []KeyValue { return kv[:len(kv)-1] }), names, ErrSplit, []string{"m-00001-of-00003.gguf has no split.tensors.count"}},
		{"duplicate tensor", shardSet(t, kv, ts, [][]int{{0, 1}, {2, 1}, {3, 4}}, func(k int, kv []KeyValue) []KeyValue {
			kv[len(kv)-1].Value = Int32(6)
			return kv
		}), names, ErrSplit, []string{`tensor "blk.0.attn_q.weight" is in both m-00001-of-00003.gguf and m-00002-of-00003.gguf`}},
		{"two models by general.name", set([]int{0, 1, 2}, nil, other()), names, ErrSplit, []string{"m-00001-of-00003.gguf and m-00002-of-00003.gguf are shards of different models", "general.name"}},
		{"two models by id", set([]int{0, 1, 2}, withID(func(int) string { return "aaaa" }), withID(func(int) string { return "bbbb" }), withID(func(int) string { return "aaaa" })), names, ErrSplit,
			[]string{"m-00001-of-00003.gguf and m-00002-of-00003.gguf are shards of different split models", `picolm.split.id "aaaa" and "bbbb"`}},
		{"id on one side only", set([]int{0, 1, 2}, nil, nil, withID(func(int) string { return "aaaa" })), names, ErrSplit, []string{"m-00003-of-00003.gguf are shards of different split models", "absent"}},
		{"different prefixes", set([]int{0, 1, 2}), []string{names[0], "n-00002-of-00003.gguf", names[2]}, ErrSplit, []string{"are named as shards of different models", `"m", "n"`}},
		{"first name not a shard name", set([]int{0, 1, 2}), []string{"model.gguf", names[1], names[2]}, ErrSplit, []string{"model.gguf is shard 1 of 3", "does not end in -00001-of-00003.gguf"}},
		{"first named as another shard", set([]int{0, 1, 2}), []string{"m-00002-of-00003.gguf", names[1], names[2]}, ErrSplit, []string{"is named as shard 2 of 3 but holds shard 1 of 3"}},
		{"later name not a shard name", set([]int{0, 1, 2}), []string{names[0], "part2.gguf", names[2]}, ErrSplit, []string{"part2.gguf holds shard 2 of 3, but its name does not end in -00002-of-00003.gguf"}},
		{"not a shard after the first", append(set([]int{0, 1}), func() []byte {
			var b bytes.Buffer
			Write(&b, kv, ts[3:], 0)
			return b.Bytes()
		}()), names, ErrSplit, []string{"m-00003-of-00003.gguf is not a shard of a split model"}},
		{"first not a shard but several files", [][]byte{func() []byte {
			var b bytes.Buffer
			Write(&b, kv, ts, 0)
			return b.Bytes()
		}(), good[1]}, []string{"a.gguf", "b.gguf"}, ErrSplit, []string{"a.gguf is not a shard of a split model", "2 files were given"}},
		{"split.count not an integer", edited(func(k int, kv []KeyValue) []KeyValue {
			for i := range kv {
				if kv[i].Key == KeySplitCount {
					kv[i].Value = String("3")
				}
			}
			return kv
		}), names, ErrSplit, []string{"m-00001-of-00003.gguf", "split.count is \"3\""}},
		{"split.no missing", edited(func(k int, kv []KeyValue) []KeyValue {
			var out []KeyValue
			for _, e := range kv {
				if e.Key != KeySplitNo {
					out = append(out, e)
				}
			}
			return out
		}), names, ErrSplit, []string{"split.count = 3 but no split.no"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, sizes := concat(c.shards)
			_, err := ParseSet(b, sizes, c.names)
			if err == nil || !errors.Is(err, c.is) {
				t.Fatalf("error %v, want %v", err, c.is)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}

	// A shard that is not GGUF is named.
	b, sizes := concat([][]byte{good[0], notGGUF, good[2]})
	if _, err := ParseSet(b, sizes, names); !errors.Is(err, ErrBadMagic) || !strings.HasPrefix(err.Error(), "m-00002-of-00003.gguf: ") {
		t.Errorf("not GGUF: %v", err)
	}
	if _, err := ParseHeaderSet(bytes.NewReader(b), sizes, names); !errors.Is(err, ErrBadMagic) || !strings.HasPrefix(err.Error(), "m-00002-of-00003.gguf: ") {
		t.Errorf("not GGUF through ParseHeaderSet: %v", err)
	}
	// Sizes that do not cover the buffer.
	b, sizes = concat(good)
	for _, s := range [][]int64{{sizes[0], sizes[1]}, {sizes[0], sizes[1], sizes[2] + 1}, {sizes[0], 0, sizes[1] + sizes[2]}, {}} {
		if _, err := ParseSet(b, s, nil); !errors.Is(err, ErrSplit) {
			t.Errorf("sizes %v: %v", s, err)
		}
	}
}

// TestOpenSet opens a set on disk from any of its shards and names what is
// missing before opening anything.
func TestOpenSet(t *testing.T) {
	kv, ts := smallModel()
	dir := t.TempDir()
	names := shardNames(filepath.Join(dir, "tiny"), 3)
	for i, s := range shardSet(t, kv, ts, plan3, nil) {
		if err := os.WriteFile(names[i], s, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range names {
		f, err := OpenSet(p)
		if err != nil {
			t.Fatalf("OpenSet(%s): %v", filepath.Base(p), err)
		}
		if len(f.Shards) != 3 || len(f.Tensors) != 5 || !bytes.Equal(f.Tensors[4].Data, ts[4].Data) {
			t.Errorf("OpenSet(%s): %d shards, %d tensors", filepath.Base(p), len(f.Shards), len(f.Tensors))
		}
		f.Close()
	}
	if err := os.Rename(names[1], names[1]+".bak"); err != nil {
		t.Fatal(err)
	}
	_, err := OpenSet(names[0])
	if !errors.Is(err, ErrShardMissing) || !strings.Contains(err.Error(), names[1]+" of the 3 shards") {
		t.Errorf("missing shard: %v", err)
	}
	os.Rename(names[1]+".bak", names[1])
	other := filepath.Join(dir, "tiny.gguf")
	if err := os.Rename(names[0], other); err != nil {
		t.Fatal(err)
	}
	_, err = OpenSet(other)
	if !errors.Is(err, ErrSplit) || !strings.Contains(err.Error(), other+" is shard 1 of 3") || !strings.Contains(err.Error(), "cannot be found") {
		t.Errorf("first shard renamed: %v", err)
	}
	// From the second shard, the renamed first is missing by its name.
	if _, err = OpenSet(names[1]); !errors.Is(err, ErrShardMissing) || !strings.Contains(err.Error(), names[0]) {
		t.Errorf("first shard missing: %v", err)
	}
}

// FuzzSplit feeds shard sets to ParseSet and ParseHeaderSet: never a panic,
// errors that wrap a sentinel, and a joined set whose tensors are views at
// their Pos, unique by name, and as many as split.tensors.count says.
//
// The input is a count n (1 to 4), n little-endian u32 sizes, a byte
// choosing names (pattern names, none, or the first misnamed), then the
// files. Seeds: three-shard sets of the small model, good and bad.
func FuzzSplit(f *testing.F) {
	kv, ts := smallModel()
	enc := func(shards [][]byte, mode byte) []byte {
		b := []byte{byte(len(shards))}
		for _, s := range shards {
			b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
		}
		b = append(b, mode)
		for _, s := range shards {
			b = append(b, s...)
		}
		return b
	}
	good := shardSet(f, kv, ts, plan3, nil)
	f.Add(enc(good, 0))
	f.Add(enc(good, 1))
	f.Add(enc(good[:2], 0))
	f.Add(enc([][]byte{good[0], good[2]}, 0))
	f.Add(enc(shardSet(f, kv, ts, [][]int{{0}, {1, 2, 3, 4}}, func(k int, kv []KeyValue) []KeyValue {
		return append(kv, KeyValue{Key: KeySplitID, Value: String("x")})
	}), 0))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		n := int(data[0])
		if n < 1 || n > 4 || len(data) < 1+4*n+1 {
			return
		}
		sizes := make([]int64, n)
		for i := range sizes {
			sizes[i] = int64(binary.LittleEndian.Uint32(data[1+4*i:]))
		}
		mode := data[1+4*n]
		b := data[2+4*n:]
		var names []string
		switch mode % 3 {
		case 0:
			names = shardNames("m", n)
		case 2:
			names = shardNames("m", n)
			names[0] = "m.gguf"
		}
		total := int64(0)
		for _, s := range sizes {
			total += s
		}
		if total != int64(len(b)) {
			if _, err := ParseSet(b, sizes, names); !errors.Is(err, ErrSplit) {
				t.Fatalf("sizes adding up to %d of %d bytes: %v", total, len(b), err)
			}
			return
		}
		g, err := ParseSet(b, sizes, names)
		h, herr := ParseHeaderSet(bytes.NewReader(b), sizes, names)
		if (err == nil) != (herr == nil) {
			t.Fatalf("ParseSet: %v, ParseHeaderSet: %v", err, herr)
		}
		if err != nil {
			var fe *FormatError
			if !errors.Is(err, ErrSplit) && !errors.Is(err, ErrShardMissing) && !errors.As(err, &fe) {
				t.Fatalf("error wraps no sentinel: %v", err)
			}
			return
		}
		seen := map[string]bool{}
		for i := range g.Tensors {
			ti := &g.Tensors[i]
			if seen[ti.Name] {
				t.Fatalf("tensor %q twice", ti.Name)
			}
			seen[ti.Name] = true
			p := g.Pos(ti)
			if p+uint64(len(ti.Data)) > uint64(len(b)) || (len(ti.Data) > 0 && &ti.Data[0] != &b[p]) {
				t.Fatalf("tensor %q is not a view at its Pos %d", ti.Name, p)
			}
			if h.Pos(&h.Tensors[i]) != p {
				t.Fatalf("tensor %q: Pos %d, through ParseHeaderSet %d", ti.Name, p, h.Pos(&h.Tensors[i]))
			}
		}
		if g.Shards != nil {
			if want, _ := tensorsCount(g); want != len(g.Tensors) || len(g.Shards) != n {
				t.Fatalf("%d tensors in %d shards, split.tensors.count %d", len(g.Tensors), len(g.Shards), want)
			}
		}
	})
}
