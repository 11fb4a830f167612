import { EMPTY_FILE } from './spec.js';

// The spec's `files`: rows of path, content and mode, added and removed
// one at a time.
export function FilesField({ files, onChange }) {
  const change = (i, field, value) =>
    onChange(files.map((f, j) => (j === i ? { ...f, [field]: value } : f)));
  return (
    <fieldset class="files-field">
      <legend>Files (written before the run commands)</legend>
      {files.map((f, i) => (
        <div class="file-row" key={i}>
          <input aria-label={`File ${i + 1} path`} placeholder="/opt/app/config" value={f.path}
                 onInput={(e) => change(i, 'path', e.currentTarget.value)} />
          <input aria-label={`File ${i + 1} mode`} placeholder="0644" class="mode" value={f.mode}
                 onInput={(e) => change(i, 'mode', e.currentTarget.value)} />
          <textarea aria-label={`File ${i + 1} content`} rows="2" value={f.content}
                    onInput={(e) => change(i, 'content', e.currentTarget.value)} />
          <button type="button" onClick={() => onChange(files.filter((_, j) => j !== i))}>
            Remove file {i + 1}
          </button>
        </div>
      ))}
      <button type="button" onClick={() => onChange([...files, EMPTY_FILE])}>
        Add file
      </button>
    </fieldset>
  );
}
