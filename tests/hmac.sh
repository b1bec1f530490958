# AK/SK request signing for the shell tests, exactly as trainjob's client
# signs (api/hmac.h): Kong-style hmac over x-date, the request line, the
# body's digest and a nonce. Sourced by tests/*.test.sh; needs openssl.

# hmac_now [DATE-ARGS] : an RFC 1123 GMT date (now, or `date -d` ARGS)
hmac_now() {
    LC_ALL=C date -u ${1:+-d "$1"} '+%a, %d %b %Y %H:%M:%S GMT'
}

# hmac_headers AK SK METHOD TARGET BODY DATE [NONCE] > FILE : the headers of a
# signed request, one per line (for curl -H @FILE)
hmac_headers() {
    _nonce=${7:-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')}
    _digest="SHA-256=$(printf '%s' "$5" | openssl dgst -sha256 -binary | base64)"
    _sig=$(printf 'x-date: %s\n%s %s HTTP/1.1\ndigest: %s\nx-nonce: %s' "$6" "$3" "$4" "$_digest" "$_nonce" |
        openssl dgst -sha256 -hmac "$2" -binary | base64)
    printf 'X-Date: %s\nDigest: %s\nX-Nonce: %s\n' "$6" "$_digest" "$_nonce"
    printf 'Authorization: hmac accesskey="%s", algorithm="hmac-sha256", headers="x-date request-line digest x-nonce", signature="%s"\n' "$1" "$_sig"
}

# hmac_send HEADERS-FILE PORT METHOD TARGET [BODY] : sends a request with those
# headers to 127.0.0.1:PORT; status in $code, reply in $TMP/body
hmac_send() {
    if [ -n "${5:-}" ]; then
        code=$(curl -s -m 10 --path-as-is -o "$TMP/body" -w '%{http_code}' -H @"$1" -H 'Expect:' \
            -H 'Content-Type: application/json' -X "$3" --data-binary "$5" "http://127.0.0.1:$2$4")
    else
        code=$(curl -s -m 10 --path-as-is -o "$TMP/body" -w '%{http_code}' -H @"$1" -X "$3" \
            "http://127.0.0.1:$2$4")
    fi
}

# tcp_api AK SK PORT METHOD TARGET [BODY] : one freshly signed request
tcp_api() {
    hmac_headers "$1" "$2" "$4" "$5" "${6:-}" "$(hmac_now)" >"$TMP/hdr"
    hmac_send "$TMP/hdr" "$3" "$4" "$5" "${6:-}"
}
