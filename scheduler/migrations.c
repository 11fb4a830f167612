/* The scheduler's versioned schema (common/db/db_migrate.c applies it). A
 * version is never edited after it ships — changes are new entries. */
#include "scheduler_schema.h"

/* Any constant the other users of this database do not use. */
#define MIGRATION_LOCK_KEY "7362104"

static const char *const migrations[] = {
    /* 1: the control plane's tables. */
    "CREATE TABLE projects ("
    "  id text PRIMARY KEY,"
    "  name text NOT NULL,"
    "  created_at timestamptz NOT NULL DEFAULT now());"
    "CREATE TABLE api_keys ("
    "  id text PRIMARY KEY,"
    "  project_id text NOT NULL REFERENCES projects(id),"
    "  name text NOT NULL DEFAULT '',"
    "  sha256 text NOT NULL UNIQUE," /* hex SHA-256 of the secret; the secret is never stored */
    "  admin boolean NOT NULL DEFAULT false,"
    "  created_at timestamptz NOT NULL DEFAULT now(),"
    "  revoked_at timestamptz);"
    "CREATE TABLE nodes ("
    "  id text PRIMARY KEY,"
    "  vmhost_addr text NOT NULL,"
    "  capacity integer NOT NULL,"
    "  sandboxes integer NOT NULL,"
    "  free_memory_mb bigint NOT NULL,"
    "  accel text NOT NULL,"
    "  last_seen timestamptz NOT NULL);"
    "CREATE TABLE templates ("
    "  id text PRIMARY KEY,"
    "  project_id text REFERENCES projects(id)," /* NULL = shared by all projects */
    "  created_at timestamptz NOT NULL DEFAULT now());"
    "INSERT INTO templates (id) VALUES ('default');"
    "CREATE TABLE sandboxes ("
    "  id text PRIMARY KEY,"
    "  project_id text NOT NULL REFERENCES projects(id),"
    "  state text NOT NULL,"
    "  template text NOT NULL REFERENCES templates(id),"
    "  cpus integer NOT NULL,"
    "  memory_mb integer NOT NULL,"
    "  node_id text REFERENCES nodes(id),"
    "  env jsonb NOT NULL DEFAULT '{}',"
    "  metadata jsonb NOT NULL DEFAULT '{}',"
    "  idle_timeout_s integer NOT NULL,"
    "  idempotency_key text,"
    "  error text NOT NULL DEFAULT '',"
    "  created_at timestamptz NOT NULL DEFAULT now(),"
    "  updated_at timestamptz NOT NULL DEFAULT now(),"
    "  UNIQUE (project_id, idempotency_key));"
    "CREATE INDEX sandboxes_live_by_project ON sandboxes (project_id) WHERE state <> 'deleted';"
    "CREATE TABLE sandbox_transitions ("
    "  id bigserial PRIMARY KEY,"
    "  sandbox_id text NOT NULL REFERENCES sandboxes(id),"
    "  at timestamptz NOT NULL DEFAULT now(),"
    "  who text NOT NULL,"
    "  from_state text," /* NULL for the first row (creation) */
    "  to_state text NOT NULL,"
    "  why text NOT NULL DEFAULT '',"
    "  request_id text NOT NULL DEFAULT '');"
    "CREATE INDEX sandbox_transitions_by_sandbox ON sandbox_transitions (sandbox_id, id);"
    "CREATE TABLE checkpoints ("
    "  sandbox_id text NOT NULL REFERENCES sandboxes(id),"
    "  name text NOT NULL,"
    "  kind text NOT NULL,"
    "  created_at timestamptz NOT NULL DEFAULT now(),"
    "  PRIMARY KEY (sandbox_id, name));",
    /* 2: the egress policy as given (docs/api.md "network"); NULL = none,
     * i.e. deny everything. Kept so forks and restores can reuse it. */
    "ALTER TABLE sandboxes ADD COLUMN network jsonb;",
    /* 3: what the controllers need (scheduler/controller*.c). ttl_s 0 =
     * never; last_activity_at is what the node last reported (NULL: none
     * yet); a NULL warm_pool_target leaves each node its own --warm-pool;
     * a node's started_unix_ms changes when it restarts, which (like a
     * heartbeat gap) sets reconcile until the leader has compared it. */
    "ALTER TABLE sandboxes ADD COLUMN ttl_s integer NOT NULL DEFAULT 0;"
    "ALTER TABLE sandboxes ADD COLUMN last_activity_at timestamptz;"
    "ALTER TABLE templates ADD COLUMN warm_pool_target integer;"
    "ALTER TABLE nodes ADD COLUMN started_unix_ms bigint NOT NULL DEFAULT 0;"
    "ALTER TABLE nodes ADD COLUMN warm_pools jsonb NOT NULL DEFAULT '[]';"
    "ALTER TABLE nodes ADD COLUMN reconcile boolean NOT NULL DEFAULT true;",
    /* 4: named, versioned templates of a project (docs/templates.md), one
     * row per version with id "<project>.<name>:<version>" (the node's name
     * for it); state building (the number is taken), ready or deleted.
     * nodes.templates: the versions each node reported ready (locality). */
    "ALTER TABLE templates ADD COLUMN name text;"
    "ALTER TABLE templates ADD COLUMN version integer;"
    "ALTER TABLE templates ADD COLUMN state text NOT NULL DEFAULT 'ready';"
    "ALTER TABLE templates ADD COLUMN node_id text REFERENCES nodes(id);"
    "ALTER TABLE templates ADD COLUMN cpus integer;"
    "ALTER TABLE templates ADD COLUMN memory_mb integer;"
    "ALTER TABLE templates ADD COLUMN spec jsonb;"
    "ALTER TABLE templates ADD COLUMN build_ms integer NOT NULL DEFAULT 0;"
    "CREATE UNIQUE INDEX templates_versions ON templates (project_id, name, version);"
    "ALTER TABLE nodes ADD COLUMN templates text[] NOT NULL DEFAULT '{}';",
    /* 5: placement counts each node's creates in flight (NODES_PLACEMENT)
     * on every create: without this it reads every row the node ever had,
     * deleted ones included. */
    "CREATE INDEX sandboxes_creating_by_node ON sandboxes (node_id) WHERE state = 'creating';",
    /* 6: per-project quotas (docs/api.md "Quotas"; quota_store.h). Every
     * array is in common/quota's order: sandboxes, vcpus, memory_mb,
     * checkpoints, templates, template_builds.
     * project_quotas: the admin's values; NULL = the scheduler's default
     * (its flags, a parameter of each statement), -1 = unlimited.
     * quota_usage: what the project holds now. A sandbox counts while it
     * may hold a node's memory and CPUs (not suspended, deleting or
     * deleted); checkpoints of sandboxes not deleted; template versions
     * ready or building, and builds, except one building longer than any
     * build runs (stale_build_s: its scheduler died).
     * quota_usage_locked: the same, counted after taking the project's
     * row lock. Every statement that admits something calls it, so two
     * admissions of one project run one after the other, and a function's
     * every query gets a new snapshot (READ COMMITTED), so the second
     * counts what the first committed: no two creates both pass. NO KEY
     * UPDATE leaves inserts that reference the project (their key share
     * lock) alone.
     * quota_exceeded: the first quota (1-based) that taking `request` on
     * top of `used` would put past its limit, 0 when all fit. A quota
     * already past its limit (lowered since) refuses only more of it.
     * PL/pgSQL, not SQL functions: it keeps their plans per connection
     * (an SQL function's are made again at every call: 1.1 ms a gate
     * instead of 0.12 here). */
    "CREATE TABLE project_quotas ("
    "  project_id text PRIMARY KEY REFERENCES projects(id),"
    "  sandboxes bigint, vcpus bigint, memory_mb bigint, checkpoints bigint, templates bigint,"
    "  template_builds bigint,"
    "  updated_at timestamptz NOT NULL DEFAULT now());"
    "CREATE FUNCTION quota_usage(p text, stale_build_s integer) RETURNS bigint[]"
    " LANGUAGE plpgsql STABLE AS $$"
    " DECLARE s bigint[]; c bigint; t bigint[];"
    " BEGIN"
    "  SELECT ARRAY[count(*), coalesce(sum(cpus), 0), coalesce(sum(memory_mb), 0)] INTO s"
    "    FROM sandboxes WHERE project_id = p"
    "    AND state IN ('creating', 'running', 'paused', 'suspending', 'resuming', 'error');"
    "  SELECT count(*) INTO c FROM checkpoints k JOIN sandboxes b ON b.id = k.sandbox_id"
    "    WHERE b.project_id = p AND b.state <> 'deleted';"
    "  SELECT ARRAY[count(*), count(*) FILTER (WHERE state = 'building')] INTO t"
    "    FROM templates WHERE project_id = p AND (state = 'ready' OR (state = 'building'"
    "    AND created_at > now() - make_interval(secs => stale_build_s)));"
    "  RETURN s || c || t;"
    " END $$;"
    "CREATE FUNCTION quota_usage_locked(p text, stale_build_s integer) RETURNS bigint[]"
    " LANGUAGE plpgsql AS $$"
    " DECLARE used bigint[];"
    " BEGIN"
    "  PERFORM 1 FROM projects WHERE id = p FOR NO KEY UPDATE;"
    "  SELECT quota_usage(p, stale_build_s) INTO used;"
    "  RETURN used;"
    " END $$;"
    "CREATE FUNCTION quota_limits(p text, defaults bigint[]) RETURNS bigint[]"
    " LANGUAGE plpgsql STABLE AS $$"
    " DECLARE l bigint[];"
    " BEGIN"
    "  SELECT ARRAY[coalesce(q.sandboxes, defaults[1]), coalesce(q.vcpus, defaults[2]),"
    "    coalesce(q.memory_mb, defaults[3]), coalesce(q.checkpoints, defaults[4]),"
    "    coalesce(q.templates, defaults[5]), coalesce(q.template_builds, defaults[6])] INTO l"
    "    FROM (SELECT 1) one LEFT JOIN project_quotas q ON q.project_id = p;"
    "  RETURN l;"
    " END $$;"
    "CREATE FUNCTION quota_exceeded(used bigint[], limits bigint[], request bigint[])"
    " RETURNS integer LANGUAGE plpgsql IMMUTABLE AS $$"
    " BEGIN"
    "  FOR i IN 1 .. cardinality(request) LOOP"
    "    IF request[i] > 0 AND limits[i] >= 0 AND used[i] + request[i] > limits[i] THEN"
    "      RETURN i;"
    "    END IF;"
    "  END LOOP;"
    "  RETURN 0;"
    " END $$;",
    /* 7: each node's budget from its heartbeat (vmhost/node_budget.h):
     * placement by vCPUs and memory, not by a count (NODES_PLACEMENT). A
     * node that has not sent one since has no room (0). */
    "ALTER TABLE nodes ADD COLUMN vcpus_limit integer NOT NULL DEFAULT 0,"
    "  ADD COLUMN vcpus_committed integer NOT NULL DEFAULT 0,"
    "  ADD COLUMN memory_limit_mb bigint NOT NULL DEFAULT 0,"
    "  ADD COLUMN memory_committed_mb bigint NOT NULL DEFAULT 0;",
    /* 8: a node's drain state (node_state.h): active, draining or drained;
     * when and by whom it was last drained or undrained.
     * node_drain_set: moves node p from from_state to to_state (NULL
     * actor: keeps drain_changed_*) and answers 'set', or 'changed' when p
     * is not in from_state (a concurrent change, or no such node). With
     * dead_after (seconds) it first refuses with 'last' when p is live and
     * no other live node is active: draining it would leave no node to
     * take work. It locks every active row before counting, and its count
     * is a new statement (a new snapshot): two drains run one after the
     * other, and the second sees the first's, so they never drain the last
     * two nodes together.
     * sandboxes_live_by_node: each node's sandboxes by state (the API's
     * nodes, and drain_step on every controller pass), deleted ones left
     * out. */
    "ALTER TABLE nodes ADD COLUMN drain text NOT NULL DEFAULT 'active',"
    "  ADD COLUMN drain_changed_at timestamptz,"
    "  ADD COLUMN drain_changed_by text NOT NULL DEFAULT '';"
    "CREATE INDEX sandboxes_live_by_node ON sandboxes (node_id, state) WHERE state <> 'deleted';"
    "CREATE FUNCTION node_drain_set(p text, from_state text, to_state text, actor text,"
    "  dead_after integer) RETURNS text LANGUAGE plpgsql AS $$"
    " BEGIN"
    "  IF dead_after IS NOT NULL THEN"
    "    PERFORM 1 FROM nodes WHERE drain = 'active' ORDER BY id FOR UPDATE;"
    "    IF EXISTS (SELECT 1 FROM nodes WHERE id = p"
    "        AND last_seen > now() - make_interval(secs => dead_after))"
    "      AND NOT EXISTS (SELECT 1 FROM nodes WHERE id <> p AND drain = 'active'"
    "        AND last_seen > now() - make_interval(secs => dead_after)) THEN"
    "      RETURN 'last';"
    "    END IF;"
    "  END IF;"
    "  UPDATE nodes SET drain = to_state,"
    "    drain_changed_at = CASE WHEN actor IS NULL THEN drain_changed_at ELSE now() END,"
    "    drain_changed_by = coalesce(actor, drain_changed_by)"
    "    WHERE id = p AND drain = from_state;"
    "  IF NOT FOUND THEN"
    "    RETURN 'changed';"
    "  END IF;"
    "  RETURN 'set';"
    " END $$;",
    /* 9: a suspended sandbox's snapshot in the shared snapshot store
     * (vmhost --snapshot-store): any live node resumes it from there. */
    "ALTER TABLE sandboxes ADD COLUMN store_object text NOT NULL DEFAULT '';",
    /* 10: a lost node (issue 16 item 4). A checkpoint's set in the shared
     * snapshot store ('' = only on its node): a lost sandbox is restored
     * from it on another node. checkpoint_every_s: the period of the
     * sandbox's automatic checkpoints (controller_checkpoint.c; 0 = none). */
    "ALTER TABLE checkpoints ADD COLUMN store_object text NOT NULL DEFAULT '';"
    "ALTER TABLE sandboxes ADD COLUMN checkpoint_every_s integer NOT NULL DEFAULT 0;",
    /* 11: a sandbox migrating live to another node (a drain) holds its VM:
     * it counts against its project's quotas as a running one does. */
    "CREATE OR REPLACE FUNCTION quota_usage(p text, stale_build_s integer) RETURNS bigint[]"
    " LANGUAGE plpgsql STABLE AS $$"
    " DECLARE s bigint[]; c bigint; t bigint[];"
    " BEGIN"
    "  SELECT ARRAY[count(*), coalesce(sum(cpus), 0), coalesce(sum(memory_mb), 0)] INTO s"
    "    FROM sandboxes WHERE project_id = p"
    "    AND state IN ('creating', 'running', 'paused', 'suspending', 'resuming', 'error',"
    "                  'migrating');"
    "  SELECT count(*) INTO c FROM checkpoints k JOIN sandboxes b ON b.id = k.sandbox_id"
    "    WHERE b.project_id = p AND b.state <> 'deleted';"
    "  SELECT ARRAY[count(*), count(*) FILTER (WHERE state = 'building')] INTO t"
    "    FROM templates WHERE project_id = p AND (state = 'ready' OR (state = 'building'"
    "    AND created_at > now() - make_interval(secs => stale_build_s)));"
    "  RETURN s || c || t;"
    " END $$;",
    /* 12: a named template version's set in the shared snapshot store
     * ('' = not published): any live node with room can create its
     * sandboxes, fetching it first (docs/templates.md "Across nodes"). */
    "ALTER TABLE templates ADD COLUMN store_object text NOT NULL DEFAULT '';",
    /* 13: sandbox ports (docs/ports.md): public, or reached with the
     * sandbox's traffic token, 244 random bits (two v4 UUIDs) drawn per
     * row, so every existing sandbox gets its own and every new one
     * (forks too) a fresh one. */
    "ALTER TABLE sandboxes ADD COLUMN public_ports boolean NOT NULL DEFAULT false;"
    "ALTER TABLE sandboxes ADD COLUMN traffic_token text NOT NULL"
    "  DEFAULT ('tt_' || replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''));",
    /* 14: a deadline of the sandbox's own,
     * settable after its create (E2B's timeout, docs/e2b.md): past it,
     * while running or paused, the deadline controller deletes or
     * suspends it (on_timeout). NULL = none. */
    "ALTER TABLE sandboxes ADD COLUMN expires_at timestamptz,"
    "  ADD COLUMN on_timeout text NOT NULL DEFAULT 'delete'"
    "  CHECK (on_timeout IN ('delete', 'suspend'));"
    "CREATE INDEX sandboxes_expiring ON sandboxes (expires_at) WHERE expires_at IS NOT NULL;",
    /* 15: persistent volumes (docs/volumes.md "API"; volume_store.h).
     * volumes: a project's, by name; node_id NULL until its first use
     * (the node a sandbox first attaching it is placed on: its image is
     * made there). volume_snapshots: a volume's, by name, with the size
     * and node it had (node NULL: taken before the first use, so empty;
     * a clone of it is a volume never used either). sandbox_volumes: the
     * attachments of live sandboxes, by VM slot; a row is a claim, gone
     * when its sandbox is deleted (the trigger: every path to deleted
     * releases, whoever takes it). One holder of a volume itself (read-
     * write or read-only: a VM writes its disk's journal even so) is
     * sandbox_volumes_one_holder, a constraint, so two creates racing for
     * one volume cannot both commit; its snapshots any number of times.
     * The foreign keys keep a volume or snapshot that is attached from
     * being deleted. sandboxes.volumes: the attachments as the create
     * gave them (names, paths, ids; VolumeMount's JSON with the ids),
     * kept with the row like its network, shown and sent to the node.
     * The quotas gain volumes (count) and volume_mb (their sizes), the
     * arrays' 7th and 8th values. */
    "CREATE TABLE volumes ("
    "  id uuid PRIMARY KEY,"
    "  project_id text NOT NULL REFERENCES projects(id),"
    "  name text NOT NULL,"
    "  size_mb bigint NOT NULL CHECK (size_mb BETWEEN 1 AND 1048576),"
    "  node_id text REFERENCES nodes(id),"
    "  from_snapshot text NOT NULL DEFAULT '',"
    "  created_at timestamptz NOT NULL DEFAULT now(),"
    "  UNIQUE (project_id, name));"
    "CREATE TABLE volume_snapshots ("
    "  id uuid PRIMARY KEY,"
    "  volume_id uuid NOT NULL REFERENCES volumes(id) ON DELETE CASCADE,"
    "  name text NOT NULL,"
    "  size_mb bigint NOT NULL,"
    "  node_id text REFERENCES nodes(id),"
    "  created_at timestamptz NOT NULL DEFAULT now(),"
    "  UNIQUE (volume_id, name));"
    "CREATE TABLE sandbox_volumes ("
    "  sandbox_id text NOT NULL REFERENCES sandboxes(id),"
    "  slot integer NOT NULL CHECK (slot BETWEEN 0 AND 3),"
    "  volume_id uuid NOT NULL REFERENCES volumes(id),"
    "  snapshot_id uuid REFERENCES volume_snapshots(id),"
    "  path text NOT NULL,"
    "  read_only boolean NOT NULL,"
    "  PRIMARY KEY (sandbox_id, slot),"
    "  CHECK (snapshot_id IS NULL OR read_only));"
    "CREATE UNIQUE INDEX sandbox_volumes_one_holder ON sandbox_volumes (volume_id)"
    "  WHERE snapshot_id IS NULL;"
    "CREATE INDEX sandbox_volumes_by_volume ON sandbox_volumes (volume_id);"
    "ALTER TABLE sandboxes ADD COLUMN volumes jsonb NOT NULL DEFAULT '[]';"
    "CREATE FUNCTION sandbox_volumes_release() RETURNS trigger LANGUAGE plpgsql AS $$"
    " BEGIN"
    "  DELETE FROM sandbox_volumes WHERE sandbox_id = NEW.id;"
    "  RETURN NULL;"
    " END $$;"
    "CREATE TRIGGER sandboxes_release_volumes AFTER UPDATE OF state ON sandboxes"
    "  FOR EACH ROW WHEN (NEW.state = 'deleted' AND OLD.state <> 'deleted')"
    "  EXECUTE FUNCTION sandbox_volumes_release();"
    "ALTER TABLE project_quotas ADD COLUMN volumes bigint, ADD COLUMN volume_mb bigint;"
    "CREATE OR REPLACE FUNCTION quota_usage(p text, stale_build_s integer) RETURNS bigint[]"
    " LANGUAGE plpgsql STABLE AS $$"
    " DECLARE s bigint[]; c bigint; t bigint[]; v bigint[];"
    " BEGIN"
    "  SELECT ARRAY[count(*), coalesce(sum(cpus), 0), coalesce(sum(memory_mb), 0)] INTO s"
    "    FROM sandboxes WHERE project_id = p"
    "    AND state IN ('creating', 'running', 'paused', 'suspending', 'resuming', 'error',"
    "                  'migrating');"
    "  SELECT count(*) INTO c FROM checkpoints k JOIN sandboxes b ON b.id = k.sandbox_id"
    "    WHERE b.project_id = p AND b.state <> 'deleted';"
    "  SELECT ARRAY[count(*), count(*) FILTER (WHERE state = 'building')] INTO t"
    "    FROM templates WHERE project_id = p AND (state = 'ready' OR (state = 'building'"
    "    AND created_at > now() - make_interval(secs => stale_build_s)));"
    "  SELECT ARRAY[count(*), coalesce(sum(size_mb), 0)] INTO v FROM volumes WHERE project_id = p;"
    "  RETURN s || c || t || v;"
    " END $$;"
    "CREATE OR REPLACE FUNCTION quota_limits(p text, defaults bigint[]) RETURNS bigint[]"
    " LANGUAGE plpgsql STABLE AS $$"
    " DECLARE l bigint[];"
    " BEGIN"
    "  SELECT ARRAY[coalesce(q.sandboxes, defaults[1]), coalesce(q.vcpus, defaults[2]),"
    "    coalesce(q.memory_mb, defaults[3]), coalesce(q.checkpoints, defaults[4]),"
    "    coalesce(q.templates, defaults[5]), coalesce(q.template_builds, defaults[6]),"
    "    coalesce(q.volumes, defaults[7]), coalesce(q.volume_mb, defaults[8])] INTO l"
    "    FROM (SELECT 1) one LEFT JOIN project_quotas q ON q.project_id = p;"
    "  RETURN l;"
    " END $$;",
    /* 16: warm pools that follow demand (issue 19 item 1; docs/snapshots.md
     * "Warm pool"). A template's warm_pool_target is the floor,
     * warm_pool_max the ceiling (NULL: each node's own --warm-pool-max).
     * node_warm_pools: each node's pools as its last heartbeat had them
     * (node_pools.c), with what the node's pools hold and may hold and
     * its own ceiling (--warm-pool-max). */
    "ALTER TABLE templates ADD COLUMN warm_pool_max integer;"
    "CREATE TABLE node_warm_pools ("
    "  node_id text PRIMARY KEY,"
    "  pools jsonb NOT NULL DEFAULT '[]',"
    "  memory_bytes bigint NOT NULL DEFAULT 0,"
    "  memory_limit_mb bigint NOT NULL DEFAULT 0,"
    "  warm_pool_max integer NOT NULL DEFAULT 0,"
    "  heard_at timestamptz NOT NULL DEFAULT now());",
};

const struct db_schema scheduler_schema = {
    .version_table = "schema_migrations",
    .lock_key = MIGRATION_LOCK_KEY,
    .migrations = migrations,
    .n_migrations = sizeof(migrations) / sizeof(*migrations),
};
