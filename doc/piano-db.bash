# bash completion for piano-db                                 -*- shell-script -*-
# Installed as share/bash-completion/completions/piano-db.
_piano_db_runs()
{
    local db=$1
    piano-db runs ${db:+--db "$db"} 2>/dev/null | awk 'NR > 2 && $1 ~ /^[0-9]+$/ { print $1 }'
    piano-db tag ${db:+--db "$db"} 2>/dev/null | awk 'NR > 2 { print $1 }'
}

_piano_db()
{
    local cur prev words cword
    _init_completion 2>/dev/null || {
        cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}
        words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD
    }
    local commands="report runs snapshots tag untag diff rm gc flamegraph plot export push top sql"
    if [[ $cword -eq 1 ]]; then
        COMPREPLY=($(compgen -W "$commands --help --version" -- "$cur"))
        return
    fi
    local cmd=${words[1]} db="" i
    for ((i = 2; i < cword; i++)); do
        [[ ${words[i]} == --db ]] && db=${words[i+1]}
    done
    case $prev in
        --db|-o|--output) COMPREPLY=($(compgen -f -- "$cur")); compopt -o filenames 2>/dev/null; return ;;
        --format) COMPREPLY=($(compgen -W "folded pprof chrome callgrind" -- "$cur")); return ;;
        --metric) COMPREPLY=($(compgen -W "wall cpu offcpu alloc inuse busy idle" -- "$cur")); return ;;
        --group) if [[ $cmd == runs ]]; then COMPREPLY=($(compgen -W "command parent" -- "$cur"))
                 else COMPREPLY=($(compgen -W "template" -- "$cur")); fi; return ;;
        --command) COMPREPLY=($(compgen -W "$(piano-db runs --group command ${db:+--db "$db"} --csv 2>/dev/null |
                                               awk -F, 'NR > 1 { print $1 }')" -- "$cur")); return ;;
        --sort) COMPREPLY=($(compgen -W "self total calls p50 p99 allocs bytes cpu offcpu inuse peak" -- "$cur")); return ;;
        --top|--thread|--keep|--fail-above|--app|--label|--tenant|--auth|--timeout|--count|--interval|--from|--to) return ;;
    esac
    local opts="--db --help"
    case $cmd in
        report) opts+=" --json --csv --sort --top --all --threads --thread --frames --spikes --uncorrected --cpu --heap --from --to --group --all-runs --command --spans" ;;
        runs) opts+=" --json --csv --group" ;;
        tag) opts+=" --json --all-runs --command" ;;
        snapshots) opts+=" --json --spans" ;;
        diff) opts+=" --json --csv --top --all --thread --uncorrected --fail-above --cpu --heap --group --spans" ;;
        gc) opts+=" --keep" ;;
        flamegraph) opts+=" -o --output --thread --diff --metric --group --all-runs --command" ;;
        plot) opts+=" -o --output --thread" ;;
        export) opts+=" --format -o --output --thread --metric --group --all-runs --command" ;;
        push) opts+=" --app --label --tenant --auth --again --timeout --kept --follow --follow-all --count" ;;
        top) opts+=" --interval --top --count" ;;
        sql) opts+=" --header --csv --json" ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    elif [[ $cmd == plot && $cword -eq 2 ]]; then
        COMPREPLY=($(compgen -W "frames heap timeline" -- "$cur"))
    elif [[ $cmd == push && $cword -eq 2 ]]; then
        COMPREPLY=($(compgen -W "http:// https://" -- "$cur")); compopt -o nospace 2>/dev/null
    elif [[ $cmd != runs && $cmd != gc && $cmd != sql ]]; then
        COMPREPLY=($(compgen -W "$(_piano_db_runs "$db")" -- "$cur"))
    fi
}
complete -F _piano_db piano-db
