// The console in a real browser: headless Chromium driven through the DevTools protocol
// over a pipe (Node's standard library only, no packages; Node 18 or later). Run by
// tests/console/test_console_browser.c:
//   node browser.mjs --url URL --password-file FILE --out DIR
//        --processes a,b,c --set-process NAME --set-path PATH --set-value V
//        [--entity-id N] [--pid-file FILE] [--timeout-s 120]
// (--pid-file: where Chromium's pid goes, so that the caller can stop it even if this
// script is killed.)
// It logs in, checks that every process is listed alive, waits for the plots to have points
// (load, players), sets a watcher through the page, looks an entity up, checks that a
// request without the session or without the CSRF token is refused, and saves screenshots
// (login.png, console.png, watchers.png, entity.png) into DIR. Exit 0 when every check
// passed, 1 on a failure (with the reason on stderr), 77 when Chromium cannot run here.
// Chromium is always stopped: on success, failure, timeout and SIGTERM/SIGINT.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
const timeoutS = Number(args['timeout-s'] || 120);
const chromiumBin = process.env.MC_CHROMIUM || 'chromium';

let chrome = null;
let profile = null;
function cleanup() {
  const c = chrome;
  chrome = null; /* its exit is expected from here on */
  if (c && c.exitCode === null) {
    try { process.kill(-c.pid, 'SIGKILL'); } catch { try { c.kill('SIGKILL'); } catch {} }
  }
  if (profile) { try { rmSync(profile, { recursive: true, force: true }); } catch {} profile = null; }
}
function fail(why, code = 1) {
  console.error((code === 77 ? 'SKIP: ' : 'FAIL: ') + why);
  cleanup();
  process.exit(code);
}
process.on('SIGTERM', () => fail('terminated'));
process.on('SIGINT', () => fail('interrupted'));
process.on('uncaughtException', e => fail('error: ' + (e && e.stack || e)));
process.on('unhandledRejection', e => fail('error: ' + (e && e.stack || e)));
setTimeout(() => fail('gave up after ' + timeoutS + ' s'), timeoutS * 1000).unref();

const sleep = ms => new Promise(r => setTimeout(r, ms));

// Chromium speaks the DevTools protocol over a pipe (--remote-debugging-pipe): JSON messages
// ended by a NUL byte, written to its fd 3 and read from its fd 4. No WebSocket, no port.
let nextId = 1, sessionId = null, toChrome = null, answered = false;
const waiting = new Map();

