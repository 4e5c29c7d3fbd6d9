package extserver

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// roleEnv makes the test binary act as a child process: "listen ADDR"
// listens on ADDR until killed, "hang" blocks until killed after starting
// a grandchild that hangs too, "hello" prints and exits.
const roleEnv = "EXTSERVER_TEST_ROLE"

func TestMain(m *testing.M) {
	role, arg, _ := strings.Cut(os.Getenv(roleEnv), " ")
	switch role {
	case "":
		os.Exit(m.Run())
	case "listen":
		ln, err := net.Listen("tcp", arg)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for {
			c, err := ln.Accept()
			if err != nil {
				os.Exit(1)
			}
			_ = c.Close()
		}
	case "hang":
		if arg == "" { // the child starts a grandchild in its process group
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), roleEnv+"=hang grandchild")
			cmd.Stdout = os.Stdout // keeps the output pipe open
			if err := cmd.Start(); err != nil {
				os.Exit(1)
			}
			fmt.Println("grandchild", cmd.Process.Pid)
		}
		select {}
	case "hello":
		fmt.Println("hello")
		os.Exit(0)
	}
	os.Exit(2)
}

func child(role string) *exec.Cmd {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), roleEnv+"="+role)
	return cmd
}

func TestFreeAddr(t *testing.T) {
	addr := FreeAddr(t)
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host != "127.0.0.1" {
		t.Fatalf("FreeAddr() = %q", addr)
	}
	if n, _ := strconv.Atoi(port); n < 1024 || n >= ephemeralLow() {
		t.Errorf("port %d is not below the ephemeral range (%d)", n, ephemeralLow())
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the port is not free: %v", err)
	}
	_ = ln.Close()
}

func TestStartWaitListening(t *testing.T) {
	addr := FreeAddr(t)
	p := Start(t, child("listen "+addr))
	p.WaitListening(t, addr, 30*time.Second)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial after WaitListening: %v", err)
	}
	_ = c.Close()
}

func TestRunOutput(t *testing.T) {
	out, err := Run(context.Background(), child("hello"))
	if err != nil || strings.TrimSpace(string(out)) != "hello" {
		t.Fatalf("Run() = %q, %v", out, err)
	}
}

func TestCheckPackage(t *testing.T) {
	dir := t.TempDir()
	if err := checkPackage(dir, ServerEverything.Name, ServerEverything.Version); err == nil {
		t.Fatal("checkPackage(empty dir) = nil")
	}
	write := func(name, body string) {
		t.Helper()
		if err := os.MkdirAll(dir+"/dist", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dir+"/"+name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("package.json", `{"name":"`+ServerEverything.Name+`","version":"0.0.1"}`)
	write("dist/index.js", "")
	if err := checkPackage(dir, ServerEverything.Name, ServerEverything.Version); err == nil || !strings.Contains(err.Error(), "want") {
		t.Fatalf("checkPackage(wrong version) = %v", err)
	}
	write("package.json", `{"name":"`+ServerEverything.Name+`","version":"`+ServerEverything.Version+`"}`)
	if err := checkPackage(dir, ServerEverything.Name, ServerEverything.Version); err != nil {
		t.Fatalf("checkPackage(pinned version) = %v", err)
	}
}
