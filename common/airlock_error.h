/* One error across layers: what a failure means to its caller (its class)
 * and the message naming what failed, in one object. vmhost's operations,
 * egress's registry, the scheduler's and vault's stores and the gateway's
 * calls fill one; a layer passes it up as it is or with context in front; an API's
 * edge turns it into its status and message once (common/rpc, rpc_err.h).
 * Lower-level code that only reports a message (char *err, size_t errlen)
 * writes into e->message, and its caller sets the class
 * (airlock_error_classify). */
#ifndef AIRLOCK_ERROR_H
#define AIRLOCK_ERROR_H

#include <stdbool.h>

enum airlock_err {
    AIRLOCK_OK = 0,
    AIRLOCK_ERR_INVALID,     /* a parameter is invalid; the message names it */
    AIRLOCK_ERR_NOT_FOUND,
    AIRLOCK_ERR_EXISTS,
    AIRLOCK_ERR_CAPACITY,    /* the node, or its memory, is full; a rate limit is reached */
    AIRLOCK_ERR_QUOTA,       /* a quota of the project is used up (common/quota) */
    AIRLOCK_ERR_STATE,       /* not allowed in the current state */
    AIRLOCK_ERR_ABORTED,     /* a concurrent change ended it; worth retrying */
    AIRLOCK_ERR_UNAVAILABLE, /* a service it needs cannot be reached */
    AIRLOCK_ERR_INTERNAL,
    /* The rest of gRPC's codes, so that a status another service answered
     * (data: the scheduler relays its node's, the gateway the
     * scheduler's) is classified into an error and answered as it came. */
    AIRLOCK_ERR_TIMEOUT,         /* its deadline passed */
    AIRLOCK_ERR_CANCELLED,
    AIRLOCK_ERR_UNAUTHENTICATED,
    AIRLOCK_ERR_PERMISSION,      /* authenticated, not allowed */
    AIRLOCK_ERR_RANGE,           /* past the end of a valid range */
    AIRLOCK_ERR_UNIMPLEMENTED,
    AIRLOCK_ERR_DATA_LOSS,
    AIRLOCK_ERR_UNKNOWN,
};

/* A quota's refusal travels as RESOURCE_EXHAUSTED, the status of a full
 * node too; its message begins with this, which is how the class is told
 * apart again after a gRPC hop (rpc_err.h, airlock_error_from_status). So
 * no layer puts context in front of such a message. */
#define AIRLOCK_QUOTA_MESSAGE_PREFIX "quota exceeded: "

/* The one size of an error's message, the NUL included: room for a path or
 * two and the lower layers' reasons; longer messages are cut. */
#define AIRLOCK_ERROR_MESSAGE_SIZE 4096

struct airlock_error {
    enum airlock_err class;  /* AIRLOCK_OK: no error */
    char message[AIRLOCK_ERROR_MESSAGE_SIZE]; /* always NUL-terminated */
};

/* e's message as the (char *err, size_t errlen) of a lower-level call. */
#define AIRLOCK_ERROR_MSG(e) (e)->message, sizeof((e)->message)

/* Sets the class and the formatted message. Returns -1, so a function
 * that fails can `return airlock_error_set(e, ...)`. */
int airlock_error_set(struct airlock_error *e, enum airlock_err class, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Puts the formatted context in front of the message ("create sb_x: " +
 * what failed), keeping the class. Returns -1. */
int airlock_error_prefix(struct airlock_error *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Puts the formatted text after the message ("...; try again"), keeping
 * the class; a message too long for both is cut, the text kept. Returns
 * -1. */
int airlock_error_suffix(struct airlock_error *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Sets the class of a message a lower-level function already wrote into
 * e->message (its char *err, size_t errlen). Returns -1. */
int airlock_error_classify(struct airlock_error *e, enum airlock_err class);

/* No error: class AIRLOCK_OK, message "". */
void airlock_error_clear(struct airlock_error *e);

bool airlock_error_is_set(const struct airlock_error *e);

#endif
