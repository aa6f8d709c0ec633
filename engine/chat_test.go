package engine

import (
	"bytes"
	"slices"
	"testing"

	"github.com/picolm/picolm-wasm/engine/chat"
	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

// withChatTemplate returns a copy of a model file with tokenizer.chat_template set.
func withChatTemplate(t *testing.T, name, template string) *Model {
	t.Helper()
	f, err := gguf.Open(shareddata.Path(t, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kv := append(append([]gguf.KeyValue(nil), f.KV...), gguf.KeyValue{Key: "tokenizer.chat_template", Value: gguf.String(template)})
	var buf bytes.Buffer
	if err := gguf.Write(&buf, kv, f.Tensors, f.Alignment); err != nil {
		t.Fatal(err)
	}
	g, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	m, err := Load(g)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestEncodeChat: a conversation is formatted with the GGUF's template and
// its special tokens become their ids; a model without one gets the plain
// transcript.
func TestEncodeChat(t *testing.T) {
	zephyr := "{% for message in messages %}\n{% if message['role'] == 'user' %}\n{{ '<|user|>\\n' + message['content'] + eos_token }}\n{% elif message['role'] == 'system' %}\n{{ '<|system|>\\n' + message['content'] + eos_token }}\n{% elif message['role'] == 'assistant' %}\n{{ '<|assistant|>\\n'  + message['content'] + eos_token }}\n{% endif %}\n{% if loop.last and add_generation_prompt %}\n{{ '<|assistant|>' }}\n{% endif %}\n{% endfor %}"
	m := withChatTemplate(t, "llama-2-tiny-random.gguf", zephyr)
	ids, err := m.EncodeChat([]chat.Message{{Role: "user", Content: "Hi there"}})
	if err != nil {
		t.Fatal(err)
	}
	want := m.Tokenizer.Encode("<|user|>\nHi there</s>\n<|assistant|>\n", true)
	if !slices.Equal(ids, want) {
		t.Errorf("EncodeChat = %v, want %v", ids, want)
	}
	eos := 0
	for _, id := range ids {
		if id == m.Tokenizer.EOS() {
			eos++
		}
	}
	if ids[0] != m.Tokenizer.BOS() || eos != 1 {
		t.Errorf("want BOS first and </s> as its special id once: %v", ids)
	}

	// A model without a template gets the plain transcript.
	plain := loadModel(t, "stories260K.gguf")
	if f := plain.Chat().Family(); f != "" {
		t.Errorf("stories260K's chat family %q", f)
	}
	ids, err = plain.EncodeChat([]chat.Message{{Role: "user", Content: "x"}})
	if want := plain.Tokenizer.Encode("User: x\nAssistant:", true); err != nil || !slices.Equal(ids, want) {
		t.Errorf("a model without a template: %v, %v, want %v", ids, err, want)
	}
}
