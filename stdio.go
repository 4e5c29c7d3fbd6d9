package mcpadapter

import (
	"sync/atomic"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/stdio"
	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tunables of the stdio servers started from now on, which tests set:
// terminateDelay (a time.Duration) is stdio.Options.Terminate, 0 for its
// default, and unwatched starts servers without the process-wide watcher,
// as on a system that has none.
var (
	terminateDelay atomic.Int64
	unwatched      atomic.Bool
)

// commandTransport builds a fresh stdio transport for the server of c
// (internal/stdio), its output screened by sc; c.stop ends what it starts.
func (d *dialer) commandTransport(c *conn, sc *wire.Screen) mcp.Transport {
	s := c.cfg
	t, stop := stdio.NewTransport(stdio.Options{
		Command:    s.Command,
		Args:       s.Args,
		Dir:        s.Dir,
		Env:        s.Env,
		InheritEnv: s.InheritEnv,
		Screen:     sc,
		Logger:     d.logger,
		Server:     c.server,
		Terminate:  time.Duration(terminateDelay.Load()),
		Unwatched:  unwatched.Load(),
	})
	c.stop = stop
	return t
}
