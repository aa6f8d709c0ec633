package host

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

// Map is the wire form of a Token.
func (t Token) Map() map[string]any {
	return map[string]any{"text": t.Text, "count": t.Count, "tokensPerSec": t.TokensPerSec}
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
	}
}
