import { useEffect, useState } from 'preact/hooks';
import { call, send } from '../api.js';
import { useLoad, useOperation } from '../load.js';
import { ErrorLine } from '../ErrorLine.jsx';
import { when } from '../time.js';
import { humanSize, octalMode } from './format.js';
import { uploadFile } from './upload.js';
import { useReloadOnChange } from './reload.js';

// A download's object URL is revoked once the browser has surely taken
// it: revoking at once can cancel a download that has not started.
const REVOKE_AFTER_MS = 60000;

// A name in dir, or name itself when it is an absolute path.
function joinPath(dir, name) {
  return name.startsWith('/') ? name : (dir === '/' ? '' : dir) + '/' + name;
}

// '/a/b' → [['/', '/'], ['a', '/a'], ['b', '/a/b']]: each step of the
// breadcrumb with the directory it opens.
function crumbs(dir) {
  const steps = [['/', '/']];
  let at = '';
  for (const part of dir.split('/').filter(Boolean)) {
    at += '/' + part;
    steps.push([part, at]);
  }
  return steps;
}

// Directories first, then by name.
function byKindThenName(a, b) {
  return (b.type === 'dir') - (a.type === 'dir') || a.name.localeCompare(b.name);
}

// The sandbox's files: a directory listing (GET …/files/list) to move
// through, upload (PUT …/files, from a file input or dropped files),
// download (GET …/files as a Blob), make a directory, rename, delete.
// Errors as the API says them (a missing path's 404, a relative path's
// 400, a paused sandbox's 409).
export function Files({ sandbox, onKeyRefused }) {
  const base = `/v1/sandboxes/${encodeURIComponent(sandbox.id)}/files`;
  const [dir, setDir] = useState('/');
  const [typed, setTyped] = useState('/');
  const [newDir, setNewDir] = useState('');
  const [dropping, setDropping] = useState(false);
  const load = useLoad(`${base}/list?path=${encodeURIComponent(dir)}`, onKeyRefused);
  const { data, error, reload } = load;
  const { progress, setProgress, operate } = useOperation(load);
  useReloadOnChange(sandbox.state, reload);
  useEffect(() => setTyped(dir), [dir]);

  const upload = (files) =>
    operate('Uploading…', async () => {
      for (const file of files)
        await uploadFile(`${base}?path=${encodeURIComponent(joinPath(dir, file.name))}`, file,
          (sent, total) => setProgress(
            `Uploading ${file.name}: ${humanSize(sent)} of ${humanSize(total)}` +
            (total ? ` (${Math.floor((100 * sent) / total)}%)` : '')));
    });

  const download = (name) =>
    operate(`Downloading ${name}…`, async () => {
      const res = await send(`${base}?path=${encodeURIComponent(joinPath(dir, name))}`);
      const url = URL.createObjectURL(await res.blob());
      const a = document.createElement('a');
      a.href = url;
      a.download = name;
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), REVOKE_AFTER_MS);
    });

  const makeDir = (e) => {
    e.preventDefault();
    const path = joinPath(dir, newDir.trim());
    operate(`Making ${path}…`, async () => {
      await call('POST', `${base}/mkdir`, { path });
      setNewDir('');
    });
  };

  const rename = (name) => {
    const to = prompt(`Rename ${joinPath(dir, name)} to (a name here, or an absolute path):`, name);
    if (!to || to === name) return;
    operate(`Renaming ${name}…`, () =>
      call('POST', `${base}/rename`, { from: joinPath(dir, name), to: joinPath(dir, to) }));
  };

  const remove = ({ name, type }) => {
    const path = joinPath(dir, name);
    const isDir = type === 'dir';
    if (!confirm(`Delete ${path}${isDir ? ' and everything in it' : ''}?`)) return;
    operate(`Deleting ${path}…`, () =>
      call('DELETE', `${base}?path=${encodeURIComponent(path)}&recursive=${isDir}`));
  };

  const onDrop = (e) => {
    e.preventDefault();
    setDropping(false);
    if (e.dataTransfer.files.length) upload([...e.dataTransfer.files]);
  };

  return (
    <div class={'files' + (dropping ? ' dropping' : '')} onDrop={onDrop}
         onDragOver={(e) => { e.preventDefault(); setDropping(true); }}
         onDragLeave={() => setDropping(false)}>
      <form onSubmit={(e) => { e.preventDefault(); setDir(typed.trim()); }}>
        <label for="files-path">Path</label>
        <input id="files-path" value={typed} onInput={(e) => setTyped(e.currentTarget.value)} />
        <button type="submit">Go</button>
      </form>
      <nav aria-label="Directory" class="crumbs">
        {crumbs(dir).map(([name, path], i, all) =>
          i === all.length - 1 ? (
            <span key={path} aria-current="location">{name}</span>
          ) : (
            <button type="button" key={path} class="link" onClick={() => setDir(path)}>
              {name}
            </button>
          ),
        )}
      </nav>
      <div class="tools">
        <label class="button">
          Upload files
          <input type="file" multiple class="sr-only" disabled={!!progress}
                 onChange={(e) => { upload([...e.currentTarget.files]); e.currentTarget.value = ''; }} />
        </label>
        <span class="hint">or drop them here</span>
        <form onSubmit={makeDir}>
          <label for="files-new-dir" class="sr-only">New directory</label>
          <input id="files-new-dir" placeholder="new directory" value={newDir} required
                 onInput={(e) => setNewDir(e.currentTarget.value)} />
          <button type="submit" disabled={!!progress}>Make directory</button>
        </form>
      </div>
      <p role="status" class="progress">{progress}</p>
      <ErrorLine error={error} />
      {data === null ? (
        !error && <p>Loading…</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Name</th>
              <th>Size</th>
              <th>Mode</th>
              <th>Modified</th>
              <th><span class="sr-only">Actions</span></th>
            </tr>
          </thead>
          <tbody>
            {dir !== '/' && (
              <tr>
                <td data-label="Name" colspan="5">
                  <button type="button" class="link" onClick={() => setDir(dir.slice(0, dir.lastIndexOf('/')) || '/')}>
                    .. (up)
                  </button>
                </td>
              </tr>
            )}
            {data.entries.length === 0 && (
              <tr>
                <td colspan="5">This directory is empty.</td>
              </tr>
            )}
            {data.entries.filter((f) => f.name !== undefined).sort(byKindThenName).map((f) => (
              <tr key={f.name} data-name={f.name}>
                <td data-label="Name">
                  {f.type === 'dir' ? (
                    <button type="button" class="link" onClick={() => setDir(joinPath(dir, f.name))}>
                      {f.name}/
                    </button>
                  ) : (
                    <span>{f.name}{f.type === 'symlink' ? ' →' : ''}</span>
                  )}
                </td>
                <td data-label="Size">{f.type === 'dir' ? '—' : humanSize(f.size)}</td>
                <td data-label="Mode"><code>{octalMode(f.mode)}</code></td>
                <td data-label="Modified">{when(f.mtime)}</td>
                <td class="actions">
                  {f.type === 'file' && (
                    <button type="button" onClick={() => download(f.name)} disabled={!!progress}
                            aria-label={'Download ' + f.name}>
                      Download
                    </button>
                  )}
                  <button type="button" onClick={() => rename(f.name)} disabled={!!progress}
                          aria-label={'Rename ' + f.name}>
                    Rename
                  </button>
                  <button type="button" onClick={() => remove(f)} disabled={!!progress}
                          aria-label={'Delete ' + f.name}>
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {data && data.entries.some((f) => f.name === undefined) && (
        <p class="hint">Names that are not UTF-8 are left out: the console cannot name them.</p>
      )}
    </div>
  );
}
