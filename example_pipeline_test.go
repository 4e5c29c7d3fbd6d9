package mcpadapter_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/mcpadapter/mcpadapter"
)

// A Middleware wraps every tool call: here it adds a tenant to the request's
// _meta and upper-cases the city before the server sees it, and leaves the
// result alone. Arguments a middleware rewrites are checked against the
// tool's input schema before anything is sent.
func ExampleMiddleware() {
	weather, _ := docsWeatherServer(0)
	tenant := func(next mcpadapter.CallHandler) mcpadapter.CallHandler {
		return func(ctx context.Context, req *mcpadapter.CallRequest) (*mcpadapter.Result, error) {
			req.Meta = map[string]any{"tenant": "acme"}
			if city, ok := req.Args["city"].(string); ok {
				req.Args["city"] = strings.ToUpper(city)
			}
			fmt.Printf("calling %s on %s\n", req.MCPName, req.Server)
			return next(ctx, req)
		}
	}
	a, err := mcpadapter.New(mcpadapter.Config{
		Servers:    map[string]mcpadapter.Server{"weather": {Transport: weather}},
		Middleware: []mcpadapter.Middleware{tenant},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	ts, err := a.ListTools(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	res, err := ts.Lookup("weather__get_forecast").Invoke(context.Background(), map[string]any{"city": "Paris"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text())
	// Output:
	// calling get_forecast on weather
	// Sunny, 24°C in PARIS
}

// WithProgress gets the progress notifications of the calls made under a
// context, e.g. to stream them to the user who started the call.
func ExampleWithProgress() {
	weather, _ := docsWeatherServer(0)
	a, err := mcpadapter.New(mcpadapter.Config{Servers: map[string]mcpadapter.Server{"weather": {Transport: weather}}})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	ts, err := a.ListTools(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	ctx := mcpadapter.WithProgress(context.Background(), func(p mcpadapter.Progress) {
		log.Printf("%s: %.0f/%.0f %s", p.Tool, p.Progress, p.Total, p.Message) // this server reports none
	})
	res, err := ts.Lookup("weather__get_forecast").Invoke(ctx, map[string]any{"city": "Paris"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text())
	// Output: Sunny, 24°C in Paris
}
