package content

// Prompts: the arguments a prompt declares and their check, and a
// rendered prompt's messages, converted and given to langchaingo.

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpadapter/mcpadapter/internal/modeltext"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmc/langchaingo/llms"
)

// Argument is the shape of the root package's PromptArgument.
type Argument = struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    *bool  `json:"required,omitempty"`
}

// Arguments decodes the arguments declared in raw, the JSON of a listed
// prompt (go-sdk's decoding loses a required false). JSON that does not
// decode declares none: go-sdk decoded the same JSON.
func Arguments[A ~Argument](raw []byte) []*A {
	var sent struct {
		Arguments []*A `json:"arguments"`
	}
	_ = json.Unmarshal(raw, &sent)
	return sent.Arguments
}

// CheckArgs returns the required arguments of declared that args leaves
// out, in declared order, and the names in args that declared does not
// have, sorted; both nil when args fit.
func CheckArgs[A ~Argument](declared []*A, args map[string]string) (missing, unknown []string) {
	known := map[string]bool{}
	for _, arg := range declared {
		if arg == nil {
			continue
		}
		arg := Argument(*arg)
		known[arg.Name] = true
		if _, ok := args[arg.Name]; arg.Required != nil && *arg.Required && !ok {
			missing = append(missing, arg.Name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(args)) {
		if !known[name] {
			unknown = append(unknown, name)
		}
	}
	return missing, unknown
}

// ArgsProblems says what [CheckArgs] found, as in `missing required
// argument "a"; unknown arguments "b", "c"`.
func ArgsProblems(missing, unknown []string) string {
	var problems []string
	if len(missing) > 0 {
		problems = append(problems, "missing required "+quoteList(missing))
	}
	if len(unknown) > 0 {
		problems = append(problems, "unknown "+quoteList(unknown))
	}
	return strings.Join(problems, "; ")
}

// quoteList renders names as `argument "a"` or `arguments "a", "b"`.
func quoteList(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = strconv.Quote(n)
	}
	if len(names) == 1 {
		return "argument " + quoted[0]
	}
	return "arguments " + strings.Join(quoted, ", ")
}

// Message is the shape of the root package's PromptMessage, B its Block.
type Message[B any] = struct {
	Role    mcp.Role `json:"role"`
	Content B        `json:"content"`
}

// PromptMessages converts a rendered prompt's messages, leaving out nil ones. A
// message of a role other than user or assistant is an error: langchaingo
// has no place for it.
func PromptMessages[M ~Message[B], B ~Block[T], T ~string](msgs []*mcp.PromptMessage) ([]M, error) {
	out := make([]M, 0, len(msgs))
	for i, m := range msgs {
		if m == nil {
			continue
		}
		if _, ok := chatType(string(m.Role)); !ok {
			return nil, fmt.Errorf("message %d has role %q, want user or assistant", i, modeltext.Short(string(m.Role)))
		}
		if b, ok := FromMCP[B](m.Content); ok {
			out = append(out, M(Message[B]{Role: m.Role, Content: b}))
		}
	}
	return out, nil
}

// chatType is the langchaingo message type of an MCP role.
func chatType(r string) (llms.ChatMessageType, bool) {
	switch r {
	case "user":
		return llms.ChatMessageTypeHuman, true
	case "assistant":
		return llms.ChatMessageTypeAI, true
	}
	return "", false
}

// LLMMessages is the root package's PromptResult.LLMMessages: one message
// per prompt message with something to show, its block a part as in
// [Parts].
func LLMMessages[M ~Message[B], B ~Block[T], T ~string](msgs []M, s Style) []llms.MessageContent {
	out := make([]llms.MessageContent, 0, len(msgs))
	for i := range msgs {
		m := Message[B](msgs[i])
		role, ok := chatType(string(m.Role))
		b := Block[T](m.Content)
		parts := appendPart(s, nil, &b)
		if !ok || len(parts) == 0 {
			continue
		}
		out = append(out, llms.MessageContent{Role: role, Parts: parts})
	}
	return out
}

// ChatMessages is the root package's PromptResult.ChatMessages: text-only
// chat messages, blank ones left out. A message that is not text is an
// error naming it, which the root package wraps in its ErrNotText.
func ChatMessages[M ~Message[B], B ~Block[T], T ~string](msgs []M) ([]llms.ChatMessage, error) {
	out := make([]llms.ChatMessage, 0, len(msgs))
	for i := range msgs {
		m := Message[B](msgs[i])
		b := Block[T](m.Content)
		if b.Type != kindText {
			return nil, fmt.Errorf("message %d holds %s content; LLMMessages keeps it", i, b.Type)
		}
		if strings.TrimSpace(b.Text) == "" {
			continue
		}
		switch m.Role {
		case "user":
			out = append(out, llms.HumanChatMessage{Content: b.Text})
		case "assistant":
			out = append(out, llms.AIChatMessage{Content: b.Text})
		}
	}
	return out, nil
}
