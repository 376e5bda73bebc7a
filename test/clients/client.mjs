// Real MCP clients (the official TypeScript SDK) using exactly what
// `tether connect` wrote into a client's config file. Driven by
// clients_test.go; prints one JSON object per check on stdout.
//
//   node client.mjs stdio CONFIG KEY   spawn mcpServers.tether (command, args, env) as written;
//                                      initialize, list tools, call browser_tabs
//   node client.mjs http CONFIG KEY    connect to mcpServers.tether (url, headers) over
//                                      streamable HTTP; then the same URL with a wrong token
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, configPath, key] = process.argv.slice(2);
const entry = JSON.parse(readFileSync(configPath, "utf8"))[key]?.tether;
if (!entry) throw new Error(`${configPath} has no ${key}.tether entry`);

const out = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const newClient = () => new Client({ name: "tether-client-test", version: "1.0.0" });

if (mode === "stdio") {
  const transport = new StdioClientTransport({
    command: entry.command,
    args: entry.args ?? [],
    env: entry.env, // merged by the SDK with its default environment (HOME, PATH…), as clients do
    stderr: "inherit",
  });
  const client = newClient();
  await client.connect(transport);
  out({ check: "initialize", server: client.getServerVersion() });
  const { tools } = await client.listTools();
  out({ check: "tools", names: tools.map((t) => t.name) });
  const res = await client.callTool({ name: "browser_tabs", arguments: {} });
  out({ check: "browser_tabs", isError: res.isError ?? false, text: res.content?.[0]?.text ?? "" });
  await client.close();
} else if (mode === "http") {
  const url = new URL(entry.url ?? entry.serverUrl ?? entry.httpUrl);
  const client = newClient();
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: entry.headers } }));
  out({ check: "initialize", server: client.getServerVersion() });
  const { tools } = await client.listTools();
  out({ check: "tools", names: tools.map((t) => t.name) });
  await client.close();

  const wrong = newClient();
  try {
    await wrong.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: "Bearer wrong-token" } } }));
    out({ check: "wrong-token", status: 200 });
  } catch (e) {
    out({ check: "wrong-token", status: e.code ?? null, message: String(e.message) });
  }
} else {
  throw new Error(`unknown mode ${mode}`);
}
