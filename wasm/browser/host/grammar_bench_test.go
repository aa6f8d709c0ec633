package host

import (
	"encoding/json"
	"testing"

	"github.com/picolm/picolm-wasm/engine/chat"
)

// BenchmarkRequestGrammars is the grammar work of requests that alternate
// between two tool sets and a JSON Schema (as a page with a few features
// sends them): the tools' checks and the grammar a request needs, before its
// prompt is prefilled. The host's cache of compiled grammars (Worker.grams)
// makes a repeated one a look-up.
func BenchmarkRequestGrammars(b *testing.B) {
	w := builtin(b)
	weather := chat.Tool{Name: "get_weather", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","maxLength":10},"unit":{"enum":["c","f"]}},"required":["city","unit"]}`)}
	clock := chat.Tool{Name: "get_time", Parameters: json.RawMessage(`{"type":"object","properties":{"zone":{"type":"string","pattern":"^[A-Z]{3}$"}},"required":["zone"]}`)}
	msgs := []chat.Message{{Role: "user", Content: "hi"}}
	reqs := []GenerateRequest{
		{Messages: msgs, Tools: []chat.Tool{weather, clock}, ToolChoice: chat.ToolChoice{Mode: "auto", Parallel: true}},
		{Messages: msgs, Tools: []chat.Tool{clock}, ToolChoice: chat.ToolChoice{Mode: "required"}},
		{Messages: msgs, JSONSchema: `{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer","minimum":0}},"required":["name","age"]}`},
	}
	for b.Loop() {
		for i := range reqs {
			g, err := w.toolGrammar(&reqs[i])
			if err == nil && g == nil {
				_, err = w.grammar(&reqs[i])
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}
