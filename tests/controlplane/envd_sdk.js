// E2B's official JS SDK (e2b on npm) against airlock's envd API, for
// test_envd.py: the Sandbox object is made for a sandbox airlock's REST API
// created, as the SDK's own create() makes it from the control plane's
// answer. Prints "ok   …" / "FAIL …" lines, which test_envd.py records.
// env: E2B_SDK (the package's path), SANDBOX_ID, E2B_API_URL,
// E2B_SANDBOX_URL, E2B_API_KEY.
'use strict';
const { Sandbox, CommandExitError, FileNotFoundError } = require(process.env.E2B_SDK);

function check(cond, what) {
  console.log((cond ? 'ok   ' : 'FAIL ') + what);
}

async function expectThrow(fn, test, what) {
  try {
    await fn();
    check(false, what + ' (nothing thrown)');
  } catch (err) {
    check(test(err), what + ' (' + (err && err.constructor && err.constructor.name) + ': ' +
          (err && err.message) + ')');
  }
}

function connect(id, token) {
  return new Sandbox({
    sandboxId: id,
    envdVersion: '0.6.0',
    envdAccessToken: token,
    sandboxDomain: 'localhost',
    apiKey: process.env.E2B_API_KEY,
  });
}

async function commands(sbx) {
  const r = await sbx.commands.run('echo hello; echo oops >&2; echo "$GREETING"; pwd',
                                   { envs: { GREETING: 'hi there' }, cwd: '/tmp' });
  check(r.exitCode === 0, 'run: exit code 0 (' + r.exitCode + ')');
  check(r.stdout === 'hello\nhi there\n/tmp\n', 'run: stdout with env and cwd ' +
        JSON.stringify(r.stdout));
  check(r.stderr === 'oops\n', 'run: stderr apart ' + JSON.stringify(r.stderr));

  await expectThrow(() => sbx.commands.run('echo failing >&2; exit 7'),
                    (e) => e instanceof CommandExitError && e.exitCode === 7 &&
                           e.stderr === 'failing\n',
                    'run: a failing command throws CommandExitError with its exit code');

  const seenOut = [], seenErr = [];
  await sbx.commands.run('for i in 1 2 3; do echo o$i; echo e$i >&2; done', {
    onStdout: (d) => seenOut.push(d), onStderr: (d) => seenErr.push(d),
  });
  check(seenOut.join('') === 'o1\no2\no3\n', 'onStdout streams stdout ' + JSON.stringify(seenOut));
  check(seenErr.join('') === 'e1\ne2\ne3\n', 'onStderr streams stderr ' + JSON.stringify(seenErr));

  let bgOut = '';
  const bg = await sbx.commands.run('echo started; sleep 600', {
    background: true, onStdout: (d) => { bgOut += d; } });
  check(typeof bg.pid === 'number' && bg.pid > 1, 'background: a numeric pid ' + bg.pid);
  // Killed only once it printed (a bound on a hang, not a timing check).
  for (let i = 0; i < 600 && !bgOut.includes('started'); i++)
    await new Promise((res) => setTimeout(res, 100));
  check(bgOut === 'started\n', 'background: onStdout streams while it runs ' + JSON.stringify(bgOut));
  const listed = await sbx.commands.list();
  const mine = listed.find((p) => p.pid === bg.pid);
  check(mine && mine.cmd === '/bin/bash' && mine.args.join(' ') === '-l -c echo started; sleep 600',
        'commands.list shows the background command ' + JSON.stringify(mine));
  check(await sbx.commands.kill(bg.pid) === true, 'commands.kill answers true');
  await expectThrow(() => bg.wait(), (e) => e instanceof CommandExitError && e.exitCode === -1,
                    'the killed command ends with exit code -1');
  check(bg.stdout === 'started\n', 'the background command printed first ' +
        JSON.stringify(bg.stdout));
  check(!(await sbx.commands.list()).some((p) => p.pid === bg.pid), 'killed: not listed any more');
  check(await sbx.commands.kill(bg.pid) === false, 'commands.kill of a gone pid answers false');

  const cat = await sbx.commands.run('cat', { background: true, stdin: true });
  await sbx.commands.sendStdin(cat.pid, 'via stdin\n');
  await sbx.commands.closeStdin(cat.pid);
  const catDone = await cat.wait();
  check(catDone.stdout === 'via stdin\n', 'sendStdin + closeStdin reach the process ' +
        JSON.stringify(catDone.stdout));

  const again = await sbx.commands.run('sleep 1; echo late', { background: true });
  const reattached = await sbx.commands.connect(again.pid);
  const late = await reattached.wait();
  check(late.stdout.includes('late'), 'commands.connect re-attaches by pid ' +
        JSON.stringify(late.stdout));
}

async function pty(sbx) {
  let out = '';
  const decoder = new TextDecoder();
  const term = await sbx.pty.create({ cols: 80, rows: 24, onData: (d) => { out += decoder.decode(d); } });
  check(typeof term.pid === 'number' && term.pid > 1, 'pty.create: a pid ' + term.pid);
  await sbx.pty.resize(term.pid, { cols: 100, rows: 30 });
  await sbx.pty.sendInput(term.pid, new TextEncoder().encode('stty size; echo pty-$((40+2))\n'));
  for (let i = 0; i < 600 && !out.includes('pty-42'); i++)
    await new Promise((res) => setTimeout(res, 100));
  check(out.includes('pty-42'), 'pty: input runs in the shell');
  check(out.includes('30 100'), 'pty: resize reached the terminal');
  check(await sbx.pty.kill(term.pid) === true, 'pty.kill answers true');
  await expectThrow(() => term.wait(), (e) => e instanceof CommandExitError,
                    'the killed PTY ends');
}

