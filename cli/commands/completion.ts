import { Argument, Command } from "commander";
import { printerOf, withExample } from "../context.ts";

interface Node {
  path: string;
  children: string[];
  options: string[];
}

function nodesOf(command: Command, path = ""): Node[] {
  const options = command.options.map((o) => o.long ?? o.short ?? "").filter(Boolean);
  const children = command.commands.map((c) => c.name());
  const self: Node = { path, children, options: [...options, "--help"] };
  return [self, ...command.commands.flatMap((c) => nodesOf(c, path ? `${path} ${c.name()}` : c.name()))];
}

function rootOf(command: Command): Command {
  let root = command;
  while (root.parent) root = root.parent;
  return root;
}

/** Shell functions shared by both scripts: children and options of each command path. */
function lookupFunctions(nodes: Node[]): string {
  const cases = (pick: (n: Node) => string[]) => nodes.map((n) => `    "${n.path}") echo "${pick(n).join(" ")}" ;;`).join("\n");
  return `_vendctl_children() {
  case "$1" in
${cases((n) => n.children)}
  esac
}
_vendctl_options() {
  case "$1" in
${cases((n) => n.options)}
  esac
}
`;
}

const findNode = `  local node="" w
  for w in "\${prev_words[@]}"; do
    if [[ " $(_vendctl_children "$node") " == *" $w "* ]]; then node="\${node:+$node }$w"; fi
  done`;

function bashScript(nodes: Node[], globals: string): string {
  return `# vendctl completion for bash. Load it with:  source <(vendctl completion bash)
${lookupFunctions(nodes)}
_vendctl() {
  local cur="\${COMP_WORDS[COMP_CWORD]}"
  local prev_words=("\${COMP_WORDS[@]:1:COMP_CWORD-1}")
${findNode}
  COMPREPLY=( $(compgen -W "$(_vendctl_children "$node") $(_vendctl_options "$node") ${globals}" -- "$cur") )
}
complete -F _vendctl vendctl
`;
}

function zshScript(nodes: Node[], globals: string): string {
  return `#compdef vendctl
# vendctl completion for zsh. Load it with:  source <(vendctl completion zsh)   (after compinit)
${lookupFunctions(nodes)}
_vendctl() {
  local -a prev_words
  prev_words=("\${(@)words[2,CURRENT-1]}")
${findNode}
  compadd -- \${=$(_vendctl_children "$node")} \${=$(_vendctl_options "$node")} ${globals}
}
compdef _vendctl vendctl
`;
}

export const completionCommand = withExample(
  new Command("completion")
    .description("Print a shell completion script")
    .addArgument(new Argument("<shell>", "shell").choices(["bash", "zsh"])),
  "source <(vendctl completion bash)",
  "vendctl completion zsh > ~/.zsh/completions/_vendctl",
).action(async (shell: "bash" | "zsh", _flags: unknown, command: Command) => {
  const root = rootOf(command);
  const [top, ...rest] = nodesOf(root);
  const globals = top ? top.options.join(" ") : "";
  const nodes = top ? [{ ...top, options: [] }, ...rest] : rest;
  await printerOf(command).write(shell === "bash" ? bashScript(nodes, globals) : zshScript(nodes, globals));
});
