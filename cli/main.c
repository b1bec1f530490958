/*
 * main: the trainjob binary. Sets the locale (for wide characters, and the
 * names strftime gives) and hands the command line to cli_main.
 */
#include <locale.h>
#include <stdio.h>
#include <unistd.h>

#include "cli/cli.h"

int main(int argc, char **argv)
{
    setlocale(LC_ALL, "");
    /* Numbers are read and written as JSON, CSV and YAML spell them, 0.5,
     * whatever the user's locale: strtod and printf follow LC_NUMERIC, and
     * under de_DE.UTF-8 strtod stops at 0.25's point and %g writes 0,25. */
    setlocale(LC_NUMERIC, "C");
    int is_tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
    return cli_main(argc, argv, is_tty, stdout, stderr);
}
