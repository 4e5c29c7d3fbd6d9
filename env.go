package mcpadapter

import (
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
)

// inheritedEnv lists the variables a stdio server gets from the adapter's
// environment unless Server.InheritEnv is set: the list the official
// TypeScript and Python MCP SDKs pass (getDefaultEnvironment,
// get_default_environment), enough to find programs and a home directory,
// and nothing that usually holds a secret.
var inheritedEnv = func() []string {
	if runtime.GOOS == "windows" {
		return []string{"APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PROCESSOR_ARCHITECTURE",
			"SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME", "USERPROFILE"}
	}
	return []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"}
}()

// serverEnv returns the environment of the stdio server s: the adapter's
// whole environment with s.InheritEnv, else the variables of inheritedEnv
// that are set (but none whose value starts with "()": a shell function,
// as the SDKs skip too), then s.Env, which overrides both. It is never nil:
// a nil exec.Cmd.Env would inherit everything.
func serverEnv(s *Server) []string {
	env := []string{}
	if s.InheritEnv {
		env = os.Environ()
	} else {
		for _, k := range inheritedEnv {
			if v, ok := os.LookupEnv(k); ok && !strings.HasPrefix(v, "()") {
				env = append(env, k+"="+v)
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		env = append(env, k+"="+s.Env[k]) // a later entry wins (exec.Cmd.Env)
	}
	return env
}
