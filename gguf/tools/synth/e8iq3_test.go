package synth

import (
	"bytes"
	"math"
	"testing"

	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/gguf/tools/quantize"
	"github.com/picolm/picolm-wasm/quant"
	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

// e8Model converts the F32 synth-small model: every 2-D tensor whose rows
// are whole super-blocks to typ (the rest stays F32), with the E8_IQ3
// metadata key.
func e8Model(t *testing.T, f *gguf.File, typ quant.Type) []byte {
	ft, err := quantize.ParseFileType("F32")
	if err != nil {
		t.Fatal(err)
	}
	p, err := quantize.MakePlan(quantize.FileTensors(f), quantize.Hyper{Arch: "llama", Layers: 2, Heads: 4, KVHeads: 2}, ft, quantize.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, ti := range p.Tensors {
		if len(ti.Dims) == 2 && ti.Dims[0]%256 == 0 {
			p.Types[i] = typ
		}
	}
	kv := append(quantize.Metadata(f.KV, ft), gguf.KeyValue{Key: quant.E8IQ3Key, Value: gguf.Uint32(quant.E8IQ3Version)})
	var buf bytes.Buffer
	if _, err := quantize.Write(&buf, kv, p, quantize.Options{Threads: 2}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestE8IQ3Engine: a model with E8_IQ3 weights loads and generates, its
// first logits follow the F32 model's, and each tensor's RMSE is logged
// beside IQ4_XS and Q3_K on the same weights.
func TestE8IQ3Engine(t *testing.T) {
	f, err := gguf.Open(shareddata.Path(t, "synth/synth-small-F32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ref, _ := logits(t, f.Bytes())
	e8 := e8Model(t, f, quant.E8_IQ3)
	ef, err := gguf.Parse(e8)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ti := range ef.Tensors {
		if ti.Type == quant.E8_IQ3 {
			n++
		}
	}
	if n == 0 {
		t.Fatal("no E8_IQ3 tensor")
	}
	if _, ok := ef.Lookup(quant.E8IQ3Key); !ok {
		t.Fatal("no E8_IQ3 key")
	}
	got, ids := logits(t, e8)
	if len(ids) == 0 {
		t.Fatal("generated nothing")
	}
	c := corr(ref, got)
	t.Logf("E8_IQ3: %d tensors, logits correlation with F32 %.4f, greedy %v", n, c, ids)
	// A reference at a similar rate: Q3_K (3.4375 bits per weight).
	q3, _ := logits(t, e8Model(t, f, quant.Q3_K))
	t.Logf("Q3_K: logits correlation with F32 %.4f", corr(ref, q3))
	if !(c >= 0.8) {
		t.Errorf("logits correlation %.4f < 0.8", c)
	}

	// Per-tensor RMSE against the F32 weights.
	others := map[quant.Type]*gguf.File{}
	for _, typ := range []quant.Type{quant.IQ4_XS, quant.Q3_K} {
		of, err := gguf.Parse(e8Model(t, f, typ))
		if err != nil {
			t.Fatal(err)
		}
		others[typ] = of
	}
	var tot [3]float64
	var nw float64
	for _, ti := range ef.Tensors {
		if ti.Type != quant.E8_IQ3 {
			continue
		}
		src, _ := f.Tensor(ti.Name)
		w := make([]float32, src.Elements())
		quant.TraitsOf(src.Type).Dequantize(w, src.Data)
		var r [3]float64
		for k, tf := range []*gguf.File{ef, others[quant.IQ4_XS], others[quant.Q3_K]} {
			tt, _ := tf.Tensor(ti.Name)
			y := make([]float32, len(w))
			quant.TraitsOf(tt.Type).Dequantize(y, tt.Data)
			var se float64
			for i := range w {
				e := float64(y[i] - w[i])
				se += e * e
			}
			tot[k] += se
			r[k] = math.Sqrt(se / float64(len(w)))
		}
		nw += float64(len(w))
		t.Logf("%-26s E8_IQ3 %.6g  IQ4_XS %.6g  Q3_K %.6g", ti.Name, r[0], r[1], r[2])
	}
	t.Logf("%-26s E8_IQ3 %.6g  IQ4_XS %.6g  Q3_K %.6g", "all", math.Sqrt(tot[0]/nw), math.Sqrt(tot[1]/nw), math.Sqrt(tot[2]/nw))
}
