/* The control plane's tables, as versioned migrations for db_migrate. */
#ifndef AIRLOCK_SCHEDULER_SCHEMA_H
#define AIRLOCK_SCHEDULER_SCHEMA_H

#include "db.h"

extern const struct db_schema scheduler_schema;

#endif
