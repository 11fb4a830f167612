/* What REST's files/watch and gRPC's WatchDir share: the sandbox's vmhost
 * WatchDir stream, opened with its request sent. Its first message (an
 * empty batch) says the watch is in place; later empty ones are
 * keepalives. */
#ifndef AIRLOCK_GATEWAY_WATCH_ACCESS_H
#define AIRLOCK_GATEWAY_WATCH_ACCESS_H

#include <stdbool.h>

#include "rpc_client.h"

/* NULL only when out of memory. */
struct rpc_stream *gw_watch_open(struct rpc_channel *ch, const char *sandbox_id, const char *path,
                                 bool recursive);

#endif
