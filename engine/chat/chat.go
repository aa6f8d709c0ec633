// Package chat formats a conversation into the prompt a model continues
// with the assistant's reply: with the model's chat template (the Jinja
// template a GGUF file carries in tokenizer.chat_template, Hugging Face's
// tokenizer_config.json "chat_template", run by package jinja); with the
// builtin template of the family it is recognised as when it cannot be run;
// or, for a model without a usable template, as a plain transcript (Plain).
//
// The prompt is text that still contains the template's special tokens
// ("<|im_start|>", "</s>", ...): tokenize it with special-token parsing on
// (engine.Model.EncodeChat does), so they become their token ids.
package chat

import (
	"fmt"
	"strings"

	"github.com/picolm/picolm-wasm/engine/jinja"
)

// Message is one turn of a conversation. Role is "system", "user",
// "assistant" or "tool" (a tool's result, answering the assistant's call
// ToolCallID).
type Message struct {
	Role, Content string
	ToolCalls     []ToolCall // an assistant's calls (tools.go)
	ToolCallID    string     // role "tool": the call this answers
	Name          string     // role "tool": the function's name, when known
}

// Formatter formats the conversations of one model. It is immutable and safe
// for concurrent use.
type Formatter struct {
	t        *jinja.Template // nil: the plain transcript
	family   string
	bos, eos string
	dropBOS  bool
	caps     toolCaps // what the template renders itself (tools.go)
}

// New returns the formatter of a model whose GGUF tokenizer.chat_template is
// template ("" when it has none). bos and eos are the texts of the model's
// BOS and EOS tokens ("" for none), which templates write as bos_token and
// eos_token. addsBOS tells whether the model's tokenizer adds BOS itself;
// then a BOS the template writes first is dropped from the prompt, as
// llama.cpp does, so the tokenized prompt starts with one BOS.
func New(template, bos, eos string, addsBOS bool) *Formatter {
	t, family := forModel(template)
	f := &Formatter{t: t, family: family, bos: bos, eos: eos, dropBOS: addsBOS && bos != ""}
	f.caps = probeTools(t)
	return f
}

// Family names the template in use: the builtin family it is recognised as
// ("zephyr", "chatml", "llama2", "llama3", "phi3", "smollm2"), "custom" for a
// template of no known family, "" for the plain transcript.
func (f *Formatter) Family() string { return f.family }

// Format renders msgs, ending with the opening of the assistant's turn. An
// error wraps jinja.ErrRender: the template refused the conversation (its
// raise_exception, e.g. for roles that do not alternate) or hit a limit.
func (f *Formatter) Format(msgs []Message) (string, error) {
	return f.FormatTools(msgs, nil)
}

// FormatTools is Format for a conversation in which the assistant may call
// tools: the template is given them (as Hugging Face's apply_chat_template
// gives its tools argument), and the assistant's tool calls and the tool
// results as its messages carry them. What the template does not render
// itself is written as the plain fallback of tools.go says.
func (f *Formatter) FormatTools(msgs []Message, tools []Tool) (string, error) {
	msgs, tools = f.fallback(msgs, tools)
	if f.t == nil {
		return Plain(msgs), nil
	}
	s, err := render(f.t, msgs, tools, true, f.bos, f.eos)
	if err != nil {
		return "", err
	}
	if f.dropBOS {
		s = strings.TrimPrefix(s, f.bos)
	}
	return s, nil
}

// Plain is the format of models without a usable chat template (stories260K
// has none): the system messages first as paragraphs, then a transcript
//
//	<system content>\n\n
//	User: <content>\n
//	Assistant: <content>\n
//	...
//	Assistant:
//
// which a base model continues after "Assistant:". A content that starts
// with a space gets no second one: a reply as the model generated it after
// "Assistant:" (" Once upon...") comes back as the same text, so a later turn
// reuses the cached tokens of the earlier ones.
func Plain(msgs []Message) string {
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
			b.WriteString("User:")
		case "assistant":
			b.WriteString("Assistant:")
		default:
			continue
		}
		if !strings.HasPrefix(m.Content, " ") {
			b.WriteByte(' ')
		}
		b.WriteString(m.Content)
		b.WriteByte('\n')
	}
	b.WriteString("Assistant:")
	return b.String()
}

// render runs a chat template over msgs. addGenerationPrompt asks it to end
// with the opening of an assistant turn.
func render(t *jinja.Template, msgs []Message, tools []Tool, addGenerationPrompt bool, bos, eos string) (string, error) {
	list := make([]jinja.Dict, len(msgs))
	for i, m := range msgs {
		list[i] = messageDict(m)
	}
	vars := map[string]any{
		"messages":              list,
		"add_generation_prompt": addGenerationPrompt,
		"bos_token":             bos,
		"eos_token":             eos,
	}
	if len(tools) > 0 {
		vars["tools"] = toolDicts(tools)
	}
	return t.Render(vars)
}

