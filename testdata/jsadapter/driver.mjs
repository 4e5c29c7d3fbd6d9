// The JS side of the benchmarks against @langchain/mcp-adapters
// (bench_scale_test.go). It is driven over stdin, one command a line, and
// answers each with one line of JSON on stdout:
//
//   calls N  N sequential calls of server-everything's echo tool on one
//            long-lived MultiServerMCPClient: {"cpuUs":..., "wallNs":...}
//   cold     a new MultiServerMCPClient and getTools (then close, untimed):
//            the same fields
//
// argv: the directory of @langchain/mcp-adapters, node, the server script.
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import path from "node:path";

const [dir, node, script] = process.argv.slice(2);
const { MultiServerMCPClient } = await import(pathToFileURL(path.join(dir, "dist", "index.js")).href);

const config = { mcpServers: { s: { transport: "stdio", command: node, args: [script, "stdio"] } } };

function newClient() {
  return new MultiServerMCPClient(config);
}

const client = newClient();
const tools = await client.getTools();
const echo = tools.find((t) => t.name === "echo" || t.name.endsWith("__echo"));
if (!echo) throw new Error("no echo tool in " + tools.map((t) => t.name).join(","));

function measure(start, cpu) {
  const c = process.cpuUsage(cpu);
  return JSON.stringify({ cpuUs: c.user + c.system, wallNs: Number(process.hrtime.bigint() - start) });
}

const rl = createInterface({ input: process.stdin });
for await (const line of rl) {
  const [cmd, arg] = line.trim().split(/\s+/);
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  if (cmd === "calls") {
    for (let i = 0; i < Number(arg); i++) {
      const out = await echo.invoke({ message: "hello" });
      if (!JSON.stringify(out).includes("Echo: hello")) throw new Error("echo answered " + JSON.stringify(out));
    }
    process.stdout.write(measure(start, cpu) + "\n");
  } else if (cmd === "cold") {
    const c = newClient();
    const ts = await c.getTools();
    if (ts.length === 0) throw new Error("cold: no tools");
    const m = measure(start, cpu);
    await c.close();
    process.stdout.write(m + "\n");
  } else {
    throw new Error("unknown command " + line);
  }
}
await client.close();
