package mcpadapter

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// InMemory returns a Server that runs srv in this process: each dial
// connects a new session of srv to the adapter over go-sdk's in-memory
// transports, so a restart after [Adapter.Close] gets a fresh session. Set
// other fields (Mode, DefaultToolTimeout, ...) on the result as for any
// Server.
//
// The server's session is connected under a context detached from the
// dial's cancellation (context.WithoutCancel): it belongs to the
// connection and ends when the adapter closes its end, not when the
// context it was dialed under ends. (go-sdk v1.8.0 does not propagate that
// cancellation into in-memory sessions anyway; InMemory does not rely on
// it.) Values of that context still reach srv.
func InMemory(srv *mcp.Server) Server {
	return Server{Transport: func(ctx context.Context) (mcp.Transport, error) {
		serverEnd, clientEnd := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(context.WithoutCancel(ctx), serverEnd, nil); err != nil {
			return nil, err
		}
		return clientEnd, nil
	}}
}
