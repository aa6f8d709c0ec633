package chat

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/picolm/picolm-wasm/engine/jinja"
)

// The conversation of the issue: system + user + assistant + user.
var conv4 = []Message{
	{Role: "system", Content: "You are a helpful assistant"},
	{Role: "user", Content: "Hello"},
	{Role: "assistant", Content: "Hi there"},
	{Role: "user", Content: "Who are you"},
}

// llama.cpp's tests/test-chat-template.cpp conversation.
var convLlamaCpp = []Message{
	{Role: "system", Content: "You are a helpful assistant"},
	{Role: "user", Content: "Hello"},
	{Role: "assistant", Content: "Hi there"},
	{Role: "user", Content: "Who are you"},
	{Role: "assistant", Content: "   I am an assistant   "},
	{Role: "user", Content: "Another question"},
}

func readTemplate(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Each model's real template (tokenizer_config.json / GGUF
// tokenizer.chat_template) with the prompt transformers' apply_chat_template
// makes of conv4.
func TestModelTemplates(t *testing.T) {
	cases := []struct {
		name, src, bos, eos, want string
		msgs                      []Message
		gen                       bool
	}{
		{
			name: "TinyLlama-1.1B-Chat-v1.0 (zephyr)", src: builtins["zephyr"], bos: "<s>", eos: "</s>", gen: true, msgs: conv4,
			want: "<|system|>\nYou are a helpful assistant</s>\n<|user|>\nHello</s>\n<|assistant|>\nHi there</s>\n<|user|>\nWho are you</s>\n<|assistant|>\n",
		},
		{
			name: "TinyLlama without generation prompt", src: builtins["zephyr"], bos: "<s>", eos: "</s>", gen: false, msgs: conv4[:3],
			want: "<|system|>\nYou are a helpful assistant</s>\n<|user|>\nHello</s>\n<|assistant|>\nHi there</s>\n",
		},
		{
			name: "Llama-2-7b-chat", src: builtins["llama2"], bos: "<s>", eos: "</s>", gen: true, msgs: conv4,
			want: "<s>[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST] Hi there </s><s>[INST] Who are you [/INST]",
		},
		{
			name: "Llama-2-7b-chat without system", src: builtins["llama2"], bos: "<s>", eos: "</s>", gen: true, msgs: conv4[1:],
			want: "<s>[INST] Hello [/INST] Hi there </s><s>[INST] Who are you [/INST]",
		},
		{
			name: "Meta-Llama-3-8B-Instruct", src: builtins["llama3"], bos: "<|begin_of_text|>", eos: "<|eot_id|>", gen: true, msgs: conv4,
			want: "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou are a helpful assistant<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nHi there<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nWho are you<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
		},
		{
			name: "Llama-3.2-1B-Instruct", src: readTemplate(t, "llama3.2.jinja"), bos: "<|begin_of_text|>", eos: "<|eot_id|>", gen: true, msgs: conv4,
			want: "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\nYou are a helpful assistant<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nHi there<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nWho are you<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
		},
		{
			name: "Llama-3.2-1B-Instruct without system", src: readTemplate(t, "llama3.2.jinja"), bos: "<|begin_of_text|>", eos: "<|eot_id|>", gen: false, msgs: conv4[1:2],
			want: "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|>",
		},
		{
			name: "Qwen2.5-0.5B-Instruct", src: readTemplate(t, "qwen2.5.jinja"), eos: "<|im_end|>", gen: true, msgs: conv4,
			want: "<|im_start|>system\nYou are a helpful assistant<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\nHi there<|im_end|>\n<|im_start|>user\nWho are you<|im_end|>\n<|im_start|>assistant\n",
		},
		{
			name: "Qwen2.5-0.5B-Instruct default system", src: readTemplate(t, "qwen2.5.jinja"), eos: "<|im_end|>", gen: true, msgs: conv4[1:2],
			want: "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n",
		},
		{
			name: "SmolLM2-Instruct", src: builtins["smollm2"], bos: "<|im_start|>", eos: "<|im_end|>", gen: true, msgs: conv4,
			want: "<|im_start|>system\nYou are a helpful assistant<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\nHi there<|im_end|>\n<|im_start|>user\nWho are you<|im_end|>\n<|im_start|>assistant\n",
		},
		{
			name: "SmolLM2-Instruct default system", src: builtins["smollm2"], bos: "<|im_start|>", eos: "<|im_end|>", gen: true, msgs: conv4[1:2],
			want: "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n",
		},
		{
			name: "Phi-3.5-mini-instruct", src: builtins["phi3"], bos: "<s>", eos: "<|endoftext|>", gen: true, msgs: conv4,
			want: "<|system|>\nYou are a helpful assistant<|end|>\n<|user|>\nHello<|end|>\n<|assistant|>\nHi there<|end|>\n<|user|>\nWho are you<|end|>\n<|assistant|>\n",
		},
		{
			name: "Phi-3.5-mini-instruct without generation prompt", src: builtins["phi3"], bos: "<s>", eos: "<|endoftext|>", gen: false, msgs: conv4[1:3],
			want: "<|user|>\nHello<|end|>\n<|assistant|>\nHi there<|end|>\n<|endoftext|>",
		},
		{
			name: "ChatML (OpenHermes-2.5)", src: builtins["chatml"], gen: true, msgs: conv4,
			want: "<|im_start|>system\nYou are a helpful assistant<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\nHi there<|im_end|>\n<|im_start|>user\nWho are you<|im_end|>\n<|im_start|>assistant\n",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tmpl, err := jinja.Parse(c.src)
			if err != nil {
				t.Fatal(err)
			}
			got, err := render(tmpl, c.msgs, nil, c.gen, c.bos, c.eos)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got\n%q\nwant\n%q", got, c.want)
			}
		})
	}
}

