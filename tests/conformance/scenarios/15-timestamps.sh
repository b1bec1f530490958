# Timestamps in one format: every time that get -o json, describe and get
# events print is RFC 3339 UTC with milliseconds (2026-01-02T03:04:05.678Z).
scenario_timestamps() {
    {
        tj get job life-ok -o json
        tj describe job life-ok
        tj get events life-ok
    } >"$TMP/times" 2>/dev/null
    grep -oE '[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(:[0-9]{2})?[.,0-9]*(Z|[+-][0-9:]{2,5})?' \
        "$TMP/times" >"$TMP/times.all"
    n=$(wc -l <"$TMP/times.all")
    bad=$(grep -cvE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$' "$TMP/times.all")
    if [ "$n" -gt 3 ] && [ "$bad" -eq 0 ]; then cf_pass "all $n timestamps read YYYY-MM-DDTHH:MM:SS.mmmZ"; else
        cf_fail "all timestamps read YYYY-MM-DDTHH:MM:SS.mmmZ" "$bad of $n do not: $(grep -vE '\.[0-9]{3}Z$' "$TMP/times.all" | sort -u | head -n 4 | tr '\n' ' ')"
    fi
}
