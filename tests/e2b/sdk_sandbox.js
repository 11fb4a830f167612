// What an agent written for E2B does with a sandbox, with E2B's own SDK
// (npm e2b) unchanged, against airlock (docs/e2b.md): commands in the
// foreground (exit codes, env, cwd) and background (kill), streamed
// stdout/stderr callbacks, a PTY, files (write, read, list, remove,
// rename, watch a directory), a server in the sandbox reached by the URL
// getHost() gives (public, and with the traffic token), pause and connect
// (resume), kill. Env: E2B_API_URL, E2B_SANDBOX_URL (the gateway),
// E2B_API_KEY (an airlock key in E2B's form). Prints "ok ..."/"FAIL ..."
// lines; exit 1 on any failure.
'use strict';
const http = require('http');
const e2b = require('/usr/local/lib/airlock-test-tools/node_modules/e2b');
const { Sandbox, CommandExitError } = e2b;

const failures = [];
function check(cond, what) {
  console.log((cond ? 'ok   ' : 'FAIL ') + what);
  if (!cond) failures.push(what);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(fn, limitMs = 120000) {
  // Bounds a hang only; asserts nothing about speed.
  const deadline = Date.now() + limitMs;
  for (;;) {
    const v = await fn();
    if (v || Date.now() > deadline) return v;
    await sleep(200);
  }
}

// GET path on the gateway with Host: the name getHost() gave.
function viaHost(host, path, headers = {}) {
  const gw = new URL(process.env.E2B_API_URL);
  return new Promise((resolve) => {
    const req = http.request({ host: gw.hostname, port: gw.port, path, method: 'GET',
                               headers: Object.assign({ Host: host }, headers) }, (res) => {
      let body = '';
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve({ status: res.statusCode, body }));
    });
    req.on('error', (e) => resolve({ status: 0, body: String(e) }));
    req.end();
  });
}

async function commands(sbx) {
  const r = await sbx.commands.run('echo "$GREETING from $(pwd)"', {
    envs: { GREETING: 'hello' }, cwd: '/tmp' });
  check(r.exitCode === 0 && r.stdout === 'hello from /tmp\n',
        'foreground command with env and cwd: ' + JSON.stringify(r));
  let failed = null;
  try {
    await sbx.commands.run('echo out; echo err >&2; exit 3');
  } catch (e) {
    failed = e;
  }
  check(failed instanceof CommandExitError && failed.exitCode === 3 &&
        failed.stdout === 'out\n' && failed.stderr === 'err\n',
        'a failing command throws CommandExitError with its code and output: ' + failed);
  const out = [], err = [];
  await sbx.commands.run('for i in 1 2 3; do echo $i; echo e$i >&2; sleep 0.2; done', {
    onStdout: (d) => out.push(d), onStderr: (d) => err.push(d) });
  check(out.join('') === '1\n2\n3\n' && err.join('') === 'e1\ne2\ne3\n' && out.length >= 2,
        'stdout/stderr callbacks stream as produced: ' + JSON.stringify([out, err]));
  const bg = await sbx.commands.run('sleep 600', { background: true });
  const listed = await sbx.commands.list();
  check(bg.pid > 0 && listed.some((p) => p.pid === bg.pid),
        'a background command is listed: ' + bg.pid);
  check(await bg.kill() === true, 'kill a background command');
  const gone = await until(async () =>
    !(await sbx.commands.list()).some((p) => p.pid === bg.pid), 30000);
  check(gone, 'the killed command is gone from the list');
}

async function pty(sbx) {
  let seen = '';
  const term = await sbx.pty.create({ cols: 80, rows: 24,
                                      onData: (d) => { seen += Buffer.from(d).toString(); } });
  await sbx.pty.sendInput(term.pid, new TextEncoder().encode('stty size; echo pty-$((6*7))\n'));
  check(await until(() => seen.includes('pty-42'), 60000) && seen.includes('24 80'),
        'a PTY runs what is typed, at its size: ' + JSON.stringify(seen.slice(-200)));
  await sbx.pty.resize(term.pid, { cols: 100, rows: 30 });
  await sbx.pty.sendInput(term.pid, new TextEncoder().encode('stty size\n'));
  check(await until(() => seen.includes('30 100'), 60000), 'resize reaches the PTY');
  check(await sbx.pty.kill(term.pid) === true, 'kill the PTY');
}

