/* vault's tables, as versioned migrations for db_migrate. */
#ifndef AIRLOCK_VAULT_SCHEMA_H
#define AIRLOCK_VAULT_SCHEMA_H

#include "db.h"

extern const struct db_schema vault_schema;

#endif
