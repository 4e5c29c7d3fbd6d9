package tasks

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestLine: a task line hands the server's question on the stream of
// tasks/result to the call that waits for it, whose answer is the
// response to the question's id; it answers a ping, drops notifications
// (progress is the screen's), refuses any other request of the server's
// and questions past maxAsked that no call takes; Close ends its reads.
func TestLine(t *testing.T) {
	ctx := t.Context()
	ct, st := mcp.NewInMemoryTransports()
	cc, err := ct.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	server, err := st.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	line := NewLine(cc)
	read := func() jsonrpc.Message {
		t.Helper()
		m, err := server.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	request := func(id float64, method string) *jsonrpc.Request {
		rid, _ := jsonrpc.MakeID(id)
		return &jsonrpc.Request{ID: rid, Method: method, Params: json.RawMessage(`{}`)}
	}

	done := make(chan error, 1)
	var asked []string
	go func() {
		res, err := line.CallAsking(ctx, ctx, line.Lost(), MethodResult, json.RawMessage(`{"taskId":"t1"}`), func(qs []*jsonrpc.Request) error {
			for _, q := range qs {
				asked = append(asked, q.Method)
				if err := line.Respond(ctx, q.ID, json.RawMessage(`{"action":"accept"}`), nil); err != nil {
					return err
				}
			}
			return nil
		})
		if err == nil && string(res) != `{"done":true}` {
			t.Errorf("result %s", res)
		}
		done <- err
	}()
	call := read().(*jsonrpc.Request)
	if call.Method != MethodResult {
		t.Fatalf("the line sent %s", call.Method)
	}
	if err := server.Write(ctx, request(6, "roots/list")); err != nil {
		t.Fatal(err)
	}
	if resp := read().(*jsonrpc.Response); resp.ID.Raw() != int64(6) || resp.Error == nil {
		t.Errorf("roots/list answered %+v, want an error", resp)
	}
	if err := server.Write(ctx, request(7, "ping")); err != nil {
		t.Fatal(err)
	}
	if resp := read().(*jsonrpc.Response); resp.ID.Raw() != int64(7) || resp.Error != nil || string(resp.Result) != `{}` {
		t.Errorf("ping answered %+v, want {}", resp)
	}
	if err := server.Write(ctx, &jsonrpc.Request{Method: "notifications/message", Params: json.RawMessage(`{"level":"info","data":"x"}`)}); err != nil {
		t.Fatal(err)
	}
	if err := server.Write(ctx, &jsonrpc.Request{Method: "notifications/progress", Params: json.RawMessage(`{"progressToken":"tok","progress":1}`)}); err != nil {
		t.Fatal(err)
	}
	if err := server.Write(ctx, request(5, MethodElicit)); err != nil {
		t.Fatal(err)
	}
	if resp := read().(*jsonrpc.Response); resp.ID.Raw() != int64(5) || string(resp.Result) != `{"action":"accept"}` {
		t.Errorf("question answered %+v, want the call's answer", resp)
	}
	b, _ := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: call.ID, Result: json.RawMessage(`{"done":true}`)})
	line.Claim(b) // as the transport's screen does
	if err := <-done; err != nil || len(asked) != 1 || asked[0] != MethodElicit {
		t.Fatalf("CallAsking = %v, asked %v", err, asked)
	}

	// Questions no call takes: maxAsked are held, the next refused.
	for i := range maxAsked + 1 {
		if err := server.Write(ctx, request(float64(10+i), MethodElicit)); err != nil {
			t.Fatal(err)
		}
	}
	if resp := read().(*jsonrpc.Response); resp.ID.Raw() != int64(10+maxAsked) || resp.Error == nil {
		t.Errorf("a question past the bound answered %+v, want an error", resp)
	}
	// The held questions reach the next call that asks, together; its
	// error (an interrupt) ends the call, answering none.
	stop := errors.New("interrupted")
	var batch int
	_, err = line.CallAsking(ctx, ctx, line.Lost(), MethodResult, json.RawMessage(`{"taskId":"t1"}`), func(qs []*jsonrpc.Request) error {
		batch = len(qs)
		return stop
	})
	if err != stop || batch != maxAsked {
		t.Errorf("CallAsking = %v with %d questions, want the interrupt with %d", err, batch, maxAsked)
	}

	if err := line.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-line.Lost():
		if line.Err() == nil {
			t.Error("Err is nil once the line is lost")
		}
	default:
		t.Error("Lost is open after Close")
	}
}
