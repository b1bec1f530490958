# The trainjobd backend: the suite's engine (cf_engine_up in
# tests/conformance.test.sh: pool standard, spec gpu-1, volume scratch at
# the shared volume) reached on its Unix socket as the user running the
# suite, in workspace default.
CF_WS=default
# the engine's two simulated nodes of 8 GPUs: 16 workers of gpu-1 take them all
CF_BLOCK_N=16
CF_BLOCK_SPEC=gpu-1

backend_up() {
    cf_engine_up || return 1
    {
        printf '  - name: trainjobd\n    driver: trainjobd\n    endpoint: http+unix://%s\n' "$SOCK"
        printf '    workspace: default\n'
    } >>"$TRAINJOB_CONFIG"
}

# backend_user USER: USER's own context, $TMP/users/USER/config.yaml: the
# engine's TCP listener with USER's AK/SK (its Unix socket is its own
# user's only), workspace default
backend_user() {
    cf_user_dir "$1"
    _d=$TMP/users/$1
    printf 'SK-%s\n' "$1" >"$_d/sk"
    {
        printf 'contexts:\n  - name: trainjobd\n    driver: trainjobd\n'
        printf '    endpoint: http://%s\n    access_key: AK-%s\n    secret_key_file: %s\n' \
            "$CF_ENGINE_TCP" "$1" "$_d/sk"
        printf '    workspace: default\n'
    } >"$_d/config.yaml"
    chown "$1" "$_d/sk" "$_d/config.yaml"
    chmod 600 "$_d/sk"
}

backend_down() { :; } # the engine serves the acp backend's fake too: stopped at the end

backend_unsupported() {
    case $1 in
    newer-server)
        echo "trainjobd is built from this tree: it sends no value this client does not know, and a job's record cannot be edited under it while it runs (ACP's fake injects them)"
        ;;
    *) return 1 ;;
    esac
}
