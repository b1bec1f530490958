/*
 * paths: XDG locations; see paths.h.
 */
#include "api/paths.h"

#include <pwd.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/xalloc.h"

static const char *home(void)
{
    const char *h = getenv("HOME");
    if (h && *h)
        return h;
    struct passwd *pw = getpwuid(getuid());
    return pw && pw->pw_dir ? pw->pw_dir : "/tmp";
}

/* $VAR when set to an absolute path, else ~/fallback. */
static char *xdg(const char *var, const char *fallback)
{
    const char *v = getenv(var);
    if (v && v[0] == '/')
        return xasprintf("%s/trainjob", v);
    return xasprintf("%s/%s/trainjob", home(), fallback);
}

char *paths_config_dir(void)
{
    return xdg("XDG_CONFIG_HOME", ".config");
}

char *paths_state_dir(void)
{
    return xdg("XDG_STATE_HOME", ".local/state");
}

char *paths_engine_config(void)
{
    char *dir = paths_config_dir();
    char *p = xasprintf("%s/engine.yaml", dir);
    free(dir);
    return p;
}

char *paths_engine_state(void)
{
    char *dir = paths_state_dir();
    char *p = xasprintf("%s/engine", dir);
    free(dir);
    return p;
}

char *paths_engine_socket(void)
{
    const char *run = getenv("XDG_RUNTIME_DIR");
    if (run && run[0] == '/')
        return xasprintf("%s/trainjob/engine.sock", run);
    char *state = paths_engine_state();
    char *p = xasprintf("%s/engine.sock", state);
    free(state);
    return p;
}

char *paths_client_config(void)
{
    const char *env = getenv("TRAINJOB_CONFIG");
    if (env && *env)
        return xstrdup(env);
    char *dir = paths_config_dir();
    char *p = xasprintf("%s/config.yaml", dir);
    free(dir);
    return p;
}
