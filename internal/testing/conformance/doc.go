// Package conformance runs the official MCP conformance suite (the npm
// package @modelcontextprotocol/conformance, pinned in internal/testing/extserver)
// against mcpadapter, in the suite's client mode.
//
// The client the suite drives is the program in ./client: it does every
// client scenario through an mcpadapter.Adapter. The test builds it, runs
// every client scenario at each protocol version it applies to (2025-11-25,
// the legacy era, and 2026-07-28, the modern one), in the era the suite asks
// for and again in the adapter's default mode (ModeAuto), and fails on
// any failure that baseline.yml does not list, and on any entry of
// baseline.yml that passes. The scenarios of extensions the adapter does
// not implement, whose checks the suite skips, are listed in the test as
// unobservable.
//
// Run it alone with
//
//	go test -v -run Conformance ./internal/testing/conformance
//
// The suite needs Node.js 22 or later; internal/testing/extserver finds it, or
// installs it from npm, as it finds the suite ($MCPADAPTER_CONFORMANCE, or
// the user cache directory). Without them the test skips, unless
// MCPADAPTER_REQUIRE_INTEGRATION=1.
package conformance
