/* The vmhost WatchDir stream of REST and gRPC watches (watch_access.h). */
#include "watch_access.h"

#include <string.h>

#include "sandbox_access.h"
#include "vmhost.pb-c.h"

struct rpc_stream *gw_watch_open(struct rpc_channel *ch, const char *sandbox_id, const char *path,
                                 bool recursive)
{
    /* No deadline: a watch lasts as long as its client. */
    struct rpc_stream *s = rpc_stream_open(ch, VMHOST_METHOD("WatchDir"), 0);
    if (!s)
        return NULL;
    Airlock__Guest__V1__WatchRequest wr = AIRLOCK__GUEST__V1__WATCH_REQUEST__INIT;
    wr.path.data = (uint8_t *)path;
    wr.path.len = strlen(path);
    wr.recursive = recursive;
    Airlock__Vmhost__V1__WatchDirRequest req = AIRLOCK__VMHOST__V1__WATCH_DIR_REQUEST__INIT;
    req.sandbox_id = (char *)sandbox_id;
    req.request = &wr;
    rpc_stream_send(s, &req.base);
    rpc_stream_close_send(s);
    return s;
}
