import { useEffect, useRef, useState } from 'preact/hooks';
import { call } from '../api.js';
import { navigate, pagePath } from '../router.jsx';

// Delete, confirmed inline: DELETE /v1/templates/{name} (every version)
// or {name:N} (that one); done, back to the list. The API refuses (409,
// naming one) while a sandbox made from it is not deleted.
export function DeleteTemplate({ name, fail }) {
  const [confirming, setConfirming] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const yes = useRef(null);
  useEffect(() => yes.current && yes.current.focus(), [confirming]);
  const what = name.includes(':') ? `version ${name}` : `${name} and every version of it`;

  async function remove() {
    setDeleting(true);
    try {
      await call('DELETE', '/v1/templates/' + encodeURIComponent(name));
      navigate(pagePath('templates'));
    } catch (e) {
      fail(e);
      setConfirming(false);
    }
    setDeleting(false);
  }

  if (!confirming)
    return (
      <button type="button" onClick={() => setConfirming(true)}>
        Delete {name}
      </button>
    );
  return (
    <div class="confirm" role="group" aria-label="Confirm delete">
      <span>Delete {what}?</span>
      <button type="button" class="danger" disabled={deleting} onClick={remove} ref={yes}>
        {deleting ? 'Deleting…' : 'Yes, delete'}
      </button>
      <button type="button" disabled={deleting} onClick={() => setConfirming(false)}>
        Cancel
      </button>
    </div>
  );
}
