import { EMPTY_FILE } from './spec.js';

// The spec's `files`: rows of path, mode and content, added and removed
// one at a time (each control named with its file's number).
export function FilesField({ files, onChange }) {
  const change = (i, field, value) =>
    onChange(files.map((f, j) => (j === i ? { ...f, [field]: value } : f)));
  const control = (i, field, label, Tag, props) => (
    <label class={'field file-' + field}>
      {label}
      <Tag aria-label={`File ${i + 1} ${field}`} value={files[i][field]} {...props}
           onInput={(e) => change(i, field, e.currentTarget.value)} />
    </label>
  );
  return (
    <fieldset class="files-field">
      <legend>Files (written before the run commands)</legend>
      {files.map((f, i) => (
        <div class="file-row" key={i}>
          {control(i, 'path', 'Path', 'input', { placeholder: '/opt/app/config' })}
          {control(i, 'mode', 'Mode', 'input', { placeholder: '0644' })}
          {control(i, 'content', 'Content', 'textarea', { rows: 2 })}
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
