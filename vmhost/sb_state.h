/* vmhost's sandbox states and the one table of the moves between them
 * (sb_state.c). Pure: unit-tested without QEMU (tests/unit/test_sb_state.c).
 * The API edge maps them to vmhost.proto's SandboxState
 * (service_sandbox.c); records store their names (sandbox_record.c).
 *
 *   (none) -> creating -> running <-> paused
 *   running|paused -> suspending -> suspended -> resuming -> running
 *   running -> checkpointing -> running
 *   running -> migrating -> running (aborted) | deleting (moved away)
 *   running|paused|error -> restoring -> running | error
 *   any live state -> error (QEMU died); any -> deleting -> deleted
 *
 * A failed operation goes back where it came from (suspending -> running
 * or paused, resuming -> suspended, suspended -> suspending when its
 * record could not be written); an adopted sandbox settles from creating
 * into the state its record and its QEMU say. */
#ifndef AIRLOCK_VMHOST_SB_STATE_H
#define AIRLOCK_VMHOST_SB_STATE_H

#include <stdbool.h>

enum sb_state {
    SB_NONE = 0,        /* not created yet; a record without a state */
    SB_CREATING,
    SB_RUNNING,
    SB_PAUSED,
    SB_SUSPENDING,
    SB_SUSPENDED,
    SB_RESUMING,
    SB_CHECKPOINTING,
    SB_RESTORING,
    SB_MIGRATING,       /* live migration to another node (sandbox_migrate.h) */
    SB_ERROR,
    SB_DELETING,
    SB_DELETED,
};
#define SB_STATE_COUNT (SB_DELETED + 1)

/* "running", ...; "none" for SB_NONE and anything out of range. */
const char *sb_state_name(enum sb_state s);
/* A stable state's name back (records hold only those); SB_NONE else. */
enum sb_state sb_state_from_name(const char *name);

/* Whether the table lets a sandbox move from `from` to `to` (staying is
 * always allowed). */
bool sb_state_allows(enum sb_state from, enum sb_state to);

/* A state a sandbox rests in (running, paused, suspended, error): what
 * records hold and a restart settles into. */
bool sb_state_stable(enum sb_state s);

/* A state an operation in flight owns (creating, suspending, resuming,
 * checkpointing, restoring): it uses the VM without holding the
 * sandbox's lock, so nothing else may take the sandbox meanwhile. */
bool sb_state_busy(enum sb_state s);

#endif
