package engine

import (
	"sync"

	"github.com/picolm/picolm-wasm/engine/chat"
)

type chatTemplate struct {
	once sync.Once
	f    *chat.Formatter
}

// Chat returns the model's chat formatter: its tokenizer.chat_template (or
// the builtin template it is recognised as) with its BOS and EOS token texts,
// or the plain transcript (chat.Plain) when it has no usable template.
func (m *Model) Chat() *chat.Formatter {
	m.chat.once.Do(func() {
		src, _ := m.file.String("tokenizer.chat_template") // none: "", the plain transcript
		tk := m.Tokenizer
		m.chat.f = chat.New(src, tk.Text(tk.BOS()), tk.Text(tk.EOS()), tk.AddsBOS())
	})
	return m.chat.f
}

// EncodeChat formats a conversation with the model's chat formatter, ending
// with the assistant's turn opened, and tokenizes it: special tokens such as
// </s> or <|im_end|> in the template become their ids, and the prompt starts
// with BOS when the tokenizer adds one.
func (m *Model) EncodeChat(msgs []chat.Message) ([]int, error) {
	text, err := m.Chat().Format(msgs)
	if err != nil {
		return nil, err
	}
	return m.Tokenizer.Encode(text, true), nil
}
