package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/picolm/picolm-wasm/engine"
	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

// splitModel runs `picolm split` on in with the limit flags and returns the
// shards' paths (at least min of them).
func splitModel(t *testing.T, in, prefix string, min int, flags ...string) []string {
	t.Helper()
	runCLI(t, append(append([]string{"split"}, flags...), in, prefix))
	paths, _ := filepath.Glob(prefix + "-*-of-*.gguf")
	if len(paths) < min {
		t.Fatalf("split %s %v: %d shards, want at least %d", filepath.Base(in), flags, len(paths), min)
	}
	for i, p := range paths {
		if p != gguf.ShardName(prefix, i, len(paths)) {
			t.Fatalf("shard %d is %s", i+1, p)
		}
	}
	return paths
}

// TestSplitModelsGenerate splits stories260K (by tensor count) and the
// synthetic Q4_K_M model (by size) into several shards; run from the first
// shard, each generates llama.cpp's greedy ids on every reference case of
// the model, and exactly what the unsplit file generates. Merged back, the
// shards are the original file's bytes.
func TestSplitModelsGenerate(t *testing.T) {
	dir := t.TempDir()
	models := []struct {
		file  string
		flags []string
	}{
		{"stories260K.gguf", []string{"--split-max-tensors", "20"}},
		{"synth/synth-small-Q4_K_M.gguf", []string{"--split-max-size", "300K"}},
	}
	cases := loadRefCases(t)
	for _, m := range models {
		in := shareddata.Path(t, m.file)
		prefix := filepath.Join(dir, strings.TrimSuffix(filepath.Base(m.file), ".gguf"))
		paths := splitModel(t, in, prefix, 3, m.flags...)
		n := 0
		for _, c := range cases {
			if c.File != in {
				continue
			}
			n++
			want, _ := runCLI(t, c.args())
			split := append([]string{paths[0]}, c.args()[1:]...)
			got, stderr := runCLI(t, split)
			if got != want {
				t.Errorf("%s split in %d: printed %q, the unsplit file %q", c.name(), len(paths), got, want)
			}
			checkIDs(t, c, parseIDs(t, got))
			if !strings.Contains(stderr, paths[0]) {
				t.Errorf("stderr does not name the model: %s", stderr)
			}
		}
		if n == 0 {
			t.Fatalf("no reference case for %s", m.file)
		}
		t.Logf("%s: %d shards, %d reference cases identical to the unsplit file", m.file, len(paths), n)

		merged := prefix + "-merged.gguf"
		runCLI(t, []string{"merge", paths[0], merged})
		a, err := os.ReadFile(merged)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s: merged shards (%d bytes) differ from the original (%d bytes)", m.file, len(a), len(b))
		}
	}
}

