import { useLoad } from '../load.js';
import { ErrorLine } from '../ErrorLine.jsx';
import { when } from '../time.js';
import { humanSize } from './format.js';

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
      {data === null ? (
        !error && <p>Loading…</p>
      ) : data.connections.length === 0 ? (
        <p>No connections yet.</p>
      ) : (
        <table class="network-log">
          <thead>
            <tr>
              <th>Time</th>
              <th>Protocol</th>
              <th>Destination</th>
              <th>Name</th>
              <th>Decision</th>
              <th>Reason</th>
              <th>Sent</th>
              <th>Received</th>
            </tr>
          </thead>
          <tbody>
            {[...data.connections].reverse().map((c) => (
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
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
