package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/picolm/picolm-wasm/engine/chat"
	"github.com/picolm/picolm-wasm/wasm/internal/defaultmodel"
)

// TestChatFlag: --chat generates what the prompt formatted as a user turn
// generates: with the model's chat template, or, for a model without one,
// as the plain transcript, which stderr mentions.
func TestChatFlag(t *testing.T) {
	args := []string{"-p", "Tell a story", "-n", "16", "-t", "0", "-j", "1", "--ids"}

	// The embedded stories260K has no template.
	got, stderr := runCLI(t, append(args, "--chat"))
	want, _ := runCLI(t, append(args, "-p", chat.Plain([]chat.Message{{Role: "user", Content: "Tell a story"}})))
	if got != want || !strings.Contains(stderr, "no chat template") {
		t.Errorf("without a template: %q, want %q\n%s", got, want, stderr)
	}

	src, _ := chat.Builtin("zephyr")
	b, err := defaultmodel.WithChatTemplate(src)
	if err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(t.TempDir(), "zephyr.gguf")
	if err := os.WriteFile(model, b, 0o644); err != nil {
		t.Fatal(err)
	}
	got, stderr = runCLI(t, append([]string{model, "--chat"}, args...))
	want, _ = runCLI(t, append([]string{model}, append(args, "-p", "<|user|>\nTell a story</s>\n<|assistant|>\n")...))
	if got != want || strings.Contains(stderr, "no chat template") {
		t.Errorf("zephyr: %q, want %q\n%s", got, want, stderr)
	}
}
