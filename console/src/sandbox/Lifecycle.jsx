// The lifecycle calls each state allows (docs/api.md), and what a button
// says while its call is under way (a suspend writes the memory out).
const ACTIONS = {
  running: ['pause', 'suspend'],
  paused: ['resume', 'suspend'],
  suspended: ['resume'],
};
const PROGRESS = {
  pause: 'Pausing…',
  resume: 'Resuming…',
  suspend: 'Suspending…',
  delete: 'Deleting…',
};

const title = (verb) => verb[0].toUpperCase() + verb.slice(1);

// The sandbox's lifecycle buttons; all disabled while one call (busy, a
// verb) is under way, whose progress is shown.
export function Lifecycle({ state, busy, onAct, onDelete }) {
  return (
    <div class="actions lifecycle">
      {(ACTIONS[state] || []).map((verb) => (
        <button type="button" key={verb} disabled={!!busy} onClick={() => onAct(verb)}>
          {title(verb)}
        </button>
      ))}
      <button type="button" disabled={!!busy} onClick={onDelete}>Delete</button>
      <span role="status" class="progress">{busy ? PROGRESS[busy] : ''}</span>
    </div>
  );
}
