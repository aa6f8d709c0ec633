// Command llamaref writes the synthetic models of the architecture and format
// reference tests (engine/testdata/arch-refs.jsonl from models.json,
// format-refs.jsonl from formats.json) and a manifest of them for ref.mjs,
// which runs llama.cpp (node-llama-cpp) on them:
//
//	go run ./scripts/llamaref -o /tmp/archrefs   # models + /tmp/archrefs/manifest.json
//	node scripts/llamaref/ref.mjs /tmp/archrefs > engine/testdata/arch-refs.jsonl
//	go run ./scripts/llamaref -specs scripts/llamaref/formats.json -o /tmp/formatrefs
//	node scripts/llamaref/ref.mjs /tmp/formatrefs > engine/testdata/format-refs.jsonl
//
// See scripts/llamaref/README.md.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/picolm/picolm-wasm/gguf/tools/synth"
)

type entry struct {
	Spec   synth.Spec `json:"spec"`
	File   string     `json:"file"`
	SHA256 string     `json:"sha256"`
}

func main() {
	var (
		out      = flag.String("o", "", "output `DIR` (required)")
		specs    = flag.String("specs", "scripts/llamaref/models.json", "the models: a JSON array of synth.Spec (formats.json: one per quant format)")
		testdata = flag.String("testdata", "../shared/testdata", "`DIR` the specs' vocabularies are in")
	)
	flag.Parse()
	if *out == "" {
		flag.Usage()
		os.Exit(2)
	}
	b, err := os.ReadFile(*specs)
	if err != nil {
		fail(err)
	}
	var list []synth.Spec
	if err := json.Unmarshal(b, &list); err != nil {
		fail(fmt.Errorf("%s: %v", *specs, err))
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fail(err)
	}
	var manifest []entry
	for _, s := range list {
		path := filepath.Join(*out, s.Name+".gguf")
		if err := s.Write(path, *testdata); err != nil {
			fail(fmt.Errorf("%s: %v", s.Name, err))
		}
		data, err := os.ReadFile(path)
		if err != nil {
			fail(err)
		}
		sum := sha256.Sum256(data)
		manifest = append(manifest, entry{Spec: s, File: path, SHA256: hex.EncodeToString(sum[:])})
		fmt.Fprintf(os.Stderr, "llamaref: %s: %d bytes, sha256 %x\n", path, len(data), sum)
	}
	b, err = json.MarshalIndent(manifest, "", "  ")
	if err != nil {
		fail(err)
	}
	if err := os.WriteFile(filepath.Join(*out, "manifest.json"), append(b, '\n'), 0o644); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "llamaref:", err)
	os.Exit(1)
}
