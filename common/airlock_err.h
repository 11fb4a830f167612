/* What a failure means to its caller, in the same classes everywhere it is
 * not yet an API's answer: a sandbox function, an operation of vmhost's
 * table, egress's registry. A layer passes the class up as it is; an API's
 * edge turns it into its status once (airlock_err_status, common/rpc). The
 * message naming what failed travels beside it, in the caller's err
 * buffer. */
#ifndef AIRLOCK_ERR_H
#define AIRLOCK_ERR_H

enum airlock_err {
    AIRLOCK_OK = 0,
    AIRLOCK_ERR_INVALID,     /* a parameter is invalid; the message names it */
    AIRLOCK_ERR_NOT_FOUND,
    AIRLOCK_ERR_EXISTS,
    AIRLOCK_ERR_CAPACITY,
    AIRLOCK_ERR_STATE,       /* not allowed in the current state */
    AIRLOCK_ERR_UNAVAILABLE, /* a service it needs cannot be reached */
    AIRLOCK_ERR_INTERNAL,
};

#endif
