import { useEffect, useState } from 'preact/hooks';
import { ErrorLine } from '../ErrorLine.jsx';
import { LogLines } from '../LogLines.jsx';
import { Link, pagePath } from '../router.jsx';
import { Elapsed } from './Elapsed.jsx';
import { SpecForm } from './SpecForm.jsx';
import { EMPTY_FIELDS, EXAMPLE_SPEC, specOf } from './spec.js';
import { useBuild } from './useBuild.js';

// Build a template from a spec, written in the form or as JSON (sent as
// typed, so the API judges it: a refusal is its 400 naming the field).
// While it builds: the elapsed time, the button disabled, the log as it
// comes; then a link to the template (and onBuilt) or the API's error.
export function BuildTemplate({ onBuilt, onKeyRefused }) {
  const [mode, setMode] = useState('form');
  const [fields, setFields] = useState(EMPTY_FIELDS);
  const [json, setJson] = useState(EXAMPLE_SPEC);
  const build = useBuild(onKeyRefused);
  const running = build.startedAt !== null;
  useEffect(() => {
    if (build.built) onBuilt();
  }, [build.built]);

  const submit = (e) => {
    e.preventDefault();
    build.start(mode === 'form' ? JSON.stringify(specOf(fields)) : json);
  };

  return (
    <section class="build" aria-labelledby="build-title">
      <h3 id="build-title">Build a template</h3>
      <form class="build-form" onSubmit={submit}>
        <fieldset class="network-choice">
          <legend>Write the spec</legend>
          {[['form', 'In a form'], ['json', 'As JSON']].map(([value, label]) => (
            <label key={value} class="choice">
              <input type="radio" name="spec-mode" value={value} checked={mode === value}
                     onChange={() => setMode(value)} />
              {label}
            </label>
          ))}
        </fieldset>
        {mode === 'form' ? (
          <SpecForm fields={fields} onChange={setFields} />
        ) : (
          <div class="field">
            <label for="spec-json">Spec (JSON, docs/templates.md)</label>
            <textarea id="spec-json" class="spec-json" rows="12" spellcheck={false} value={json}
                      onInput={(e) => setJson(e.currentTarget.value)} />
          </div>
        )}
        <div class="build-line">
          <button type="submit" disabled={running}>Build template</button>
          <span role="status" class="build-status">
            {running ? (
              <>
                Building… <Elapsed since={build.startedAt} />
              </>
            ) : (
              build.built && (
                <>
                  Built{' '}
                  <Link href={pagePath('templates', build.built.name)}>{build.built.ref}</Link> in{' '}
                  {(build.built.build_ms / 1000).toFixed(1)} s
                </>
              )
            )}
          </span>
        </div>
      </form>
      <ErrorLine error={build.error} />
      {(running || build.lines.length > 0) && <LogLines lines={build.lines} label="Build log" />}
    </section>
  );
}
