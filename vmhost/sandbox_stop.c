#include "sandbox_stop.h"

#include <stdio.h>
#include <stdlib.h>

#include "log.h"
#include "sandbox_internal.h"
#include "sandbox_migrate.h"
#include "sandbox_network.h"
#include "sandbox_record.h"


/* Leaves sb as files only: suspended (or error, or already suspended),
 * no VM, no network. -1 when it could not be suspended: it keeps running
 * (its record says so) and a later vmhost adopts it. */
static int keep_for_restart(struct sandbox *sb)
{
    struct airlock_error e = { 0 };
    pthread_mutex_lock(&sb->lock);
    enum sb_state s = sb->state;
    pthread_mutex_unlock(&sb->lock);
    /* A live migration ends here: the source's guest runs again (and is
     * suspended below); a copy being received stops (without a record,
     * its directory goes at the next start). */
    if (s == SB_MIGRATING && sandbox_migrate_abort(sb, &e) == 0) {
        pthread_mutex_lock(&sb->lock);
        s = sb->state;
        pthread_mutex_unlock(&sb->lock);
    }
    sandbox_migrate_drop(sb);
    if ((s == SB_RUNNING || s == SB_PAUSED) && sandbox_suspend_for_stop(sb, &e) < 0) {
        log_error("cannot suspend the sandbox at stop: it keeps running for the next vmhost "
                  "to adopt",
                  "sandbox=%s error=\"%s\"", sb->id, e.message);
        return -1;
    }
    sandbox_drop_vm(sb); /* an error sandbox may still hold its dead VM */
    sandbox_network_down(sb);
    return 0;
}

void sandbox_stop_all(struct vmhost *vh)
{
    size_t n, left_running = 0;
    struct sandbox **all = sandbox_list(vh, &n);
    for (size_t i = 0; i < n; i++) {
        struct airlock_error ignored = { 0 };
        if (vh->cfg.delete_on_stop)
            sandbox_delete(vh, all[i]->id, NULL, false, NULL, 0, &ignored);
        else if (keep_for_restart(all[i]) == 0)
            sandbox_unregister(all[i]);
        else
            left_running++;
        sandbox_put(all[i]);
    }
    free(all);
    if (!vh->cfg.delete_on_stop)
        log_info("sandboxes kept for the next start", "count=%zu left_running=%zu", n,
                 left_running);
}
