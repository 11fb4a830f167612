import { useLoad } from '../load.js';
import { ErrorLine } from '../ErrorLine.jsx';
import { Link, pagePath } from '../router.jsx';
import { when } from '../time.js';
import { DeleteTemplate } from './DeleteTemplate.jsx';
import { SpecFacts } from './SpecFacts.jsx';
import { Versions } from './Versions.jsx';
import './templates.css';

// One template, /console/templates/{name} (its newest version) or
// {name:N}: GET /v1/templates/{id} (a 404 names it), its spec, every
// version of the name (GET /v1/templates) and Delete.
export function Template({ id, onKeyRefused }) {
  const one = useLoad('/v1/templates/' + encodeURIComponent(id), onKeyRefused);
  const all = useLoad('/v1/templates', onKeyRefused);
  const t = one.data;
  return (
    <section aria-labelledby="template-title">
      <p>
        <Link href={pagePath('templates')}>← Templates</Link>
      </p>
      <h2 id="template-title">{id}</h2>
      <ErrorLine error={one.error || all.error} />
      {!t && !one.error && <p>Loading…</p>}
      {t && (
        <>
          <dl class="facts">
            <dt>Version</dt>
            <dd>{t.ref}</dd>
            <dt>Size</dt>
            <dd>
              {t.cpus} vCPU, {t.memory_mb} MiB
            </dd>
            <dt>Node</dt>
            <dd>{t.node || '—'}</dd>
            <dt>Created</dt>
            <dd>{when(t.created_at)}</dd>
            <dt>Build time</dt>
            <dd>{(t.build_ms / 1000).toFixed(1)} s</dd>
          </dl>
          <h3>Spec</h3>
          <SpecFacts spec={t.spec} />
          <h3>Versions</h3>
          {all.data && (
            <Versions versions={all.data.templates.filter((v) => v.name === t.name)} current={t.ref} />
          )}
          <p>
            <DeleteTemplate name={id} fail={one.fail} />
          </p>
        </>
      )}
    </section>
  );
}
