package quantize

import (
	"testing"

	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/quant"
	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

// TestE8IQ3FileType: quantizing to picoLM's E8_IQ3 writes the extension key
// so the file parses (without it the parser refuses the type id), and the
// weight matrices are E8_IQ3 except the output (Q6_K, as for other types).
func TestE8IQ3FileType(t *testing.T) {
	f := open(t, shareddata.Path(t, "synth/synth-small-F32.gguf"))
	b := quantizeBytes(t, f, "E8_IQ3", Options{})
	g, err := gguf.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := g.Lookup(quant.E8IQ3Key); !ok {
		t.Fatalf("no %s", quant.E8IQ3Key)
	} else if n, _ := v.Uint(); n != uint64(quant.E8IQ3Version) {
		t.Errorf("%s = %d", quant.E8IQ3Key, n)
	}
	counts := map[quant.Type]int{}
	for _, ti := range g.Tensors {
		counts[ti.Type]++
	}
	if counts[quant.E8_IQ3] != 15 || counts[quant.Q6_K] != 1 {
		t.Errorf("tensor types %v", counts)
	}
	// Requantizing keeps exactly one extension key.
	again := quantizeBytes(t, g, "E8_IQ3", Options{AllowRequantize: true})
	h, err := gguf.Parse(again)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, kv := range h.KV {
		if kv.Key == quant.E8IQ3Key {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d copies of %s after requantizing", n, quant.E8IQ3Key)
	}
}
