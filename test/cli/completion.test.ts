import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { transactionStatuses } from "../../generated/constants.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { cliEntry, cliEnv, closedPort, removeConfigDirs, runCli, runCommand } from "./cli.ts";

let server: TestServer;
let env: Record<string, string | undefined>;
let binDir: string;
let script: string;

beforeAll(async () => {
  server = await startTestServer();
  const account = await server.createAccount("completion");
  // `vendctl` on PATH, as a user who sourced the script has it.
  binDir = mkdtempSync(join(tmpdir(), "vendctl-bin-"));
  writeFileSync(join(binDir, "vendctl"), `#!/bin/sh\nexec '${process.execPath}' '${cliEntry}' "$@"\n`);
  chmodSync(join(binDir, "vendctl"), 0o755);
  env = cliEnv({ VENDCTL_BASE_URL: server.url, VENDCTL_API_KEY: account.testKey });
  env.PATH = `${binDir}:${env.PATH ?? ""}`;
  script = (await runCli(["completion", "bash"], env)).stdout;
});
afterAll(async () => {
  removeConfigDirs();
  rmSync(binDir, { recursive: true, force: true });
  await server.close();
});

const completeLastWord = `eval "$SCRIPT"; COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); _vendctl; printf "%s\\n" "\${COMPREPLY[@]}"`;

/** What bash offers for the last word of `line` (an empty last word: completing after a space). */
async function complete(line: string[], shellEnv = env): Promise<string[]> {
  const { stdout, stderr, code } = await runCommand(["bash", "-c", completeLastWord, "bash", ...line], {
    ...shellEnv,
    SCRIPT: script,
  });
  expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
  return stdout.split("\n").filter(Boolean);
}

describe("vendctl completion bash, run by bash", async () => {
  test("commands and aliases: `txn l` is `transactions list`", async () => {
    expect(await complete(["vendctl", "txn", "l"])).toEqual(["list"]);
    expect(await complete(["vendctl", "transactions", "req"])).toEqual(["requery"]);
    expect(await complete(["vendctl", "adm"])).toEqual(["admin"]);
    expect(await complete(["vendctl", "admin", "txn", "g"])).toEqual(["get"]);
    expect(await complete(["vendctl", "completion", ""])).toEqual(["bash", "zsh", "fish"]);
  });

  test("flags are offered once each, --help included once", async () => {
    for (const line of [
      ["vendctl", "txn", "list", "--"],
      ["vendctl", "--"],
      ["vendctl", "vend", "airtime", "--"],
    ]) {
      const offered = await complete(line);
      expect(offered.length, line.join(" ")).toBe(new Set(offered).size);
      expect(
        offered.filter((o) => o === "--help"),
        line.join(" "),
      ).toHaveLength(1);
    }
    expect(await complete(["vendctl", "txn", "list", "--st"])).toEqual(["--status"]);
  });

  test("option values: statuses, services and modes from the contract", async () => {
    expect((await complete(["vendctl", "txn", "list", "--status", ""])).sort()).toEqual([...transactionStatuses].sort());
    expect(await complete(["vendctl", "transactions", "list", "--status", "s"])).toEqual(["successful"]);
    expect(await complete(["vendctl", "catalogue", "--service", "ele"])).toEqual(["electricity"]);
    expect((await complete(["vendctl", "admin", "transactions", "list", "--mode", ""])).sort()).toEqual(["live", "test"]);
    // A value that is free text completes to nothing, not to commands.
    expect(await complete(["vendctl", "txn", "list", "--search", ""])).toEqual([]);
  });

  test("networks, discos, billers and products come from the live catalogue", async () => {
    expect(await complete(["vendctl", "vend", "electricity", "--disco", "ik"])).toEqual(["ikedc"]);
    expect(await complete(["vendctl", "vend", "cable", "--biller", "ds"])).toEqual(["dstv"]);
    const networks = await complete(["vendctl", "vend", "airtime", "--network", ""]);
    expect(networks).toContain("mtn");
    expect(networks).not.toContain("ikedc");
    expect(await complete(["vendctl", "txn", "list", "--network", ""])).toEqual(expect.arrayContaining(["mtn", "ikedc", "dstv"]));
    const products = await complete(["vendctl", "vend", "data", "--network", "mtn", "--product", ""]);
    expect(products).toContain("mtn-data-1gb-1d");
    expect(products.every((p) => p.startsWith("mtn-data"))).toBe(true);
    expect(await complete(["vendctl", "vend", "cable", "--product", "dstv-compact-"])).toEqual(["dstv-compact-plus"]);
  });

  test("a server that cannot be reached completes to nothing, quietly", async () => {
    const down = { ...env, VENDCTL_BASE_URL: `http://127.0.0.1:${closedPort()}` };
    expect(await complete(["vendctl", "vend", "electricity", "--disco", ""], down)).toEqual([]);
  });

  test("the zsh script is valid shell with the same lookups", async () => {
    const zsh = await runCli(["completion", "zsh"], env);
    expect(zsh.stdout).toContain("compdef _vendctl vendctl");
    expect(zsh.stdout).toContain('"|txn") echo "transactions"');
    const shell = Bun.which("zsh") ?? "bash";
    expect(Bun.spawnSync([shell, "-n"], { stdin: new TextEncoder().encode(zsh.stdout) }).exitCode).toBe(0);
  });
});

