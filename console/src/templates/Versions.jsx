import { Link, pagePath } from '../router.jsx';
import { when } from '../time.js';
import { Listing } from '../Listing.jsx';

// Every ready version of a name (from GET /v1/templates), each linking to
// its own page (name:N); the one shown is marked.
export function Versions({ versions, current }) {
  return (
    <Listing items={versions}
             columns={['Version', 'Size', 'Node', 'Created', 'Build time']} class="versions"
             row={(v) => (
        <tr key={v.ref}>
          <td data-label="Version">
            <Link href={pagePath('templates', v.ref)}
                  aria-current={v.ref === current ? 'page' : undefined}>
              {v.ref}
            </Link>
          </td>
          <td data-label="Size">
            {v.cpus} vCPU, {v.memory_mb} MiB
          </td>
          <td data-label="Node">{v.node || '—'}</td>
          <td data-label="Created">{when(v.created_at)}</td>
          <td data-label="Build time">{(v.build_ms / 1000).toFixed(1)} s</td>
        </tr>
      )} />
  );
}
