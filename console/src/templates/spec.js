// A template spec (docs/templates.md "The spec") from the build form.
import { keyValues, nameList, numberOrAbsent, withoutAbsent } from '../create/fields.js';
import { NO_NETWORK, policyOf } from '../create/NetworkChoice.jsx';

export const EMPTY_FILE = { path: '', content: '', mode: '' };

export const EMPTY_FIELDS = {
  name: '',
  packages: '',
  files: [],
  run: '',
  env: '',
  workdir: '',
  start_cmd: '',
  cpus: '',
  memory_mb: '',
  warm_pool: '',
  network: NO_NETWORK,
};

// What the JSON editor starts with: a spec that builds without network
// (packages would need the node's apt mirror).
export const EXAMPLE_SPEC = `{
  "name": "hello",
  "files": [{"path": "/opt/hello/greeting.txt", "content": "hello\\n", "mode": "0644"}],
  "run": ["cat /opt/hello/greeting.txt", "echo built > /opt/hello/marker"],
  "env": {"GREETING": "hello"},
  "workdir": "/opt/hello"
}
`;

// A file row as the spec has it; blank rows are left out, a mode as typed
// (an octal string, as the spec takes it).
function fileOf({ path, content, mode }) {
  return withoutAbsent({ path, content, mode: mode.trim() || undefined });
}

// The spec, without the fields left empty (the API's defaults apply).
export function specOf(f) {
  const lines = f.run.split('\n').filter((l) => l.trim());
  const files = f.files.filter((x) => x.path || x.content).map(fileOf);
  return withoutAbsent({
    name: f.name.trim(),
    packages: nameList(f.packages),
    files: files.length ? files : undefined,
    run: lines.length ? lines : undefined,
    env: keyValues(f.env),
    workdir: f.workdir.trim() || undefined,
    start_cmd: f.start_cmd.trim() || undefined,
    cpus: numberOrAbsent(f.cpus),
    memory_mb: numberOrAbsent(f.memory_mb),
    warm_pool: numberOrAbsent(f.warm_pool),
    network: policyOf(f.network),
  });
}
