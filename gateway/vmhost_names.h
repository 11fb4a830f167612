/* The public names of vmhost values, one table for REST and gRPC alike:
 * file types ("file", "dir", …), watch events and the signals a client may send by
 * name. */
#ifndef AIRLOCK_GATEWAY_VMHOST_NAMES_H
#define AIRLOCK_GATEWAY_VMHOST_NAMES_H

#include "vmhost.pb-c.h"

/* "file", "dir", "symlink" or "other". */
const char *gw_file_type_name(Airlock__Guest__V1__FileType t);

/* A directory watch's event: "create", "write", "remove", "rename",
 * "chmod", "overflow" (docs/api.md "Watching a directory"). */
const char *gw_watch_event_name(Airlock__Guest__V1__WatchEventType t);

/* "TERM" or "SIGTERM" → SIGTERM; 0 for a name not in GW_SIGNAL_NAMES. */
int gw_signal_number(const char *name);
#define GW_SIGNAL_NAMES "HUP INT QUIT KILL USR1 USR2 TERM CONT STOP"

#endif
