import { Argument, Command } from "commander";
import { serviceCodes } from "../../generated/constants.ts";
import { revalidated } from "../catalogue-cache.ts";
import { bashScript, zshScript } from "../completion/bash.ts";
import { fishScript } from "../completion/fish.ts";
import { completionTree } from "../completion/tree.ts";
import { contextOf, printerOf, withExample } from "../context.ts";
import { io } from "../io.ts";

const scripts = { bash: bashScript, zsh: zshScript, fish: fishScript };
type Shell = keyof typeof scripts;

export const completionCommand = (): Command =>
  withExample(
    new Command("completion")
      .description("Print a shell completion script (commands, aliases, flags and flag values)")
      .addArgument(new Argument("<shell>", "shell").choices(Object.keys(scripts))),
    "source <(vendctl completion bash)",
    "vendctl completion zsh > ~/.zsh/completions/_vendctl",
    "vendctl completion fish > ~/.config/fish/completions/vendctl.fish",
  ).action(async (shell: Shell, _flags: unknown, command: Command) => {
    await printerOf(command).write(scripts[shell](completionTree(command)));
  });

/** `vendctl __complete networks|products [service] [network]`: catalogue codes for the completion scripts. */
export const completeCommand = (): Command =>
  withExample(
    new Command("__complete")
      .description("Catalogue codes for the completion scripts, one a line; nothing when they cannot be read")
      .addArgument(new Argument("<what>", "what to list").choices(["networks", "products"]))
      .argument("[service]", "only this service")
      .argument("[network]", "only this network, disco or biller"),
    "vendctl __complete products data mtn",
  ).action(
    async (
      what: "networks" | "products",
      service: string | undefined,
      network: string | undefined,
      _flags: unknown,
      command: Command,
    ) => {
      try {
        const ctx = contextOf(command);
        const client = ctx.clients.api();
        const signal = AbortSignal.timeout(2000);
        const filters = { service: serviceCodes.find((s) => s === service), network: network || undefined };
        // The answers are kept and revalidated by ETag: an unchanged catalogue comes back as a bodiless 304.
        const key = `${ctx.config.baseUrl} ${what} ${filters.service ?? ""} ${what === "products" ? (filters.network ?? "") : ""}`;
        const header = (etag: string | undefined) => ({ "If-None-Match": etag });
        const { data: rows, response } =
          what === "networks"
            ? await revalidated(key, (etag) =>
                client.GET("/api/v1/catalogue/networks", {
                  params: { query: { service: filters.service }, header: header(etag) },
                  signal,
                }),
              )
            : await revalidated(key, (etag) =>
                client.GET("/api/v1/catalogue/products", { params: { query: filters, header: header(etag) }, signal }),
              );
        if (!rows || response.status >= 400) return;
        io().stdout.write(`${rows.map((row) => row.code).join("\n")}\n`);
      } catch {
        // Completion offers nothing rather than an error in the middle of the user's command line.
      }
    },
  );
