/* At start: the sandboxes an earlier vmhost left, found by their records
 * (sandbox_record.h), taken back into the registry (docs/vm-driver.md
 * "Durability"). By what the record says and what is found:
 *
 * - running or paused, and its QEMU (same pid and start time) alive: the
 *   VM is adopted — QMP reconnected, a migration the crash left in flight
 *   cancelled, the guest channel reopened with a new session (background
 *   processes in the guest keep running; execs in flight were cut), the
 *   VM continued or paused as recorded; a stale suspend snapshot goes;
 * - running or paused, QEMU gone: suspended if a complete suspend
 *   snapshot is there (a crash between its rename and the record), else
 *   error, naming what happened (disk and checkpoints remain: restore a
 *   checkpoint or delete it);
 * - suspended: stays suspended (a QEMU still there, stopped after the
 *   snapshot, is killed); error if the snapshot is missing;
 * - error: stays error.
 * Any other QEMU naming the directory (a create, resume or restore cut
 * short) is killed, and temporary files (suspend.tmp, checkpoints/.tmp-*,
 * .del-*, half-written records) are removed. A namespace that still exists
 * is attached to egress again with the saved policy. A record that cannot
 * be read, or that does not fit (--max-sandboxes), leaves its directory
 * alone, with an error in the log. */
#ifndef AIRLOCK_SANDBOX_ADOPT_H
#define AIRLOCK_SANDBOX_ADOPT_H

#include "vmhost.h"

void sandbox_adopt_all(struct vmhost *vh);

#endif
