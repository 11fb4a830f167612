/* The test "internet" behind credential injection: an HTTP and an HTTPS
 * server (upstream_server.py) in one of the test's own namespaces, with a
 * certificate for one host name from a CA made here, which only egress is
 * told to trust (--upstream-ca). Every request the servers get is recorded
 * as a JSON line in the log; a test reads it to see what egress sent.
 *
 * Nothing here reaches past the namespace it runs in: the servers listen
 * on an address of the test's own network. */
#ifndef AIRLOCK_UPSTREAM_H
#define AIRLOCK_UPSTREAM_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

struct upstream {
    char dir[PATH_MAX];          /* its files: upstream-ca.pem, upstream.log, … */
    char ca_path[PATH_MAX + 32]; /* egress's --upstream-ca */
    char log_path[PATH_MAX + 32];
    pid_t pid;
};

/* Makes the CA and host's certificate under dir and starts the servers in
 * namespace ns (its name under /run/netns) on addr:http_port and
 * addr:https_port; returns once both listen. 0, or -1 after printing why
 * (upstream_stop then cleans up what started). */
int upstream_start(struct upstream *u, const char *dir, const char *ns, const char *addr,
                   const char *host, int http_port, int https_port);
/* Stops the servers (by pid). -1 unless they stopped cleanly. */
int upstream_stop(struct upstream *u);

/* Recorded requests whose line holds a and b (b may be NULL). */
size_t upstream_requests(const struct upstream *u, const char *a, const char *b);
/* The recorded line of the last request for path, malloc'd; NULL if none. */
char *upstream_request(const struct upstream *u, const char *path);

#endif
