package host

import (
	"strings"

	"github.com/picolm/picolm-wasm/engine"
	"github.com/picolm/picolm-wasm/engine/chat"
	"github.com/picolm/picolm-wasm/gguf"
)

// chatFormatter turns chat messages into the prompt text with the model's
// chat template (tokenizer.chat_template), or joins them as plain text when
// the model has none it can use.
type chatFormatter struct {
	t        *chat.Template
	family   string // the builtin family the template is recognised as, or "custom"
	bos, eos string
}

func newChatFormatter(f *gguf.File, m *engine.Model) chatFormatter {
	src, err := f.String("tokenizer.chat_template")
	if err != nil {
		return chatFormatter{}
	}
	t := chat.ForModel(src)
	if t == nil {
		return chatFormatter{}
	}
	c := chatFormatter{t: t, family: chat.Detect(src)}
	if c.family == "" {
		c.family = "custom"
	}
	tk := m.Tokenizer
	if id := tk.BOS(); id >= 0 {
		c.bos = tk.Text(id)
	}
	if id := tk.EOS(); id >= 0 {
		c.eos = tk.Text(id)
	}
	return c
}

// name is the template family shown to people, "" for plain completion.
func (c chatFormatter) name() string { return c.family }

// format renders the turns, ready for the next assistant turn. The
// tokenizer adds BOS itself, so a BOS the template writes first is removed.
func (c chatFormatter) format(msgs []Message) (string, error) {
	if c.t == nil {
		var b strings.Builder
		for _, m := range msgs {
			b.WriteString(m.Content)
		}
		return b.String(), nil
	}
	cm := make([]chat.Message, len(msgs))
	for i, m := range msgs {
		cm[i] = chat.Message{Role: m.Role, Content: m.Content}
	}
	s, err := c.t.Apply(cm, true, c.bos, c.eos)
	if err != nil {
		return "", err
	}
	if c.bos != "" {
		s = strings.TrimPrefix(s, c.bos)
	}
	return s, nil
}
