import { useState } from 'preact/hooks';
import { call } from './api.js';
import { ErrorLine } from './ErrorLine.jsx';
import { useLoad } from './load.js';
import { Link, pagePath } from './router.jsx';
import { when } from './time.js';
import { Listing } from './Listing.jsx';
import './projects/projects.css';

// Every project (admin): GET /v1/projects, oldest first, each linking to
// its keys and quotas; a form to create one.
export function Projects({ onKeyRefused }) {
  const { data, error, reload, fail } = useLoad('/v1/projects', onKeyRefused);
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);

  async function create(e) {
    e.preventDefault();
    setBusy(true);
    try {
      await call('POST', '/v1/projects', { name: name.trim() });
      setName('');
      reload();
    } catch (err) {
      fail(err);
    }
    setBusy(false);
  }

  return (
    <section aria-labelledby="projects-title">
      <h2 id="projects-title">Projects</h2>
      <form onSubmit={create} aria-label="New project">
        <label for="project-name">Project name</label>
        <input id="project-name" value={name} required placeholder="team-a"
               onInput={(e) => setName(e.currentTarget.value)} />
        <button type="submit" disabled={busy}>
          {busy ? 'Creating…' : 'Create project'}
        </button>
      </form>
      <ErrorLine error={error} />
      <Listing items={data && data.projects} error={error}
               columns={['ID', 'Name', 'Created']}
               row={(p) => (
          <tr key={p.id} data-id={p.id}>
            <td data-label="ID">
              <Link href={pagePath('projects', p.id)}>
                <code>{p.id}</code>
              </Link>
            </td>
            <td data-label="Name">{p.name}</td>
            <td data-label="Created">{when(p.created_at)}</td>
          </tr>
        )} />
    </section>
  );
}
