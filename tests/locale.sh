# Locales for the shell tests: Chinese (issue 12: most SenseCore users run
# under zh_CN.UTF-8, where strftime's day and month names are Chinese) and
# one whose decimal point is a comma.
# Sourced by tests/*.test.sh after lib.sh.

# zh_locale : sets ZH_ENV to the environment a command needs to run under
# zh_CN.UTF-8 ("LC_ALL=zh_CN.UTF-8", plus LOCPATH=$TMP/locale when the system
# has not generated it and localedef makes a private copy). Prints a SKIP line
# and returns 1 only when the locale cannot be made (no `locales` sources).
zh_locale() {
    ZH_ENV="LC_ALL=zh_CN.UTF-8"
    if [ "$(env LC_ALL=zh_CN.UTF-8 date -u -d @1690371363 +%b 2>/dev/null)" != "Jul" ] &&
        locale -a 2>/dev/null | grep -qix 'zh_CN.utf-\{0,1\}8'; then
        return 0
    fi
    mkdir -p "$TMP/locale"
    if localedef -i zh_CN -f UTF-8 "$TMP/locale/zh_CN.UTF-8" >"$TMP/localedef.log" 2>&1 ||
        [ -d "$TMP/locale/zh_CN.UTF-8" ]; then
        ZH_ENV="LC_ALL=zh_CN.UTF-8 LOCPATH=$TMP/locale"
        # the locale really differs from C: July is not "Jul" there
        [ "$(env $ZH_ENV date -u -d @1690371363 +%b)" != "Jul" ] && return 0
    fi
    echo "SKIP zh_CN.UTF-8: cannot generate it here (install Debian's 'locales': scripts/deps.sh): $(head -c 300 "$TMP/localedef.log" 2>/dev/null)"
    return 1
}

# comma_locale : sets COMMA_ENV to the environment a command needs to run
# under de_DE.UTF-8, a locale whose decimal point is a comma (printf's %g
# writes 0,5 there and strtod stops at "0.5"'s point), made as zh_locale
# makes its. Prints a SKIP line and returns 1 only when it cannot be made.
comma_locale() {
    COMMA_ENV="LC_ALL=de_DE.UTF-8"
    [ "$(env LC_ALL=de_DE.UTF-8 locale decimal_point 2>/dev/null)" = "," ] && return 0
    mkdir -p "$TMP/locale"
    if localedef -i de_DE -f UTF-8 "$TMP/locale/de_DE.UTF-8" >"$TMP/localedef.log" 2>&1 ||
        [ -d "$TMP/locale/de_DE.UTF-8" ]; then
        COMMA_ENV="LC_ALL=de_DE.UTF-8 LOCPATH=$TMP/locale"
        [ "$(env $COMMA_ENV locale decimal_point)" = "," ] && return 0
    fi
    echo "SKIP de_DE.UTF-8: cannot generate it here (install Debian's 'locales': scripts/deps.sh): $(head -c 300 "$TMP/localedef.log" 2>/dev/null)"
    return 1
}
