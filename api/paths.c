/*
 * paths: XDG locations; see paths.h.
 */
#include "api/paths.h"

#include <pwd.h>
#include <stdlib.h>
#include <string.h>
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

char *paths_cache_dir(void)
{
    return xdg("XDG_CACHE_HOME", ".cache");
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

char *paths_config_file(const char *name, bool tilde)
{
    char *dir = paths_config_dir();
    char *path = xasprintf("%s/%s", dir, name);
    free(dir);
    const char *h = getenv("HOME");
    size_t n = h ? strlen(h) : 0;
    if (tilde && n > 1 && strncmp(path, h, n) == 0 && path[n] == '/') {
        char *shown = xasprintf("~%s", path + n);
        free(path);
        return shown;
    }
    return path;
}

char *paths_beside(const char *p, const char *base_file)
{
    if (p[0] == '~' && (p[1] == '/' || p[1] == '\0'))
        return xasprintf("%s%s", home(), p + 1);
    if (p[0] == '/')
        return xstrdup(p);
    const char *slash = strrchr(base_file, '/');
    if (slash == NULL)
        return xstrdup(p);
    return xasprintf("%.*s/%s", (int)(slash - base_file), base_file, p);
}
