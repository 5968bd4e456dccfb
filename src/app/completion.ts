// Shell completion scripts (bash, zsh, fish) from a description of the command line: commands,
// their flags, what each flag's value and each command's arguments are (a YAML file, a directory,
// one of a few words, target names). Target names come from the inventory given with `-i FILE`
// (or STORSWEEP_INVENTORY) at the moment of completing, through `storsweep __complete targets FILE`.
// Pure text: the CLI builds the description from its commander program (src/cli/commands/completion.ts).

/** What a flag's value or a command's arguments are. */
export type ValueKind = { kind: 'file' } | { kind: 'yaml' } | { kind: 'dir' } | { kind: 'targets' } | { kind: 'set' } | { kind: 'words'; words: readonly string[] } | { kind: 'none' };

export interface FlagSpec {
  /** e.g. ['-i', '--inventory'] */
  names: readonly string[];
  /** absent: a switch */
  value?: ValueKind;
  description: string;
}

export interface CommandSpec {
  name: string;
  description: string;
  flags: readonly FlagSpec[];
  args: ValueKind;
}

export interface CompletionSpec {
  program: string;
  globalFlags: readonly FlagSpec[];
  commands: readonly CommandSpec[];
}

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

/** Inventory target names (`targets:` keys) fit for a shell word: anything else is left out. */
export function targetNamesOf(inventory: unknown): string[] {
  const targets = inventory && typeof inventory === 'object' ? (inventory as { targets?: unknown }).targets : undefined;
  if (!targets || typeof targets !== 'object' || Array.isArray(targets)) return [];
  return Object.keys(targets).filter((n) => /^[A-Za-z0-9._@+-]+$/.test(n));
}

const shellWord = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

/** bash: `case` patterns and what each completes, as shell text. */
function bashValue(v: ValueKind): string {
  switch (v.kind) {
    case 'yaml':
      return '_storsweep_files yaml';
    case 'dir':
      return '_storsweep_files dir';
    case 'targets':
      return '_storsweep_targets list';
    case 'set':
      return '_storsweep_targets set';
    case 'words':
      return `COMPREPLY=($(compgen -W ${shellWord(v.words.join(' '))} -- "$cur"))`;
    case 'none':
      return 'COMPREPLY=()';
    default:
      return '_storsweep_files any';
  }
}

function bashCommand(c: CommandSpec): string {
  const flags = c.flags.flatMap((f) => f.names).concat(['-h', '--help']);
  const valued = c.flags.filter((f) => f.value);
  const cases = valued.map((f) => `        ${f.names.join('|')}) ${bashValue(f.value!)}; return ;;`);
  return [
    `    ${c.name})`,
    '      case "$prev" in',
    ...cases,
    '      esac',
    `      if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W ${shellWord(flags.join(' '))} -- "$cur")); return; fi`,
    `      ${bashValue(c.args)}`,
    '      ;;',
  ].join('\n');
}

/** The flags of every command that take a value: the word after one is no command or argument. */
function valuedFlags(spec: CompletionSpec): string[] {
  const all = [...spec.globalFlags, ...spec.commands.flatMap((c) => c.flags)].filter((f) => f.value).flatMap((f) => f.names);
  return [...new Set(all)];
}

export function bashScript(spec: CompletionSpec): string {
  const fn = `_${spec.program}`;
  const commands = spec.commands.map((c) => c.name).join(' ');
  const globals = spec.globalFlags.flatMap((f) => f.names).concat(['-h', '--help', '-V', '--version']);
  return `# ${spec.program} completion for bash: source <(${spec.program} completion bash)
_storsweep_files() {
  local IFS=$'\\n'
  case "$1" in
    yaml) COMPREPLY=($(compgen -f -X '!*.yaml' -- "$cur") $(compgen -f -X '!*.yml' -- "$cur") $(compgen -d -- "$cur")) ;;
    dir) COMPREPLY=($(compgen -d -- "$cur")) ;;
    *) COMPREPLY=($(compgen -f -- "$cur")) ;;
  esac
  # directories get their "/" and no space
  compopt -o filenames 2>/dev/null || true
}
# target names of the inventory given with -i/--inventory (or STORSWEEP_INVENTORY)
_storsweep_names() {
  local file="\${inventory:-$STORSWEEP_INVENTORY}"
  [ -n "$file" ] || return 0
  "\${COMP_WORDS[0]}" __complete targets "$file" 2>/dev/null || true
}
_storsweep_targets() {
  if [ "$1" = set ]; then
    # --set target=NAME: bash splits the word at "=" (target, =, NAME) unless "=" left COMP_WORDBREAKS
    if [[ "$cur" == target=* ]]; then
      COMPREPLY=($(compgen -P target= -W "$(_storsweep_names)" -- "\${cur#target=}"))
    else
      COMPREPLY=($(compgen -W "target= repeat= settings. timeouts." -- "$cur")); compopt -o nospace 2>/dev/null || true
    fi
  elif [ "$1" = value ]; then
    COMPREPLY=($(compgen -W "$(_storsweep_names)" -- "$cur"))
  else
    # a comma-separated list: complete its last name
    local done="" last="$cur"
    if [[ "$cur" == *,* ]]; then done="\${cur%,*},"; last="\${cur##*,}"; fi
    COMPREPLY=($(compgen -P "$done" -W "$(_storsweep_names)" -- "$last"))
  fi
}
${fn}() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" cmd="" inventory="" i w
  local valued=" ${valuedFlags(spec).join(' ')} "
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    case "$w" in
      -i|--inventory) inventory="\${COMP_WORDS[i+1]}"; i=$((i + 1)); continue ;;
      --inventory=*) inventory="\${w#--inventory=}"; continue ;;
    esac
    if [[ "$valued" == *" $w "* ]]; then i=$((i + 1)); continue; fi
    if [[ -z "$cmd" && "$w" != -* ]]; then cmd="$w"; fi
  done
  # a ~ at the start of the inventory's path, as the shell would expand it
  inventory="\${inventory/#\\~/$HOME}"
  # after "--set target=", split by bash: the word is "=" (nothing typed yet) or what follows it
  if [ "$cur" = "=" ] && [ "$prev" = target ] && [ "\${COMP_WORDS[COMP_CWORD-2]}" = --set ]; then cur=""; _storsweep_targets value; return; fi
  if [ "$prev" = "=" ] && [ "\${COMP_WORDS[COMP_CWORD-2]}" = target ] && [ "\${COMP_WORDS[COMP_CWORD-3]}" = --set ]; then _storsweep_targets value; return; fi
  if [ "$cmd" = help ]; then COMPREPLY=($(compgen -W ${shellWord(`${commands} exit-codes`)} -- "$cur")); return; fi
  case "$cmd" in
    "")
      if [ "$prev" = --max-input-size ]; then COMPREPLY=(); return; fi
      COMPREPLY=($(compgen -W ${shellWord(`${commands} help ${globals.join(' ')}`)} -- "$cur"))
      ;;
${spec.commands.map(bashCommand).join('\n')}
  esac
}
complete -F ${fn} ${spec.program}
`;
}

