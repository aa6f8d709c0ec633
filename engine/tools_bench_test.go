package engine

import (
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/picolm/picolm-wasm/engine/chat"
	"github.com/picolm/picolm-wasm/engine/grammar"
)

// BenchmarkToolGrammarSetup is what a request with a new tool set costs
// before its first token, besides the prompt's prefill: chat.CheckTool of
// each tool (as the Worker and the browser host check them), the calls'
// grammar (chat.ToolGrammar), a matcher over the model's vocabulary and the
// first mask — on stories260K (512 tokens) and Llama 2's 32k vocabulary.
// The tools are as clients write them (no "additionalProperties": false).
func BenchmarkToolGrammarSetup(b *testing.B) {
	tools := []chat.Tool{
		{Name: "get_weather", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","maxLength":10},"unit":{"enum":["c","f"]}},"required":["city","unit"]}`)},
		{Name: "get_time", Parameters: json.RawMessage(`{"type":"object","properties":{"zone":{"type":"string","pattern":"^[A-Z]{3}$"}},"required":["zone"]}`)},
	}
	for _, name := range []string{"stories260K.gguf", "llama-2-tiny-random.gguf"} {
		m := loadModel(b, name)
		v := m.vocab()
		logits := make([]float32, m.Config.VocabSize)
		rng := rand.New(rand.NewPCG(1, 2))
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				for _, t := range tools {
					if err := chat.CheckTool(t); err != nil {
						b.Fatal(err)
					}
				}
				g, err := chat.ToolGrammar(tools, chat.ToolChoice{Mode: "auto", Parallel: true})
				if err != nil {
					b.Fatal(err)
				}
				gm := grammar.NewMatcher(g, v)
				for i := range logits {
					logits[i] = rng.Float32()
				}
				gm.Mask(logits, 200)
			}
		})
	}
}
