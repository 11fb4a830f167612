import { useLoad } from '../load.js';
import { ErrorLine } from '../ErrorLine.jsx';
import { when } from '../time.js';
import { humanSize } from './format.js';
import { Listing } from '../Listing.jsx';

// The newest this many connections (the API keeps the newest N).
const LIMIT = 1000;

// What egress decided about the sandbox's connections (GET …/network/log),
// newest first; any state. A node without egress answers 409, shown.
export function NetworkLog({ sandbox, onKeyRefused }) {
  const { data, error, reload } = useLoad(
    `/v1/sandboxes/${encodeURIComponent(sandbox.id)}/network/log?limit=${LIMIT}`, onKeyRefused);
  return (
    <>
      <button type="button" onClick={reload}>Refresh</button>
      <ErrorLine error={error} />
      <Listing items={data && [...data.connections].reverse()} error={error}
               empty="No connections yet."
               columns={['Time', 'Protocol', 'Destination', 'Name', 'Decision', 'Reason', 'Sent',
                         'Received']} class="network-log"
               row={(c) => (
          <tr key={c.seq}>
            <td data-label="Time">{when(c.time)}</td>
            <td data-label="Protocol">{c.protocol}</td>
            <td data-label="Destination"><code>{c.dest_ip || '—'}:{c.dest_port}</code></td>
            <td data-label="Name">{c.name || '—'}</td>
            <td data-label="Decision" class={'decision ' + c.decision}>{c.decision}</td>
            <td data-label="Reason">{c.reason}</td>
            <td data-label="Sent">{humanSize(c.bytes_sent)}</td>
            <td data-label="Received">{humanSize(c.bytes_received)}</td>
          </tr>
        )} />
    </>
  );
}
