/* The vmhost every test of an integration test program shares, as cmocka
 * group fixtures: most programs start one vmhost for all their tests and
 * stop it after the last (the stop fails the group when vmhost leaves
 * anything behind; see itest.h). */
#ifndef AIRLOCK_ITEST_GROUP_H
#define AIRLOCK_ITEST_GROUP_H

#include "itest.h"

/* The group's vmhost. A program whose vmhost needs arguments starts it in
 * its own group setup (itest_vmhost_start(&itest_vh, args)) and still
 * stops it with itest_group_teardown. */
extern struct itest_vmhost itest_vh;

/* Starts itest_vh without extra arguments; stops it. */
int itest_group_setup(void **state);
int itest_group_teardown(void **state);

/* The same for programs whose tests all run in one sandbox of default
 * settings: itest_sandbox_id, created after the start (a failure prints
 * why and vmhost's log tail) and deleted before the stop. */
extern char *itest_sandbox_id;
int itest_group_setup_with_sandbox(void **state);
int itest_group_teardown_with_sandbox(void **state);

#endif
