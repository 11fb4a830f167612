#include "console_files.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reply.h"
#include "routes.h"

#define CONSOLE_PREFIX "/console"

static enum MHD_Result console_handle(struct gw_request *r);

/* The one pattern the console's requests are logged and counted under. */
static const struct gw_route console_route = { "GET", CONSOLE_PREFIX "/", GW_AUTH_NONE,
                                               console_handle, NULL, NULL, NULL };

/* Vite's output: what a browser needs a type for (nosniff is on). */
static const char *content_type(const char *path)
{
    static const struct { const char *ext, *type; } types[] = {
        { ".html", "text/html; charset=utf-8" },
        { ".js", "text/javascript; charset=utf-8" },
        { ".css", "text/css; charset=utf-8" },
        { ".json", "application/json" },
        { ".map", "application/json" },
        { ".svg", "image/svg+xml" },
        { ".png", "image/png" },
        { ".ico", "image/x-icon" },
        { ".woff2", "font/woff2" },
        { ".txt", "text/plain; charset=utf-8" },
    };
    const char *dot = strrchr(path, '.');
    for (size_t i = 0; dot && i < sizeof(types) / sizeof(*types); i++)
        if (strcmp(dot, types[i].ext) == 0)
            return types[i].type;
    return "application/octet-stream";
}

/* libmicrohttpd hands over the path percent-decoded, so "%2e%2e" is
 * "..", caught here like the plain one; a backslash is refused too, as no
 * file of Vite's has one. */
static bool path_climbs(const char *path)
{
    for (const char *seg = path; *seg; seg += strcspn(seg, "/"), seg += *seg == '/') {
        size_t n = strcspn(seg, "/");
        if ((n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.'))
            return true;
    }
    return strchr(path, '\\') != NULL;
}

bool console_request_begin(struct gw_request *r, const char *method, const char *url)
{
    size_t n = strlen(CONSOLE_PREFIX);
    if (strncmp(url, CONSOLE_PREFIX, n) != 0 || (url[n] != '\0' && url[n] != '/'))
        return false;
    r->route = &console_route;
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        gw_request_fail(r, 405, "invalid_argument", "method %s is not allowed on %s", method, url);
    else if (path_climbs(url + n))
        gw_request_fail(r, 400, "invalid_argument", "a console path may not name \".\", \"..\" or "
                                                     "hold a backslash");
    else if (snprintf(r->console_file, sizeof(r->console_file), "%s", url + n) >=
             (int)sizeof(r->console_file))
        gw_request_fail(r, 404, "not_found", "no console file %s", url);
    return true;
}

static enum MHD_Result redirect_to_slash(struct gw_request *r)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
    if (resp)
        MHD_add_response_header(resp, "Location", CONSOLE_PREFIX "/");
    return reply_queue(r, 301, resp);
}

/* Opens dir/rel when it is a regular file; -1 otherwise. */
static int open_file(const char *dir, const char *rel, struct stat *st)
{
    char path[4352];
    if (snprintf(path, sizeof(path), "%s/%s", dir, rel) >= (int)sizeof(path))
        return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0 && (fstat(fd, st) < 0 || !S_ISREG(st->st_mode))) {
        close(fd);
        fd = -1;
    }
    return fd;
}

static enum MHD_Result console_handle(struct gw_request *r)
{
    const char *dir = r->gw->cfg.console_dir, *rel = r->console_file;
    if (*rel == '\0')
        return redirect_to_slash(r);
    rel++; /* past the '/' */
    struct stat st;
    int fd = dir ? open_file(dir, "index.html", &st) : -1;
    if (fd < 0)
        return reply_error(r, 404, "not_found",
                           "the web console is not served here: build it (make build) and point "
                           "--console-dir (AIRLOCK_CONSOLE_DIR) at its files (docs/console.md)");
    /* The console's own pages (client-side routes, no dot in their last
     * segment) are index.html; a missing asset stays a 404, not a page. */
    if (*rel) {
        const char *last = strrchr(rel, '/');
        struct stat file_st;
        int file = open_file(dir, rel, &file_st);
        if (file >= 0) {
            close(fd);
            fd = file;
            st = file_st;
        } else if (strchr(last ? last : rel, '.')) {
            close(fd);
            return reply_error(r, 404, "not_found", "no console file /console/%s", rel);
        } else {
            rel = "";
        }
    }
    const char *name = *rel ? rel : "index.html";
    struct MHD_Response *resp = MHD_create_response_from_fd((uint64_t)st.st_size, fd);
    if (!resp) {
        close(fd);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", content_type(name));
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    /* The page holds an API key: no script but its own files, no calls
     * but its own API, and no framing by another site. Inline styles are
     * let through because xterm.js writes its theme as <style> elements;
     * a style runs no code. */
    MHD_add_response_header(resp, "Content-Security-Policy",
                            "default-src 'self'; style-src 'self' 'unsafe-inline'; "
                            "frame-ancestors 'none'; base-uri 'none'");
    /* Vite names assets by content hash: they never change; index.html,
     * which names them, is asked again each time. */
    MHD_add_response_header(resp, "Cache-Control", strncmp(name, "assets/", 7) == 0
                                                       ? "public, max-age=31536000, immutable"
                                                       : "no-cache");
    return reply_queue(r, 200, resp);
}
