package mcpadapter

// Server log notifications, bounded. go-sdk calls a notification handler
// in its reading order and queues the notifications behind it without
// bound: a slow Logger and a server flooding logs would grow memory
// without end. The handler only queues a record here (at most
// logQueueSize per server); one goroutine per server and generation hands
// them to the Logger in order, and the rest are dropped, counted
// ([ServerStatus.DroppedLogs]) and reported in a log line of their own.

import (
	"context"
	"math/bits"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// logQueueSize bounds the log records of one server waiting for the Logger.
const logQueueSize = 256

// A logQueue holds the log records of one server waiting for the Logger.
type logQueue chan *mcp.LoggingMessageParams

// serverLog queues a server's log message for the Logger, or drops it
// when the queue of that server is full (or the generation closed).
func (a *Adapter) serverLog(g *generation, server string, p *mcp.LoggingMessageParams) {
	if p == nil {
		return
	}
	q := a.logQueueOf(g, server)
	if q != nil {
		select {
		case q <- p:
			return
		default:
		}
	}
	// Report the drops at the 1st, 2nd, 4th, 8th...: a flood makes a
	// few lines, not one per message.
	if n := a.droppedLogs[server].Add(1); bits.OnesCount64(uint64(n)) == 1 {
		a.logger.Warn("mcpadapter: dropped server log messages (the Logger is slower than the server)", "server", server, "dropped", n)
	}
}

// logQueueOf returns the log queue of server in g, starting its goroutine
// on first use; nil once g is closed.
func (a *Adapter) logQueueOf(g *generation, server string) logQueue {
	a.mu.Lock()
	defer a.mu.Unlock()
	if q := g.logs[server]; q != nil || g.closed {
		return q
	}
	q := make(logQueue, logQueueSize)
	g.logs[server] = q
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		for {
			select {
			case p := <-q:
				a.logger.Log(context.Background(), slogLevel(p.Level), "mcpadapter: server log", "server", server, "logger", p.Logger, "data", p.Data)
			case <-g.ctx.Done():
				return
			}
		}
	}()
	return q
}

// counters returns a counter for each server name.
func counters(servers map[string]Server) map[string]*atomic.Int64 {
	m := make(map[string]*atomic.Int64, len(servers))
	for name := range servers {
		m[name] = new(atomic.Int64)
	}
	return m
}
