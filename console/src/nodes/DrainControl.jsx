import { useEffect, useRef, useState } from 'preact/hooks';
import { call } from '../api.js';
import { ErrorLine } from '../ErrorLine.jsx';

// What each call does to a node, said before it is confirmed (docs/api.md
// "Nodes").
const CALLS = {
  drain: {
    label: 'Drain',
    busy: 'Draining…',
    means:
      'It takes no new work: creates go to other nodes, and forks and resumes of its ' +
      'suspended sandboxes are refused. What runs there carries on; with a shared snapshot ' +
      'store its sandboxes move to other nodes. The last live active node cannot be drained.',
  },
  undrain: { label: 'Undrain', busy: 'Undraining…', means: 'It takes new work again.' },
};

// Drain for an active node, Undrain for a draining or drained one, each
// confirmed first: POST /v1/nodes/{id}/drain or …/undrain, whose answer
// (the node as it now is) onAnswer puts in place; a refusal is shown as
// the API says it.
export function DrainControl({ node, onAnswer, onKeyRefused }) {
  const verb = node.state === 'active' ? 'drain' : 'undrain';
  const what = CALLS[verb];
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const confirmButton = useRef(null);
  const askButton = useRef(null);
  const asked = useRef(false);

  // The focus follows the buttons as they replace each other (never on the
  // page's first showing).
  useEffect(() => {
    if (asking) confirmButton.current.focus();
    else if (asked.current) askButton.current.focus();
    asked.current ||= asking;
  }, [asking]);

  function ask() {
    setAsking(true);
    setError(null);
  }

  async function confirm() {
    setBusy(true);
    try {
      onAnswer(await call('POST', `/v1/nodes/${encodeURIComponent(node.id)}/${verb}`));
      setAsking(false);
    } catch (e) {
      if (e.status === 401) onKeyRefused(e);
      setError(e);
    }
    setBusy(false);
  }

  return (
    <div class="drain">
      {asking ? (
        <div class="confirm" role="group" aria-label={`${what.label} ${node.id}?`}>
          <p>
            {what.label} <code>{node.id}</code>? {what.means}
          </p>
          <button type="button" ref={confirmButton} onClick={confirm} disabled={busy}>
            {busy ? what.busy : `${what.label} ${node.id}`}
          </button>
          <button type="button" onClick={() => setAsking(false)} disabled={busy}>
            Cancel
          </button>
        </div>
      ) : (
        <button type="button" ref={askButton} onClick={ask}>
          {what.label}
        </button>
      )}
      <ErrorLine error={error} />
    </div>
  );
}