async function files(sbx) {
  await sbx.files.write('/tmp/e2b/notes.txt', 'first line\n');
  check(await sbx.files.read('/tmp/e2b/notes.txt') === 'first line\n', 'write then read a file');
  const big = Buffer.alloc(3 << 20, 7);
  await sbx.files.write('/tmp/e2b/big.bin', big);
  const back = await sbx.files.read('/tmp/e2b/big.bin', { format: 'bytes' });
  check(Buffer.from(back).equals(big), '3 MiB of bytes written and read back');
  const names = (await sbx.files.list('/tmp/e2b')).map((e) => e.name).sort();
  check(JSON.stringify(names) === '["big.bin","notes.txt"]', 'list a directory: ' + names);
  await sbx.files.rename('/tmp/e2b/notes.txt', '/tmp/e2b/moved.txt');
  check(await sbx.files.exists('/tmp/e2b/moved.txt') &&
        !(await sbx.files.exists('/tmp/e2b/notes.txt')), 'rename');
  await sbx.files.remove('/tmp/e2b/moved.txt');
  check(!(await sbx.files.exists('/tmp/e2b/moved.txt')), 'remove');

  await sbx.files.makeDir('/tmp/watched');
  const events = [];
  const watcher = await sbx.files.watchDir('/tmp/watched', (ev) => events.push(ev));
  await sbx.files.write('/tmp/watched/new.txt', 'x');
  const created = await until(() => events.find((e) => e.name === 'new.txt'), 60000);
  check(created, 'watchDir reports a file written there: ' + JSON.stringify(events));
  await watcher.stop();
}

async function port(sbx, headers) {
  await sbx.commands.run('mkdir -p /srv && echo served > /srv/index.txt');
  await sbx.commands.run('python3 -m http.server 8000 --directory /srv', { background: true });
  const host = sbx.getHost(8000);
  const got = await until(async () => {
    const r = await viaHost(host, '/index.txt', headers);
    return r.status === 200 ? r : null;
  }, 60000);
  check(got && got.body === 'served\n', 'a server in the sandbox through getHost(' + host + ')');
  return host;
}

async function main() {
  const sbx = await Sandbox.create('base', { timeoutMs: 600000 });
  check(/^sb_/.test(sbx.sandboxId), 'Sandbox.create: ' + sbx.sandboxId);
  await commands(sbx);
  await pty(sbx);
  await files(sbx);
  await port(sbx, {});

  check(await sbx.pause() !== false, 'pause');
  const back = await Sandbox.connect(sbx.sandboxId);
  const r = await back.commands.run('cat /tmp/e2b/big.bin | wc -c');
  check(r.stdout.trim() === String(3 << 20), 'connect resumes it, files kept: ' + r.stdout);
  await back.kill();
  check(!(await Sandbox.list().nextItems()).some((s) => s.sandboxId === sbx.sandboxId),
        'kill: gone from the list');

  // Ports that need the traffic token (network.allowPublicTraffic false).
  const closed = await Sandbox.create('base', { network: { allowPublicTraffic: false } });
  check(typeof closed.trafficAccessToken === 'string' && closed.trafficAccessToken.length > 0,
        'allowPublicTraffic false: a traffic token');
  const host = await port(closed, { 'e2b-traffic-access-token': closed.trafficAccessToken });
  const refused = await viaHost(host, '/index.txt');
  check(refused.status === 401, 'without the token its port refuses: ' + refused.status);
  await closed.kill();
}

main().then(() => {
  if (failures.length) {
    console.log(failures.length + ' failed');
    process.exit(1);
  }
}, (e) => {
  console.log('FAIL ' + (e && e.stack || e));
  process.exit(1);
});