// TestSplitErrors: a missing shard, a renamed first shard, a shard that is
// not GGUF and bad options are refused with a message naming the problem,
// and a failed split leaves no file behind.
func TestSplitErrors(t *testing.T) {
	dir := t.TempDir()
	in := shareddata.Path(t, "stories260K.gguf")
	prefix := filepath.Join(dir, "s")
	paths := splitModel(t, in, prefix, 3, "--split-max-tensors", "20")

	os.Rename(paths[1], paths[1]+".x")
	checkExits(t, []exitCase{
		{[]string{paths[0], "-n", "1"}, 1, "missing shard: " + paths[1] + " of the 3 shards of " + paths[0] + " do not exist"},
		{[]string{"merge", paths[0], filepath.Join(dir, "m.gguf")}, 1, paths[1]},
	})
	os.Rename(paths[1]+".x", paths[1])

	renamed := filepath.Join(dir, "model.gguf")
	b, _ := os.ReadFile(paths[0])
	os.WriteFile(renamed, b, 0o644)
	os.WriteFile(paths[2]+".bak", []byte("not a model"), 0o644)
	orig, _ := os.ReadFile(paths[2])
	os.WriteFile(paths[2], []byte("<html>404</html>"), 0o644)
	checkExits(t, []exitCase{
		{[]string{renamed, "-n", "1"}, 1, renamed + " is shard 1 of 3 of a split model, but its name does not end in -00001-of-00003.gguf"},
		{[]string{paths[0], "-n", "1"}, 1, paths[2] + ": gguf: bad magic"},
		{[]string{"split", "--split-max-size", "50X", in, prefix}, 2, "the unit must be K, M or G"},
		{[]string{"split", "--split-max-size", "-5M", in, prefix}, 2, "positive whole number"},
		{[]string{"split", in}, 2, "usage"},
		{[]string{"split", "--split-max-tensors", "1", paths[1], filepath.Join(dir, "t")}, 1, paths[2]},
		{[]string{"merge", in, filepath.Join(dir, "n.gguf")}, 1, "not a split model"},
	})
	os.WriteFile(paths[2], orig, 0o644)
	checkExits(t, []exitCase{
		{[]string{"merge", paths[1], paths[0]}, 1, "the output exists"},
		// Splitting onto the input's own names is refused.
		{[]string{"split", "--split-max-tensors", "20", paths[0], prefix}, 1, "an output is an input file"},
	})
	left, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(left) != 3+2 {
		t.Errorf("files left: %v", left)
	}
	// An engine given one shard alone (not through OpenSet) says what it is.
	f, err := gguf.Open(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := engine.Load(f); err == nil || !strings.Contains(err.Error(), "shard 1 of 3 of a split model") {
		t.Errorf("engine on one shard: %v", err)
	}
}

// TestGGUFPySplit runs a split GGUF written by llama.cpp's own tooling
// (gguf-py's GGUFWriter; testdata/ggufpy-split/README.md): the shards are
// rebuilt from their headers and stories260K's tensor data, checked against
// the hashes of gguf-py's files, and generate llama.cpp's greedy ids on
// every reference case of stories260K.
func TestGGUFPySplit(t *testing.T) {
	in := shareddata.Path(t, "stories260K.gguf")
	src, err := gguf.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var manifest []struct {
		Name   string `json:"name"`
		Size   int64  `json:"size"`
		SHA256 string `json:"sha256"`
	}
	b, err := os.ReadFile("testdata/ggufpy-split/manifest.json")
	if err == nil {
		err = json.Unmarshal(b, &manifest)
	}
	if err != nil || len(manifest) != 3 {
		t.Fatalf("manifest: %v", err)
	}
	dir := t.TempDir()
	for _, m := range manifest {
		h, err := os.ReadFile(filepath.Join("testdata/ggufpy-split", m.Name+".header"))
		if err != nil {
			t.Fatal(err)
		}
		hf, err := gguf.ParseHeader(bytes.NewReader(h), m.Size)
		if err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		shard := make([]byte, m.Size)
		copy(shard, h)
		for _, ti := range hf.Tensors {
			st, ok := src.Tensor(ti.Name)
			if !ok {
				t.Fatalf("%s: tensor %s is not stories260K's", m.Name, ti.Name)
			}
			copy(shard[hf.DataOffset+ti.Offset:], st.Data)
		}
		if sum := sha256.Sum256(shard); hex.EncodeToString(sum[:]) != m.SHA256 {
			t.Fatalf("%s rebuilt does not have gguf-py's hash", m.Name)
		}
		if err := os.WriteFile(filepath.Join(dir, m.Name), shard, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	first := filepath.Join(dir, manifest[0].Name)
	n := 0
	for _, c := range loadRefCases(t) {
		if c.File != in {
			continue
		}
		n++
		got, _ := runCLI(t, append([]string{first}, c.args()[1:]...))
		checkIDs(t, c, parseIDs(t, got))
	}
	if n == 0 {
		t.Fatal("no reference case for stories260K")
	}
}

// TestQuantizeSplitInput: quantize reads a split model from its first
// shard and writes what it writes from the unsplit file (llama-quantize's
// synth-small-Q8_0.gguf).
func TestQuantizeSplitInput(t *testing.T) {
	dir := t.TempDir()
	paths := splitModel(t, shareddata.Path(t, "synth/synth-small-F32.gguf"), filepath.Join(dir, "f32"), 3, "--split-max-size", "2M")
	out := filepath.Join(dir, "q8.gguf")
	runCLI(t, []string{"quantize", paths[0], out, "Q8_0", "-j", "1"})
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(shareddata.Path(t, "synth/synth-small-Q8_0.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("quantized from %d shards: not llama-quantize's synth-small-Q8_0.gguf", len(paths))
	}
}
