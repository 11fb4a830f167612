import { useState } from 'preact/hooks';
import { call } from '../api.js';
import { useLoad } from '../load.js';
import { ErrorLine } from '../ErrorLine.jsx';
import { when } from '../time.js';
import { useReloadOnChange } from './reload.js';
import { Listing } from '../Listing.jsx';

// The TCP ports something in the running sandbox listens on (GET
// …/ports), and for each a link through the gateway: POST
// …/ports/{port}/url signs one (docs/ports.md), as a private sandbox's
// port needs; opened in a new tab. A sandbox not running answers 409.
export function Ports({ sandbox, onKeyRefused }) {
  const base = `/v1/sandboxes/${encodeURIComponent(sandbox.id)}/ports`;
  const { data, error, setError, reload, fail } = useLoad(base, onKeyRefused);
  const [links, setLinks] = useState({});
  const [signing, setSigning] = useState(null);
  useReloadOnChange(sandbox.state, reload);

  async function sign(port) {
    setError(null);
    setSigning(port);
    try {
      const link = await call('POST', `${base}/${port}/url`, {});
      setLinks((all) => ({ ...all, [port]: link }));
    } catch (e) {
      fail(e);
    }
    setSigning(null);
  }

  return (
    <>
      <button type="button" onClick={reload}>Refresh</button>
      <ErrorLine error={error} />
      <Listing items={data && data.ports} error={error} empty="No ports listening."
               columns={['Port', 'Address', 'Link']}
               row={(p) => (
          <tr key={p.port + p.address} data-port={p.port}>
            <td data-label="Port">{p.port}</td>
            <td data-label="Address"><code>{p.address}</code></td>
            <td data-label="Link">
              {!p.reachable ? (
                <span class="hint">the guest's loopback only: the gateway cannot reach it</span>
              ) : links[p.port] ? (
                <>
                  <a href={links[p.port].url} target="_blank" rel="noopener noreferrer">{links[p.port].url}</a>
                  {links[p.port].expires_at && (
                    <span class="hint"> (until {when(links[p.port].expires_at)})</span>
                  )}
                </>
              ) : (
                <button type="button" onClick={() => sign(p.port)} disabled={signing === p.port}
                        aria-label={`Link to port ${p.port}`}>
                  {signing === p.port ? 'Signing…' : 'Get link'}
                </button>
              )}
            </td>
          </tr>
        )} />
    </>
  );
}