/** zsh runs the bash function through its bashcompinit layer: one definition of what completes what. */
export function zshScript(spec: CompletionSpec): string {
  return `#compdef ${spec.program}
# ${spec.program} completion for zsh: source <(${spec.program} completion zsh)
(( $+functions[compdef] )) || { autoload -U +X compinit && compinit }
autoload -U +X bashcompinit && bashcompinit
${bashScript(spec).split('\n').slice(1).join('\n')}`;
}

function fishValue(v: ValueKind | undefined): string {
  if (!v) return '';
  switch (v.kind) {
    case 'yaml':
      // __fish_complete_suffix lists the files with the suffix first, then every file: keep those and directories
      return ` -r -f -a ${shellWord("(string match -r -- '^.*(?:\\.ya?ml|/)$' (__fish_complete_suffix .yaml))")}`;
    case 'dir':
      return " -r -f -a '(__fish_complete_directories)'";
    case 'targets':
      return " -r -f -a '(__storsweep_targets)'";
    case 'set':
      return " -r -f -a '(__storsweep_targets target=)'";
    case 'words':
      return ` -r -f -a ${shellWord(v.words.join(' '))}`;
    case 'none':
      return ' -r -f';
    default:
      return ' -r -F';
  }
}

function fishFlag(p: string, condition: string, f: FlagSpec): string {
  const short = f.names.filter((n) => /^-[^-]$/.test(n)).map((n) => ` -s ${n.slice(1)}`);
  const long = f.names.filter((n) => n.startsWith('--')).map((n) => ` -l ${n.slice(2)}`);
  return `complete -c ${p} -n ${shellWord(condition)}${short.join('')}${long.join('')}${fishValue(f.value)} -d ${shellWord(f.description.slice(0, 80))}`;
}

export function fishScript(spec: CompletionSpec): string {
  const p = spec.program;
  const names = spec.commands.map((c) => c.name).join(' ');
  const lines = [
    `# ${p} completion for fish: ${p} completion fish > ~/.config/fish/completions/${p}.fish`,
    'function __storsweep_targets',
    '  set -l tokens (commandline -opc)',
    '  set -l inv $STORSWEEP_INVENTORY',
    '  for i in (seq (count $tokens))',
    '    if contains -- $tokens[$i] -i --inventory; and test $i -lt (count $tokens)',
    '      set inv $tokens[(math $i + 1)]',
    '    end',
    '  end',
    '  test -n "$inv"; or return',
    `  for n in ($tokens[1] __complete targets $inv 2>/dev/null)`,
    // quoted: unquoted, an empty $argv[1] (no prefix given) makes the word, and the name, nothing
    '    echo "$argv[1]$n"',
    '  end',
    'end',
    `complete -c ${p} -f`,
    ...spec.commands.map((c) => `complete -c ${p} -n ${shellWord(`not __fish_seen_subcommand_from ${names}`)} -a ${c.name} -d ${shellWord(c.description.slice(0, 80))}`),
    ...spec.globalFlags.map((f) => fishFlag(p, `not __fish_seen_subcommand_from ${names}`, f)),
  ];
  for (const c of spec.commands) {
    const on = `__fish_seen_subcommand_from ${c.name}`;
    if (c.args.kind !== 'none') lines.push(`complete -c ${p} -n ${shellWord(on)}${fishValue(c.args).replace(' -r', '')}`);
    for (const f of c.flags) lines.push(fishFlag(p, on, f));
  }
  return `${lines.join('\n')}\n`;
}

export function completionScript(shell: Shell, spec: CompletionSpec): string {
  if (shell === 'bash') return bashScript(spec);
  if (shell === 'zsh') return zshScript(spec);
  return fishScript(spec);
}