// Templates and expected outputs from llama.cpp's tests/test-chat-template.cpp
// (the expected_output_jinja column where it differs), on its six-message
// conversation with add_generation_prompt.
func TestLlamaCppVectors(t *testing.T) {
	cases := []struct {
		name, src, bos, eos, want string
	}{
		{
			"teknium/OpenHermes-2.5-Mistral-7B",
			"{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}",
			"", "",
			"<|im_start|>system\nYou are a helpful assistant<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\nHi there<|im_end|>\n<|im_start|>user\nWho are you<|im_end|>\n<|im_start|>assistant\n   I am an assistant   <|im_end|>\n<|im_start|>user\nAnother question<|im_end|>\n<|im_start|>assistant\n",
		},
		{
			"mlabonne/AlphaMonarch-7B",
			"{% for message in messages %}{{bos_token + message['role'] + '\\n' + message['content'] + eos_token + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ bos_token + 'assistant\\n' }}{% endif %}",
			"<s>", "</s>",
			"<s>system\nYou are a helpful assistant</s>\n<s>user\nHello</s>\n<s>assistant\nHi there</s>\n<s>user\nWho are you</s>\n<s>assistant\n   I am an assistant   </s>\n<s>user\nAnother question</s>\n<s>assistant\n",
		},
		{
			"deepseek-ai/deepseek-coder-33b-instruct",
			"{% if not add_generation_prompt is defined %}\n{% set add_generation_prompt = false %}\n{% endif %}\n{%- set ns = namespace(found=false) -%}\n{%- for message in messages -%}\n    {%- if message['role'] == 'system' -%}\n        {%- set ns.found = true -%}\n    {%- endif -%}\n{%- endfor -%}\n{{bos_token}}{%- if not ns.found -%}\n{{'You are an AI programming assistant, utilizing the Deepseek Coder model, developed by Deepseek Company, and you only answer questions related to computer science. For politically sensitive questions, security and privacy issues, and other non-computer science questions, you will refuse to answer\\n'}}\n{%- endif %}\n{%- for message in messages %}\n    {%- if message['role'] == 'system' %}\n{{ message['content'] }}\n    {%- else %}\n        {%- if message['role'] == 'user' %}\n{{'### Instruction:\\n' + message['content'] + '\\n'}}\n        {%- else %}\n{{'### Response:\\n' + message['content'] + '\\n<|EOT|>\\n'}}\n        {%- endif %}\n    {%- endif %}\n{%- endfor %}\n{% if add_generation_prompt %}\n{{'### Response:'}}\n{% endif %}",
			"", "",
			"You are a helpful assistant### Instruction:\nHello\n### Response:\nHi there\n<|EOT|>\n### Instruction:\nWho are you\n### Response:\n   I am an assistant   \n<|EOT|>\n### Instruction:\nAnother question\n### Response:\n",
		},
		{
			"CohereForAI/c4ai-command-r-plus",
			"{{ bos_token }}{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = messages[0]['content'] %}{% elif false == true %}{% set loop_messages = messages %}{% set system_message = 'You are Command-R, a brilliant, sophisticated, AI-assistant trained to assist human users by providing thorough responses. You are trained by Cohere.' %}{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% endif %}{% if system_message != false %}{{ '<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>' + system_message + '<|END_OF_TURN_TOKEN|>' }}{% endif %}{% for message in loop_messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% set content = message['content'] %}{% if message['role'] == 'user' %}{{ '<|START_OF_TURN_TOKEN|><|USER_TOKEN|>' + content.strip() + '<|END_OF_TURN_TOKEN|>' }}{% elif message['role'] == 'assistant' %}{{ '<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>'  + content.strip() + '<|END_OF_TURN_TOKEN|>' }}{% endif %}{% endfor %}{% if add_generation_prompt %}{{ '<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>' }}{% endif %}",
			"", "",
			"<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>You are a helpful assistant<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|USER_TOKEN|>Hello<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>Hi there<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|USER_TOKEN|>Who are you<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>I am an assistant<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|USER_TOKEN|>Another question<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>",
		},
		{
			"Llama-3",
			"{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}",
			"", "",
			"<|start_header_id|>system<|end_header_id|>\n\nYou are a helpful assistant<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nHi there<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nWho are you<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nI am an assistant<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nAnother question<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
		},
		{
			"Phi-3-small",
			"{{ bos_token }}{% for message in messages %}{{'<|' + message['role'] + '|>' + '\n' + message['content'] + '<|end|>\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% else %}{{ eos_token }}{% endif %}",
			"", "",
			"<|system|>\nYou are a helpful assistant<|end|>\n<|user|>\nHello<|end|>\n<|assistant|>\nHi there<|end|>\n<|user|>\nWho are you<|end|>\n<|assistant|>\n   I am an assistant   <|end|>\n<|user|>\nAnother question<|end|>\n<|assistant|>\n",
		},
		{
			"Phi-3-vision",
			"{% for message in messages %}{{'<|' + message['role'] + '|>' + '\n' + message['content'] + '<|end|>\n' }}{% endfor %}{% if add_generation_prompt and messages[-1]['role'] != 'assistant' %}{{- '<|assistant|>\n' -}}{% endif %}",
			"", "",
			"<|system|>\nYou are a helpful assistant<|end|>\n<|user|>\nHello<|end|>\n<|assistant|>\nHi there<|end|>\n<|user|>\nWho are you<|end|>\n<|assistant|>\n   I am an assistant   <|end|>\n<|user|>\nAnother question<|end|>\n<|assistant|>\n",
		},
		{
			"ChatGLM3",
			"{% for message in messages %}{% if loop.first %}[gMASK]sop<|{{ message['role'] }}|>\n {{ message['content'] }}{% else %}<|{{ message['role'] }}|>\n {{ message['content'] }}{% endif %}{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}",
			"", "",
			"[gMASK]sop<|system|>\n You are a helpful assistant<|user|>\n Hello<|assistant|>\n Hi there<|user|>\n Who are you<|assistant|>\n    I am an assistant   <|user|>\n Another question<|assistant|>",
		},
		{
			"ibm-granite/granite-3.0-8b-instruct",
			"{%- if tools %}\n    {{- '<|start_of_role|>available_tools<|end_of_role|>\n' }}\n    {%- for tool in tools %}\n    {{- tool | tojson(indent=4) }}\n    {%- if not loop.last %}\n        {{- '\n\n' }}\n    {%- endif %}\n    {%- endfor %}\n    {{- '<|end_of_text|>\n' }}\n{%- endif %}\n{%- for message in messages %}\n    {%- if message['role'] == 'system' %}\n    {{- '<|start_of_role|>system<|end_of_role|>' + message['content'] + '<|end_of_text|>\n' }}\n    {%- elif message['role'] == 'user' %}\n    {{- '<|start_of_role|>user<|end_of_role|>' + message['content'] + '<|end_of_text|>\n' }}\n    {%- elif message['role'] == 'assistant' %}\n    {{- '<|start_of_role|>assistant<|end_of_role|>'  + message['content'] + '<|end_of_text|>\n' }}\n    {%- elif message['role'] == 'assistant_tool_call' %}\n    {{- '<|start_of_role|>assistant<|end_of_role|><|tool_call|>' + message['content'] + '<|end_of_text|>\n' }}\n    {%- elif message['role'] == 'tool_response' %}\n    {{- '<|start_of_role|>tool_response<|end_of_role|>' + message['content'] + '<|end_of_text|>\n' }}\n    {%- endif %}\n    {%- if loop.last and add_generation_prompt %}\n    {{- '<|start_of_role|>assistant<|end_of_role|>' }}\n    {%- endif %}\n{%- endfor %}",
			"", "",
			"<|start_of_role|>system<|end_of_role|>You are a helpful assistant<|end_of_text|>\n<|start_of_role|>user<|end_of_role|>Hello<|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>Hi there<|end_of_text|>\n<|start_of_role|>user<|end_of_role|>Who are you<|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>   I am an assistant   <|end_of_text|>\n<|start_of_role|>user<|end_of_role|>Another question<|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>",
		},
		{
			"mistralai/Mistral-7B-Instruct-v0.2 (v1 with system prompt)",
			"{%- if messages[0]['role'] == 'system' %}\n    {%- set system_message = messages[0]['content'] %}\n    {%- set loop_messages = messages[1:] %}\n{%- else %}\n    {%- set loop_messages = messages %}\n{%- endif %}\n\n{{- bos_token }}\n{%- for message in loop_messages %}\n    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}\n        {{- raise_exception('After the optional system message, conversation roles must alternate user/assistant/user/assistant/...') }}\n    {%- endif %}\n    {%- if message['role'] == 'user' %}\n        {%- if loop.first and system_message is defined %}\n            {{- ' [INST] ' + system_message + '\\n\\n' + message['content'] + ' [/INST]' }}\n        {%- else %}\n            {{- ' [INST] ' + message['content'] + ' [/INST]' }}\n        {%- endif %}\n    {%- elif message['role'] == 'assistant' %}\n        {{- ' ' + message['content'] + eos_token}}\n    {%- else %}\n        {{- raise_exception('Only user and assistant roles are supported, with the exception of an initial optional system message!') }}\n    {%- endif %}\n{%- endfor %}\n",
			"", "</s>",
			" [INST] You are a helpful assistant\n\nHello [/INST] Hi there</s> [INST] Who are you [/INST]    I am an assistant   </s> [INST] Another question [/INST]",
		},
		{
			"inclusionAI/Ling-lite",
			"{% for message in messages %}{% set role = message['role'] | lower %}{% if role == 'user' %}{% set role = 'HUMAN' %}{% endif %}{% set role = role | upper %}{{ '<role>' + role + '</role>' + message['content'] }}{% endfor %}{% if add_generation_prompt %}{{ '<role>ASSISTANT</role>' }}{% endif %}",
			"", "",
			"<role>SYSTEM</role>You are a helpful assistant<role>HUMAN</role>Hello<role>ASSISTANT</role>Hi there<role>HUMAN</role>Who are you<role>ASSISTANT</role>   I am an assistant   <role>HUMAN</role>Another question<role>ASSISTANT</role>",
		},
		{
			"ByteDance-Seed/Seed-OSS-36B-Instruct",
			"{# <seed:bos> #}{%- for message in messages %}{%- if message.role in [\"user\", \"system\"] %}{{ bos_token + message.role + \"\\n\" + message.content + eos_token }}{%- elif message.role == \"assistant\" %}{{ bos_token + message.role }}{%- if message.content is defined and message.content is string and message.content|trim|length > 0 %}{{ \"\\n\" + message.content|trim + eos_token }}{%- endif %}{%- else %}{{ bos_token + message.role + \"\\n\" + message.content + eos_token }}{%- endif %}{%- endfor %}{%- if add_generation_prompt %}{{ bos_token + \"assistant\\n\" }}{%- endif %}",
			"<seed:bos>", "<seed:eos>",
			"<seed:bos>system\nYou are a helpful assistant<seed:eos><seed:bos>user\nHello<seed:eos><seed:bos>assistant\nHi there<seed:eos><seed:bos>user\nWho are you<seed:eos><seed:bos>assistant\nI am an assistant<seed:eos><seed:bos>user\nAnother question<seed:eos><seed:bos>assistant\n",
		},
		{
			"Mistral-Large-Instruct-2407 (v3, system prompt moved to the last user turn)",
			"{%- if messages[0][\"role\"] == \"system\" %}\n    {%- set system_message = messages[0][\"content\"] %}\n    {%- set loop_messages = messages[1:] %}\n{%- else %}\n    {%- set loop_messages = messages %}\n{%- endif %}\n{%- if not tools is defined %}\n    {%- set tools = none %}\n{%- endif %}\n{%- set user_messages = loop_messages | selectattr(\"role\", \"equalto\", \"user\") | list %}\n\n{#- This block checks for alternating user/assistant messages, skipping tool calling messages #}\n{%- set ns = namespace() %}\n{%- set ns.index = 0 %}\n{%- for message in loop_messages %}\n    {%- if not (message.role == \"tool\" or message.role == \"tool_results\" or (message.tool_calls is defined and message.tool_calls is not none)) %}\n        {%- if (message[\"role\"] == \"user\") != (ns.index % 2 == 0) %}\n            {{- raise_exception(\"After the optional system message, conversation roles must alternate user/assistant/user/assistant/...\") }}\n        {%- endif %}\n        {%- set ns.index = ns.index + 1 %}\n    {%- endif %}\n{%- endfor %}\n\n{{- bos_token }}\n{%- for message in loop_messages %}\n    {%- if message[\"role\"] == \"user\" %}\n        {%- if loop.last and system_message is defined %}\n            {{- \"[INST] \" + system_message + \"\\n\\n\" + message[\"content\"] + \"[/INST]\" }}\n        {%- else %}\n            {{- \"[INST] \" + message[\"content\"] + \"[/INST]\" }}\n        {%- endif %}\n    {%- elif message[\"role\"] == \"assistant\" %}\n        {{- \" \" + message[\"content\"]|trim + eos_token}}\n    {%- else %}\n        {{- raise_exception(\"Only user and assistant roles are supported, with the exception of an initial optional system message!\") }}\n    {%- endif %}\n{%- endfor %}\n",
			"", "</s>",
			"[INST] Hello[/INST] Hi there</s>[INST] Who are you[/INST] I am an assistant</s>[INST] You are a helpful assistant\n\nAnother question[/INST]",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tmpl, err := jinja.Parse(c.src)
			if err != nil {
				t.Fatal(err)
			}
			got, err := render(tmpl, convLlamaCpp, nil, true, c.bos, c.eos)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got\n%q\nwant\n%q", got, c.want)
			}
		})
	}
}

