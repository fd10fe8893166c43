// Runs once, in the embedded run: it never uses the suite's database (see test/helpers/runs-once.ts).
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { cliEnv, cliServer } from "./cli.ts";
import { onTerminal, script } from "./terminal.ts";

const cli = cliServer();

describe.skipIf(!script)("vendctl login on a terminal", () => {
  test("a base URL without http:// is refused at the prompt with the fix, and asked again", async () => {
    const env = cliEnv({ TERM: "xterm", COLUMNS: "160" });
    const terminal = onTerminal(["login"], env);
    await terminal.expectPrompt("Base URL");
    terminal.type("\x15127.0.0.1:8080\r");
    await terminal.expectPrompt("> is not an http:// or https:// URL; try http://127.0.0.1:8080");
    terminal.type(`${"\x7f".repeat(20)}${cli.server.url}\r`);
    await terminal.expectPrompt("API key");
    terminal.type("\r");
    await terminal.expectPrompt("Admin token");
    terminal.type("\r");
    expect(await terminal.exited()).toBe(0);
    const saved = JSON.parse(readFileSync(join(env.VENDCTL_CONFIG_DIR ?? "", "config.json"), "utf8"));
    expect(saved.profiles.default).toEqual({ baseUrl: cli.server.url });
  });
});
