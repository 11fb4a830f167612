/* vault's tables, as versioned migrations for db_migrate. They live next
 * to the control plane's in the same database, prefixed vault_, with their
 * own version table and advisory lock. A version is never edited after it
 * ships — changes are new entries. */
#include "vault_schema.h"

/* Any constant the other users of this database do not use. */
#define VAULT_MIGRATION_LOCK_KEY "7362105"

static const char *const vault_migrations[] = {
    /* 1: keys, secrets, bindings, audit. */
    "CREATE TABLE vault_projects ("
    "  project_id text PRIMARY KEY,"
    /* master: wrapped by vault's master key; customer: by the project's
     * own key (BYOK), which vault does not keep. */
    "  key_source text NOT NULL CHECK (key_source IN ('master', 'customer')),"
    "  wrapped_key bytea NOT NULL," /* nonce || AES-256-GCM(data key) || tag */
    "  created_at timestamptz NOT NULL DEFAULT now());"
    "CREATE TABLE vault_secrets ("
    "  id text PRIMARY KEY,"
    "  project_id text NOT NULL REFERENCES vault_projects(project_id),"
    "  sandbox_id text NOT NULL DEFAULT ''," /* '' = project scope */
    "  name text NOT NULL,"
    "  nonce bytea NOT NULL,"
    "  ciphertext bytea NOT NULL,"
    "  tag bytea NOT NULL,"
    "  rate_limit_per_minute integer NOT NULL,"
    "  created_at timestamptz NOT NULL DEFAULT now(),"
    "  UNIQUE (project_id, sandbox_id, name));"
    "CREATE TABLE vault_bindings ("
    "  secret_id text NOT NULL REFERENCES vault_secrets(id) ON DELETE CASCADE,"
    "  host_pattern text NOT NULL,"
    "  injection_rule text NOT NULL,"
    "  PRIMARY KEY (secret_id, host_pattern));"
    "CREATE TABLE vault_audit ("
    "  id bigserial PRIMARY KEY,"
    "  at timestamptz NOT NULL DEFAULT now(),"
    "  actor text NOT NULL,"
    "  action text NOT NULL,"
    "  project_id text NOT NULL,"
    "  sandbox_id text NOT NULL DEFAULT '',"
    "  secret_id text NOT NULL DEFAULT '',"
    "  host text NOT NULL DEFAULT '',"
    "  method text NOT NULL DEFAULT '',"
    "  path text NOT NULL DEFAULT '',"
    "  status text NOT NULL);"
    "CREATE INDEX vault_audit_by_project ON vault_audit (project_id, id);"
    /* Append-only for everyone, the table's owner included (REVOKE would
     * not bind the owner vault connects as). */
    "CREATE FUNCTION vault_audit_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$"
    " BEGIN RAISE EXCEPTION 'vault_audit is append-only'; END $$;"
    "CREATE TRIGGER vault_audit_no_update_delete BEFORE UPDATE OR DELETE ON vault_audit"
    "  FOR EACH ROW EXECUTE FUNCTION vault_audit_refuse_change();"
    "CREATE TRIGGER vault_audit_no_truncate BEFORE TRUNCATE ON vault_audit"
    "  FOR EACH STATEMENT EXECUTE FUNCTION vault_audit_refuse_change();",
    /* 2: a bucket size of its own (before: the per-minute rate). */
    "ALTER TABLE vault_secrets ADD COLUMN rate_limit_burst integer NOT NULL DEFAULT 0;"
    "UPDATE vault_secrets SET rate_limit_burst = rate_limit_per_minute;",
    /* 3: orgs above projects. An org has its own data key (master-key
     * wrapped); a secret belongs to exactly one project or one org. */
    "CREATE TABLE vault_orgs ("
    "  org_id text PRIMARY KEY,"
    "  wrapped_key bytea NOT NULL,"
    "  created_at timestamptz NOT NULL DEFAULT now());"
    "CREATE TABLE vault_project_orgs ("
    "  project_id text PRIMARY KEY,"
    "  org_id text NOT NULL REFERENCES vault_orgs(org_id));"
    "ALTER TABLE vault_secrets ALTER COLUMN project_id DROP NOT NULL;"
    "ALTER TABLE vault_secrets ADD COLUMN org_id text REFERENCES vault_orgs(org_id);"
    "ALTER TABLE vault_secrets ADD CONSTRAINT vault_secrets_one_owner"
    "  CHECK ((project_id IS NULL) <> (org_id IS NULL) AND (org_id IS NULL OR sandbox_id = ''));"
    "CREATE UNIQUE INDEX vault_secrets_org_name ON vault_secrets (org_id, name)"
    "  WHERE org_id IS NOT NULL;"
    "ALTER TABLE vault_audit ADD COLUMN org_id text NOT NULL DEFAULT '';"
    "CREATE INDEX vault_audit_by_org ON vault_audit (org_id, id) WHERE org_id <> '';",
    /* 4: secrets go into TLS connections only unless they allow plain HTTP. */
    "ALTER TABLE vault_secrets ADD COLUMN allow_plaintext boolean NOT NULL DEFAULT false;",
    /* 5: the AAD a secret is sealed with (vault/secret_aad.h): 1, the id
     * only, for every row so far; vault re-seals them as 2 (owner, scope,
     * bindings) when it holds their key (vault/reseal.h). */
    "ALTER TABLE vault_secrets ADD COLUMN aad_version smallint NOT NULL DEFAULT 1"
    "  CHECK (aad_version IN (1, 2));",
};

const struct db_schema vault_schema = {
    .version_table = "vault_schema_migrations",
    .lock_key = VAULT_MIGRATION_LOCK_KEY,
    .migrations = vault_migrations,
    .n_migrations = sizeof(vault_migrations) / sizeof(*vault_migrations),
};
