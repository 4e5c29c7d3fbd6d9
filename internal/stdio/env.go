package stdio

import (
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
)

// inheritedEnv lists the variables a stdio server gets from the adapter's
// environment: the list the official
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

// environ returns the environment of a stdio server: the variables of
// inheritedEnv that are set (but none whose value starts with "()": a shell function, as the
// SDKs skip too), then vars, which override both. It is never nil: a nil
// exec.Cmd.Env would inherit everything.
func environ(vars map[string]string) []string {
	env := []string{}
	for _, k := range inheritedEnv {
		if v, ok := os.LookupEnv(k); ok && !strings.HasPrefix(v, "()") {
			env = append(env, k+"="+v)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		env = append(env, k+"="+vars[k]) // a later entry wins (exec.Cmd.Env)
	}
	return env
}
