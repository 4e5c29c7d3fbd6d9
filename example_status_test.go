package mcpadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A health endpoint reporting each server's state from Adapter.Status. It
// does no I/O, so a load balancer may poll it as often as it likes.
func ExampleAdapter_Status() {
	weather, _ := docsWeatherServer(0)
	a, err := mcpadapter.New(mcpadapter.Config{
		Servers: map[string]mcpadapter.Server{
			"weather": {Transport: weather},
			"files": {Transport: func(context.Context) (mcp.Transport, error) {
				return nil, errors.New("files server not deployed")
			}},
		},
		OnConnectionError: mcpadapter.IgnoreConnectionErrors,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	if _, err := a.ListTools(context.Background()); err != nil {
		log.Fatal(err)
	}

	health := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		type server struct {
			State    mcpadapter.ServerState `json:"state"`
			Era      mcpadapter.Era         `json:"era,omitempty"`
			Error    string                 `json:"error,omitempty"`
			InFlight int                    `json:"callsInFlight"`
			Dials    int64                  `json:"dialAttempts"`
		}
		report := map[string]server{}
		healthy := true
		for name, s := range a.Status().Servers {
			e := server{State: s.State, Era: s.Era, InFlight: s.CallsInFlight, Dials: s.DialAttempts}
			if s.Err != nil {
				e.Error = s.Err.Error()
				healthy = false
			}
			report[name] = e
		}
		if !healthy {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		json.NewEncoder(w).Encode(report)
	})

	rec := httptest.NewRecorder()
	health.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	fmt.Println(rec.Code)
	fmt.Print(rec.Body.String())
	// Output:
	// 503
	// {"files":{"state":"skipped","error":"mcpadapter: server \"files\": dial: transport: files server not deployed","callsInFlight":0,"dialAttempts":1},"weather":{"state":"connected","era":"modern","callsInFlight":0,"dialAttempts":1}}
}
