package tasks

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestLine: a task line hands the server's question on the stream of
// tasks/result to the call that waits for it, whose answer is the
// response to the question's id; it refuses any other request of the
// server's, and questions past maxAsked that no call takes; Close ends
// its reads.
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
		res, err := line.CallAsking(ctx, ctx, line.Lost(), MethodResult, json.RawMessage(`{"taskId":"t1"}`), func(q *jsonrpc.Request) error {
			asked = append(asked, q.Method)
			return line.Respond(ctx, q.ID, json.RawMessage(`{"action":"accept"}`), nil)
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
	if err := server.Write(ctx, request(6, "ping")); err != nil {
		t.Fatal(err)
	}
	if resp := read().(*jsonrpc.Response); resp.ID.Raw() != int64(6) || resp.Error == nil {
		t.Errorf("ping answered %+v, want an error", resp)
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

	if err := line.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-line.Lost():
	default:
		t.Error("Lost is open after Close")
	}
}