function startChromium() {
  profile = mkdtempSync(join(tmpdir(), 'mc-console-chromium-'));
  chrome = spawn(chromiumBin, ['--headless=new', '--no-sandbox', '--disable-gpu',
    '--disable-dev-shm-usage', '--no-first-run', '--no-default-browser-check',
    '--disable-extensions', '--disable-background-networking', '--remote-debugging-pipe',
    '--user-data-dir=' + profile, '--window-size=1400,1000', 'about:blank'],
    { detached: true, stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
  if (args['pid-file']) writeFileSync(args['pid-file'], String(chrome.pid) + '\n');
  let stderr = '';
  chrome.stderr.on('data', d => { stderr = (stderr + d).slice(-4000); });
  chrome.on('error', e => fail('cannot start ' + chromiumBin + ': ' + e.message, 77));
  chrome.on('exit', code => {
    /* before it answered: it cannot run here (skip); after: a failure */
    if (chrome !== null) fail('Chromium exited (' + code + '): ' + stderr.trim().split('\n').pop(), answered ? 1 : 77);
  });
  toChrome = chrome.stdio[3];
  let pending = Buffer.alloc(0);
  chrome.stdio[4].on('data', d => {
    pending = Buffer.concat([pending, d]);
    let nul;
    while ((nul = pending.indexOf(0)) >= 0) {
      const m = JSON.parse(pending.subarray(0, nul).toString('utf8'));
      pending = pending.subarray(nul + 1);
      if (m.id && waiting.has(m.id)) {
        const { resolve, reject } = waiting.get(m.id);
        waiting.delete(m.id);
        if (m.error) reject(new Error(m.error.message)); else resolve(m.result);
      }
    }
  });
}

function send(method, params = {}, browserLevel = false) {
  const id = nextId++;
  const msg = { id, method, params };
  if (!browserLevel && sessionId) msg.sessionId = sessionId;
  toChrome.write(JSON.stringify(msg) + '\0');
  return new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
}

async function evaluate(expr) {
  const r = await send('Runtime.evaluate', { expression: expr, awaitPromise: true, returnByValue: true });
  if (r.exceptionDetails) throw new Error('in page: ' + (r.exceptionDetails.exception?.description || r.exceptionDetails.text));
  return r.result.value;
}
async function waitFor(what, expr, ms) {
  const end = Date.now() + ms;
  let last;
  while (Date.now() < end) {
    try { last = await evaluate(expr); if (last) return last; } catch (e) { last = e.message; }
    await sleep(250);
  }
  fail('timed out waiting for ' + what + ' (last: ' + JSON.stringify(last) + ')');
}
async function screenshot(name) {
  const metrics = await send('Page.getLayoutMetrics');
  const h = Math.min(4000, Math.ceil(metrics.cssContentSize?.height || 1000));
  const r = await send('Page.captureScreenshot', { format: 'png', captureBeyondViewport: true,
    clip: { x: 0, y: 0, width: 1400, height: h, scale: 1 } });
  writeFileSync(join(args.out, name), Buffer.from(r.data, 'base64'));
  console.log('screenshot ' + join(args.out, name));
}

// --- the checks ----------------------------------------------------------------------------
startChromium();
const version = await Promise.race([send('Browser.getVersion', {}, true),
  sleep(30000).then(() => fail('Chromium did not answer on its DevTools pipe in 30 s', 77))]);
answered = true;
console.log('browser: ' + version.product);
const { targetId } = await send('Target.createTarget', { url: 'about:blank' }, true);
({ sessionId } = await send('Target.attachToTarget', { targetId, flatten: true }, true));
await send('Page.enable');
await send('Runtime.enable');
await send('Emulation.setDeviceMetricsOverride', { width: 1400, height: 1000, deviceScaleFactor: 1, mobile: false });

const password = readFileSync(args['password-file'], 'utf8').split('\n')[0];
await send('Page.navigate', { url: args.url });
await waitFor('the login page', "document.readyState === 'complete' && !!document.getElementById('password')", 20000);
// without the password: the API refuses
const noSession = await evaluate("fetch('/api/processes').then(r => r.status)");
if (noSession !== 401) fail('/api/processes without a session answered ' + noSession + ', not 401');
console.log('refused without the password: ' + noSession);
// a wrong password is refused
const wrong = await evaluate("fetch('/login', {method: 'POST', body: new URLSearchParams({password: 'not-the-password'})}).then(r => r.status)");
if (wrong !== 403) fail('a wrong password answered ' + wrong + ', not 403');
console.log('wrong password refused: ' + wrong);
await screenshot('login.png');
await evaluate(`document.getElementById('password').value = ${JSON.stringify(password)};
                document.getElementById('login-form').submit(); true`);
await waitFor('the console page', "document.readyState === 'complete' && !!document.getElementById('proc-table')", 20000);

const want = args.processes.split(',');
await waitFor('every process listed alive',
  `(() => { const rows = Array.from(document.querySelectorAll('#proc-table tbody tr'));
            const alive = rows.filter(r => r.children[2].textContent === 'alive').map(r => r.dataset.name);
            return ${JSON.stringify(want)}.every(n => alive.includes(n)) && alive.join(','); })()`, 30000);
console.log('processes listed: ' + want.join(' '));

await waitFor('points in the load and players plots',
  `(() => { const p = id => +(document.getElementById('plot-' + id).dataset.points || 0);
            return p('load') >= 4 && p('players') >= 2 && p('load') + ' load points, ' + p('players') + ' players points'; })()`, 60000);
const players = await waitFor('players online in the plot', `(() => { const t = document.getElementById('legend-players').textContent;
            const m = t.match(/players ([0-9.]+)/); return m && +m[1] > 0 && t; })()`, 60000);
console.log('plots have points: ' + players);
await screenshot('console.png');

// without the CSRF token: refused, even with the session
const noToken = await evaluate(`fetch('/api/set', {method: 'POST', body: new URLSearchParams({process: ${JSON.stringify(args['set-process'])},
  path: ${JSON.stringify(args['set-path'])}, value: '1'})}).then(r => r.status)`);
if (noToken !== 403) fail('a set without the CSRF token answered ' + noToken + ', not 403');
console.log('refused without the CSRF token: ' + noToken);

// set a watcher through the page
const dir = args['set-path'].split('/').slice(0, -1).join('/');
await evaluate(`(() => { const s = document.getElementById('w-process'); s.value = ${JSON.stringify(args['set-process'])};
                s.dispatchEvent(new Event('change')); return true; })()`);
await waitFor('the process\'s watcher tree', `(() => document.querySelector('#w-path a') &&
  document.querySelector('#w-path a').textContent.startsWith(${JSON.stringify(args['set-process'] + ':')}) &&
  document.querySelectorAll('#w-table tbody tr').length > 3)()`, 20000);
// down the tree to the watcher's folder, one link at a time
let at = '';
for (const part of dir ? dir.split('/') : []) {
  at = at ? at + '/' + part : part;
  const link = `#w-table tr[data-path=${JSON.stringify(at)}] a`;
  await waitFor('the folder ' + at, `!!document.querySelector(${JSON.stringify(link)})`, 20000);
  await evaluate(`(() => { document.querySelector(${JSON.stringify(link)}).click(); return true; })()`);
}
const rowSel = `#w-table tr[data-path=${JSON.stringify(args['set-path'])}]`;
await waitFor('the watcher row', `!!document.querySelector(${JSON.stringify(rowSel)})`, 20000);
await evaluate(`(() => { const row = document.querySelector(${JSON.stringify(rowSel)});
                row.querySelector('input').value = ${JSON.stringify(args['set-value'])};
                row.querySelector('button.set').click(); return true; })()`);
await waitFor('the value set', `(() => { const row = document.querySelector(${JSON.stringify(rowSel)});
  const m = document.getElementById('w-msg').textContent;
  return row && row.querySelector('.value').textContent === ${JSON.stringify(args['set-value'])} && m; })()`, 20000);
console.log('set through the page: ' + args['set-process'] + ' ' + args['set-path'] + ' = ' + args['set-value']);
await evaluate("document.getElementById('watchers').scrollIntoView(); true");
await screenshot('watchers.png');

// an entity by id
if (args['entity-id']) {
  await evaluate(`(() => { document.getElementById('e-query').value = ${JSON.stringify(args['entity-id'])};
                  document.querySelector('#e-form button').click(); return true; })()`);
  const ent = await waitFor('the entity page', "(() => { const t = document.getElementById('e-result').textContent; return /type [A-Za-z]/.test(t) && t.slice(0, 80); })()", 20000);
  console.log('entity: ' + ent);
  await screenshot('entity.png');
}
cleanup();
console.log('PASS');
process.exit(0);
