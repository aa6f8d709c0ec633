package host

import (
	"encoding/binary"
	"math"
)

// The wire form of the replies: the plain maps the bridge hands to
// postMessage (field names are the JS API's).

// Map is the wire form of a ModelInfo.
func (i ModelInfo) Map() map[string]any {
	return map[string]any{
		"name":         i.Name,
		"arch":         i.Arch,
		"bytes":        float64(i.Bytes),
		"params":       float64(i.Params),
		"dim":          i.Dim,
		"layers":       i.Layers,
		"heads":        i.Heads,
		"kvHeads":      i.KVHeads,
		"vocabSize":    i.VocabSize,
		"trainCtx":     i.TrainCtx,
		"context":      i.Context,
		"fileType":     i.FileType,
		"chatTemplate": i.ChatTemplate,
		"builtIn":      i.BuiltIn,
		"workers":      i.Workers,
	}
}

// Map is the wire form of a Token: calls [{index, name?, arguments}] (name
// only in a call's first piece) and logprobs [{token, logprob, bytes,
// top_logprobs}] (OpenAI's shape) when there are any.
func (t Token) Map() map[string]any {
	m := map[string]any{"text": t.Text, "count": t.Count, "tokensPerSec": t.TokensPerSec}
	if len(t.Calls) > 0 {
		calls := make([]any, len(t.Calls))
		for i, c := range t.Calls {
			e := map[string]any{"index": c.Index, "arguments": c.Args}
			if c.Name != "" {
				e["name"] = c.Name
			}
			calls[i] = e
		}
		m["calls"] = calls
	}
	if len(t.Logprobs) > 0 {
		lps := make([]any, len(t.Logprobs))
		for i, l := range t.Logprobs {
			e := l.LogprobAlt.Map()
			top := make([]any, len(l.Top))
			for k, a := range l.Top {
				top[k] = a.Map()
			}
			e["top_logprobs"] = top
			lps[i] = e
		}
		m["logprobs"] = lps
	}
	return m
}

// Map is the wire form of a LogprobAlt.
func (a LogprobAlt) Map() map[string]any {
	b := make([]any, len(a.Bytes))
	for i, c := range a.Bytes {
		b[i] = c
	}
	return map[string]any{"token": a.Token, "logprob": a.Logprob, "bytes": b}
}

// Map is the wire form of a Done.
func (d Done) Map() map[string]any {
	return map[string]any{
		"prompt":       d.Prompt,
		"promptTokens": d.PromptTokens,
		"cachedTokens": d.CachedTokens,
		"prefillMs":    d.PrefillMs,
		"generated":    d.Generated,
		"decodeMs":     d.DecodeMs,
		"tokensPerSec": d.TokensPerSec,
		"stop":         d.Stop,
		"stopReason":   d.StopReason,
	}
}

// Bytes is the wire form of an Embedding's vector: its float32s,
// little-endian (a JS Float32Array's bytes, and the base64 encoding_format's).
func (e Embedding) Bytes() []byte {
	b := make([]byte, 4*len(e.Vector))
	for i, v := range e.Vector {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}