async function files(sbx) {
  const info = await sbx.files.write('/tmp/sdk/a.txt', 'hello file\n');
  check(info.path === '/tmp/sdk/a.txt' && info.name === 'a.txt',
        'files.write makes the parent and answers the entry ' + JSON.stringify(info));
  check(await sbx.files.read('/tmp/sdk/a.txt') === 'hello file\n', 'files.read text');

  const big = new Uint8Array(3 * 1024 * 1024 + 17);
  for (let i = 0; i < big.length; i++) big[i] = (i * 7 + (i >> 11)) & 0xff;
  await sbx.files.write('/tmp/sdk/big.bin', big);
  const back = await sbx.files.read('/tmp/sdk/big.bin', { format: 'bytes' });
  check(back.length === big.length && Buffer.compare(Buffer.from(back), Buffer.from(big)) === 0,
        'files.write/read of ' + big.length + ' bytes round-trips (multipart upload)');
  await sbx.files.write('/tmp/sdk/raw.bin', big.subarray(0, 100000), { useOctetStream: true });
  const raw = await sbx.files.read('/tmp/sdk/raw.bin', { format: 'bytes' });
  check(raw.length === 100000 && raw[99999] === big[99999], 'an octet-stream upload round-trips');

  const many = await sbx.files.write([{ path: '/tmp/sdk/m1.txt', data: 'one' },
                                      { path: '/tmp/sdk/sub/m2.txt', data: 'two' }]);
  check(Array.isArray(many) && many.length === 2 && many[1].path === '/tmp/sdk/sub/m2.txt',
        'files.write of several files answers each ' + JSON.stringify(many));
  check(await sbx.files.read('/tmp/sdk/sub/m2.txt') === 'two', 'the second file was written');

  const top = await sbx.files.list('/tmp/sdk');
  const names = top.map((e) => e.name).sort();
  check(JSON.stringify(names) === JSON.stringify(['a.txt', 'big.bin', 'm1.txt', 'raw.bin', 'sub']),
        'files.list depth 1 ' + JSON.stringify(names));
  const sub = top.find((e) => e.name === 'sub');
  check(sub && sub.type === 'dir' && top.find((e) => e.name === 'a.txt').type === 'file',
        'files.list types');
  const deep = await sbx.files.list('/tmp/sdk', { depth: 2 });
  check(deep.some((e) => e.path === '/tmp/sdk/sub/m2.txt'), 'files.list depth 2 reaches sub/');

  check(await sbx.files.exists('/tmp/sdk/a.txt') === true, 'exists: a file');
  check(await sbx.files.exists('/tmp/sdk/nope') === false, 'exists: a missing path is false');
  const st = await sbx.files.getInfo('/tmp/sdk/big.bin');
  check(st.type === 'file' && st.size === big.length && st.modifiedTime instanceof Date &&
        st.permissions === '-rw-r--r--', 'getInfo ' + JSON.stringify(st));

  check(await sbx.files.makeDir('/tmp/sdk/new/deeper') === true, 'makeDir makes parents');
  check(await sbx.files.makeDir('/tmp/sdk/new/deeper') === false, 'makeDir of an existing dir is false');
  const moved = await sbx.files.rename('/tmp/sdk/a.txt', '/tmp/sdk/new/b.txt');
  check(moved.path === '/tmp/sdk/new/b.txt' && moved.type === 'file', 'rename answers the new entry');
  check(await sbx.files.exists('/tmp/sdk/a.txt') === false, 'rename: the old path is gone');
  await sbx.files.remove('/tmp/sdk/new');
  check(await sbx.files.exists('/tmp/sdk/new') === false, 'remove takes a directory tree');

  await expectThrow(() => sbx.files.read('/tmp/sdk/missing.txt'),
                    (e) => e instanceof FileNotFoundError, 'read of a missing file: FileNotFoundError');
  await expectThrow(() => sbx.files.getInfo('/tmp/sdk/missing.txt'),
                    (e) => e instanceof FileNotFoundError, 'getInfo of a missing file: FileNotFoundError');
  await expectThrow(() => sbx.files.list('relative/dir'),
                    (e) => /must be absolute/.test(e.message), 'a relative path is refused by name');
  await expectThrow(() => sbx.files.watchDir('/tmp/sdk/no-such-dir', () => {}),
                    (e) => /no-such-dir/.test(e.message),
                    'watchDir of a missing directory names it');
}

async function badInput(id) {
  const wrong = connect(id, 'e2b_' + '0'.repeat(64));
  await expectThrow(() => wrong.commands.run('true'), (e) => /unauthenticated|401|key/i.test(e.message),
                    'a wrong access token is refused');
  const unknown = connect('sb-does-not-exist', process.env.E2B_API_KEY);
  await expectThrow(() => unknown.files.list('/'), (e) => /not found/i.test(e.message),
                    'an unknown sandbox is not found');
}

(async () => {
  const sbx = connect(process.env.SANDBOX_ID, process.env.E2B_API_KEY);
  for (const [name, part] of [['commands', () => commands(sbx)], ['pty', () => pty(sbx)],
                              ['files', () => files(sbx)], ['bad input', () => badInput(sbx.sandboxId)]]) {
    try {
      await part();
    } catch (err) {
      check(false, name + ': unexpected ' + (err && err.stack));
    }
  }
})();
