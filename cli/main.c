/*
 * main: the trainjob binary. Sets the locale (for wide characters) and hands
 * the command line to cli_main.
 */
#include <locale.h>
#include <stdio.h>
#include <unistd.h>

#include "cli/cli.h"

int main(int argc, char **argv)
{
    setlocale(LC_ALL, "");
    int is_tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
    return cli_main(argc, argv, is_tty, stdout, stderr);
}