func TestBuiltinAndDetect(t *testing.T) {
	for _, name := range []string{"chatml", "llama2", "zephyr", "llama3", "phi3", "smollm2"} {
		src, ok := Builtin(name)
		if !ok {
			t.Fatalf("Builtin(%q) missing", name)
		}
		if got := Detect(src); got != name {
			t.Errorf("Detect(builtin %q) = %q", name, got)
		}
		if got, family := forModel(src); got == nil || got.Source() != src || family != name {
			t.Errorf("forModel(builtin %q) did not return the template itself (family %q)", name, family)
		}
	}
	if _, ok := Builtin("nope"); ok {
		t.Error("Builtin(nope) found")
	}
	for src, want := range map[string]string{
		readTemplate(t, "llama3.2.jinja"): "llama3",
		readTemplate(t, "qwen2.5.jinja"):  "chatml",
		"{{ messages }}":                  "",
		"":                                "",
	} {
		if got := Detect(src); got != want {
			t.Errorf("Detect(%.40q) = %q, want %q", src, got, want)
		}
	}
}

func TestForModel(t *testing.T) {
	for _, src := range []string{"", "  \n"} {
		if tm, family := forModel(src); tm != nil || family != "" {
			t.Errorf("forModel(%q) = %v, %q: an empty template should give nil", src, tm, family)
		}
	}
	// A template this package cannot run falls back to the detected family.
	bad := "{% for message in messages %}{{ '<|im_start|>' + message.role }}{% call foo() %}{% endcall %}{% endfor %}"
	if _, err := jinja.Parse(bad); err == nil {
		t.Fatal("expected a parse error")
	}
	if tm, family := forModel(bad); tm == nil || tm.Source() != builtins["chatml"] || family != "chatml" {
		t.Fatalf("forModel(unsupported chatml-like) = %v, %q, want the chatml builtin", tm, family)
	}
	// Fails at render time (unknown filter): also falls back.
	bad2 := "{% for m in messages %}[INST] {{ m.content | frobnicate }}{% endfor %}"
	if tm, _ := forModel(bad2); tm == nil || tm.Source() != builtins["llama2"] {
		t.Fatal("render-time failure should fall back to llama2")
	}
	// Unknown and unsupported: nil.
	if tm, family := forModel("{% call x() %}{% endcall %}"); tm != nil || family != "" {
		t.Error("want nil")
	}
	// A template that refuses system messages is kept.
	gemma := "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{% for message in messages %}{{ '<start_of_turn>' + message['role'] + '\n' + message['content'] | trim + '<end_of_turn>\n' }}{% endfor %}"
	if tm, family := forModel(gemma); tm == nil || tm.Source() != gemma || family != "custom" {
		t.Errorf("gemma template should be kept as a custom one (family %q)", family)
	}
}

