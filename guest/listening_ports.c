/* ListPortsRequest: the TCP ports something in the guest listens on, read
 * from /proc/net/tcp and /proc/net/tcp6 (state 0A, LISTEN), so the API
 * can show which ports a sandbox serves (docs/ports.md). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "guestd_state.h"
#include "request_handlers.h"
#include "send.h"

#define LISTENING_PORTS_MAX AIRLOCK_LISTENING_PORTS_MAX
#define TCP_STATE_LISTEN 0x0A

struct port_entry {
    uint32_t port;
    char address[INET6_ADDRSTRLEN];
};

/* The kernel prints an address as the hex of its bytes in memory, one
 * 32-bit word at a time (so each word reads back little-endian here). */
static int hex_address(const char *hex, int family, char *out, size_t outlen)
{
    unsigned char bytes[16];
    size_t words = family == AF_INET ? 1 : 4;
    if (strlen(hex) != words * 8)
        return -1;
    for (size_t w = 0; w < words; w++) {
        char word[9];
        memcpy(word, hex + w * 8, 8);
        word[8] = 0;
        uint32_t v = (uint32_t)strtoul(word, NULL, 16);
        memcpy(bytes + w * 4, &v, 4);
    }
    return inet_ntop(family, bytes, out, (socklen_t)outlen) ? 0 : -1;
}

static size_t read_table(const char *path, int family, struct port_entry *ports, size_t n)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return n; /* no IPv6 in this kernel: nothing listens there */
    char line[512];
    if (!fgets(line, sizeof(line), f)) { /* the header */
        fclose(f);
        return n;
    }
    while (n < LISTENING_PORTS_MAX && fgets(line, sizeof(line), f)) {
        char local[64];
        unsigned port, state;
        if (sscanf(line, " %*u: %63[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%*x %x", local, &port,
                   &state) != 3 || state != TCP_STATE_LISTEN)
            continue;
        if (hex_address(local, family, ports[n].address, sizeof(ports[n].address)) < 0)
            continue;
        ports[n++].port = port;
    }
    fclose(f);
    return n;
}

static int by_port(const void *a, const void *b)
{
    const struct port_entry *x = a, *y = b;
    if (x->port != y->port)
        return x->port < y->port ? -1 : 1;
    return strcmp(x->address, y->address);
}

void list_ports_request(struct guestd *g, uint32_t id, const GuestFrame *frame)
{
    (void)frame;
    struct port_entry *ports = calloc(LISTENING_PORTS_MAX, sizeof(*ports));
    Airlock__Guest__V1__ListeningPort *msgs = calloc(LISTENING_PORTS_MAX, sizeof(*msgs));
    Airlock__Guest__V1__ListeningPort **ptrs = calloc(LISTENING_PORTS_MAX, sizeof(*ptrs));
    if (!ports || !msgs || !ptrs) {
        guestd_send_result(g, id, ENOMEM, "list ports: out of memory");
        goto out;
    }
    size_t n = read_table("/proc/net/tcp", AF_INET, ports, 0);
    n = read_table("/proc/net/tcp6", AF_INET6, ports, n);
    qsort(ports, n, sizeof(*ports), by_port);
    for (size_t i = 0; i < n; i++) {
        airlock__guest__v1__listening_port__init(&msgs[i]);
        msgs[i].port = ports[i].port;
        msgs[i].address = ports[i].address;
        ptrs[i] = &msgs[i];
    }
    Airlock__Guest__V1__ListeningPorts list = AIRLOCK__GUEST__V1__LISTENING_PORTS__INIT;
    list.n_ports = n;
    list.ports = ptrs;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.stream_id = id;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_LISTENING_PORTS;
    f.listening_ports = &list;
    guestd_send(g, &f);
out:
    free(ports);
    free(msgs);
    free(ptrs);
}