const fish = Bun.which("fish");

describe("vendctl completion fish", () => {
  let fishScript = "";
  let scriptFile = "";
  beforeAll(async () => {
    const result = await runCli(["completion", "fish"], env);
    expect(result.code).toBe(0);
    fishScript = result.stdout;
    scriptFile = join(binDir, "vendctl.fish");
    writeFileSync(scriptFile, fishScript);
  });

  /** What fish offers for the end of `line`, descriptions cut off (`complete -C`, as on Tab). */
  async function completeFish(line: string, shellEnv = env): Promise<string[]> {
    const command = [fish ?? "fish", "--no-config", "-c", "source $argv[1]; complete -C $argv[2]", scriptFile, line];
    const { stdout, stderr, code } = await runCommand(command, shellEnv);
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    return stdout
      .split("\n")
      .filter(Boolean)
      .map((entry) => entry.split("\t")[0] ?? "");
  }

  test("the script names every command path, alias and option the bash script does", async () => {
    expect(fishScript).toContain("complete -c vendctl -f -a '(__vendctl_words)'");
    const bash = script;
    for (const step of bash.matchAll(/^ {4}"([^"|]*)\|([^"-][^"]*)"\) echo "([^"]+)" ;;$/gm)) {
      const [, path, word, next] = step;
      expect(fishScript, `${path} ${word}`).toContain(`case '${path}|${word}'\n            echo '${next}'`);
    }
    for (const option of ["--status", "--idempotency-key", "--batch-size", "--meter-type", "--base-url", "--jq"]) {
      expect(bash).toContain(option);
      expect(fishScript).toContain(`'${option}'`);
    }
  });

  test.skipIf(!fish)("fish parses it (fish -n)", () => {
    expect(Bun.spawnSync([fish ?? "fish", "-n", scriptFile]).exitCode).toBe(0);
  });

  describe.skipIf(!fish)("run by fish", () => {
    test("commands and aliases, with their summaries", async () => {
      expect(await completeFish("vendctl txn l")).toEqual(["list"]);
      expect(await completeFish("vendctl transactions req")).toEqual(["requery"]);
      expect(await completeFish("vendctl adm")).toEqual(["admin"]);
      expect(await completeFish("vendctl admin txn g")).toEqual(["get"]);
      expect((await completeFish("vendctl completion ")).sort()).toEqual(["bash", "fish", "zsh"]);
      const { stdout } = await runCommand(
        [fish ?? "fish", "--no-config", "-c", "source $argv[1]; complete -C $argv[2]", scriptFile, "vendctl txn l"],
        env,
      );
      expect(stdout).toBe("list\tList transactions, newest first\n");
    });

    test("flags are offered once each, --help included once", async () => {
      for (const line of ["vendctl txn list --", "vendctl --", "vendctl vend airtime --"]) {
        const offered = await completeFish(line);
        expect(offered.length, line).toBe(new Set(offered).size);
        expect(
          offered.filter((o) => o === "--help"),
          line,
        ).toHaveLength(1);
      }
      expect(await completeFish("vendctl txn list --st")).toEqual(["--status"]);
      expect(await completeFish("vendctl vend bulk --")).toContain("--yes");
    });

    test("option values: statuses, services and modes from the contract; free text offers nothing", async () => {
      expect((await completeFish("vendctl txn list --status ")).sort()).toEqual([...transactionStatuses].sort());
      expect(await completeFish("vendctl transactions list --status s")).toEqual(["successful"]);
      expect(await completeFish("vendctl catalogue --service ele")).toEqual(["electricity"]);
      expect((await completeFish("vendctl admin transactions list --mode ")).sort()).toEqual(["live", "test"]);
      expect(await completeFish("vendctl txn list --search ")).toEqual([]);
    });

    test("networks, discos, billers and products come from the live catalogue", async () => {
      expect(await completeFish("vendctl vend electricity --disco ik")).toEqual(["ikedc"]);
      expect(await completeFish("vendctl vend cable --biller ds")).toEqual(["dstv"]);
      const networks = await completeFish("vendctl vend airtime --network ");
      expect(networks).toContain("mtn");
      expect(networks).not.toContain("ikedc");
      expect(await completeFish("vendctl txn list --network ")).toEqual(expect.arrayContaining(["mtn", "ikedc", "dstv"]));
      const products = await completeFish("vendctl vend data --network mtn --product ");
      expect(products).toContain("mtn-data-1gb-1d");
      expect(products.every((p) => p.startsWith("mtn-data"))).toBe(true);
      expect(await completeFish("vendctl vend cable --product dstv-compact-")).toEqual(["dstv-compact-plus"]);
    });

    test("a server that cannot be reached, or no vendctl on PATH, completes to nothing, quietly", async () => {
      const down = { ...env, VENDCTL_BASE_URL: `http://127.0.0.1:${closedPort()}` };
      expect(await completeFish("vendctl vend electricity --disco ", down)).toEqual([]);
      const nowhere = { ...env, PATH: dirname(fish ?? "/usr/bin/fish") };
      expect(await completeFish("vendctl vend electricity --disco ", nowhere)).toEqual([]);
    });
  });
});
