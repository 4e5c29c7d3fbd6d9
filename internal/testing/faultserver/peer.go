package faultserver

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// PeerOptions configures a [Peer]. The zero value answers the handshake and
// lists [Catalog].
type PeerOptions struct {
	// HangHandshake never answers initialize (server/discover is refused,
	// as by any legacy server, so the client goes on to initialize).
	HangHandshake bool
	// HangList never answers tools/list.
	HangList bool
	// RepeatCursor makes every tools/list page name the same next cursor,
	// "again", forever.
	RepeatCursor bool
	// Tools are the raw JSON tool descriptors tools/list answers; nil means
	// [Catalog]. The "basic" kind option sets [BasicCatalog].
	Tools []string
}

// parsePeerOptions parses the options of a "raw:..." kind.
func parsePeerOptions(s string) (PeerOptions, error) {
	var o PeerOptions
	for opt := range strings.SplitSeq(s, ",") {
		switch opt {
		case "":
		case "hanghandshake":
			o.HangHandshake = true
		case "hanglist":
			o.HangList = true
		case "repeatcursor":
			o.RepeatCursor = true
		case "basic":
			o.Tools = BasicCatalog()
		default:
			return o, fmt.Errorf("unknown raw peer option %q", opt)
		}
	}
	return o, nil
}

// Peer is a hand-written MCP server speaking newline-delimited JSON-RPC in
// the legacy era (initialize; server/discover is refused with -32601). It
// sends what a go-sdk server cannot: see the tool names ([ToolOK] and the
// following) for what each tools/call answers. A Peer is safe for
// concurrent use and may serve any number of connections.
type Peer struct {
	opts PeerOptions
	wg   sync.WaitGroup // connections being served and their slow answers

	mu    sync.Mutex
	calls map[string]int // tools/call requests, by tool name
}

// NewPeer returns a peer configured by opts.
func NewPeer(opts PeerOptions) *Peer {
	if opts.Tools == nil {
		opts.Tools = Catalog()
	}
	return &Peer{opts: opts, calls: map[string]int{}}
}

// Calls reports how many tools/call requests for tool the peer received.
func (p *Peer) Calls(tool string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[tool]
}

// Wait waits until every connection the peer served (over [Peer.Transport])
// has ended, with its pending answers.
func (p *Peer) Wait() { p.wg.Wait() }

// Transport returns a factory for in-memory connections to p, for
// mcpadapter's Server.Transport: each call serves a new net.Pipe and
// returns its client end as an *mcp.IOTransport. The connection ends when
// the client closes it ("die" closes it from the peer's side).
func (p *Peer) Transport() func(ctx context.Context) (mcp.Transport, error) {
	return pipeTransport(&p.wg, func(server net.Conn) {
		p.serve(context.Background(), server, server, func() { server.Close() })
	})
}

// pipeTransport returns a factory of in-memory connections: each call
// serves the peer's end of a new net.Pipe with serve (counted in wg, and
// closed when serve returns) and returns the client end as an
// *mcp.IOTransport.
func pipeTransport(wg *sync.WaitGroup, serve func(server net.Conn)) func(context.Context) (mcp.Transport, error) {
	return func(context.Context) (mcp.Transport, error) {
		client, server := net.Pipe()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer server.Close()
			serve(server)
		}()
		return &mcp.IOTransport{Reader: client, Writer: client}, nil
	}
}

// A rawRequest is a JSON-RPC message the peer reads.
type rawRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name            string          `json:"name"`
		Arguments       json.RawMessage `json:"arguments"`
		Cursor          string          `json:"cursor"`
		ProtocolVersion string          `json:"protocolVersion"`
	} `json:"params"`
}

// serve answers the requests read from r on w, one line each, until r
// ends or ctx is done; die is what the "die" tool does.
func (p *Peer) serve(ctx context.Context, r io.Reader, w io.Writer, die func()) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex // serializes lines on w
	write := func(f func(io.Writer) error) {
		mu.Lock()
		defer mu.Unlock()
		if f(w) == nil {
			io.WriteString(w, "\n")
		}
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var req rawRequest
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil || req.ID == nil {
			continue // a notification, or a response
		}
		rep := p.answer(&req)
		switch {
		case rep.hang:
			// Never answered.
		case rep.die:
			die()
			return
		case rep.delay > 0:
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				t := time.NewTimer(rep.delay)
				defer t.Stop()
				select {
				case <-t.C:
					write(rep.write)
				case <-ctx.Done():
				}
			}()
		default:
			write(rep.write)
		}
		if rep.stopReading {
			<-ctx.Done()
			return
		}
	}
}

