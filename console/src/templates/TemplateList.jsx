import { Link, pagePath } from '../router.jsx';
import { age } from '../time.js';
import { Listing } from '../Listing.jsx';

// The newest version of each name (the API lists every version, by name
// then version) and how many there are.
function newestByName(templates) {
  const byName = new Map();
  for (const t of templates) {
    const older = byName.get(t.name);
    byName.set(t.name, { ...t, versions: older ? older.versions + 1 : 1 });
  }
  return [...byName.values()];
}

// The project's templates: each name with its newest version.
export function TemplateList({ templates }) {
  if (templates === null) return <p>Loading…</p>;
  if (templates.length === 0) return <p>No templates yet.</p>;
  const now = Date.now();
  return (
    <Listing items={newestByName(templates)}
             columns={['Name', 'Version', 'Size', 'Node', 'Created']} class="template-list"
             row={(t) => (
        <tr key={t.name} data-name={t.name}>
          <td data-label="Name">
            <Link href={pagePath('templates', t.name)}>{t.name}</Link>
          </td>
          <td data-label="Version">
            {t.version}
            {t.versions > 1 && <span class="hint"> ({t.versions} versions)</span>}
          </td>
          <td data-label="Size">
            {t.cpus} vCPU, {t.memory_mb} MiB
          </td>
          <td data-label="Node">{t.node || '—'}</td>
          <td data-label="Created" title={t.created_at}>
            {age(t.created_at, now)} ago
          </td>
        </tr>
      )} />
  );
}
