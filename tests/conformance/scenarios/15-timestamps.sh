# Timestamps in one format: every time that get -o json, describe and get
# events print is RFC 3339 UTC to the second (2026-01-02T03:04:05Z: what
# every backend knows, Slurm no finer); a fraction, an offset or a space
# for the T is a timestamp of another format.
scenario_timestamps() {
    {
        tj get job life-ok -o json
        tj describe job life-ok
        tj get events life-ok
    } >"$TMP/times" 2>/dev/null
    grep -oE '[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(:[0-9]{2})?[.,0-9]*(Z|[+-][0-9:]{2,5})?' \
        "$TMP/times" >"$TMP/times.all"
    n=$(wc -l <"$TMP/times.all")
    bad=$(grep -cvE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$' "$TMP/times.all")
    if [ "$n" -gt 3 ] && [ "$bad" -eq 0 ]; then cf_pass "all $n timestamps read YYYY-MM-DDTHH:MM:SSZ"; else
        cf_fail "all timestamps read YYYY-MM-DDTHH:MM:SSZ" "$bad of $n do not: $(grep -vE 'T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$' "$TMP/times.all" | sort -u | head -n 4 | tr '\n' ' ')"
    fi
}