// A reply is how the peer answers one request.
type reply struct {
	write func(io.Writer) error // writes the answer, without a line end
	delay time.Duration         // wait before writing
	hang  bool                  // never answer
	die   bool                  // end the connection instead

	stopReading bool // after answering, read nothing more until ctx is done
}

// writes returns a reply writing with f at once.
func writes(f func(io.Writer) error) reply { return reply{write: f} }

// result returns a reply writing a result for id.
func result(id json.RawMessage, res string) reply {
	return writes(func(w io.Writer) error {
		_, err := fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, res)
		return err
	})
}

// rpcError returns a reply writing a JSON-RPC error for id.
func rpcError(id json.RawMessage, code int, msg string) reply {
	m, _ := json.Marshal(msg)
	return writes(func(w io.Writer) error {
		_, err := fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`, id, code, m)
		return err
	})
}

// answer returns how to answer req.
func (p *Peer) answer(req *rawRequest) reply {
	id := req.ID
	switch req.Method {
	case "server/discover":
		return rpcError(id, -32601, "Method not found")
	case "initialize":
		if p.opts.HangHandshake {
			return reply{hang: true}
		}
		version := req.Params.ProtocolVersion
		if version == "" || version >= "2026" {
			version = "2025-11-25"
		}
		return result(id, fmt.Sprintf(`{"protocolVersion":%q,"capabilities":{"tools":{}},"serverInfo":{"name":"fault-peer","version":"1.0.0"}}`, version))
	case "ping":
		return result(id, `{}`)
	case "tools/list":
		if p.opts.HangList {
			return reply{hang: true}
		}
		next := ""
		if p.opts.RepeatCursor {
			next = `,"nextCursor":"again"`
		}
		return result(id, `{"tools":[`+strings.Join(p.opts.Tools, ",")+`]`+next+`}`)
	case "tools/call":
		p.mu.Lock()
		p.calls[req.Params.Name]++
		p.mu.Unlock()
		return p.call(id, req.Params.Name, decodeArgs(req.Params.Arguments))
	}
	return rpcError(id, -32601, "Method not found")
}

// decodeArgs decodes raw JSON arguments; nil when they are not an object.
func decodeArgs(raw []byte) map[string]any {
	var args map[string]any
	_ = json.Unmarshal(raw, &args)
	return args
}

// Tools of the [Peer] and what tools/call answers for each.
const (
	// ToolOK answers the text "ok".
	ToolOK = "ok"
	// ToolHang is never answered.
	ToolHang = "hang"
	// ToolDie ends the connection without answering (a stdio peer exits
	// with status 3).
	ToolDie = "die"
	// ToolSlow {ms integer} answers "slow ok" after ms milliseconds.
	ToolSlow = "slow"
	// ToolMalformed answers a line of broken JSON that starts like a
	// proper answer, id included.
	ToolMalformed = "malformed"
	// ToolGarbage answers a line of broken JSON without an id.
	ToolGarbage = "garbage"
	// ToolNoise {line string} first writes a line that is not JSON-RPC
	// (a banner, as some servers print on stdout; line when given), then
	// answers "ok".
	ToolNoise = "noise"
	// ToolBatch answers with a JSON-RPC batch, as servers of the
	// 2025-03-26 era may: a log notification ("in a batch") and the
	// result, the text "batched", in one array on one line.
	ToolBatch = "batch"
	// ToolNullID answers an error response with id null, which no call
	// can claim.
	ToolNullID = "null_id"
	// ToolUnknownContent answers text "before", a "video" item the SDK
	// does not know, and text "after".
	ToolUnknownContent = "unknown_content"
	// ToolBig {size integer, idLast boolean} answers a text block of size
	// bytes ("xxx…"), written as it goes rather than built in memory. With
	// idLast the id member comes after the result.
	ToolBig = "big"
	// ToolDeep {depth integer} answers text "deep" and structured content
	// nested depth levels deep.
	ToolDeep = "deep"
	// ToolHugeID answers "ok" under the id 1e400 instead of the request's:
	// a number no float64 holds, which the go-sdk cannot decode.
	ToolHugeID = "huge_id"
	// ToolNullError answers a response with its id and "error": null, and
	// no result.
	ToolNullError = "null_error"
	// ToolErrorTwice answers a response with its id and two error members:
	// the first with a code that is not a number (which go-sdk's decoder
	// fails on, whatever follows), the second fine. Not in [BasicCatalog]:
	// list it with PeerOptions.Tools.
	ToolErrorTwice = "error_twice"
	// ToolObjectIDRequest sends a ping request whose id is an object,
	// which go-sdk cannot decode, then answers "ok". Not in
	// [BasicCatalog]: list it with PeerOptions.Tools.
	ToolObjectIDRequest = "object_id_request"
	// ToolPID answers the peer's process id as text.
	ToolPID = "pid"
	// ToolStopReading answers "ok" and then never reads another request:
	// a server whose stdin fills up.
	ToolStopReading = "stop_reading"
)

// Names are tool names with spaces, dots, slashes and non-ASCII letters; each
// is listed by [Catalog] and answers the text "called <name>".
var Names = []string{"with space", "dotted.name.v2", "slash/name", "天気", "naïve-ünïcode", "emoji 🙂"}

// Tools of [Catalog] with unusual or invalid descriptors. Each answers the
// text "called <name>".
const (
	// ToolSchemaString has the input schema "not a schema" (a string).
	ToolSchemaString = "schema_string"
	// ToolSchemaNotObject has the input schema {"type":"string"}.
	ToolSchemaNotObject = "schema_not_object"
	// ToolSchemaMissing has no input schema at all.
	ToolSchemaMissing = "schema_missing"
	// ToolSchemaDeep has an input schema nested [DeepSchemaLevels] levels
	// deep: more than the go-sdk's decoder accepts in one message.
	ToolSchemaDeep = "schema_deep"
	// ToolBadAnnotations has "annotations": "oops" (a string where the
	// SDK decodes an object).
	ToolBadAnnotations = "bad_annotations"
	// ToolHugeDescription has a description of [HugeDescriptionBytes].
	ToolHugeDescription = "huge_description"
)

const (
	// DeepSchemaLevels is how deep [ToolSchemaDeep]'s schema nests.
	DeepSchemaLevels = 1500
	// HugeDescriptionBytes is the size of [ToolHugeDescription]'s
	// description (1 MiB).
	HugeDescriptionBytes = 1 << 20
)

// Descriptor returns the raw JSON descriptor of a well-formed tool named
// name, without parameters.
func Descriptor(name string) string {
	n, _ := json.Marshal(name)
	return fmt.Sprintf(`{"name":%s,"description":"A fault tool.","inputSchema":{"type":"object","properties":{}}}`, n)
}

// BasicCatalog returns the raw JSON descriptors of the behaviour tools
// ([ToolOK] ...) only: a small, valid catalog.
func BasicCatalog() []string {
	var tools []string
	for _, name := range []string{ToolOK, ToolHang, ToolDie, ToolSlow, ToolMalformed, ToolGarbage, ToolNoise,
		ToolBatch, ToolNullID, ToolUnknownContent, ToolBig, ToolDeep, ToolHugeID, ToolNullError, ToolPID, ToolStopReading} {
		tools = append(tools, Descriptor(name))
	}
	return tools
}

// Catalog returns the raw JSON descriptors the [Peer] lists by default: the
// behaviour tools ([BasicCatalog]), the [Names], and the tools with unusual
// or invalid descriptors ([ToolSchemaString] ...), in that order.
func Catalog() []string {
	tools := BasicCatalog()
	for _, name := range Names {
		tools = append(tools, Descriptor(name))
	}
	deep := strings.Repeat(`{"type":"object","properties":{"x":`, DeepSchemaLevels/2) + `{}` + strings.Repeat(`}}`, DeepSchemaLevels/2)
	tools = append(tools,
		`{"name":"`+ToolSchemaString+`","inputSchema":"not a schema"}`,
		`{"name":"`+ToolSchemaNotObject+`","inputSchema":{"type":"string"}}`,
		`{"name":"`+ToolSchemaMissing+`","description":"No input schema."}`,
		`{"name":"`+ToolSchemaDeep+`","inputSchema":`+deep+`}`,
		`{"name":"`+ToolBadAnnotations+`","annotations":"oops","inputSchema":{"type":"object"}}`,
		`{"name":"`+ToolHugeDescription+`","description":"`+strings.Repeat("d", HugeDescriptionBytes)+`","inputSchema":{"type":"object"}}`,
	)
	return tools
}

// call answers tools/call of tool with args.
func (p *Peer) call(id json.RawMessage, tool string, args map[string]any) reply {
	textResult := func(t string) string {
		b, _ := json.Marshal(t)
		return `{"content":[{"type":"text","text":` + string(b) + `}]}`
	}
	switch tool {
	case ToolOK:
		return result(id, textResult("ok"))
	case ToolHang:
		return reply{hang: true}
	case ToolDie:
		return reply{die: true}
	case ToolSlow:
		ms, _ := args["ms"].(float64)
		rep := result(id, textResult("slow ok"))
		rep.delay = time.Duration(ms) * time.Millisecond
		return rep
	case ToolMalformed:
		return writes(func(w io.Writer) error {
			_, err := fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"broken`, id)
			return err
		})
	case ToolGarbage:
		return writes(func(w io.Writer) error {
			_, err := io.WriteString(w, `{"jsonrpc":"2.0","result":{"content":[`)
			return err
		})
	case ToolBatch:
		return writes(func(w io.Writer) error {
			_, err := fmt.Fprintf(w, `[{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"in a batch"}},{"jsonrpc":"2.0","id":%s,"result":%s}]`, id, textResult("batched"))
			return err
		})
	case ToolNoise:
		return writes(func(w io.Writer) error {
			line, _ := args["line"].(string)
			if _, err := io.WriteString(w, cmp.Or(line, "fault-peer: this line is not JSON")+"\n"); err != nil {
				return err
			}
			return result(id, textResult("ok")).write(w)
		})
	case ToolNullID:
		return rpcError(json.RawMessage("null"), -32700, "Parse error")
	case ToolHugeID:
		return result(json.RawMessage("1e400"), textResult("ok"))
	case ToolNullError:
		return writes(func(w io.Writer) error {
			_, err := fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":null}`, id)
			return err
		})
	case ToolErrorTwice:
		return writes(func(w io.Writer) error {
			_, err := fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":"x"},"error":{"code":-32000,"message":"second"}}`, id)
			return err
		})
	case ToolObjectIDRequest:
		return writes(func(w io.Writer) error {
			if _, err := io.WriteString(w, `{"jsonrpc":"2.0","id":{"n":1},"method":"ping"}`+"\n"); err != nil {
				return err
			}
			return result(id, textResult("ok")).write(w)
		})
	case ToolPID:
		return result(id, textResult(strconv.Itoa(os.Getpid())))
	case ToolStopReading:
		rep := result(id, textResult("ok"))
		rep.stopReading = true
		return rep
	case ToolUnknownContent:
		return result(id, `{"content":[{"type":"text","text":"before"},{"type":"video","uri":"https://example.com/v.mp4"},{"type":"text","text":"after"}]}`)
	case ToolBig:
		size, _ := args["size"].(float64)
		idLast, _ := args["idLast"].(bool)
		return writes(bigAnswer(id, int(size), idLast))
	case ToolDeep:
		depth, _ := args["depth"].(float64)
		n := int(depth)
		return result(id, `{"content":[{"type":"text","text":"deep"}],"structuredContent":`+
			strings.Repeat(`{"a":`, n)+`1`+strings.Repeat(`}`, n)+`}`)
	}
	return result(id, textResult("called "+tool))
}

// bigAnswer writes a text result of size bytes in chunks.
func bigAnswer(id json.RawMessage, size int, idLast bool) func(io.Writer) error {
	return func(w io.Writer) error {
		head := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, id)
		tail := `"}]}}`
		if idLast {
			head = `{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"`
			tail = fmt.Sprintf(`"}]},"id":%s}`, id)
		}
		if _, err := io.WriteString(w, head); err != nil {
			return err
		}
		chunk := []byte(strings.Repeat("x", 64<<10))
		for left := size; left > 0; left -= len(chunk) {
			if _, err := w.Write(chunk[:min(left, len(chunk))]); err != nil {
				return err
			}
		}
		_, err := io.WriteString(w, tail)
		return err
	}
}
