# The wizard at 80×24 as issue 11 tried it (defects 2, 3 and 5): a number
# typed out of range is an error under its field and on Review, never a
# dropped field; a file's values are shown as the file says them, an unknown
# field is listed on Review with its line, a file with no job in it leaves
# the form as it was; Review scrolls, wraps, lists every finding with a key
# to go to its field, and Enter there does not submit. Driven in tmux against
# a real trainjobd, stopped by pid.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1

SESSION="tj-wizard-review-$$"
. tests/tui.sh
start_engine

# Defect 2: max restarts out of range, typed.
start_wizard examples/pytorch-ddp.yaml
keys PgDn PgDn PgDn
see "PgDn PgDn PgDn goes to Fault tolerance" "Max restarts"
keys C-u 150
see "150 is an error under max restarts" "must be -1 … 99 on this backend"
see "...counted in its section" "Fault tolerance 1"
keys C-u -2
see "-2 too" "found -2"
keys C-u -
see "a lone '-' is an error, not a field left out" "required: a whole number"
keys PgDn PgDn PgDn PgDn
see "Review lists it" "fault_tolerance.backoff_limit: required"
gone "...and never sends fault_tolerance: {}" "fault_tolerance: {}"

# Defect 5: Review at 80×24 scrolls to the end and wraps.
keys End
see "End scrolls Review to the job's last lines" "rules:"
see "...and says where the view is" "lines "
keys Home
see "Home goes back to the top" "Review: 2 workers"
keys Enter
see "Enter on Review does not submit" "Review: 2 workers"
gone "...nothing is being submitted" "Submitting"
keys n Enter
see "n chooses the first finding and Enter goes to its field" "Max restarts"
keys C-u 3
see "...where fixing it clears the error" "✓ Fault tolerance"

# Defect 3: a file's values as the file says them.
cat >"$TMP/odd.yaml" <<'EOF'
workspace_name: default
display_name: odd
framework: PYTORCH
resource_pool:
  name: nopool
roles:
  - total_replicas: 0
    resource_spec:
      - name: gpu-999
    image_path: local/host
    startup_script: "true"
fault_tolerance:
  backof_limit: 3
  backoff_limit: 150
EOF
start_wizard "$TMP/odd.yaml"
see "an unknown pool is shown as the file says it" "nopool"
keys PgDn
see "an API framework the form does not offer is kept, named as the file names it" "PYTORCH"
see "...with its finding under the field" "PYTORCH from the file"
see "replicas 0 is kept, not made 1" "0 worker"
see "an unknown spec is shown as the file says it" "gpu-999"
keys PgDn PgDn
see "backoff 150 is kept, not clamped" "150"
keys PgDn PgDn PgDn PgDn
see "the misspelt field is on Review with its line, under the field it meant" \
    "fault_tolerance.backoff_limit: line 13: unknown"

# A file with no job in it (empty) never changes the form.
: >"$TMP/empty.yaml"
keys F3 "$TMP/empty.yaml" Enter
see "an empty file is not loaded" "not loaded:"
keys Home
see "...and the form is as it was" "nopool"

# The form items: region shown with the zone, the VPC a list from the catalog, the fault
# tolerance default policy said, the AFS note readable at 80 columns.
start_wizard examples/idle-preemptible.yaml
see "an idle pool's zone shows its region" "region local-1"
see "the VPC is chosen from the catalog's list" "vpc-local"
keys PgDn PgDn PgDn
see "fault tolerance says the default policy" "restart the whole job while restarts"
see "...and that affinity is not offered" "is not offered by"
keys PgDn
see "the AFS permission note is at 80 columns" "set by the tenant"
gone "...whole, not cut" "adm…"

# Drafts: leaving with nothing changed does not say a draft is kept (one an earlier run left
# is not this job's).
start_wizard examples/pytorch-ddp.yaml
mkdir -p "$HOME/.local/state/trainjob/drafts"
printf 'display_name: earlier\n' >"$HOME/.local/state/trainjob/drafts/draft.yaml"
keys Escape
see "leaving an unchanged form says so" "left without submitting"
gone "...without claiming a draft of it is kept" "offers the draft again"

tmux kill-session -t "$SESSION" 2>/dev/null
stop_engine
