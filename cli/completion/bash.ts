import type { Option } from "commander";
import { type CompletionNode, type CompletionTree, namesOf, takesValue, type ValueSource, valueSourceOf } from "./tree.ts";

/** Shell code printing an option's values, space-separated; `:` (nothing) for free text. */
function valuesCode(source: ValueSource): string {
  if ("choices" in source) return `echo "${source.choices.join(" ")}"`;
  if ("free" in source) return ":";
  const { what, service, fromLine } = source.lookup;
  if (!fromLine) return `_vendctl_catalogue ${what} ${service}`;
  return `_vendctl_catalogue ${what} "\${service:-${service}}"${what === "products" ? ' "$network"' : ""}`;
}

const valuesOf = (node: CompletionNode, option: Option): string => valuesCode(valueSourceOf(node, option));

/** Shell functions shared by the bash and zsh scripts. */
function lookupFunctions({ nodes, globals }: CompletionTree): string {
  const cases = (pick: (n: CompletionNode) => string[]) =>
    nodes.map((n) => `    "${n.path}") echo "${pick(n).join(" ")}" ;;`).join("\n");
  const steps = nodes.flatMap((n) =>
    [...n.children.map((c) => [c, c]), ...Object.entries(n.aliases)].map(
      ([word, name]) => `    "${n.path}|${word}") echo "${n.path ? `${n.path} ` : ""}${name}" ;;`,
    ),
  );
  const values = [
    ...nodes.flatMap((n) =>
      n.options.filter(takesValue).map((o) => `    "${n.path}|${o.long ?? o.short}") ${valuesOf(n, o)} ;;`),
    ),
    ...globals.filter(takesValue).map((o) => `    *"|${o.long ?? o.short}") ${valuesOf(nodes[0] as CompletionNode, o)} ;;`),
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

export function bashScript(tree: CompletionTree): string {
  return `# vendctl completion for bash. Load it with:  source <(vendctl completion bash)
${lookupFunctions(tree)}
_vendctl() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}"
  local node service network
  _vendctl_read_line "\${COMP_WORDS[@]:1:COMP_CWORD-1}"
  COMPREPLY=( $(compgen -W "$(_vendctl_words "$cur" "$prev")" -- "$cur") )
}
complete -F _vendctl vendctl
`;
}

export function zshScript(tree: CompletionTree): string {
  return `#compdef vendctl
# vendctl completion for zsh. Load it with:  source <(vendctl completion zsh)   (after compinit)
${lookupFunctions(tree)}
_vendctl() {
  local node service network
  _vendctl_read_line "\${(@)words[2,CURRENT-1]}"
  compadd -- \${=$(_vendctl_words "\${words[CURRENT]}" "\${words[CURRENT-1]}")}
}
compdef _vendctl vendctl
`;
}
