// Command configfile loads an mcp.json, the file MCP hosts (Claude
// Desktop, Cursor, VS Code) and LangChain read, and lists the tools of its
// servers:
//
//	MCPADAPTER_SERVER_FILESYSTEM=<dir of @modelcontextprotocol/server-filesystem> go run ./examples/configfile
//
// Its mcp.json starts the reference filesystem server with node, on the
// directory that holds the file (${workspaceFolder}). The server's
// location comes from the environment (${env:MCPADAPTER_SERVER_FILESYSTEM});
// .ci/run installs the package and sets the variable. With npx on PATH, a
// file of your own would say "command": "npx", "args": ["-y",
// "@modelcontextprotocol/server-filesystem", "<dir>"].
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/mcpadapter/mcpadapter"
)

func main() {
	config := flag.String("config", filepath.Join("examples", "configfile", "mcp.json"), "the configuration file")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, *config); err != nil {
		fmt.Fprintln(os.Stderr, "configfile:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer, path string) error {
	// ${workspaceFolder} is the directory of the file (or its parent for
	// .vscode/mcp.json). Unset variables are errors that name the server
	// and the field.
	cfg, err := mcpadapter.LoadConfig(path, nil)
	if err != nil {
		var ce *mcpadapter.ConfigError
		if errors.As(err, &ce) && ce.Server != "" {
			err = fmt.Errorf("%w\n(set MCPADAPTER_SERVER_FILESYSTEM to the directory of the npm package @modelcontextprotocol/server-filesystem)", err)
		}
		return err
	}
	a, err := mcpadapter.New(cfg)
	if err != nil {
		return err
	}
	defer a.Close()

	ts, err := a.ListTools(ctx)
	if err != nil {
		return err
	}
	info, err := a.ServerInfo(ctx, "files")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s: server %s %s, %s era, %d tools\n", path, info.Name, info.Version, info.Era, len(ts))
	for _, tool := range ts {
		fmt.Fprintf(w, "tool %s\n", tool.Name())
	}

	// The server may read the folder it was given, and nothing else.
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return err
	}
	list := ts.Lookup("files__list_directory")
	if list == nil {
		return errors.New("the server has no list_directory tool")
	}
	res, err := list.Invoke(ctx, map[string]any{"path": dir})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "files__list_directory of the config's folder:\n%s\n", res.Text())
	return nil
}
