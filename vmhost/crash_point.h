/* A test hook for the durability tests: with AIRLOCK_CRASH_AT=<name> in
 * its environment, vmhost ends at once (_exit, like a kill -9: no cleanup,
 * VMs keep running) when it reaches the point of that name. Points are
 * listed in docs/vm-driver.md ("Durability"); without the variable each
 * call is one getenv. */
#ifndef AIRLOCK_CRASH_POINT_H
#define AIRLOCK_CRASH_POINT_H

/* The exit status, so a test can tell the hook from a real crash. */
#define CRASH_POINT_EXIT_STATUS 86

void crash_point(const char *name);

#endif
