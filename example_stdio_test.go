package mcpadapter_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/mcpadapter/mcpadapter"
)

// A stdio server gets a few variables of the adapter's environment (PATH,
// HOME and the like) plus Env, not the API keys the adapter's process
// holds (put them in Env to pass them). When it fails at start-up, the
// error names its exit status and quotes the last lines of its stderr.
// DialTimeout bounds a server that starts but never answers.
func ExampleServer_environment() {
	a, err := mcpadapter.New(mcpadapter.Config{
		DialTimeout: 10 * time.Second,
		Servers: map[string]mcpadapter.Server{
			"broken": {
				Command: "sh",
				Args:    []string{"-c", `echo "$GREETING; OPENAI_API_KEY ${OPENAI_API_KEY:-unset}" >&2; exit 3`},
				Env:     map[string]string{"GREETING": "hello from Env"},
			},
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	_, err = a.ListTools(context.Background())
	var se *mcpadapter.ServerError
	if errors.As(err, &se) {
		fmt.Println("server:", se.Server)
	}
	msg := err.Error()
	fmt.Println("exit status 3:", strings.Contains(msg, "exit status 3"))
	fmt.Println("last stderr line:", msg[strings.LastIndex(msg, "\n")+1:])
	// Output:
	// server: broken
	// exit status 3: true
	// last stderr line: hello from Env; OPENAI_API_KEY unset
}
