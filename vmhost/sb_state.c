#include "sb_state.h"

#include <string.h>

static const char *const names[SB_STATE_COUNT] = {
    [SB_NONE] = "none",
    [SB_CREATING] = "creating",
    [SB_RUNNING] = "running",
    [SB_PAUSED] = "paused",
    [SB_SUSPENDING] = "suspending",
    [SB_SUSPENDED] = "suspended",
    [SB_RESUMING] = "resuming",
    [SB_CHECKPOINTING] = "checkpointing",
    [SB_RESTORING] = "restoring",
    [SB_MIGRATING] = "migrating",
    [SB_ERROR] = "error",
    [SB_DELETING] = "deleting",
    [SB_DELETED] = "deleted",
};

#define TO(s) (1u << (s))
/* Where each state may go (besides staying). Every state but deleted may
 * be torn down: deleting. */
static const unsigned moves[SB_STATE_COUNT] = {
    [SB_NONE] = TO(SB_CREATING),
    /* An adopted sandbox settles into what its record and QEMU say. */
    [SB_CREATING] = TO(SB_RUNNING) | TO(SB_PAUSED) | TO(SB_SUSPENDED) | TO(SB_ERROR) |
                    TO(SB_DELETING),
    [SB_RUNNING] = TO(SB_PAUSED) | TO(SB_SUSPENDING) | TO(SB_CHECKPOINTING) | TO(SB_RESTORING) |
                   TO(SB_MIGRATING) | TO(SB_ERROR) | TO(SB_DELETING),
    [SB_PAUSED] = TO(SB_RUNNING) | TO(SB_SUSPENDING) | TO(SB_RESTORING) | TO(SB_ERROR) |
                  TO(SB_DELETING),
    /* Done, or back to where it came from. */
    [SB_SUSPENDING] = TO(SB_SUSPENDED) | TO(SB_RUNNING) | TO(SB_PAUSED) | TO(SB_ERROR) |
                      TO(SB_DELETING),
    /* Back to suspending when the suspended record could not be written. */
    [SB_SUSPENDED] = TO(SB_RESUMING) | TO(SB_SUSPENDING) | TO(SB_DELETING),
    [SB_RESUMING] = TO(SB_RUNNING) | TO(SB_SUSPENDED) | TO(SB_ERROR) | TO(SB_DELETING),
    [SB_CHECKPOINTING] = TO(SB_RUNNING) | TO(SB_ERROR) | TO(SB_DELETING),
    [SB_RESTORING] = TO(SB_RUNNING) | TO(SB_ERROR) | TO(SB_DELETING),
    /* Back to running when it was aborted; deleted once it runs elsewhere. */
    [SB_MIGRATING] = TO(SB_RUNNING) | TO(SB_ERROR) | TO(SB_DELETING),
    /* A restore replaces the VM; a resume whose new QEMU died leaves the
     * snapshot untouched: suspended again. */
    [SB_ERROR] = TO(SB_RESTORING) | TO(SB_SUSPENDED) | TO(SB_DELETING),
    [SB_DELETING] = TO(SB_DELETED),
    [SB_DELETED] = 0,
};

static bool valid(enum sb_state s)
{
    return (unsigned)s < SB_STATE_COUNT;
}

const char *sb_state_name(enum sb_state s)
{
    return valid(s) ? names[s] : "none";
}

enum sb_state sb_state_from_name(const char *name)
{
    for (int s = 0; name && s < SB_STATE_COUNT; s++)
        if (sb_state_stable((enum sb_state)s) && strcmp(name, names[s]) == 0)
            return (enum sb_state)s;
    return SB_NONE;
}

bool sb_state_allows(enum sb_state from, enum sb_state to)
{
    if (!valid(from) || !valid(to))
        return false;
    return from == to || (moves[from] & TO(to)) != 0;
}

bool sb_state_stable(enum sb_state s)
{
    return s == SB_RUNNING || s == SB_PAUSED || s == SB_SUSPENDED || s == SB_ERROR;
}

bool sb_state_busy(enum sb_state s)
{
    return s == SB_CREATING || s == SB_SUSPENDING || s == SB_RESUMING || s == SB_CHECKPOINTING ||
           s == SB_RESTORING;
}
