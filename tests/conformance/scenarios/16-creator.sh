# The creator: get -o json says who (ownership.user_name), describe too.
scenario_creator() {
    u=$(tj get job life-ok -o json | jq -r '.ownership.user_name // ""')
    [ -n "$u" ] && cf_pass "get -o json names the creator ($u)" || cf_fail "get -o json names the creator" "no ownership.user_name"
    cf_run tj describe job life-ok
    cf_egrep "describe names the creator" "$TMP/out" "^Created: .* by ${u:-.}"
}
