import { Link, pagePath } from '../router.jsx';
import { AdminOnly } from './AdminOnly.jsx';
import { Keys } from './Keys.jsx';
import { ProjectOrg } from './ProjectOrg.jsx';
import { Quotas } from './Quotas.jsx';
import './projects.css';

// One project (admin): its keys, quotas and org. Each part asks the API
// on its own, so an unknown project shows the API's 404 in each.
export function Project({ id, admin, onKeyRefused }) {
  return (
    <section aria-labelledby="project-title" class="project">
      <p>
        <Link href={pagePath('projects')}>← Projects</Link>
      </p>
      <h2 id="project-title">
        <code>{id}</code>
      </h2>
      <AdminOnly admin={admin}>
        <Keys project={id} onKeyRefused={onKeyRefused} />
        <Quotas project={id} onKeyRefused={onKeyRefused} />
        <ProjectOrg project={id} onKeyRefused={onKeyRefused} />
      </AdminOnly>
    </section>
  );
}
