// E2B's own JS SDK (npm e2b) against airlock's E2B-compatible API
// (docs/e2b.md): a sandbox's whole life through the SDK's calls, with
// E2B_API_URL, E2B_SANDBOX_URL and E2B_API_KEY (e2b_<hex>) from
// test_e2b_api.py. E2B_TEST_OTHER_KEY: another project's key.
// Prints "ok   …" / "FAIL …" per check, then "KEEP <id>": the sandbox left
// running for the driver's raw HTTP checks. Exit status 1 on a failure.
'use strict';
const e2b = require('/usr/local/lib/airlock-test-tools/node_modules/e2b');
const { Sandbox } = e2b;

const failures = [];
function check(cond, what) {
  console.log((cond ? 'ok   ' : 'FAIL ') + what);
  if (!cond) failures.push(what);
}

// The error a promise rejects with (null when it resolves).
async function rejection(promise) {
  try {
    await promise;
    return null;
  } catch (err) {
    return err;
  }
}

// Polls fn (async) until it returns something true; bounds a hang only.
async function poll(fn, limitMs = 180000) {
  const end = Date.now() + limitMs;
  for (;;) {
    const v = await fn();
    if (v || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function listAll(query, limit) {
  const pager = Sandbox.list({ query, limit });
  const pages = [];
  while (pager.hasNext) pages.push(await pager.nextItems());
  return pages;
}

const ids = (items) => items.map((s) => s.sandboxId).sort();

async function main() {
  const suite = 'e2b-' + process.pid;
  const tenMinutes = 600000;

  // Create: template, timeout, metadata, envs; and the default template.
  const a = await Sandbox.create('base', { timeoutMs: tenMinutes, metadata: { suite, role: 'a' },
                                           envs: { GREETING: 'hi' } });
  const b = await Sandbox.create({ timeoutMs: tenMinutes, metadata: { suite, role: 'b' } });
  const c = await Sandbox.create('base', { timeoutMs: tenMinutes, metadata: { suite, role: 'c' },
                                           lifecycle: { onTimeout: 'pause' } });
  check(a.sandboxId.startsWith('sb_') && b.sandboxId !== a.sandboxId, 'create: three sandboxes');
  check(a.envdAccessToken === process.env.E2B_API_KEY,
        'create: envdAccessToken is the caller\'s key');
  check(a.sandboxDomain === process.env.E2B_TEST_DOMAIN,
        'create: sandboxDomain is the gateway\'s public domain (' + a.sandboxDomain + ')');

  const info = await Sandbox.getInfo(a.sandboxId);
  check(info.state === 'running' && info.templateId === 'base' && info.metadata.role === 'a',
        'getInfo: running, base, its metadata (' + JSON.stringify(info) + ')');
  const lifetime = info.endAt.getTime() - info.startedAt.getTime();
  check(lifetime > 500000 && lifetime <= tenMinutes + 60000,
        'getInfo: endAt is the timeout after the start (' + lifetime + ' ms)');
  check(info.cpuCount >= 1 && info.memoryMB >= 128, 'getInfo: size');
  const infoC = await Sandbox.getInfo(c.sandboxId);
  check(infoC.lifecycle && infoC.lifecycle.onTimeout === 'pause',
        'getInfo: autoPause shows as onTimeout pause');

  // v2 listing: 3 sandboxes of this suite in pages of 2.
  const pages = await listAll({ metadata: { suite } }, 2);
  check(pages.length === 2 && pages[0].length === 2 && pages[1].length === 1,
        'list: pages of 2 over 3 (' + pages.map((p) => p.length) + ')');
  check(JSON.stringify(ids(pages.flat())) ===
            JSON.stringify(ids([a, b, c])), 'list: the pages hold the three, once each');
  const onlyA = (await listAll({ metadata: { suite, role: 'a' } }))[0];
  check(onlyA.length === 1 && onlyA[0].sandboxId === a.sandboxId, 'list: metadata filter');

  // Pause (airlock's suspend) and the state filter.
  check(await Sandbox.pause(b.sandboxId) === true, 'pause: paused');
  check(await Sandbox.pause(b.sandboxId) === false, 'pause again: already paused (409)');
  check((await Sandbox.getInfo(b.sandboxId)).state === 'paused', 'getInfo: paused');
  const paused = (await listAll({ metadata: { suite }, state: ['paused'] })).flat();
  const running = (await listAll({ metadata: { suite }, state: ['running'] })).flat();
  check(JSON.stringify(ids(paused)) === JSON.stringify([b.sandboxId]), 'list: state paused');
  check(JSON.stringify(ids(running)) === JSON.stringify(ids([a, c])), 'list: state running');

  // Connect resumes a paused one.
  const b2 = await Sandbox.connect(b.sandboxId, { timeoutMs: tenMinutes });
  check(b2.sandboxId === b.sandboxId && (await b2.getInfo()).state === 'running',
        'connect: resumed');

  // setTimeout moves the deadline.
  await a.setTimeout(120000);
  const endA = (await Sandbox.getInfo(a.sandboxId)).endAt.getTime();
  check(endA < info.endAt.getTime(), 'setTimeout: a shorter timeout moves endAt earlier');

  // Metrics: one sample the guest takes now (docs/e2b.md).
  const metrics = await Sandbox.getMetrics(a.sandboxId);
  const m = metrics[0] || {};
  check(metrics.length === 1 && m.cpuCount >= 1 && m.cpuUsedPct >= 0 && m.cpuUsedPct <= 100 &&
        m.memUsed > 0 && m.memUsed < m.memTotal && m.memCache >= 0 && m.diskUsed > 0 &&
        m.diskUsed < m.diskTotal && m.timestamp instanceof Date && !isNaN(m.timestamp),
        'getMetrics: one sample of the guest now: ' + JSON.stringify(metrics));

  // Timeouts acted on: c (onTimeout pause) is paused, b killed.
  await c.setTimeout(1000);
  await b2.setTimeout(1000);
  const cPaused = await poll(async () => (await Sandbox.getInfo(c.sandboxId)).state === 'paused');
  check(cPaused, 'timeout with onTimeout pause: paused');
  const bGone = await poll(async () =>
    (await rejection(Sandbox.getInfo(b.sandboxId))) instanceof e2b.SandboxNotFoundError);
  check(bGone, 'timeout: killed (getInfo: SandboxNotFoundError)');
  const c2 = await Sandbox.connect(c.sandboxId, { timeoutMs: tenMinutes });
  check((await c2.getInfo()).state === 'running', 'connect after an auto-pause: running');

  // Kill.
  check(await Sandbox.kill(a.sandboxId) === true, 'kill: killed');
  check(await Sandbox.kill(a.sandboxId) === false, 'kill again: not found');
  check((await rejection(Sandbox.getInfo(a.sandboxId))) instanceof e2b.SandboxNotFoundError,
        'getInfo after kill: SandboxNotFoundError');
  const left = (await listAll({ metadata: { suite } })).flat();
  check(JSON.stringify(ids(left)) === JSON.stringify([c.sandboxId]),
        'list after kill and timeout: only the third');

  // volumeMounts: an airlock volume (made through airlock's REST API with
  // the same key, as ak_<hex>) written in one sandbox, read in the next.
  const airlockKey = 'ak_' + process.env.E2B_API_KEY.slice('e2b_'.length);
  const volume = 'e2b-work-' + process.pid;
  const made = await fetch(process.env.E2B_API_URL + '/v1/volumes', {
    method: 'POST',
    headers: { Authorization: 'Bearer ' + airlockKey, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: volume, size_mb: 64 }),
  });
  check(made.status === 201, 'volumeMounts: the volume made through airlock (' + made.status + ')');
  const w = await Sandbox.create('base', { timeoutMs: tenMinutes, volumeMounts: { '/work': volume } });
  const wInfo = await Sandbox.getInfo(w.sandboxId);
  check(JSON.stringify(wInfo.volumeMounts) === JSON.stringify([{ name: volume, path: '/work' }]),
        'volumeMounts: getInfo shows the mount (' + JSON.stringify(wInfo.volumeMounts) + ')');
  await w.commands.run('echo from-e2b > /work/note');
  check(await Sandbox.kill(w.sandboxId) === true, 'volumeMounts: the writer killed');
  const r = await Sandbox.create('base', { timeoutMs: tenMinutes, volumeMounts: { '/data': volume } });
  const note = await r.files.read('/data/note');
  check(note === 'from-e2b\n', 'volumeMounts: the next sandbox reads what the first wrote (' +
        JSON.stringify(note) + ')');
  const second = await rejection(
      Sandbox.create('base', { volumeMounts: { '/other': volume } }));
  check(second && second.message.includes(r.sandboxId),
        'volumeMounts: a second writer refused naming the holder (' + second + ')');
  const badPath = await rejection(Sandbox.create('base', { volumeMounts: { '/proc': volume } }));
  check(badPath && /\/proc/.test(badPath.message),
        'volumeMounts: a system path refused naming it (' + badPath + ')');
  await Sandbox.kill(r.sandboxId);
  const gone = await fetch(process.env.E2B_API_URL + '/v1/volumes/' + volume, {
    method: 'DELETE', headers: { Authorization: 'Bearer ' + airlockKey } });
  check(gone.status === 204, 'volumeMounts: the volume deleted once detached (' + gone.status + ')');

  // Errors as the SDK sees them.
  const badKey = await rejection(Sandbox.create('base', { apiKey: 'e2b_' + '0'.repeat(64) }));
  check(badKey instanceof e2b.AuthenticationError, 'wrong key: AuthenticationError (' + badKey + ')');
  const other = process.env.E2B_TEST_OTHER_KEY;
  check((await rejection(Sandbox.getInfo(c.sandboxId, { apiKey: other })))
            instanceof e2b.SandboxNotFoundError, 'another project\'s key: not found');
  check(await Sandbox.kill(c.sandboxId, { apiKey: other }) === false,
        'another project\'s key cannot kill it');
  const denyOut = await rejection(
      Sandbox.create('base', { network: { denyOut: ['0.0.0.0/0'] } }));
  check(denyOut && /network\.denyOut/.test(denyOut.message),
        'unsupported field: 400 naming it (' + denyOut + ')');
  const noTemplate = await rejection(Sandbox.create('no-such-template'));
  check(noTemplate && /no-such-template/.test(noTemplate.message),
        'unknown template: refused naming it (' + noTemplate + ')');

  console.log('KEEP ' + c.sandboxId + ' ' + suite);
}

main().then(() => {
  if (failures.length) {
    console.log(failures.length + ' check(s) failed');
    process.exit(1);
  }
}, (err) => {
  console.log('FAIL uncaught: ' + (err && err.stack ? err.stack : err));
  process.exit(1);
});
