#include "exec_spec.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bytes.h"

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

struct user_info {
    uid_t uid;
    gid_t gid;
    char name[256];
    char home[1024];
    char shell[256];
    bool known; /* has a passwd entry */
};

static void user_from_passwd(struct user_info *u, const struct passwd *pw)
{
    u->uid = pw->pw_uid;
    u->gid = pw->pw_gid;
    snprintf(u->name, sizeof(u->name), "%s", pw->pw_name);
    snprintf(u->home, sizeof(u->home), "%s", pw->pw_dir && *pw->pw_dir ? pw->pw_dir : "/");
    snprintf(u->shell, sizeof(u->shell), "%s",
             pw->pw_shell && *pw->pw_shell ? pw->pw_shell : "/bin/sh");
    u->known = true;
}

/* user: a name, a numeric uid, or empty for root. */
static int lookup_user(const char *user, struct user_info *u, char *msg, size_t msglen)
{
    const char *name = *user ? user : "0";
    char *end;
    errno = 0;
    unsigned long id = strtoul(name, &end, 10);
    bool numeric = *end == '\0' && errno == 0 && id <= 0xfffffffeul && name[0] != '-';
    struct passwd *pw = numeric ? getpwuid((uid_t)id) : getpwnam(name);
    if (pw) {
        user_from_passwd(u, pw);
        return 0;
    }
    if (!numeric) {
        snprintf(msg, msglen, "unknown user %s", quoted(user).s);
        return EINVAL;
    }
    /* A bare uid without a passwd entry still runs, like docker --user. */
    *u = (struct user_info){ .uid = (uid_t)id, .gid = (gid_t)id };
    snprintf(u->name, sizeof(u->name), "%lu", id);
    snprintf(u->home, sizeof(u->home), "%s", id == 0 ? "/root" : "/");
    snprintf(u->shell, sizeof(u->shell), "/bin/sh");
    return 0;
}

static int user_groups(const struct user_info *u, gid_t **out, size_t *n)
{
    if (!u->known) {
        *out = NULL;
        *n = 0;
        return 0;
    }
    int count = 16;
    for (;;) {
        gid_t *groups = malloc((size_t)count * sizeof(*groups));
        if (!groups)
            return -1;
        int got = count;
        if (getgrouplist(u->name, u->gid, groups, &got) >= 0) {
            *out = groups;
            *n = (size_t)got;
            return 0;
        }
        free(groups);
        if (got <= count) /* cannot happen, but never loop forever */
            return -1;
        count = got;
    }
}

static int env_set(struct exec_spec *es, const char *entry)
{
    size_t keylen = (size_t)(strchr(entry, '=') - entry) + 1; /* with '=' */
    char *copy = strdup(entry);
    if (!copy)
        return -1;
    for (size_t i = 0; i < es->nenv; i++) {
        if (strncmp(es->envp[i], entry, keylen) == 0) {
            free(es->envp[i]);
            es->envp[i] = copy;
            return 0;
        }
    }
    char **ne = realloc(es->envp, (es->nenv + 2) * sizeof(*ne));
    if (!ne) {
        free(copy);
        return -1;
    }
    es->envp = ne;
    es->envp[es->nenv++] = copy;
    es->envp[es->nenv] = NULL;
    return 0;
}

static int env_setf(struct exec_spec *es, const char *key, const char *value)
{
    char buf[2048];
    snprintf(buf, sizeof(buf), "%s=%s", key, value);
    return env_set(es, buf);
}

static int build_env(struct exec_spec *es, const Airlock__Guest__V1__ExecRequest *req,
                     const struct user_info *u, char *msg, size_t msglen)
{
    if (env_setf(es, "PATH", DEFAULT_PATH) < 0 || env_setf(es, "HOME", u->home) < 0 ||
        env_setf(es, "USER", u->name) < 0 || env_setf(es, "LOGNAME", u->name) < 0 ||
        env_setf(es, "SHELL", u->shell) < 0 || env_setf(es, "LANG", "C.UTF-8") < 0 ||
        (req->pty && env_setf(es, "TERM", "xterm-256color") < 0))
        goto nomem;
    for (size_t i = 0; i < req->n_env; i++) {
        char *entry = bytes_to_cstr(&req->env[i]);
        if (!entry) {
            if (errno == ENOMEM)
                goto nomem;
            snprintf(msg, msglen, "exec: env entry %s contains a NUL byte",
                     quoted_bytes(req->env[i].data, req->env[i].len).s);
            return EINVAL;
        }
        char *eq = strchr(entry, '=');
        if (!eq || eq == entry) {
            snprintf(msg, msglen, "exec: env entry %s is not KEY=VALUE", quoted(entry).s);
            free(entry);
            return EINVAL;
        }
        int rc = env_set(es, entry);
        free(entry);
        if (rc < 0)
            goto nomem;
    }
    return 0;
nomem:
    snprintf(msg, msglen, "exec: out of memory");
    return ENOMEM;
}

static const char *env_get(const struct exec_spec *es, const char *key)
{
    size_t n = strlen(key);
    for (size_t i = 0; i < es->nenv; i++)
        if (strncmp(es->envp[i], key, n) == 0 && es->envp[i][n] == '=')
            return es->envp[i] + n + 1;
    return NULL;
}

