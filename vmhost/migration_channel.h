/* The connection a live migration runs over, between the vmhosts of two
 * nodes (docs/snapshot-store.md "Live migration"). QEMU never touches the
 * network: each side's QEMU reads or writes one end of a socketpair, and
 * vmhost relays its bytes over TCP, with mutual TLS from the internal PKI
 * when the node has it (the peer must be vmhost:<the node the scheduler
 * named>), and a one-time token either way (the first bytes, so a
 * connection from anyone else is dropped before any byte reaches QEMU).
 *
 * The stream is framed: QEMU's bytes, then, while the source's guest is
 * stopped before the switchover, the disk's last changes (a blocks delta,
 * file_delta.h) which the target applies to the disk its QEMU has open
 * before it relays another byte of QEMU's — so the target's guest can only
 * start on the finished disk — then QEMU's remaining bytes and the end. */
#ifndef AIRLOCK_MIGRATION_CHANNEL_H
#define AIRLOCK_MIGRATION_CHANNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "airlock_error.h"

struct tls_credentials;

#define MIGRATION_TOKEN_SIZE 65 /* hex, NUL-terminated */
#define MIGRATION_ADDR_SIZE 128

/* The target's side: listens on host (an ephemeral port) for one
 * connection from vmhost:peer_node with token, for at most accept_ms;
 * relays QEMU's bytes into qemu_fd and applies the disk's last changes
 * (spooled in spool_dir) to disk_fd (both fds stay the caller's). addr
 * gets "host:port". tls NULL: plain TCP, the token alone. */
struct migration_incoming;
int migration_incoming_start(const char *host, struct tls_credentials *tls, const char *peer_node,
                             int qemu_fd, int disk_fd, const char *spool_dir, int accept_ms,
                             struct migration_incoming **out, char addr[MIGRATION_ADDR_SIZE],
                             char token[MIGRATION_TOKEN_SIZE], struct airlock_error *e);
/* Waits for the relay's end: 0 when the whole stream arrived, the disk's
 * changes applied and QEMU got every byte; -1 with why. Frees in. */
int migration_incoming_finish(struct migration_incoming *in, struct airlock_error *e);
/* Stops the relay at once (closing its sockets) and frees in. */
void migration_incoming_cancel(struct migration_incoming *in);

/* The source's side: connects to addr, checks it is vmhost:peer_node and
 * sends token, then relays what QEMU writes into qemu_fd. */
struct migration_outgoing;
int migration_outgoing_start(const char *addr, struct tls_credentials *tls, const char *peer_node,
                             const char *token, int qemu_fd, struct migration_outgoing **out,
                             struct airlock_error *e);
/* Sends delta_fd (a blocks delta, read from its start to its end; sha256
 * its checksum) after every byte QEMU wrote so far; returns once it is
 * sent. */
int migration_outgoing_send_disk(struct migration_outgoing *o, int delta_fd, const char *sha256,
                                 struct airlock_error *e);
/* Waits until QEMU closed its end and everything was sent (cancel: stops
 * at once), then frees o. 0, or -1 with why. */
int migration_outgoing_finish(struct migration_outgoing *o, bool cancel, struct airlock_error *e);

#endif
