package mcpadapter

// Server log and progress notifications, bounded. go-sdk calls a
// notification handler in its reading order and queues the notifications
// behind it without bound: a slow Logger (or OnProgress) and a server
// flooding logs (or progress) would grow memory without end. The handlers
// only queue a delivery here (at most notifyQueueSize per server); one
// goroutine per server and generation makes them in order, and the rest are
// dropped, counted (logs: [ServerStatus.DroppedLogs]) and reported in a log
// line of their own.

import (
	"context"
	"math/bits"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// notifyQueueSize bounds the deliveries of one server's notifications
// waiting for the Logger or a progress callback.
const notifyQueueSize = 256

// A notifyQueue holds the deliveries of one server's notifications, in the
// order they arrived.
type notifyQueue chan func()

// serverLog queues a server's log message for the Logger, or drops it
// when the queue of that server is full (or the generation closed).
func (a *Adapter) serverLog(g *generation, server string, p *mcp.LoggingMessageParams) {
	if p == nil {
		return
	}
	if a.enqueue(g, server, func() {
		a.logger.Log(context.Background(), slogLevel(p.Level), "mcpadapter: server log", "server", server, "logger", p.Logger, "data", p.Data)
	}) {
		return
	}
	// Report the drops at the 1st, 2nd, 4th, 8th...: a flood makes a
	// few lines, not one per message.
	if n := a.droppedLogs[server].Add(1); bits.OnesCount64(uint64(n)) == 1 {
		a.logger.Warn("mcpadapter: dropped server log messages (the Logger is slower than the server)", "server", server, "dropped", n)
	}
}

// enqueue queues the delivery f of a notification of server in g, starting
// the server's goroutine on first use. It reports false when the queue is
// full or g closed: f is dropped.
func (a *Adapter) enqueue(g *generation, server string, f func()) bool {
	a.mu.Lock()
	q := g.deliveries[server]
	if q == nil && !g.closed {
		q = make(notifyQueue, notifyQueueSize)
		g.deliveries[server] = q
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			for {
				select {
				case f := <-q:
					f()
				case <-g.ctx.Done():
					return
				}
			}
		}()
	}
	a.mu.Unlock()
	if q == nil {
		return false
	}
	select {
	case q <- f:
		return true
	default:
		return false
	}
}

// counters returns a counter for each server name.
func counters(servers map[string]Server) map[string]*atomic.Int64 {
	m := make(map[string]*atomic.Int64, len(servers))
	for name := range servers {
		m[name] = new(atomic.Int64)
	}
	return m
}
