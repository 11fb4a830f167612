/* The controllers (docs/ARCHITECTURE.md): reconciliation of the database
 * with what nodes report, hard TTLs, idle auto-suspend, draining nodes and
 * warm-pool targets. One thread runs a pass every --controller-interval-ms, but only
 * in the replica that holds the controller lock (controller_leader.c); the
 * others stand by and take over within a pass when the leader's database
 * session ends. Every change of a sandbox goes through the state machine
 * with its audit row and event, like an API call (who = "controller:…"). */
#ifndef AIRLOCK_SCHEDULER_CONTROLLER_H
#define AIRLOCK_SCHEDULER_CONTROLLER_H

#include <stddef.h>

#include "scheduler.h"

struct controller;

/* Opens the controller's own database session and starts its thread. */
struct controller *controller_start(struct scheduler *s, char *err, size_t errlen);
/* Finishes the pass in progress, stops, and ends the session (which
 * releases the lock to another replica at once). */
void controller_stop(struct controller *c);

#endif
