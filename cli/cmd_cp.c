/* airlock cp LOCAL ID:/path | ID:/path LOCAL: files in and out through the
 * files route, streamed both ways (never whole in memory). LOCAL "-" is
 * stdin or stdout. A download goes to a temp file renamed into place, so a
 * broken transfer never leaves a truncated LOCAL behind. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "fsutil.h"

/* "ID:/abs/path" → id and path; false for anything else (a local path). */
static bool remote_spec(const char *spec, char *id, size_t idlen, const char **path)
{
    size_t n = strspn(spec, "abcdefghijklmnopqrstuvwxyz0123456789_-");
    if (n == 0 || n >= idlen || spec[n] != ':' || spec[n + 1] != '/')
        return false;
    snprintf(id, idlen, "%.*s", (int)n, spec);
    *path = spec + n + 1;
    return true;
}

static void files_path(const char *id, const char *remote, struct strbuf *out)
{
    strbuf_appendf(out, "/v1/sandboxes/%s/files?path=", id);
    http_query_escape(remote, out);
}

/* The error answer of a failed transfer, reported. */
static int transfer_failed(struct cli *c, struct http_response *resp, const char *id)
{
    struct strbuf answer = { 0 };
    http_read_all(resp, &answer);
    json_t *err = answer.len ? json_loadb(answer.data, answer.len, 0, NULL) : NULL;
    int rc = cli_fail(c, resp->status, err, id);
    json_decref(err);
    strbuf_free(&answer);
    return rc;
}

static void report(struct cli *c, const char *what, const char *from, const char *to, uint64_t bytes)
{
    if (c->json) {
        json_t *j = json_pack("{s:s,s:s,s:I}", "from", from, "to", to, "bytes", (json_int_t)bytes);
        cli_print_json(stdout, j);
        json_decref(j);
    } else if (strcmp(to, "-") != 0) {
        fprintf(stderr, "%s %llu bytes\n", what, (unsigned long long)bytes);
    }
}

static int upload(struct cli *c, const char *local, const char *id, const char *remote,
                  const char *spec)
{
    bool from_stdin = strcmp(local, "-") == 0;
    int fd = from_stdin ? STDIN_FILENO : open(local, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        /* Content-Length needs the size up front: a regular file. */
        fprintf(stderr, "airlock: %s: %s\n", local,
                fd < 0 ? strerror(errno) : "not a regular file (cp uploads regular files)");
        if (fd >= 0 && !from_stdin)
            close(fd);
        return CLI_EXIT_ERROR;
    }
    struct strbuf path = { 0 };
    files_path(id, remote, &path);
    struct http_request req = { .method = "PUT", .path = strbuf_str(&path),
                                .body_len = (size_t)st.st_size, .body_fd = fd };
    static const char *const headers[] = { "Content-Type: application/octet-stream", NULL };
    struct http_response resp;
    int rc = CLI_EXIT_ERROR;
    if (cli_send(c, &req, headers, &resp) == 0) {
        if (resp.status == 204) {
            report(c, "uploaded", local, spec, (uint64_t)st.st_size);
            rc = CLI_EXIT_OK;
        } else {
            rc = transfer_failed(c, &resp, id);
        }
        http_close(&resp);
    }
    strbuf_free(&path);
    if (!from_stdin)
        close(fd);
    return rc;
}

static int download(struct cli *c, const char *id, const char *remote, const char *spec,
                    const char *local)
{
    bool to_stdout = strcmp(local, "-") == 0;
    struct strbuf path = { 0 }, tmp = { 0 };
    files_path(id, remote, &path);
    struct http_request req = { .method = "GET", .path = strbuf_str(&path), .body_fd = -1 };
    struct http_response resp;
    int rc = CLI_EXIT_ERROR, fd = -1;
    if (cli_send(c, &req, NULL, &resp) < 0)
        goto out;
    if (resp.status != 200) {
        rc = transfer_failed(c, &resp, id);
        goto out_resp;
    }
    strbuf_appendf(&tmp, "%s.airlock-XXXXXX", local);
    fd = to_stdout ? STDOUT_FILENO : mkostemp(tmp.data, O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "airlock: %s: %s\n", local, strerror(errno));
        goto out_resp;
    }
    char buf[65536];
    uint64_t total = 0;
    ssize_t n;
    while ((n = http_read_body(&resp, buf, sizeof(buf))) > 0 && fs_write_all(fd, buf, (size_t)n) == 0)
        total += (uint64_t)n;
    if (n != 0) {
        fprintf(stderr, "airlock: copying %s broke off after %llu bytes%s\n", spec,
                (unsigned long long)total, to_stdout ? "" : "; nothing was written");
        goto out_file;
    }
    if (!to_stdout && (fchmod(fd, 0644) < 0 || rename(tmp.data, local) < 0)) {
        fprintf(stderr, "airlock: %s: %s\n", local, strerror(errno));
        goto out_file;
    }
    report(c, "downloaded", spec, local, total);
    rc = CLI_EXIT_OK;
out_file:
    if (!to_stdout) {
        if (rc != CLI_EXIT_OK)
            unlink(tmp.data);
        close(fd);
    }
out_resp:
    http_close(&resp);
out:
    strbuf_free(&path);
    strbuf_free(&tmp);
    return rc;
}

int cmd_cp(struct cli *c, int argc, char **argv)
{
    char id_from[80], id_to[80];
    const char *remote_from, *remote_to;
    bool from_remote = argc == 3 && remote_spec(argv[1], id_from, sizeof(id_from), &remote_from);
    bool to_remote = argc == 3 && remote_spec(argv[2], id_to, sizeof(id_to), &remote_to);
    if (argc != 3 || from_remote == to_remote) {
        fprintf(stderr, "usage: airlock cp LOCAL ID:/path | airlock cp ID:/path LOCAL"
                        " (LOCAL - is stdin/stdout)\n");
        return CLI_EXIT_USAGE;
    }
    return to_remote ? upload(c, argv[1], id_to, remote_to, argv[2])
                     : download(c, id_from, remote_from, argv[1], argv[2]);
}
