import { useState } from 'preact/hooks';
import '../secrets/warning.css';

// A key just created: the only time the API shows its secret (it keeps
// only a hash). Shown until dismissed, with Copy.
export function NewKey({ created, onDismiss }) {
  const [copied, setCopied] = useState(null);
  async function copy() {
    try {
      await navigator.clipboard.writeText(created.key);
      setCopied('Copied.');
    } catch (e) {
      setCopied('Copying failed (' + e.message + '): select the key and copy it.');
    }
  }
  return (
    <div class="new-key" role="region" aria-label="New key">
      <p class="warning">
        The key <code>{created.id}</code> is shown this once and never again: copy it now.
      </p>
      <p>
        <code class="secret" aria-label="new key secret">{created.key}</code>
      </p>
      <button type="button" onClick={copy}>
        Copy
      </button>{' '}
      <button type="button" onClick={onDismiss}>
        Done
      </button>
      {copied && <span role="status"> {copied}</span>}
    </div>
  );
}
