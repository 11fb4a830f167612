#include <stdio.h>
#include <string.h>

#include "controller_jobs.h"
#include "log.h"

/* Any constant the other users of this database do not lock: the
 * scheduler's migrations use 7362104 and the vault's (same database under
 * make up) 7362105 — sharing one made a starting vault wait forever on the
 * controller leader. */
#define CONTROLLER_LOCK_KEY "7362106"

/* Session-level advisory locks are re-entrant: taking the lock again while
 * holding it would stack another hold. So look first; CASE evaluates the
 * try only when the session does not hold it. */
static const char leader_sql[] =
    "SELECT CASE WHEN EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory'"
    "   AND pid = pg_backend_pid() AND classid = 0 AND objid = " CONTROLLER_LOCK_KEY
    "   AND objsubid = 1 AND granted)"
    " THEN true ELSE pg_try_advisory_lock(" CONTROLLER_LOCK_KEY ") END";

int controller_leader_open(struct controller_leader *l, const char *url, char *err, size_t errlen)
{
    l->leader = false;
    l->checked = false;
    return db_open(&l->db, url, err, errlen);
}

bool controller_leader_check(struct controller_leader *l)
{
    char err[512];
    PGresult *res = db_query(&l->db, leader_sql, 0, NULL, err, sizeof(err));
    bool answered = res != NULL;
    bool leads = answered && PQgetvalue(res, 0, 0)[0] == 't';
    PQclear(res);
    if (leads && !l->leader)
        log_info("controller leadership acquired", "lock=%s", CONTROLLER_LOCK_KEY);
    else if (!leads && l->leader)
        log_warn("controller leadership lost", "lock=%s error=\"%s\"", CONTROLLER_LOCK_KEY,
                 answered ? "another replica holds the lock" : err);
    else if (!leads && !l->checked)
        log_info("controller standing by", "lock=%s reason=\"%s\"", CONTROLLER_LOCK_KEY,
                 answered ? "another replica holds the lock" : err);
    l->leader = leads;
    l->checked = true;
    return leads;
}

void controller_leader_close(struct controller_leader *l)
{
    /* Ending the session releases the lock: a standby takes over at its
     * next pass instead of waiting for this process to be noticed dead. */
    db_close(&l->db);
    l->leader = false;
}
