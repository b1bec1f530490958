# Locales for the shell tests: Chinese (issue 12: most SenseCore users run
# under zh_CN.UTF-8, where strftime's day and month names are Chinese) and
# one whose decimal point is a comma.
# Sourced by tests/*.test.sh after lib.sh.

# locale_env NAME PROBE : sets LOCALE_ENV to the environment a command needs
# to run under NAME (a UTF-8 locale, xx_YY.UTF-8): "LC_ALL=NAME" when the
# system has it, else that plus LOCPATH=$TMP/locale, a private copy localedef
# makes. PROBE (sh code run under it) says the locale is really in force, not
# C in its place. Prints a SKIP line and returns 1 only when it cannot be made
# (no `locales` sources).
locale_env() {
    LOCALE_ENV="LC_ALL=$1"
    env "LC_ALL=$1" sh -c "$2" 2>/dev/null && return 0
    mkdir -p "$TMP/locale"
    if localedef -i "${1%%.*}" -f UTF-8 "$TMP/locale/$1" >"$TMP/localedef.log" 2>&1 ||
        [ -d "$TMP/locale/$1" ]; then
        LOCALE_ENV="LC_ALL=$1 LOCPATH=$TMP/locale"
        env $LOCALE_ENV sh -c "$2" && return 0
    fi
    echo "SKIP $1: cannot generate it here (install Debian's 'locales': scripts/deps.sh): $(head -c 300 "$TMP/localedef.log" 2>/dev/null)"
    return 1
}

# zh_locale : sets ZH_ENV for zh_CN.UTF-8, where July is not "Jul".
zh_locale() {
    locale_env zh_CN.UTF-8 '[ "$(date -u -d @1690371363 +%b)" != Jul ]' || return 1
    ZH_ENV=$LOCALE_ENV
}

# comma_locale : sets COMMA_ENV for de_DE.UTF-8, whose decimal point is a
# comma (printf's %g writes 0,5 there and strtod stops at "0.5"'s point).
comma_locale() {
    locale_env de_DE.UTF-8 '[ "$(locale decimal_point)" = , ]' || return 1
    COMMA_ENV=$LOCALE_ENV
}
