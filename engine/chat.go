package engine

import (
	"errors"
	"strings"
	"sync"

	"github.com/picolm/picolm-wasm/engine/chat"
)

// ErrNoChatTemplate is returned by EncodeChat for a model whose GGUF carries
// no chat template the chat package can run or recognise.
var ErrNoChatTemplate = errors.New("the model has no usable chat template")

type chatTemplate struct {
	once sync.Once
	t    *chat.Template
}

// ChatTemplate is the model's tokenizer.chat_template, compiled (or the
// built-in template it is recognised as); nil when there is none.
func (m *Model) ChatTemplate() *chat.Template {
	m.chat.once.Do(func() {
		src, err := m.file.String("tokenizer.chat_template")
		if err == nil {
			m.chat.t = chat.ForModel(src)
		}
	})
	return m.chat.t
}

// EncodeChat formats a conversation with the model's chat template, ending
// with the assistant's turn opened, and tokenizes it (special tokens such as
// </s> or <|im_end|> in the template become their ids). BOS is added unless
// the template writes it itself.
func (m *Model) EncodeChat(msgs []chat.Message) ([]int, error) {
	t := m.ChatTemplate()
	if t == nil {
		return nil, ErrNoChatTemplate
	}
	tk := m.Tokenizer
	bos, eos := "", ""
	if id := tk.BOS(); id >= 0 {
		bos = tk.Text(id)
	}
	if id := tk.EOS(); id >= 0 {
		eos = tk.Text(id)
	}
	text, err := t.Apply(msgs, true, bos, eos)
	if err != nil {
		return nil, err
	}
	return tk.Encode(text, !(bos != "" && strings.HasPrefix(text, bos))), nil
}
