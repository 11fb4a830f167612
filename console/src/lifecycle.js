// A sandbox's lifecycle calls (docs/api.md), declared once for the table's
// rows and the sandbox page: which each state allows, what a button says,
// and what it says while its call is under way (a suspend writes the
// memory out, a fork copies the disk).

const STATE_VERBS = {
  running: ['pause', 'suspend'],
  paused: ['resume', 'suspend'],
  suspended: ['resume'],
};

// The lifecycle calls state allows; checkpoint and fork (the table offers
// them) need a running sandbox.
export function verbsFor(state, { snapshots = false } = {}) {
  const verbs = STATE_VERBS[state] || [];
  return snapshots && state === 'running' ? [...verbs, 'checkpoint', 'fork'] : verbs;
}

export const PROGRESS = {
  pause: 'Pausing…',
  resume: 'Resuming…',
  suspend: 'Suspending…',
  checkpoint: 'Checkpointing…',
  fork: 'Forking…',
  delete: 'Deleting…',
};

export const title = (verb) => verb[0].toUpperCase() + verb.slice(1);
