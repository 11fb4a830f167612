#include "crash_point.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

void crash_point(const char *name)
{
    const char *at = getenv("AIRLOCK_CRASH_AT");
    if (!at || strcmp(at, name) != 0)
        return;
    log_warn("crashing on purpose (AIRLOCK_CRASH_AT)", "point=%s", name);
    _exit(CRASH_POINT_EXIT_STATUS);
}
