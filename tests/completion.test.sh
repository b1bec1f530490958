# Completion in bash, zsh and fish (issue 22, item 16), each script run as its
# shell runs it against a real trainjobd on a private socket: the same
# candidates in the three shells for
#  - get <Tab>: jobs job workers events catalog;
#  - get -o <Tab>: wide json yaml name; get's options --no-headers --sort-by
#    --watch --mine --user (and --state);
#  - describe <Tab>: job, then the job names; describe's own --help;
#  - metrics -o <Tab>: table csv json, not yaml (which metrics refuses);
#  - logs' options, --timestamps and --since among them.
# The engine is started here on temp dirs and a Unix socket, stopped by pid.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
. tests/engine.sh

engine_config </dev/null
start_engine
submit made "true"
check "a job to complete the name of" test "$code" = 200

export TRAINJOB_ENDPOINT="http+unix://$SOCK"
mkdir -p "$TMP/bin" "$TMP/fishhome"
ln -sf "$TRAINJOB_BIN" "$TMP/bin/trainjob"
"$TRAINJOB_BIN" completion bash >"$TMP/c.bash"
"$TRAINJOB_BIN" completion zsh >"$TMP/c.zsh"
"$TRAINJOB_BIN" completion fish >"$TMP/c.fish"

# complete SHELL WORD... : the candidates SHELL's script gives for the last word (one a line)
complete() {
    _sh=$1
    shift
    case $_sh in
    bash)
        PATH="$TMP/bin:$PATH" bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _trainjob
             printf "%s\n" "${COMPREPLY[@]}"' sh "$TMP/c.bash" "$@" 2>&1
        ;;
    zsh)
        PATH="$TMP/bin:$PATH" zsh -fc 'compdef() { :; }; compadd() { print -rl -- "$@"; }; _files() { print _files; }
             . "$1"; shift; words=("$@"); CURRENT=$#; _trainjob' sh "$TMP/c.zsh" "$@" 2>&1 |
            grep -vx -- '-Q\|--'
        ;;
    fish)
        _line=$(printf '%s ' "$@")
        _line=${_line% }
        PATH="$TMP/bin:$PATH" HOME="$TMP/fishhome" XDG_CONFIG_HOME="$TMP/fishhome/.config" \
            XDG_DATA_HOME="$TMP/fishhome/data" \
            fish --no-config -c 'source $argv[1]; complete -C $argv[2]' "$TMP/c.fish" "$_line" 2>&1 |
            cut -f1
        ;;
    esac
}

# offers NAME SHELL WANT... -- WORD... : every WANT among the candidates
offers() {
    _name=$1 _sh=$2
    shift 2
    _want=""
    while [ "$1" != -- ]; do
        _want="$_want $1"
        shift
    done
    shift
    complete "$_sh" "$@" >"$TMP/cand"
    _miss=""
    for _w in $_want; do
        grep -qxF -- "$_w" "$TMP/cand" || _miss="$_miss $_w"
    done
    if [ -z "$_miss" ]; then pass "$_sh: $_name"; else
        fail "$_sh: $_name" "missing:$_miss; got: $(tr '\n' ' ' <"$TMP/cand")"
    fi
}

for sh in bash zsh fish; do
    offers "get <Tab> offers every kind, catalog too" $sh jobs job workers events catalog -- trainjob get ""
    offers "get jobs -o <Tab> offers name" $sh wide json yaml name -- trainjob get jobs -o ""
    offers "get's options" $sh --no-headers --sort-by --watch --mine --user --state -- trainjob get jobs --
    offers "describe <Tab> offers job" $sh job -- trainjob describe ""
    offers "describe job <Tab> offers the job" $sh made -- trainjob describe job ""
    offers "describe's option" $sh --help -- trainjob describe job made --
    offers "metrics -o <Tab> offers table, csv, json" $sh table csv json -- trainjob metrics made -o ""
    complete $sh trainjob metrics made -o "" >"$TMP/cand"
    expect_no_grep "$sh: ...not yaml, which metrics refuses" "$TMP/cand" yaml
    offers "logs' options" $sh --previous --timestamps --since --all-workers --tail -- trainjob logs made --
done

engine_cleanup
