package mcpadapter

// Shared sessions: the principals of a stateless server share one session
// (Config.ShareStatelessSessions). A modern-era server on Streamable HTTP
// keeps no session (go-sdk serves the modern era statelessly only: no
// Mcp-Session-Id), so a session per principal carries nothing the server
// needs. The shared session is its carrier's, a conn under the server's
// shared key (connKey{server}); each principal has a conn of its own on
// it (join), with its own catalog, use and OAuth handler, and no dial and
// no handshake of its own. What is the principal's travels with each of
// its requests: the request's context carries the principal's conn
// (callContext), from which the carrier's HTTP transport takes the
// principal's headers (Server.HeadersFor) and OAuth token
// (Server.OAuthFor), on the server's origin only (httptransport.go).
//
// One principal's failures stay its own:
//   - a failing HTTP status (a 401 or 403 of its credentials) fails its
//     request alone, with the status and the server's name, never the
//     session (httptransport.Options.PerRequest, sdkcompat.go entry 10);
//     a carrier that ended all the same is dialed again by the next
//     principal, whatever Server.Retry says: a stateless server has no
//     session to lose;
//   - the carrier's handshake carries the credentials of the principal
//     that dials it; a principal that waited for another's dial that
//     failed dials with its own, never seeing the other's error
//     (joinShared); the server's instructions are the dialing
//     principal's only (join);
//   - each listing keeps its own pages' JSON (a wire.Listing on the
//     request's context, descriptor.go), so that no principal's tool or
//     prompt is made from another's.
//
// What the SDK keeps per session, shared then by the principals:
//   - the list cache: the adapter's lookups never hit it (sdkcache.go),
//     so that no principal is answered with another's list; what the SDK
//     stores there is the last listing's pages, of whichever principal,
//     whose tool definitions a call takes its Mcp-Param headers from
//     (sdkcompat.go, entries 4 and 9);
//   - the progress registry: progress tokens are random and routed to the
//     request's own sink (notify.go), whoever shares the session;
//   - subscriptions/listen: the SDK opens one with every modern session
//     whose server announces list changes, with no request context, so
//     with no principal's credentials; a carrier's is answered by the
//     adapter and never sent (dropListen). Catalogs on a shared session
//     follow their ttlMs and Config.CatalogTTL; resource subscriptions
//     and Adapter.Session are refused there (ErrNotSupported);
//   - server log messages, which the SDK hands over with no request: the
//     carrier's, with no principal (its key's).
//
// Stateful servers, legacy ones, SSE and servers with a prebuilt
// Server.Client keep a session per principal, with its bounds
// (MaxPrincipalConns, PrincipalIdleTimeout). The principals of a shared
// session have the same bounds: an evicted principal's conn is forgotten
// (its tools fail with ErrClosed), and its next discovery joins again
// without a dial.

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// requesterKey is the context key of the principal's conn whose request
// goes out on a shared session.
type requesterKey struct{}

// sharesLocked reports whether the principals of server s share one
// session in g: the Adapter shares stateless sessions, and s is a
// per-principal URL server with no prebuilt client that is stateless. It
// is when a dial of g found it so (a ModeAuto server's first principal's
// dial), and a ModeModern server is (the modern era over Streamable HTTP
// is stateless) unless a dial of g found it keeping sessions. pool.mu must
// be held.
func (p *pool) sharesLocked(g *generation, server string, s *Server) bool {
	if !p.cfg.ShareStatelessSessions || s.URL == "" || s.Client != nil || !s.perPrincipal() {
		return false
	}
	if stateless, known := g.stateless[server]; known {
		return stateless
	}
	return s.Mode == ModeModern
}

// errStateful is the failure of a carrier's dial that found a server
// keeping sessions: its principals are dialed a session each.
var errStateful = errors.New("mcpadapter: the server keeps sessions")

// stateless reports whether c's session keeps no state on its server: a
// modern one over Streamable HTTP, without a session id.
func (c *conn) stateless() bool {
	return c.modern() && c.http != nil && c.session.ID() == ""
}

// carries reports whether c is the carrier of a shared session: the
// conn of a per-principal server under the shared key.
func (c *conn) carries() bool { return c.key.principal == "" && c.cfg.perPrincipal() }

// requesterOf returns the principal's conn whose request on c's shared
// session ctx carries (callContext), or nil: none, or one of another
// Adapter or server, whose credentials never go to c's server.
func (c *conn) requesterOf(ctx context.Context) *conn {
	v, _ := ctx.Value(requesterKey{}).(*conn)
	if v == nil || v.a != c.a || v.server != c.server || v.key.principal == "" {
		return nil
	}
	return v
}

