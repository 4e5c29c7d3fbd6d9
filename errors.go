package mcpadapter

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/mcpadapter/mcpadapter/internal/schemapass"
	"github.com/mcpadapter/mcpadapter/internal/seal"
	"github.com/mcpadapter/mcpadapter/internal/tasks"
)

// Sentinel errors. Match them with [errors.Is]; most arrive wrapped in a
// [*ServerError] that names the server.
var (
	// ErrClosed is returned by a tool, session or interrupt whose connection
	// was closed by [Adapter.Close], or, for a per-principal server, closed
	// for idleness or past [Config.MaxPrincipalConns]. Discover again to get
	// working tools.
	ErrClosed = errors.New("mcpadapter: adapter closed")

	// ErrUnknownServer is returned when a server name is not in [Config.Servers].
	ErrUnknownServer = errors.New("mcpadapter: unknown server")

	// ErrDuplicateToolName is returned by discovery when two selected tools
	// have the same name, or names that differ only in case (langchaingo's
	// executor looks tools up case-insensitively).
	ErrDuplicateToolName = errors.New("mcpadapter: duplicate tool name")

	// ErrLegacyOnly is returned when a server configured with [ModeModern]
	// speaks only the legacy (initialize) protocol.
	ErrLegacyOnly = errors.New("mcpadapter: server speaks only the legacy protocol")

	// ErrModernServer is returned by operations that exist only in the legacy
	// era, such as [Adapter.SetLoggingLevel], when the server negotiated the
	// modern era.
	ErrModernServer = errors.New("mcpadapter: operation not available on a modern-era server")

	// ErrMessageTooLarge is returned, wrapped in a [*ServerError], when a
	// server message, or a server's list over all its pages, exceeds
	// [Config.MaxMessageBytes]. The message is discarded, never truncated;
	// usually only the call it answers fails.
	ErrMessageTooLarge = errors.New("mcpadapter: server message too large")

	// ErrTaskRequired is returned, wrapped in a [*ServerError], when a
	// tool whose descriptor requires task-based execution
	// (execution.taskSupport "required") is called on a server the adapter
	// runs no tasks on ([TasksOff], or a modern server without the tasks
	// extension). Such tools are then left out of [Adapter.ListTools] and
	// [Adapter.ListToolsets]; the server is not contacted.
	ErrTaskRequired = errors.New("mcpadapter: tool requires task-based execution, which is off for this server")

	// ErrUnsupportedInputRequest is returned when a server asks the client
	// for something other than elicitation (sampling, roots) during a call,
	// or for input to render a prompt ([Adapter.GetPrompt]).
	ErrUnsupportedInputRequest = errors.New("mcpadapter: unsupported input request")

	// errUnknownPrompt is returned by [Adapter.GetPrompt], wrapped in a
	// [*ServerError], for a prompt the server does not list.
	errUnknownPrompt = errors.New("mcpadapter: unknown prompt")

	// ErrNotSupported is returned, wrapped in a [*ServerError], for an
	// operation the server did not advertise the capability of, such as
	// [Adapter.SubscribeResource] on a server without resources.subscribe.
	ErrNotSupported = errors.New("mcpadapter: not supported by the server")

	// errCallHeaders is returned, wrapped in a [*ServerError], by a call
	// whose [CallRequest.Headers] cannot be sent: its server is not reached
	// over HTTP (stdio, [InMemory], a custom transport other than go-sdk's
	// HTTP ones), or a header is one the transport sets itself. Nothing is
	// sent.
	errCallHeaders = errors.New("mcpadapter: per-call headers cannot be sent")

	// ErrUnsafeSchema is returned, wrapped in a [*ServerError], by a call
	// that needs to check a server's schema that cannot be checked safely:
	// one that nests too deep, is too large, holds references that cannot
	// be followed with certainty, or whose references cycle without
	// leaving the value (such as {"$ref":"#"}; a validator follows those
	// until the process dies of a stack overflow). A tool's input schema is
	// checked only when [Config.Middleware] rewrote the arguments; the
	// error names the tool, and nothing is sent. Where nothing needs to
	// check the schema, the tool works.
	ErrUnsafeSchema = errors.New("mcpadapter: a server's schema cannot be checked safely")

	// ErrWrongPrincipal is returned, wrapped in a [*ServerError], when a
	// tool of a per-principal server is called under the context of
	// another principal than the one it was discovered for: a principal's
	// tools never use another's connection or credentials. Discover the
	// tools under the caller's own principal. Resuming stored state made
	// for another principal fails with it too, on any server (see
	// [Resolution]). It is also returned when a per-principal server
	// ([Server.HeadersFor] or [Server.OAuthFor]) is used under a context
	// without a principal ([WithPrincipal]): a [Adapter.Session] of it, or
	// a discovery naming it with [FromServers] (a discovery that does not
	// name it leaves it out and lists the shared servers; a debug record
	// says so), or a resume of its stored state when the state records no
	// principal. The message says which.
	ErrWrongPrincipal = errors.New("mcpadapter: wrong principal")

	// ErrUnsupportedSchema is returned, wrapped with the tool's name and the
	// place in its schema, when a [SchemaPass] cannot convert a tool's schema
	// for its provider: a recursive $ref for Google AI, a free-form object for
	// OpenAI's strict mode.
	ErrUnsupportedSchema = schemapass.ErrUnsupported

	// ErrTamperedState is returned when [StateOptions.Key] is set and stored
	// state (an [*Interrupt], [*ApprovalRequired] or [*PausedCalls], an
	// agent run's included, decoded from JSON) is not sealed with that key, or was
	// altered after it was sealed. Nothing is sent.
	ErrTamperedState = seal.ErrTampered

	// ErrInvalidState is returned when stored state names something this
	// Adapter cannot resume: a server not in [Config.Servers], a tool not in
	// that server's catalog, a tool name that does not match its server and
	// MCP name under this Adapter's naming, or state that is malformed or
	// exceeds the size bound. Nothing is sent. It is also returned, the
	// message saying which, for state issued longer ago than
	// [StateOptions.MaxAge] (or that records no issue time: stored by an
	// earlier version), and for state sealed in the format of earlier
	// versions (signed with an HMAC, its JSON in clear), which decoding
	// refuses: that format showed what it sealed (a task's session among
	// it) to whoever could read it. Such state cannot be resumed: make it
	// again (call the tool again), or settle it with the earlier version
	// before upgrading.
	ErrInvalidState = seal.ErrInvalid

	// ErrClaimedState is returned when stored state was already resumed
	// or decided: by this value, or, with [StateOptions.Claims], by any
	// value of the same ID on any Adapter that shares the store. A
	// [ClaimStore] returns it for an ID claimed before. Nothing is sent.
	ErrClaimedState = seal.ErrClaimed

	// ErrTaskFailed is returned, wrapped in a [*ServerError], when a task
	// ends failed or cancelled on the server's side.
	ErrTaskFailed = tasks.ErrFailed
)

