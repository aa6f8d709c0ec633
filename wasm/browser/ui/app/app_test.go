package app

import (
	"reflect"
	"testing"

	"github.com/picolm/picolm-wasm/engine/chat"
)

func TestShortcut(t *testing.T) {
	for _, c := range []struct {
		key                    string
		ctrl, meta, alt, shift bool
		want                   Action
	}{
		{"Enter", true, false, false, false, Generate},
		{"Enter", false, true, false, false, Generate},
		{"Enter", false, false, false, false, None}, // a newline in the prompt
		{"Enter", true, false, false, true, None},
		{"Escape", false, false, false, false, Stop},
		{"Escape", true, false, false, false, None},
		{"a", true, false, false, false, None},
	} {
		if got := Shortcut(c.key, c.ctrl, c.meta, c.alt, c.shift); got != c.want {
			t.Errorf("%+v: got %v", c, got)
		}
	}
}

func TestConversation(t *testing.T) {
	var c Conversation
	sent := c.Ask("Hi")
	if !reflect.DeepEqual(sent, []chat.Message{{Role: "user", Content: "Hi"}}) {
		t.Fatalf("first ask sends %v", sent)
	}
	c.Append("Hel")
	c.Append("lo")
	c.Finish(true)
	sent = c.Ask("More")
	want := []chat.Message{{Role: "user", Content: "Hi"}, {Role: "assistant", Content: "Hello"}, {Role: "user", Content: "More"}}
	if !reflect.DeepEqual(sent, want) {
		t.Fatalf("second ask sends %v", sent)
	}
	c.Append("partial")
	c.Finish(false) // failed turn: question and partial answer dropped
	if got := c.Messages(); !reflect.DeepEqual(got, want[:2]) {
		t.Errorf("after a failed turn: %v", got)
	}
	c.Reset()
	if len(c.Messages()) != 0 {
		t.Error("Reset kept messages")
	}
}

func TestTexts(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Bytes(0), "0 B"},
		{Bytes(1185376), "1.2 MB"},
		{Bytes(669e6), "669 MB"},
		{Progress(12e6, 640e6, 25e6, false, ""), "12 MB of 640 MB (2%) · 25 MB/s"},
		{Progress(1750560, 1750560, 0, true, ""), "1.8 MB of 1.8 MB (100%) · from the cache"},
		{Progress(12e6, 640e6, 25e6, false, Download(true, true, 4, 0)), "12 MB of 640 MB (2%) · 25 MB/s · 4 connections"},
		{Progress(12e6, 640e6, 0, false, Download(true, true, 4, 3e6)), "12 MB of 640 MB (2%) · 4 connections, resumed at 3.0 MB"},
		{Progress(12e6, 640e6, 0, false, Download(true, false, 1, 0)), "12 MB of 640 MB (2%) · one connection: the server does not support range requests"},
		{Download(false, false, 0, 0), ""},
		{Storage(2.5e6, 10e9, true), "Storage: 2.5 MB used of 10 GB · persistent"},
		{Storage(2.5e6, 0, false), "Storage: 2.5 MB used · not persistent (the browser may clear it when space runs low)"},
		{StatsLine(Stats{PromptTokens: 5, CachedTokens: 4, Generated: 200, PrefillMs: 1.4, DecodeMs: 771, TokensPerSec: 259.43, Stop: "max_tokens"}),
			"259.4 tok/s · 5 prompt tokens (4 cached), prefill 1 ms · 200 generated, decode 771 ms · stop: max tokens"},
		{StatsLine(Stats{Stop: "json"}), "0.0 tok/s · 0 prompt tokens, prefill 0 ms · 0 generated, decode 0 ms · stop: JSON complete"},
		{Live(17, 250), "250.0 tok/s · 17 generated…"},
		{Memory(8.4e6, 0, 3.6e6), "memory: engine 8.4 MB · page JS 3.6 MB"},
		{ModelLine("TinyLlama", 1.1e9, 669e6, "Q4_K", 2048, "zephyr"), "TinyLlama · 1.1B params · 669 MB · Q4_K · context 2048 · chat: zephyr"},
		{ModelLine("stories", 292096, 1185376, "F32", 512, ""), "stories · 292K params · 1.2 MB · F32 · context 512"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