// joinShared returns the conn of key, a principal of server s whose
// principals share one session in g: its live conn, or a new one on the
// live carrier, dialed (once for every principal) if needed. The carrier's
// handshake carries the credentials of the principal that dialed it; a
// principal that waited for another's dial that failed dials with its own
// (up to maxJoinDials), never seeing the other's failure.
func (p *pool) joinShared(ctx context.Context, g *generation, key connKey, s *Server) (*conn, error) {
	p.mu.Lock()
	cur := g.conns[key]
	p.mu.Unlock()
	if cur != nil && cur.alive() { // on the shared session, or on one of its own dialed before the server was known stateless
		cur.use.touch()
		return cur, nil
	}
	v := &conn{server: key.server, key: key, cfg: s, a: p.dialer.a, gen: g, life: g.ctx}
	if s.OAuthFor != nil {
		v.oauth = s.OAuthFor(key.principal) // user code: unlocked
	}
	for tries := 1; ; tries++ {
		carrier, err := p.connectKey(context.WithValue(ctx, requesterKey{}, v), g, connKey{server: key.server}, s)
		if errors.Is(err, errStateful) {
			return p.connectKey(ctx, g, key, s) // no longer shared
		}
		var de *carrierDialError
		if errors.As(err, &de) {
			if de.by != v {
				// Another principal's dial, with its credentials: its
				// failure is not v's to see. v dials with its own.
				if tries < maxJoinDials {
					continue
				}
				return nil, serverError(key.server, "dial", errorf("%w: the shared session's dials under other principals' credentials failed %d times in a row", errJoin, tries))
			}
			err = de.err
		}
		if err != nil {
			return nil, err
		}
		return p.join(g, carrier, v)
	}
}

// maxJoinDials bounds the dials of a shared session a principal waits for
// in joinShared, when other principals' dials fail.
const maxJoinDials = 3

// errJoin is the failure of a principal that found no shared session to
// join: the dials it waited for were other principals', and failed.
var errJoin = errors.New("mcpadapter: no shared session to join")

// A carrierDialError is the failure of the dial of a shared session
// (pool.open), for by, the principal's conn whose credentials its
// handshake carried: every joiner waiting for that dial gets it, and only
// by sees err (joinShared), which may quote by's credentials' failure
// (HeadersFor, OAuthFor).
type carrierDialError struct {
	by  *conn
	err error
}

func (e *carrierDialError) Error() string { return e.err.Error() }

func (e *carrierDialError) Unwrap() error { return e.err }

// join makes v, a principal's new conn, the conn of its key on the shared
// session of carrier, unless another caller did first: no dial, no
// handshake. It counts and bounds v as a per-principal conn (admitLocked).
func (p *pool) join(g *generation, carrier, v *conn) (*conn, error) {
	p.mu.Lock()
	if g.ended() {
		p.mu.Unlock()
		return nil, serverError(v.server, "dial", ErrClosed)
	}
	old, replaced := g.conns[v.key]
	if replaced && old.alive() {
		p.mu.Unlock()
		old.use.touch()
		return old, nil
	}
	v.link, v.carrier, v.info, v.since = carrier.link, carrier, carrier.info, time.Now()
	if v.key.principal != carrier.shookFor {
		// A server may give each principal instructions of its own: v
		// gets none of another's (ServerInfo.Instructions).
		v.info.Instructions = ""
	}
	g.conns[v.key] = v
	v.use.touch()
	var n news
	p.admitLocked(g, v, replaced, &n)
	p.mu.Unlock()
	if replaced {
		old.leave()
	}
	p.metrics.Principal(v.server, 1)
	p.tell(&n)
	return v, nil
}

// leave uncounts c, a principal's conn on a shared session, once: it was
// closed, or replaced.
func (c *conn) leave() {
	if c.carrier != nil && !c.left.Swap(true) {
		c.a.metrics.Principal(c.server, -1)
	}
}

// dropListen is the sending middleware of a carrier's client: it answers
// the subscriptions/listen the SDK opens on a modern session (with no
// request context: no principal's credentials), which is never sent.
func dropListen(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "subscriptions/listen" {
			return &mcp.SubscriptionsListenResult{}, nil
		}
		return next(ctx, method, req)
	}
}

// maxInterned bounds the descriptors a shared session's intern table
// holds: past it the table starts again.
const maxInterned = 4096

// A descIntern holds the tool descriptors listed by the principals of a
// shared session, by content: a principal's listing that holds a
// descriptor another principal listed before (the same JSON, as sent)
// gets that one's decoded descriptor, its JSON and its key, so that
// identical catalogs keep their descriptors once, and each principal only
// the small wrappers bound to its conn. Its lock is taken alone. The zero
// value is ready.
type descIntern struct {
	mu sync.Mutex
	m  map[string]internedDesc // by wrapperKey
}

// An internedDesc is a descriptor as a principal first listed it: its
// wrapperKey, the decoded descriptor and its JSON as the server sent it.
type internedDesc struct {
	key string
	d   *mcp.Tool
	raw []byte
}

// intern returns the descriptor stored for key when it was sent as raw,
// or stores d (raw, key) and returns it. Descriptors are never mutated.
func (in *descIntern) intern(key string, d *mcp.Tool, raw []byte) (string, *mcp.Tool, []byte) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if e, ok := in.m[key]; ok && bytes.Equal(e.raw, raw) {
		return e.key, e.d, e.raw
	}
	if in.m == nil || len(in.m) >= maxInterned {
		in.m = make(map[string]internedDesc)
	}
	in.m[key] = internedDesc{key: key, d: d, raw: raw}
	return key, d, raw
}
