import { useState } from 'preact/hooks';
import { Terminal } from '../Terminal.jsx';

// The terminal on demand: opening it starts a shell in the sandbox, so
// never by just opening the page; closing it hangs the shell up.
export function TerminalPanel({ sandbox, onResume, onKeyRefused }) {
  const [open, setOpen] = useState(false);
  return open ? (
    <>
      <button type="button" onClick={() => setOpen(false)}>Close terminal</button>
      <Terminal sandboxId={sandbox.id} state={sandbox.state} onResume={onResume} onKeyRefused={onKeyRefused} />
    </>
  ) : (
    <button type="button" onClick={() => setOpen(true)}>Open terminal</button>
  );
}
