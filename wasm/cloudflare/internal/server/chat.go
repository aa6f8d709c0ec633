package server

import (
	"strings"

	"github.com/picolm/picolm-wasm/engine/chat"
)

// ChatFormatter renders chat messages into the prompt text, ending where the
// assistant's reply begins. bos and eos are the model's BOS and EOS token
// texts, for templates that write them.
type ChatFormatter func(msgs []Message, bos, eos string) (string, error)

// PlainChat is the format for models without a chat template (stories260K
// has none): system messages first as plain paragraphs, then a transcript
//
//	<system content>\n\n
//	User: <content>\n
//	Assistant: <content>\n
//	...
//	Assistant:
//
// which a base model continues after "Assistant:". The tokenizer adds BOS.
func PlainChat(msgs []Message, _, _ string) (string, error) {
	var b strings.Builder
	for _, m := range msgs {
		if m.Role == "system" {
			b.WriteString(m.Content)
			b.WriteString("\n\n")
		}
	}
	for _, m := range msgs {
		switch m.Role {
		case "user":
			b.WriteString("User: ")
		case "assistant":
			b.WriteString("Assistant: ")
		default:
			continue
		}
		b.WriteString(m.Content)
		b.WriteByte('\n')
	}
	b.WriteString("Assistant:")
	return b.String(), nil
}

// TemplateChat returns the formatter for a GGUF tokenizer.chat_template:
// the template itself when engine/chat can run it, else the builtin family it
// is recognised as, else (and for an empty template) PlainChat.
func TemplateChat(template string) (ChatFormatter, error) {
	t := chat.ForModel(template)
	if t == nil {
		return PlainChat, nil
	}
	return FromTemplate(t), nil
}

// FromTemplate formats with a compiled chat template, ending with the
// template's generation prompt (the assistant turn's opening).
func FromTemplate(t *chat.Template) ChatFormatter {
	return func(msgs []Message, bos, eos string) (string, error) {
		cm := make([]chat.Message, len(msgs))
		for i, m := range msgs {
			cm[i] = chat.Message{Role: m.Role, Content: m.Content}
		}
		return t.Apply(cm, true, bos, eos)
	}
}