// Builtin families, each with a real model's template text.
var builtins = map[string]string{
	// ChatML as in teknium/OpenHermes-2.5-Mistral-7B (Qwen2 and SmolLM2 use
	// the same turn format).
	"chatml": `{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}`,
	// meta-llama/Llama-2-7b-chat-hf.
	"llama2": `{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% endif %}{% for message in loop_messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if loop.index0 == 0 and system_message != false %}{% set content = '<<SYS>>\n' + system_message + '\n<</SYS>>\n\n' + message['content'] %}{% else %}{% set content = message['content'] %}{% endif %}{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %}`,
	// TinyLlama/TinyLlama-1.1B-Chat-v1.0 (HuggingFaceH4/zephyr-7b-beta).
	"zephyr": "{% for message in messages %}\n{% if message['role'] == 'user' %}\n{{ '<|user|>\n' + message['content'] + eos_token }}\n{% elif message['role'] == 'system' %}\n{{ '<|system|>\n' + message['content'] + eos_token }}\n{% elif message['role'] == 'assistant' %}\n{{ '<|assistant|>\n'  + message['content'] + eos_token }}\n{% endif %}\n{% if loop.last and add_generation_prompt %}\n{{ '<|assistant|>' }}\n{% endif %}\n{% endfor %}",
	// meta-llama/Meta-Llama-3-8B-Instruct.
	"llama3": `{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>

'+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>

' }}{% endif %}`,
	// microsoft/Phi-3.5-mini-instruct (and the 2024 Phi-3-mini update).
	"phi3": `{% for message in messages %}{% if message['role'] == 'system' and message['content'] %}{{'<|system|>
' + message['content'] + '<|end|>
'}}{% elif message['role'] == 'user' %}{{'<|user|>
' + message['content'] + '<|end|>
'}}{% elif message['role'] == 'assistant' %}{{'<|assistant|>
' + message['content'] + '<|end|>
'}}{% endif %}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>
' }}{% else %}{{ eos_token }}{% endif %}`,
	// HuggingFaceTB/SmolLM2-*-Instruct.
	"smollm2": `{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system
You are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>
' }}{% endif %}{{'<|im_start|>' + message['role'] + '
' + message['content'] + '<|im_end|>' + '
'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant
' }}{% endif %}`,
}

// Builtin returns the template text of a model family: "chatml", "llama2",
// "zephyr" (TinyLlama), "llama3", "phi3" or "smollm2".
func Builtin(family string) (string, bool) {
	src, ok := builtins[family]
	return src, ok
}

// Detect tells which builtin family a template belongs to, from the markers
// its turns are written with, or "" if none. Like llama.cpp's
// llm_chat_detect_template, it looks at the text, not at the structure.
func Detect(src string) string {
	has := func(s string) bool { return strings.Contains(src, s) }
	switch {
	case has("<|im_start|>") && has("SmolLM"):
		return "smollm2"
	case has("<|im_start|>"):
		return "chatml"
	case has("<|start_header_id|>") && has("<|end_header_id|>"):
		return "llama3"
	case has("<|end|>") && (has("<|user|>") || has("<|assistant|>")):
		return "phi3"
	case has("<|user|>") && has("<|assistant|>"):
		return "zephyr"
	case has("[INST]"):
		return "llama2"
	}
	return ""
}

// probe is the conversation forModel checks a template with.
var probe = [...]Message{
	{Role: "system", Content: "s"},
	{Role: "user", Content: "u"},
	{Role: "assistant", Content: "a"},
	{Role: "user", Content: "u"},
}

// forModel returns the template to use for a model whose GGUF carries src in
// tokenizer.chat_template, and its Family: the template itself if it parses
// and formats a system/user/assistant/user conversation, otherwise the
// builtin family Detect recognises in it; nil and "" when there is no usable
// template (the plain transcript).
func forModel(src string) (*jinja.Template, string) {
	if strings.TrimSpace(src) == "" {
		return nil, ""
	}
	family := Detect(src)
	if t, err := jinja.Parse(src); err == nil {
		_, err := render(t, probe[:], nil, true, "<s>", "</s>")
		if err != nil {
			// A template that refuses a system turn (Gemma, Mistral v1) is
			// still the right template for conversations without one.
			_, err = render(t, probe[1:], nil, true, "<s>", "</s>")
		}
		if err == nil {
			if family == "" {
				family = "custom"
			}
			return t, family
		}
	}
	if family == "" {
		return nil, ""
	}
	t, err := jinja.Parse(builtins[family])
	if err != nil {
		panic(fmt.Sprintf("chat: builtin template %q does not parse: %v", family, err))
	}
	return t, family
}
