package mcpadapter_test

import (
	"bytes"
	"context"
	"fmt"
	"log"

	"github.com/mcpadapter/mcpadapter"
)

// Service sets up, in one call, what a long-lived service needs beyond the
// defaults: retry policies, a required State.Key, a catalog TTL for servers
// that send no ttlMs, and discoveries of a selection that dial nothing
// else. Each is an option of Config of its own.
func ExampleService() {
	weather, lists := docsWeatherServer(0) // sends no ttlMs
	cfg := mcpadapter.Service(mcpadapter.Config{Servers: map[string]mcpadapter.Server{
		"weather": {Transport: weather},
		"billing": {URL: "http://billing.internal.example/mcp"}, // not dialed by a discovery of weather
	}})
	if _, err := mcpadapter.New(cfg); err != nil {
		fmt.Println(err) // no State.Key yet
	}
	cfg.State.Key = bytes.Repeat([]byte("k"), 32) // in production: 32 random bytes, the same on every replica
	a, err := mcpadapter.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	for range 3 {
		ts, err := a.ListTools(context.Background(), mcpadapter.FromServers("weather"))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(ts[0].Name(), len(ts))
	}
	fmt.Println("tools/list requests:", lists.Load())
	// Output:
	// mcpadapter: config: field State.Key: 0 bytes; State.RequireKey wants at least 32 (the same random key on every replica)
	// weather__get_forecast 1
	// weather__get_forecast 1
	// weather__get_forecast 1
	// tools/list requests: 1
}
