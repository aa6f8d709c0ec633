package server

import "strings"

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

// TemplateChat returns the formatter for a GGUF chat template; PlainChat when
// the template is empty.
func TemplateChat(template string) (ChatFormatter, error) {
	if template == "" {
		return PlainChat, nil
	}
	// TODO(engine/chat): render with chat.ForModel(template).Apply once the package lands.
	return PlainChat, nil
}
