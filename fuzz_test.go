package mcpadapter

// Fuzz targets for what the adapter decodes from stored interrupts, users
// and servers: Interrupt JSON, answers to elicitations (Call input's are in
// internal/callinput, the wire screen's in internal/wire). Their seeds (f.Add and
// testdata/fuzz/<Name>) run in every go test; .ci/run fuzzes each briefly.

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/elicit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzInterruptJSON decodes stored interrupts: decoding never panics, and
// what decodes re-encodes to JSON that decodes to the same interrupt, with
// its round within the cap.
func FuzzInterruptJSON(f *testing.F) {
	for _, seed := range []string{
		`{"version":1,"kind":"inputRequired","server":"b","tool":"b__book","mcpName":"book","round":1,` +
			`"arguments":{"party":4},"requestState":"st","inputRequests":{"date":{"method":"elicitation/create","params":{"mode":"form","message":"Which date?","requestedSchema":{"type":"object","properties":{"date":{"type":"string"}},"required":["date"]}}}}}`,
		`{"version":1,"kind":"urlElicitationRequired","server":"b","tool":"t","mcpName":"t","round":2,` +
			`"inputRequests":{"e1":{"method":"elicitation/create","params":{"mode":"url","message":"Go","url":"https://example.com","elicitationId":"e1"}}},` +
			`"inputResponses":{"e1":{"action":"accept"}}}`,
		`{"version":1,"kind":"inputRequired","server":"b","tool":"t","mcpName":"t","round":33,"inputRequests":{"k":{"method":"elicitation/create","params":{}}}}`,
		`{"version":1,"kind":"inputRequired","server":"b","tool":"t","mcpName":"t","round":1,"inputRequests":{"s":{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}}}`,
		`{"version":2}`, `null`, `{}`, `[]`, `{"version":1,"kind":"inputRequired","server":"b","mcpName":"t","round":1,"arguments":[1],"inputRequests":{"k":{"method":"elicitation/create","params":{}}}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var in Interrupt
		if err := json.Unmarshal(data, &in); err != nil {
			return
		}
		if in.round < 1 || in.round > maxRounds {
			t.Fatalf("decoded round %d, outside [1, %d]", in.round, maxRounds)
		}
		_ = in.Error()
		b, err := json.Marshal(&in)
		if err != nil {
			t.Fatalf("Marshal(decoded %q): %v", data, err)
		}
		var back Interrupt
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("Unmarshal(Marshal(decoded %q)) = %v\n%s", data, err, b)
		}
		b2, err := json.Marshal(&back)
		if err != nil || !bytes.Equal(b, b2) {
			t.Fatalf("the JSON of an interrupt changed in a round trip:\n%s\n%s (%v)", b, b2, err)
		}
		if !reflect.DeepEqual(in.Requests, back.Requests) {
			t.Fatalf("Requests changed in a round trip: %+v, %+v", in.Requests, back.Requests)
		}
		// Answering every request one way or the other never panics.
		for _, action := range []Action{Accept, Decline, Cancel} {
			answers := map[string]Answer{}
			for _, r := range in.Requests {
				answers[r.Key] = Answer{Action: action}
			}
			_, _ = validateAnswers(in.Requests, answers)
		}
	})
}

// FuzzValidateAnswers checks answers against requested schemas, which come
// from servers: it never panics, and what it accepts is one response per
// request, with the answer's action, content only for an accepted form, and
// content that validates again (with its defaults already applied).
func FuzzValidateAnswers(f *testing.F) {
	type seed struct{ schema, mode, action, content string }
	for _, s := range []seed{
		{`{"type":"object","properties":{"date":{"type":"string","format":"date"}},"required":["date"]}`, "form", "accept", `{"date":"2026-12-24"}`},
		{`{"type":"object","properties":{"n":{"type":"integer","minimum":1,"default":2}}}`, "form", "accept", `{}`},
		{`{"type":"object","properties":{"ok":{"type":"boolean"}}}`, "form", "accept", `{"ok":"yes"}`},
		{`{"type":"object","properties":{"e":{"type":"string","enum":["a","b"]}}}`, "", "accept", `{"e":"c"}`},
		{`{"type":"object","properties":{"s":{"type":"string","pattern":"^[a-z]+$"}}}`, "form", "accept", `{"s":"abc"}`},
		{`{"type":"object","properties":{"s":{"type":"string","pattern":"("}}}`, "form", "accept", `{"s":"abc"}`},
		{`{"$ref":"#"}`, "form", "accept", `{}`},
		{`{"type":"object","$defs":{"a":{"$ref":"#/$defs/a"}},"properties":{"x":{"$ref":"#/$defs/a"}}}`, "form", "accept", `{"x":1}`},
		{`null`, "url", "accept", `{}`},
		{``, "url", "decline", `{"x":1}`},
		{`{}`, "form", "cancel", ``},
		{`{}`, "form", "maybe", ``},
	} {
		f.Add(s.schema, s.mode, s.action, s.content, false)
	}
	f.Add(`{}`, "form", "accept", `{}`, true)
	f.Fuzz(func(t *testing.T, schemaJSON, mode, action, contentJSON string, extra bool) {
		var schema, content map[string]any
		if json.Unmarshal([]byte(schemaJSON), &schema) != nil {
			schema = nil
		}
		if json.Unmarshal([]byte(contentJSON), &content) != nil {
			content = nil
		}
		reqs := []ElicitationRequest{{Key: "k", Mode: mode, RequestedSchema: schema}}
		answers := map[string]Answer{"k": {Action: Action(action), Content: content}}
		if extra {
			answers["other"] = Answer{Action: Decline}
		}
		responses, err := validateAnswers(reqs, answers)
		if err != nil {
			return
		}
		if extra {
			t.Fatal("an answer without a request was accepted")
		}
		if len(responses) != 1 {
			t.Fatalf("responses = %v, want one", responses)
		}
		res, ok := responses["k"].(*mcp.ElicitResult)
		if !ok || res == nil || res.Action != action {
			t.Fatalf("response = %#v, want an ElicitResult with action %q", responses["k"], action)
		}
		switch {
		case action != string(Accept) || mode == "url":
			if len(res.Content) > 0 {
				t.Fatalf("content %v sent with action %q in mode %q", res.Content, action, mode)
			}
		default:
			again, err := elicit.Content(schema, res.Content)
			if err != nil {
				t.Fatalf("accepted content %v no longer validates: %v", res.Content, err)
			}
			if !reflect.DeepEqual(again, res.Content) {
				t.Fatalf("defaults applied twice changed the content: %v, then %v", res.Content, again)
			}
		}
	})
}
