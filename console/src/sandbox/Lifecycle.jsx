import { PROGRESS, title, verbsFor } from '../lifecycle.js';

// The sandbox's lifecycle buttons; all disabled while one call (busy, a
// verb) is under way, whose progress is shown.
export function Lifecycle({ state, busy, onAct, onDelete }) {
  return (
    <div class="actions lifecycle">
      {verbsFor(state).map((verb) => (
        <button type="button" key={verb} disabled={!!busy} onClick={() => onAct(verb)}>
          {title(verb)}
        </button>
      ))}
      <button type="button" disabled={!!busy} onClick={onDelete}>Delete</button>
      <span role="status" class="progress">{busy ? PROGRESS[busy] : ''}</span>
    </div>
  );
}
