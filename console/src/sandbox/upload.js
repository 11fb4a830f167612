// PUT …/files?path= with the file as the raw body. XMLHttpRequest rather
// than fetch(): only it reports upload progress (a streamed fetch body
// needs HTTP/2, which the gateway does not speak).
import { ApiError, authHeaders, failure } from '../api.js';

// Resolves once the API answers 204; rejects with the API's error.
// onProgress(sent, total) as the bytes leave.
export function uploadFile(path, file, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', path);
    for (const [name, value] of Object.entries(authHeaders())) xhr.setRequestHeader(name, value);
    xhr.setRequestHeader('Content-Type', 'application/octet-stream');
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.total);
    xhr.onload = async () => {
      if (xhr.status < 300) resolve();
      else reject(await failure(new Response(xhr.response, { status: xhr.status, statusText: xhr.statusText })));
    };
    xhr.onerror = () => reject(new ApiError(0, 'unreachable', 'the gateway did not answer the upload of ' + file.name));
    xhr.send(file);
  });
}