// A promptArgumentsError reports arguments given to [Adapter.GetPrompt]
// that do not match the prompt's declared arguments. The prompt is not
// requested.
type promptArgumentsError struct {
	Server, Prompt string
	Missing        []string // required arguments not given, in declared order
	Unknown        []string // arguments given that the prompt does not declare, sorted
}

// Error implements error.
func (e *promptArgumentsError) Error() string {
	return fmt.Sprintf("mcpadapter: server %q: prompt %q: %s", e.Server, e.Prompt, argsProblems(e.Missing, e.Unknown))
}

// A ServerError records a failure to reach or talk to one server: a dial,
// a handshake, a lost connection, a transport failure during a call, or a
// JSON-RPC error other than invalid params. Discovery that fails on several
// servers returns [errors.Join] of one ServerError per server.
type ServerError struct {
	Server string // the server's name in [Config.Servers]
	Op     string // what was being done: "dial", "list tools", "call tool \"x\"", ...
	Err    error  // the cause
}

// Error implements error.
func (e *ServerError) Error() string {
	if e == nil {
		return "<nil>"
	}
	cause := "<nil>"
	if e.Err != nil {
		cause = strings.TrimPrefix(e.Err.Error(), prefix)
	}
	return fmt.Sprintf("mcpadapter: server %q: %s: %s", e.Server, e.Op, cause)
}

// Unwrap returns the cause.
func (e *ServerError) Unwrap() error { return e.Err }

// An httpStatusError records an HTTP status that made a dial fail. It is what
// tells authentication failures (retried at the next discovery) and missing
// endpoints (SSE fallback) apart from other failures.
type httpStatusError struct {
	code int
	err  error
}

func (e *httpStatusError) Error() string {
	return fmt.Sprintf("HTTP %d %s: %v", e.code, http.StatusText(e.code), e.err)
}

func (e *httpStatusError) Unwrap() error { return e.err }

// isAuthFailure reports whether err comes from an HTTP 401 or 403 answer,
// anywhere in its tree: a dial that fell back to SSE joins the errors of
// every endpoint it tried.
func isAuthFailure(err error) bool {
	switch e := err.(type) {
	case nil:
		return false
	case *httpStatusError:
		if e.code == http.StatusUnauthorized || e.code == http.StatusForbidden {
			return true
		}
	case interface{ Unwrap() []error }:
		return slices.ContainsFunc(e.Unwrap(), isAuthFailure)
	}
	return isAuthFailure(errors.Unwrap(err))
}

// serverError wraps err for server name and op, unless it already is a
// *ServerError (errors are wrapped once, at the boundary).
func serverError(server, op string, err error) error {
	if err == nil {
		return nil
	}
	var se *ServerError
	if errors.As(err, &se) {
		return err
	}
	return &ServerError{Server: server, Op: op, Err: err}
}

// prefix starts the text of the package's errors.
const prefix = "mcpadapter: "

// errorf is fmt.Errorf for the package's own errors, whose text starts
// with prefix: from the format, or from the first argument when the format
// starts with it ("%w: ..." with a sentinel). The other error arguments
// lose their prefix in the text, so that a message says it once; those
// wrapped (%w) stay in the chain whole, for errors.Is and errors.As. (A
// [*ServerError] drops its cause's prefix the same way.)
func errorf(format string, args ...any) error {
	for i, arg := range args {
		if i == 0 && !strings.HasPrefix(format, prefix) {
			continue // it starts the message
		}
		if err, ok := arg.(error); ok && strings.HasPrefix(err.Error(), prefix) {
			args[i] = unprefixed{err}
		}
	}
	return fmt.Errorf(format, args...)
}

// unprefixed is an error of the package quoted by another: its text
// without prefix.
type unprefixed struct{ err error }

func (u unprefixed) Error() string { return strings.TrimPrefix(u.err.Error(), prefix) }
func (u unprefixed) Unwrap() error { return u.err }
