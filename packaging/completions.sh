#!/usr/bin/env bash
# Generates gpuprep's shell completions from the CLI's own --help (so they cannot drift from the parser):
#   completions.sh verbs BINARY   the verbs, one per line
#   completions.sh bash BINARY    a bash completion script (/usr/share/bash-completion/completions/gpuprep)
#   completions.sh zsh BINARY     a zsh completion function (/usr/share/zsh/vendor-completions/_gpuprep)
set -euo pipefail
mode=$1
bin=$2

# subcommands HELPTEXT: the names listed under "Subcommands:"
subcommands() { awk '/^Subcommands:/ {s=1; next} /^[^ ]/ {s=0} s && /^  [a-z]/ {print $1}' <<<"$1"; }
# options HELPTEXT: every option name ("-o", "--output") in the option lines
options() {
  awk '/^ +-/ {print $1}' <<<"$1" | tr ',' '\n' | { grep -E '^--?[A-Za-z0-9][-A-Za-z0-9]*$' || true; } | { grep -vx -- '-h' || true; } | sort -u
}
# value_options HELPTEXT: the options that take a value (CLI11 prints a type after them: TEXT, INT, ...)
value_options() {
  awk '/^ +-/ && $2 ~ /^(TEXT|INT|UINT|FLOAT|[A-Z]+)(:.*)?$/ && $2 != "" {print $1}' <<<"$1" | tr ',' '\n' |
    { grep -E '^--?[A-Za-z]' || true; } | sort -u
}

top=$("$bin" --help)
verbs=$(subcommands "$top")
case $mode in
  verbs) echo "$verbs"; exit 0 ;;
  bash | zsh) ;;
  *) echo "usage: completions.sh verbs|bash|zsh BINARY" >&2; exit 2 ;;
esac

global=$(options "$top" | tr '\n' ' ')
valopts=$(value_options "$top" | tr '\n' ' ')
declare -A verb_opts verb_subs
for v in $verbs; do
  h=$("$bin" "$v" --help)
  verb_opts[$v]=$(options "$h" | { grep -vx -e --help -e --version || true; } | tr '\n' ' ')
  verb_subs[$v]=$(subcommands "$h" | tr '\n' ' ')
  valopts+=" $(value_options "$h" | tr '\n' ' ')"
done
valopts=$(tr ' ' '\n' <<<"$valopts" | { grep . || true; } | sort -u | tr '\n' ' ')
valpattern=$(tr ' ' '\n' <<<"$valopts" | { grep . || true; } | paste -sd '|')

if [[ $mode == bash ]]; then
  cat <<EOF2
# bash completion for gpuprep; generated from \`gpuprep --help\` by packaging/completions.sh.
_gpuprep() {
  local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD-1]} verb= i
  for ((i = 1; i < COMP_CWORD; i++)); do
    case \${COMP_WORDS[i]} in
      $valpattern) ((i++)) ;;
      -*) ;;
      *) verb=\${COMP_WORDS[i]}; break ;;
    esac
  done
  case \$prev in
    $valpattern)
      COMPREPLY=(\$(compgen -f -- "\$cur"))
      return ;;
  esac
  local words
  case \$verb in
    '') words="$(tr '\n' ' ' <<<"$verbs")$global" ;;
EOF2
  for v in $verbs; do
    echo "    $v) words=\"${verb_subs[$v]}${verb_opts[$v]}$global\" ;;"
  done
  cat <<'EOF2'
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
  if [[ -n $verb && $cur != -* ]]; then COMPREPLY+=($(compgen -f -- "$cur")); fi
}
complete -F _gpuprep gpuprep
EOF2
else
  cat <<EOF2
#compdef gpuprep
# zsh completion for gpuprep; generated from \`gpuprep --help\` by packaging/completions.sh.
_gpuprep() {
  local verb= i=2
  while (( i < CURRENT )); do
    case \${words[i]} in
      $valpattern) (( i++ )) ;;
      -*) ;;
      *) verb=\${words[i]}; break ;;
    esac
    (( i++ ))
  done
  case \${words[CURRENT-1]} in
    $valpattern) _files; return ;;
  esac
  local -a w
  case \$verb in
    '') w=($(tr '\n' ' ' <<<"$verbs") $global) ;;
EOF2
  for v in $verbs; do
    echo "    $v) w=(${verb_subs[$v]}${verb_opts[$v]}$global) ;;"
  done
  cat <<'EOF2'
  esac
  compadd -- $w
  [[ -n $verb ]] && _files
}
_gpuprep "$@"
EOF2
fi
