package mcpadapter_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/mcpadapter/mcpadapter/mcpadaptertest"
	"github.com/tmc/langchaingo/llms"
)

// Offer a catalog of 1,000 tools (ten servers of 100) through a search
// tool: each request carries the search tool and the tools found so far,
// not the catalog. The model searches with the words of its task, then
// calls a tool it found.
func ExampleToolSearch() {
	ctx := context.Background()
	servers := make(map[string]mcpadapter.Server)
	for _, d := range testserver.CatalogDomains() { // crm, billing, tracker, chat, …
		servers[d] = mcpadapter.Server{Transport: testserver.New(testserver.Options{Name: d}).AddCatalog(d).Transport()}
	}
	a, err := mcpadapter.New(mcpadapter.Config{Servers: servers})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	ts, err := a.ListTools(ctx)
	if err != nil {
		log.Fatal(err)
	}
	search, err := mcpadapter.NewToolSearch(ts, nil)
	if err != nil {
		log.Fatal(err)
	}

	model := mcpadaptertest.NewModel(
		mcpadaptertest.ToolCalls(mcpadaptertest.ToolCall("call_1", "search_tools", `{"query":"refund a payment"}`)),
		mcpadaptertest.ToolCalls(mcpadaptertest.ToolCall("call_2", "billing__createRefund", `{"payment_id":"pay_1"}`)),
		mcpadaptertest.FinalAnswer("Payment pay_1 is refunded."),
	)
	history := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "Refund payment pay_1.")}
	fmt.Println(len(ts), "tools in the catalog")
	for {
		tools := search.LLMTools(history)
		fmt.Println("offered:", len(tools))
		resp, err := model.GenerateContent(ctx, history, llms.WithTools(tools))
		if err != nil {
			log.Fatal(err)
		}
		choice := resp.Choices[0]
		if len(choice.ToolCalls) == 0 {
			fmt.Println(choice.Content)
			break
		}
		msgs, err := search.HandleToolCalls(ctx, history, choice)
		if err != nil {
			log.Fatal(err)
		}
		for _, m := range msgs {
			if r, ok := m.Parts[0].(llms.ToolCallResponse); ok {
				fmt.Printf("%s: %s\n", r.Name, strings.ReplaceAll(r.Content, "\n", "\n  "))
			}
		}
		history = append(history, msgs...)
	}
	// Output:
	// 1000 tools in the catalog
	// offered: 1
	// search_tools: 5 tools found for "refund a payment"; you can call them now:
	//   billing__createRefund: Create a new refund in the billing system. Money given back to a customer for a payment. Returns the new refund with its ID.
	//   billing__searchRefund: Search refunds in the billing system by text and by the value of their fields.
	//   billing__updateRefund: Update an existing refund in the billing system. Only the fields given change.
	//   billing__restoreRefund: Restore an archived refund of the billing system.
	//   billing__deleteRefund: Delete a refund from the billing system permanently. This cannot be undone.
	// offered: 6
	// billing__createRefund: ok: createRefund {"payment_id":"pay_1"}
	// offered: 6
	// Payment pay_1 is refunded.
}
