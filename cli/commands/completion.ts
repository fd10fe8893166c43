import { Argument, Command, type Option } from "commander";
import { serviceCodes } from "../../generated/constants.ts";
import { revalidated } from "../catalogue-cache.ts";
import { contextOf, printerOf, withExample } from "../context.ts";
import { io } from "../io.ts";

/** A command path, what can follow it, and how each option's value completes. */
interface Node {
  path: string;
  /** Subcommand names; aliases are accepted when reading the line (`txn l` is `transactions list`). */
  children: string[];
  aliases: Record<string, string>;
  /** The first argument's allowed values (`completion bash|zsh`). */
  args: string[];
  options: Option[];
}

/** Commands shells do not offer (`__complete`). */
const visible = (command: Command) => command.commands.filter((c) => !c.name().startsWith("__"));

function nodesOf(command: Command, path = "", globals = new Set<string>()): Node[] {
  const aliases: Record<string, string> = {};
  for (const child of visible(command)) for (const alias of child.aliases()) aliases[alias] = child.name();
  const self: Node = {
    path,
    children: visible(command).map((c) => c.name()),
    aliases,
    args: command.registeredArguments[0]?.argChoices ?? [],
    options: command.options.filter((o) => !o.hidden && !globals.has(o.long ?? "")),
  };
  const inner = globals.size === 0 ? new Set(command.options.map((o) => o.long ?? "")) : globals;
  return [self, ...visible(command).flatMap((c) => nodesOf(c, path ? `${path} ${c.name()}` : c.name(), inner))];
}

function rootOf(command: Command): Command {
  let root = command;
  while (root.parent) root = root.parent;
  return root;
}

const namesOf = (options: Option[]) => options.flatMap((o) => [o.long ?? o.short ?? ""]).filter(Boolean);
const takesValue = (o: Option) => o.required || o.optional;

/** The service a command's --network, --disco, --biller and --product belong to, when its path says so. */
function serviceOf(path: string): string {
  const [noun, verb] = path.split(" ");
  if (noun === "vend" && verb) return verb;
  if (noun === "verify") return verb === "meter" ? "electricity" : "cable";
  return "";
}

/** Shell code printing the values of one option: its choices, or codes read from the live catalogue. */
function valuesOf(node: Node, option: Option): string {
  if (option.argChoices) return `echo "${option.argChoices.join(" ")}"`;
  const service = serviceOf(node.path);
  if (option.long === "--disco") return "_vendctl_catalogue networks electricity";
  if (option.long === "--biller") return "_vendctl_catalogue networks cable";
  if (option.long === "--network") return `_vendctl_catalogue networks "\${service:-${service}}"`;
  if (option.long === "--product") return `_vendctl_catalogue products "\${service:-${service}}" "$network"`;
  return ":";
}

/** Shell functions shared by both scripts. */
function lookupFunctions(nodes: Node[], globals: Option[]): string {
  const cases = (pick: (n: Node) => string[]) => nodes.map((n) => `    "${n.path}") echo "${pick(n).join(" ")}" ;;`).join("\n");
  const steps = nodes.flatMap((n) =>
    [...n.children.map((c) => [c, c]), ...Object.entries(n.aliases)].map(
      ([word, name]) => `    "${n.path}|${word}") echo "${n.path ? `${n.path} ` : ""}${name}" ;;`,
    ),
  );
  const values = [
    ...nodes.flatMap((n) =>
      n.options.filter(takesValue).map((o) => `    "${n.path}|${o.long ?? o.short}") ${valuesOf(n, o)} ;;`),
    ),
    ...globals.filter(takesValue).map((o) => `    *"|${o.long ?? o.short}") ${valuesOf(nodes[0] as Node, o)} ;;`),
  ];
  return `_vendctl_children() {
  case "$1" in
${cases((n) => n.children)}
  esac
}
_vendctl_args() {
  case "$1" in
${cases((n) => n.args)}
  esac
}
_vendctl_options() {
  case "$1" in
${cases((n) => namesOf(n.options))}
  esac
}
_vendctl_step() {
  case "$1|$2" in
${steps.join("\n")}
  esac
}
# Prints the values of option $2 under command $1; fails when $2 takes no value.
_vendctl_values() {
  case "$1|$2" in
${values.join("\n")}
    *) return 1 ;;
  esac
}
# Codes from the live catalogue, with the user's configuration; nothing when it cannot be read quickly.
_vendctl_catalogue() {
  command vendctl __complete "$@" 2>/dev/null
}
# Reads the words before the cursor: node (the command path), service and network (values given so far).
_vendctl_read_line() {
  node="" service="" network=""
  local w next="" step
  for w in "$@"; do
    case "$next" in
      service) service="$w" ;;
      network) network="$w" ;;
    esac
    next=""
    case "$w" in
      --service) next=service ;;
      --network|--disco|--biller) next=network ;;
      -*) ;;
      *) step="$(_vendctl_step "$node" "$w")"; [[ -n "$step" ]] && node="$step" ;;
    esac
  done
}
# The words to offer for the current word $1 after the option $2.
_vendctl_words() {
  if _vendctl_values "$node" "$2"; then return; fi
  if [[ "$1" == -* ]]; then
    echo "$(_vendctl_options "$node") ${namesOf(globals).join(" ")} --help"
    return
  fi
  local offer="$(_vendctl_children "$node") $(_vendctl_args "$node")"
  if [[ -z "\${offer// /}" ]]; then offer="$(_vendctl_options "$node") --help"; fi
  echo "$offer"
}
`;
}

function bashScript(nodes: Node[], globals: Option[]): string {
  return `# vendctl completion for bash. Load it with:  source <(vendctl completion bash)
${lookupFunctions(nodes, globals)}
_vendctl() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}"
  local node service network
  _vendctl_read_line "\${COMP_WORDS[@]:1:COMP_CWORD-1}"
  COMPREPLY=( $(compgen -W "$(_vendctl_words "$cur" "$prev")" -- "$cur") )
}
complete -F _vendctl vendctl
`;
}

function zshScript(nodes: Node[], globals: Option[]): string {
  return `#compdef vendctl
# vendctl completion for zsh. Load it with:  source <(vendctl completion zsh)   (after compinit)
${lookupFunctions(nodes, globals)}
_vendctl() {
  local node service network
  _vendctl_read_line "\${(@)words[2,CURRENT-1]}"
  compadd -- \${=$(_vendctl_words "\${words[CURRENT]}" "\${words[CURRENT-1]}")}
}
compdef _vendctl vendctl
`;
}

export const completionCommand = (): Command =>
  withExample(
    new Command("completion")
      .description("Print a shell completion script (commands, aliases, flags and flag values)")
      .addArgument(new Argument("<shell>", "shell").choices(["bash", "zsh"])),
    "source <(vendctl completion bash)",
    "vendctl completion zsh > ~/.zsh/completions/_vendctl",
  ).action(async (shell: "bash" | "zsh", _flags: unknown, command: Command) => {
    const [top, ...rest] = nodesOf(rootOf(command));
    const globals = top?.options ?? [];
    const nodes = top ? [{ ...top, options: [] }, ...rest] : rest;
    await printerOf(command).write(shell === "bash" ? bashScript(nodes, globals) : zshScript(nodes, globals));
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
