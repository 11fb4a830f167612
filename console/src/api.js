// The public REST API (docs/api.md), the console's only way in: every call
// carries the signed-in key as the CLI's and SDKs' do.

const KEY = 'airlock.key';

export const session = {
  key: () => sessionStorage.getItem(KEY),
  signIn: (key) => sessionStorage.setItem(KEY, key),
  signOut: () => sessionStorage.removeItem(KEY),
};

// An error as the API says it: its HTTP status, code and message.
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

// A failed response as an ApiError: the API's {"error":{code,message}},
// or what there is when something in between answered instead.
export async function failure(res) {
  const text = await res.text();
  try {
    const { error } = JSON.parse(text);
    if (error && error.message) return new ApiError(res.status, error.code, error.message);
  } catch {
    // not the API's error shape: fall through
  }
  return new ApiError(res.status, 'http_' + res.status, text.trim() || res.statusText);
}

export function authHeaders(key = session.key()) {
  return { Authorization: 'Bearer ' + key };
}

// fetch() itself failing (gateway down, connection reset) as an ApiError,
// so every caller shows one kind of error.
export async function send(path, init = {}, key) {
  let res;
  try {
    res = await fetch(path, { ...init, headers: { ...authHeaders(key), ...init.headers } });
  } catch (e) {
    throw new ApiError(0, 'unreachable', 'the gateway did not answer: ' + e.message);
  }
  if (!res.ok) throw await failure(res);
  return res;
}

export async function call(method, path, body, key) {
  const init = { method };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers = { 'Content-Type': 'application/json' };
  }
  const res = await send(path, init, key);
  return res.status === 204 ? null : res.json();
}