/* Like execvp: the first executable regular file in PATH wins; a match we
 * may not execute is remembered to report EACCES instead of ENOENT. */
static int resolve_program(struct exec_spec *es, char *msg, size_t msglen)
{
    const char *prog = es->argv[0];
    if (strchr(prog, '/')) {
        es->path = strdup(prog);
        return es->path ? 0 : ENOMEM;
    }
    const char *path = env_get(es, "PATH");
    if (!path || !*path)
        path = DEFAULT_PATH;
    bool denied = false;
    char candidate[4096];
    for (const char *dir = path; dir; dir = strchr(dir, ':') ? strchr(dir, ':') + 1 : NULL) {
        size_t dirlen = strchrnul(dir, ':') - dir;
        if (dirlen == 0)
            continue;
        int n = snprintf(candidate, sizeof(candidate), "%.*s/%s", (int)dirlen, dir, prog);
        if (n < 0 || (size_t)n >= sizeof(candidate))
            continue;
        struct stat st;
        if (stat(candidate, &st) < 0 || !S_ISREG(st.st_mode))
            continue;
        if (!(st.st_mode & 0111)) {
            denied = true;
            continue;
        }
        es->path = strdup(candidate);
        return es->path ? 0 : ENOMEM;
    }
    int err = denied ? EACCES : ENOENT;
    snprintf(msg, msglen, "exec %s: %s (%s in PATH)", quoted(prog).s, strerror(err),
             denied ? "not executable" : "not found");
    return err;
}

static int build_cwd(struct exec_spec *es, const Airlock__Guest__V1__ExecRequest *req,
                     const struct user_info *u, char *msg, size_t msglen)
{
    if (req->cwd.len == 0) {
        struct stat st;
        bool home_ok = stat(u->home, &st) == 0 && S_ISDIR(st.st_mode);
        es->cwd = strdup(home_ok ? u->home : "/");
        return es->cwd ? 0 : ENOMEM;
    }
    es->cwd = bytes_to_path(&req->cwd);
    if (!es->cwd && errno == EINVAL) {
        snprintf(msg, msglen, "exec: cwd contains a NUL byte");
        return EINVAL;
    }
    return es->cwd ? 0 : ENOMEM;
}

static int build_argv(struct exec_spec *es, const Airlock__Guest__V1__ExecRequest *req,
                      char *msg, size_t msglen)
{
    if (req->n_argv == 0) {
        snprintf(msg, msglen, "exec: argv is empty");
        return EINVAL;
    }
    if (req->argv[0].len == 0) {
        snprintf(msg, msglen, "exec: argv[0] is empty");
        return EINVAL;
    }
    es->argv = calloc(req->n_argv + 1, sizeof(*es->argv));
    if (!es->argv)
        return ENOMEM;
    for (size_t i = 0; i < req->n_argv; i++) {
        es->argv[i] = bytes_to_cstr(&req->argv[i]);
        if (!es->argv[i] && errno == EINVAL) {
            snprintf(msg, msglen, "exec: argv[%zu] contains a NUL byte", i);
            return EINVAL;
        }
        if (!es->argv[i])
            return ENOMEM;
    }
    return 0;
}

int exec_spec_build(struct exec_spec *es, const Airlock__Guest__V1__ExecRequest *req,
                    char *msg, size_t msglen)
{
    memset(es, 0, sizeof(*es));
    snprintf(msg, msglen, "exec: out of memory");
    struct user_info u;
    int err = build_argv(es, req, msg, msglen);
    if (!err)
        err = lookup_user(req->user, &u, msg, msglen);
    if (!err)
        err = build_env(es, req, &u, msg, msglen);
    if (!err)
        err = build_cwd(es, req, &u, msg, msglen);
    if (!err)
        err = resolve_program(es, msg, msglen);
    size_t ngroups = 0;
    if (!err && *req->user && user_groups(&u, &es->groups, &ngroups) < 0) {
        snprintf(msg, msglen, "exec: cannot list the groups of user %s", quoted(u.name).s);
        err = ENOMEM;
    }
    if (err)
        return err;
    es->spawn = (struct spawn_spec){
        .path = es->path,
        .argv = es->argv,
        .envp = es->envp,
        .cwd = es->cwd,
        .set_user = *req->user != '\0',
        .uid = u.uid,
        .gid = u.gid,
        .groups = es->groups,
        .ngroups = ngroups,
        .pty = req->pty,
        .rows = (unsigned short)(req->rows > 0xffff ? 0xffff : req->rows),
        .cols = (unsigned short)(req->cols > 0xffff ? 0xffff : req->cols),
        .stdin_pipe = req->stdin_open,
    };
    return 0;
}

void exec_spec_free(struct exec_spec *es)
{
    for (size_t i = 0; es->argv && es->argv[i]; i++)
        free(es->argv[i]);
    free(es->argv);
    for (size_t i = 0; i < es->nenv; i++)
        free(es->envp[i]);
    free(es->envp);
    free(es->path);
    free(es->cwd);
    free(es->groups);
    memset(es, 0, sizeof(*es));
}
