import { useLoad } from '../load.js';
import { Link, pagePath } from '../router.jsx';
import { when } from '../time.js';
import { Keys } from './Keys.jsx';
import { ProjectOrg } from './ProjectOrg.jsx';
import { Quotas } from './Quotas.jsx';
import './projects.css';

// The project's name from the list (the API has no GET of one project);
// a failure shows in the keys below, which ask about the same project.
function ProjectName({ id, onKeyRefused }) {
  const { data } = useLoad('/v1/projects', onKeyRefused);
  const project = data && data.projects.find((p) => p.id === id);
  return project ? (
    <p class="hint">
      {project.name}, created {when(project.created_at)}
    </p>
  ) : null;
}

// One project (admin): its keys, quotas and org. Each part asks the API
// on its own, so an unknown project shows the API's 404 in its keys and quotas.
export function Project({ id, onKeyRefused }) {
  return (
    <section aria-labelledby="project-title">
      <p>
        <Link href={pagePath('projects')}>← Projects</Link>
      </p>
      <h2 id="project-title">
        <code>{id}</code>
      </h2>
      <ProjectName id={id} onKeyRefused={onKeyRefused} />
      <Keys project={id} onKeyRefused={onKeyRefused} />
      <Quotas project={id} onKeyRefused={onKeyRefused} />
      <ProjectOrg project={id} onKeyRefused={onKeyRefused} />
    </section>
  );
}
