// Package app is the page's logic in plain Go: the conversation, what the
// keyboard shortcuts do, and the text of the progress, stats and memory
// lines. The dom/v2 bridge in the parent directory renders it; everything
// here is tested natively.
package app

import (
	"fmt"
	"strings"

	"github.com/picolm/picolm-wasm/engine/chat"
)

// Action is what a key press asks for.
type Action int

const (
	None     Action = iota
	Generate        // Ctrl+Enter or Cmd+Enter
	Stop            // Escape
)

// Shortcut maps a keydown (KeyboardEvent.key and its modifiers) to an action.
func Shortcut(key string, ctrl, meta, alt, shift bool) Action {
	switch {
	case key == "Enter" && (ctrl || meta) && !alt && !shift:
		return Generate
	case key == "Escape" && !ctrl && !meta && !alt && !shift:
		return Stop
	}
	return None
}

// Conversation is the chat mode's history.
type Conversation struct {
	msgs []chat.Message
}

// Messages returns the turns so far. Do not modify.
func (c *Conversation) Messages() []chat.Message { return c.msgs }

// Ask appends a user turn and an empty assistant turn that Append fills, and
// returns the turns to send (every turn but the empty assistant one).
func (c *Conversation) Ask(text string) []chat.Message {
	c.msgs = append(c.msgs, chat.Message{Role: "user", Content: text}, chat.Message{Role: "assistant"})
	return c.msgs[:len(c.msgs)-1]
}

// Append adds streamed text to the last assistant turn.
func (c *Conversation) Append(text string) {
	if n := len(c.msgs); n > 0 && c.msgs[n-1].Role == "assistant" {
		c.msgs[n-1].Content += text
	}
}

// Finish ends the assistant turn; a failed turn is removed with its question
// so the history stays a valid alternation.
func (c *Conversation) Finish(ok bool) {
	n := len(c.msgs)
	if ok || n < 2 {
		return
	}
	c.msgs = c.msgs[:n-2]
}

// Reset forgets the conversation.
func (c *Conversation) Reset() { c.msgs = nil }

// Bytes renders a byte count for people (decimal units: 1.1 MB).
func Bytes(n float64) string {
	if n < 1000 {
		return fmt.Sprintf("%.0f B", n)
	}
	units := []string{"KB", "MB", "GB", "TB"}
	u := -1
	for n >= 1000 && u < len(units)-1 {
		n /= 1000
		u++
	}
	if n < 10 {
		return fmt.Sprintf("%.1f %s", n, units[u])
	}
	return fmt.Sprintf("%.0f %s", n, units[u])
}

// Download says how a download runs, for the progress line (Progress's how):
// its ranged connections and the bytes resumed from an earlier attempt, or
// that the server serves no ranges (one plain download, which starts over if
// it is cut off). "" when the progress is not a download's (reported false).
func Download(reported, ranged bool, connections int, resumed float64) string {
	if !reported {
		return ""
	}
	if !ranged {
		return "one connection: the server does not support range requests"
	}
	s := fmt.Sprintf("%d connections", connections)
	if connections == 1 {
		s = "1 connection"
	}
	if resumed > 0 {
		s += ", resumed at " + Bytes(resumed)
	}
	return s
}

// Storage is the line under the cached models: the site's storage use,
// its quota, and whether the browser keeps it (persistent) or may clear it
// under storage pressure.
func Storage(usage, quota float64, persisted bool) string {
	s := "Storage: " + Bytes(usage) + " used"
	if quota > 0 {
		s += " of " + Bytes(quota)
	}
	if persisted {
		return s + " · persistent"
	}
	return s + " · not persistent (the browser may clear it when space runs low)"
}

// Progress is the download line: "12 MB of 640 MB (1.9%) · 25 MB/s", then
// how (Download), if not "".
func Progress(loaded, total, bytesPerSec float64, fromCache bool, how string) string {
	pct := 100.0
	if total > 0 {
		pct = 100 * loaded / total
	}
	s := fmt.Sprintf("%s of %s (%.0f%%)", Bytes(loaded), Bytes(total), pct)
	if bytesPerSec > 0 {
		s += " · " + Bytes(bytesPerSec) + "/s"
	}
	if fromCache {
		s += " · from the cache"
	}
	if how != "" {
		s += " · " + how
	}
	return s
}

// Stats are a generation's numbers as the worker reports them.
type Stats struct {
	PromptTokens, CachedTokens, Generated int
	PrefillMs, DecodeMs, TokensPerSec     float64
	Stop                                  string
}

var stopText = map[string]string{
	"eos":        "end of text",
	"max_tokens": "max tokens",
	"context":    "context full",
	"json":       "JSON complete",
	"stopped":    "stopped",
}

// StatsLine is the line under the output after a generation.
func StatsLine(s Stats) string {
	prompt := fmt.Sprintf("%d prompt tokens", s.PromptTokens)
	if s.CachedTokens > 0 {
		prompt += fmt.Sprintf(" (%d cached)", s.CachedTokens)
	}
	stop := stopText[s.Stop]
	if stop == "" {
		stop = s.Stop
	}
	return fmt.Sprintf("%.1f tok/s · %s, prefill %.0f ms · %d generated, decode %.0f ms · stop: %s",
		s.TokensPerSec, prompt, s.PrefillMs, s.Generated, s.DecodeMs, stop)
}

// Live is the line while tokens stream.
func Live(count int, tokensPerSec float64) string {
	return fmt.Sprintf("%.1f tok/s · %d generated…", tokensPerSec, count)
}

// Memory is the memory line: the engine's wasm memory and the JS heaps.
func Memory(wasmBytes, workerJS, pageJS float64) string {
	parts := []string{"engine " + Bytes(wasmBytes)}
	if workerJS > 0 {
		parts = append(parts, "worker JS "+Bytes(workerJS))
	}
	if pageJS > 0 {
		parts = append(parts, "page JS "+Bytes(pageJS))
	}
	return "memory: " + strings.Join(parts, " · ")
}

// ModelLine describes the loaded model.
func ModelLine(name string, params, bytes float64, fileType string, ctx int, chatTemplate string) string {
	s := fmt.Sprintf("%s · %s params · %s · %s · context %d", name, count(params), Bytes(bytes), fileType, ctx)
	if chatTemplate != "" {
		s += " · chat: " + chatTemplate
	}
	return s
}

func count(n float64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1fB", n/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", n/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.0fK", n/1e3)
	}
	return fmt.Sprintf("%.0f", n)
}
