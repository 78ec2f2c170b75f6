# Bash completion of s2s: commands, each command's options, the choices of those that
# have a fixed set, config keys after --set, and file names. Installed as
# share/bash-completion/completions/s2s, where Debian's bash-completion finds it. The
# options and keys come from s2s itself (`s2s COMMAND --help`, `s2s config --doc`), so
# they cannot fall out of step with it.

_s2s_commands="train gradcheck translate align heatmap explain eval corpus config tokenize bench"

# The options of command $1, as its --help lists them.
_s2s_options()
{
    "${_s2s_bin:-s2s}" "$1" --help 2>/dev/null | grep -o -- '--[a-z][a-z-]*' | sort -u
}

# Every config key, as --set takes it (section.key=).
_s2s_keys()
{
    "${_s2s_bin:-s2s}" config --doc 2>/dev/null | sed -n 's/^| `\([a-z_.]*\)`.*/\1=/p'
}

_s2s()
{
    local cur prev cmd
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    _s2s_bin=${COMP_WORDS[0]}
    COMPREPLY=()
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "$_s2s_commands --help --version" -- "$cur"))
        return
    fi
    cmd=${COMP_WORDS[1]}
    case "$prev" in
    --set)
        compopt -o nospace 2>/dev/null
        COMPREPLY=($(compgen -W "$(_s2s_keys)" -- "$cur"))
        return ;;
    --format)
        if [ "$cmd" = explain ]; then
            COMPREPLY=($(compgen -W "text json html" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "svg html txt" -- "$cur"))
        fi
        return ;;
    --example) COMPREPLY=($(compgen -W "dot general qkv" -- "$cur")); return ;;
    --alignment) COMPREPLY=($(compgen -W "soft hard" -- "$cur")); return ;;
    --attention-mode) COMPREPLY=($(compgen -W "auto soft argmax" -- "$cur")); return ;;
    --metric) COMPREPLY=($(compgen -W "bleu chrf exact" -- "$cur")); return ;;
    --tokenize) COMPREPLY=($(compgen -W "13a none" -- "$cur")); return ;;
    --level) COMPREPLY=($(compgen -W "word char" -- "$cur")); return ;;
    --size)
        if [ "$cmd" = bench ]; then
            COMPREPLY=($(compgen -W "S M L" -- "$cur"))
        fi
        return ;;
    --step) COMPREPLY=($(compgen -W "last all" -- "$cur")); return ;;
    --beam|--alpha|--n-best|--threshold|--samples|--by-length|--seed|--batch|--steps|--warmup|--threads|--max-source-length|--tgt|--head|--self|--dec-self|--max-cols)
        return ;;
    esac
    if [ "$cmd" = corpus ] && [ "$COMP_CWORD" -eq 2 ] && [ "${cur#-}" = "$cur" ]; then
        COMPREPLY=($(compgen -W "copy reverse dates toy-fr toy-de toy-fr-long shapes" -- "$cur"))
        return
    fi
    if [ "${cur#-}" != "$cur" ]; then
        COMPREPLY=($(compgen -W "$(_s2s_options "$cmd")" -- "$cur"))
        return
    fi
    COMPREPLY=($(compgen -f -- "$cur"))
}

complete -o filenames -F _s2s s2s
