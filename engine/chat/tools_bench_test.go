package chat

import (
	"encoding/json"
	"testing"
)

// openTools are tools as clients write them: objects with no
// "additionalProperties": false, so their arguments may hold other members
// (any JSON value), as wasm/cloudflare/test/openai.test.mjs sends them.
var openTools = []Tool{
	{Name: "get_weather", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","maxLength":10},"unit":{"enum":["c","f"]}},"required":["city","unit"]}`)},
	{Name: "get_time", Parameters: json.RawMessage(`{"type":"object","properties":{"zone":{"type":"string","pattern":"^[A-Z]{3}$"}},"required":["zone"]}`)},
}

// BenchmarkToolGrammar compiles the grammar of two tools' calls (chat.ToolGrammar, "auto", parallel).
func BenchmarkToolGrammar(b *testing.B) {
	for b.Loop() {
		if _, err := ToolGrammar(openTools, ToolChoice{Mode: "auto", Parallel: true}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckTool checks one tool's parameters (chat.CheckTool), as each request does per tool.
func BenchmarkCheckTool(b *testing.B) {
	for b.Loop() {
		if err := CheckTool(openTools[0]); err != nil {
			b.Fatal(err)
		}
	}
}
