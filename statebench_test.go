package mcpadapter

import (
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testing/faultserver"
	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
)

// BenchmarkState: sealing (json.Marshal of a value made by an Adapter
// with a State.Key) and opening (json.Unmarshal, then the Adapter's check
// of the seal, which a resume or a decision runs before anything else) of
// each kind of stored state; "run" is a paused batch holding 4 KiB of an
// agent run in its State.
func BenchmarkState(b *testing.B) {
	key := []byte("0123456789abcdef0123456789abcdef")
	s := testserver.Full(testserver.Options{StateKey: stateKey})
	a := newAdapter(b, Config{Servers: map[string]Server{"s": memServer(s, ModeAuto)}, State: StateOptions{Key: key}, Approval: destructiveCall})
	intr := must(b).interrupt(lookupTool(b, a, "s__book_table").Invoke(b.Context(), map[string]any{"party": 4}))
	appr := must(b).approval(lookupTool(b, a, "s__destroy").Invoke(b.Context(), map[string]any{"target": "db"}))
	ts, err := a.ListTools(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	var calls *PausedCalls
	if _, err := ts.HandleToolCalls(b.Context(), batchOfThree); !errors.As(err, &calls) {
		b.Fatalf("HandleToolCalls = %v, want a *PausedCalls", err)
	}
	run := *calls
	run.State, _ = json.Marshal(map[string]string{"history": strings.Repeat("x", 4<<10)})

	peer := &faultserver.TaskPeer{Support: "required"}
	hs := httptest.NewServer(peer.HTTP())
	b.Cleanup(hs.Close)
	ta := newAdapter(b, Config{Servers: map[string]Server{"p": {URL: hs.URL}}, State: StateOptions{Key: key}})
	var task *PendingTask
	if _, err := lookupTool(b, ta, "p__job").Invoke(WithPendingTask(b.Context()), map[string]any{"topic": "reefs"}); !errors.As(err, &task) {
		b.Fatalf("Invoke(WithPendingTask) = %v, want a *PendingTask", err)
	}

	for _, k := range []struct {
		name string
		v    any
		open func([]byte) error
	}{
		{"interrupt", intr, func(j []byte) error {
			var v Interrupt
			return openBench(a, stateInterrupt, j, &v)
		}},
		{"approval", appr, func(j []byte) error {
			var v ApprovalRequired
			return openBench(a, stateApproval, j, &v)
		}},
		{"calls", calls, func(j []byte) error {
			var v PausedCalls
			return openBench(a, stateCalls, j, &v)
		}},
		{"run", &run, func(j []byte) error {
			var v PausedCalls
			return openBench(a, stateCalls, j, &v)
		}},
		{"task", task, func(j []byte) error {
			var v PendingTask
			return openBench(a, stateTask, j, &v)
		}},
	} {
		j, err := json.Marshal(k.v)
		if err != nil {
			b.Fatal(err)
		}
		if err := k.open(j); err != nil {
			b.Fatalf("%s: %v", k.name, err)
		}
		b.Run("seal/"+k.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := json.Marshal(k.v); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("open/"+k.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(j)))
			for b.Loop() {
				if err := k.open(j); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// openBench decodes j into v and opens it as a does first when v is
// given back to it: its seal checked, its payload decrypted and decoded.
func openBench[T any, P sealedKind[T]](a *Adapter, kind string, j []byte, v P) error {
	if err := json.Unmarshal(j, v); err != nil {
		return err
	}
	o, err := openState(&a.states, kind, v)
	if err != nil {
		return err
	}
	sl, _ := o.sealState()
	return a.states.checkSeal(kind, sl)
}
