import { useLoad } from './load.js';
import { ErrorLine } from './ErrorLine.jsx';
import { BuildTemplate } from './templates/BuildTemplate.jsx';
import { TemplateList } from './templates/TemplateList.jsx';
import './templates/templates.css';

// The project's templates (GET /v1/templates), each linking to its page,
// and a build from a spec; a finished build re-reads the list.
export function Templates({ onKeyRefused }) {
  const list = useLoad('/v1/templates', onKeyRefused);
  return (
    <section aria-labelledby="templates-title">
      <h2 id="templates-title">Templates</h2>
      <ErrorLine error={list.error} />
      {!list.error && <TemplateList templates={list.data ? list.data.templates : null} />}
      <BuildTemplate onBuilt={list.reload} onKeyRefused={onKeyRefused} />
    </section>
  );
}