func TestRaiseException(t *testing.T) {
	f := New(builtins["llama2"], "<s>", "</s>", true)
	_, err := f.Format([]Message{{Role: "user", Content: "a"}, {Role: "user", Content: "b"}})
	if !errors.Is(err, jinja.ErrRender) || !strings.Contains(err.Error(), "alternate") {
		t.Fatalf("err = %v", err)
	}
}

// TestFormatter: a model's template formats with its BOS and EOS texts and
// the generation prompt; a BOS the template writes first is dropped only when
// the tokenizer adds one itself; a model without a template gets Plain.
func TestFormatter(t *testing.T) {
	msgs := []Message{{Role: "user", Content: "Hi"}, {Role: "assistant", Content: "Hello"}, {Role: "user", Content: "More"}}
	for _, c := range []struct {
		src, family string
		addsBOS     bool
		want        string
	}{
		{builtins["llama2"], "llama2", true, "[INST] Hi [/INST] Hello </s><s>[INST] More [/INST]"},
		{builtins["llama2"], "llama2", false, "<s>[INST] Hi [/INST] Hello </s><s>[INST] More [/INST]"},
		{builtins["zephyr"], "zephyr", true, "<|user|>\nHi</s>\n<|assistant|>\nHello</s>\n<|user|>\nMore</s>\n<|assistant|>\n"},
		{"{{ bos_token }}{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}", "custom", false, "<s><user>Hi<assistant>Hello<user>More"},
		{"", "", true, "User: Hi\nAssistant: Hello\nUser: More\nAssistant:"},
		{"{% call x() %}{% endcall %}", "", true, "User: Hi\nAssistant: Hello\nUser: More\nAssistant:"},
	} {
		f := New(c.src, "<s>", "</s>", c.addsBOS)
		if f.Family() != c.family {
			t.Errorf("%.30q: family %q, want %q", c.src, f.Family(), c.family)
		}
		got, err := f.Format(msgs)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%.30q (addsBOS %v):\n got %q\nwant %q", c.src, c.addsBOS, got, c.want)
		}
	}
}

func TestPlain(t *testing.T) {
	msgs := []Message{{Role: "system", Content: "Be kind."}, {Role: "user", Content: "Tell a story."}, {Role: "assistant", Content: "Once"}, {Role: "user", Content: "More."}}
	if got := Plain(msgs); got != "Be kind.\n\nUser: Tell a story.\nAssistant: Once\nUser: More.\nAssistant:" {
		t.Errorf("Plain = %q", got)
	}
	// A reply as generated after "Assistant:" starts with a space: it is not doubled.
	msgs = []Message{{Role: "user", Content: "Hi"}, {Role: "assistant", Content: " Once upon"}, {Role: "user", Content: "  More."}}
	if got := Plain(msgs); got != "User: Hi\nAssistant: Once upon\nUser:  More.\nAssistant:" {
		t.Errorf("Plain = %q", got)
	}
}
