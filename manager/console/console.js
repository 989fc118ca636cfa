// The Mercury Cluster console's page script: reads the manager's /api/ and draws the page.
// Text from the cluster only ever goes into textContent or input values (never markup);
// every change is a POST carrying the session's CSRF token.
'use strict';

const state = { csrf: '', process: 'manager', path: '', sampleMs: 2000 };
const colors = ['#1565c0', '#c0262d', '#11803a', '#8a6d00', '#6a1b9a', '#00838f', '#d84315',
                '#37474f', '#ad1457', '#2e7d32'];

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

async function api(path, form) {
  const opts = { credentials: 'same-origin', headers: {} };
  if (form) {
    opts.method = 'POST';
    opts.headers['X-CSRF-Token'] = state.csrf;
    opts.headers['Content-Type'] = 'application/x-www-form-urlencoded';
    opts.body = new URLSearchParams(form).toString();
  }
  const r = await fetch(path, opts);
  if (r.status === 401) { location.reload(); throw new Error('logged out'); }
  const text = await r.text();
  if (!r.ok) throw new Error(text.trim() || ('HTTP ' + r.status));
  return text ? JSON.parse(text) : {};
}

function fmtUptime(s) {
  if (s === null || s === undefined) return '-';
  if (s < 60) return s.toFixed(1) + 's';
  if (s < 3600) return Math.floor(s / 60) + 'm' + Math.floor(s % 60) + 's';
  return Math.floor(s / 3600) + 'h' + Math.floor((s % 3600) / 60) + 'm';
}

// --- processes -------------------------------------------------------------------------

async function refreshProcesses() {
  const d = await api('/api/processes');
  const body = document.querySelector('#proc-table tbody');
  body.replaceChildren();
  const select = document.getElementById('w-process');
  const names = [];
  for (const p of d.processes) {
    const tr = el('tr');
    tr.dataset.name = p.name;
    tr.append(el('td', p.name), el('td', p.role), el('td', p.state, p.state),
              el('td', p.pid), el('td', p.load === null ? '-' : p.load.toFixed(2)),
              el('td', fmtUptime(p.uptimeS)), el('td', p.internal), el('td', p.external || '-'),
              el('td', p.reason || ''));
    body.append(tr);
    if (p.state === 'alive') names.push(p.name);
  }
  const have = Array.from(select.options).map(o => o.value).join(',');
  if (have !== names.join(',')) {
    select.replaceChildren(...names.map(n => { const o = el('option', n); o.value = n; return o; }));
    select.value = names.includes(state.process) ? state.process : 'manager';
  }
  document.getElementById('status').textContent =
    names.length + ' processes alive, ' + new Date().toLocaleTimeString();
}

// --- plots -----------------------------------------------------------------------------

function drawPlot(id, t, series, unit) {
  const c = document.getElementById('plot-' + id);
  const g = c.getContext('2d');
  const W = c.width, H = c.height, L = 48, B = 18, T = 8, R = 8;
  g.clearRect(0, 0, W, H);
  let max = 0, points = 0;
  const span = Math.max(60, t.length ? -t[0] : 60);
  for (const v of Object.values(series)) for (const x of v) if (x !== null) { max = Math.max(max, x); points++; }
  if (max <= 0) max = 1;
  // four gridlines at a round step: 1, 2, 2.5 or 5 times a power of ten
  const raw = max / 4, pow = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 2.5, 5, 10].map(m => m * pow).find(s => s >= raw);
  max = step * 4;
  g.strokeStyle = '#e4e8ee'; g.fillStyle = '#4a5566'; g.font = '11px system-ui, sans-serif';
  for (let i = 0; i <= 4; i++) {
    const y = T + (H - T - B) * i / 4;
    g.beginPath(); g.moveTo(L, y); g.lineTo(W - R, y); g.stroke();
    const v = max * (1 - i / 4);
    g.fillText(v >= 1000 ? +(v / 1000).toFixed(2) + 'k' : (+v.toFixed(4)).toString(), 4, y + 4);
  }
  g.fillText('-' + Math.round(span) + 's', L, H - 4);
  g.fillText('now', W - R - 24, H - 4);
  const legend = document.getElementById('legend-' + id);
  legend.replaceChildren();
  let k = 0;
  for (const [name, v] of Object.entries(series)) {
    const color = colors[k++ % colors.length];
    g.strokeStyle = color; g.lineWidth = 1.6; g.beginPath();
    let pen = false;
    v.forEach((x, i) => {
      if (x === null) { pen = false; return; }
      const px = L + (W - L - R) * (1 + t[i] / span), py = T + (H - T - B) * (1 - x / max);
      if (pen) g.lineTo(px, py); else g.moveTo(px, py);
      pen = true;
    });
    g.stroke();
    const item = el('span'); const sw = el('i'); sw.style.background = color;
    const last = v.filter(x => x !== null).pop();
    const shown = last === undefined ? '' : ' ' + (last >= 100 ? Math.round(last) : +last.toPrecision(3)) + (unit || '');
    item.append(sw, document.createTextNode(name + shown));
    legend.append(item);
  }
  c.dataset.points = String(points);
}

async function refreshSeries() {
  const d = await api('/api/series');
  drawPlot('load', d.t, d.load);
  drawPlot('tick', d.t, d.tickP99Ms, ' ms');
  drawPlot('players', d.t, { players: d.players });
  drawPlot('logins', d.t, { 'logins/s': d.loginsPerS });
  drawPlot('bytes', d.t, { 'bytes/s': d.bytesToClientsPerS });
}

// --- watchers --------------------------------------------------------------------------

function message(text, error) {
  const m = document.getElementById('w-msg');
  m.textContent = text; m.className = error ? 'msg error' : 'msg';
}

function showPath() {
  const p = document.getElementById('w-path');
  p.replaceChildren();
  const root = el('a', state.process + ':/'); root.addEventListener('click', () => browse(''));
  p.append(root);
  let acc = '';
  for (const part of state.path.split('/').filter(Boolean)) {
    acc = acc ? acc + '/' + part : part;
    const target = acc;
    const a = el('a', part); a.addEventListener('click', () => browse(target));
    p.append(a, document.createTextNode('/'));
  }
}

async function browse(path) {
  state.path = path;
  showPath();
  let d;
  try {
    d = await api('/api/ls?' + new URLSearchParams({ process: state.process, path }));
  } catch (e) { message(e.message, true); return; }
  const body = document.querySelector('#w-table tbody');
  body.replaceChildren();
  for (const e of d.entries) {
    const full = path ? path + '/' + e.path : e.path;
    const tr = el('tr'); tr.dataset.path = full;
    const name = el('td');
    if (e.dir) {
      const a = el('a', e.path + '/'); a.addEventListener('click', () => browse(full));
      name.append(a);
      tr.append(name, el('td', 'dir'), el('td', ''), el('td', ''), el('td', ''));
    } else {
      name.textContent = e.path;
      const action = el('td');
      const value = el('td', e.value !== undefined ? e.value : '');
      value.className = 'value';
      if (e.mode === 'rw') {
        const input = el('input'); input.value = e.value || ''; input.name = 'value';
        const b = el('button', 'Set'); b.type = 'button'; b.className = 'set';
        b.addEventListener('click', () => setWatcher(full, input.value));
        action.append(input, b);
      } else if (e.mode === 'call') {
        const input = el('input'); input.placeholder = 'arguments'; input.name = 'args';
        const b = el('button', 'Call'); b.type = 'button'; b.className = 'call';
        b.addEventListener('click', () => callWatcher(full, input.value));
        action.append(input, b);
      }
      tr.append(name, el('td', e.type), el('td', e.mode), value, action);
    }
    body.append(tr);
  }
  message(d.entries.length + ' entries');
}

async function setWatcher(path, value) {
  try {
    const d = await api('/api/set', { process: state.process, path, value });
    const v = d.entries && d.entries[0] ? d.entries[0].value : value;
    message('set ' + path + ' = ' + v);
    await browse(state.path);
    message('set ' + path + ' = ' + v);
  } catch (e) { message('set ' + path + ': ' + e.message, true); }
}

async function callWatcher(path, args) {
  try {
    const d = await api('/api/call', { process: state.process, path, args });
    message('called ' + path + (d.result ? ': ' + d.result : ''));
  } catch (e) { message('call ' + path + ': ' + e.message, true); }
}

// --- entities --------------------------------------------------------------------------

async function lookUp(q) {
  const out = document.getElementById('e-result');
  out.replaceChildren();
  const query = /^[0-9]+$/.test(q) ? { id: q } : { name: q };
  let d;
  try { d = await api('/api/entity?' + new URLSearchParams(query)); }
  catch (e) { out.append(el('p', e.message, 'msg error')); return; }
  out.append(el('p', 'Entity ' + d.id + (d.globalName ? ' (global name ' + d.globalName + ')' : '') +
                ', type ' + (d.type || '?')));
  for (const part of d.parts) {
    const where = part.entries.find(e => e.path.endsWith('/part'));
    out.append(el('h3', (where ? where.value : part.role) + ' on ' + part.process));
    const t = el('table');
    for (const e of part.entries) {
      const tr = el('tr');
      tr.append(el('td', e.path.split('/').slice(2).join('/')), el('td', e.value !== undefined ? e.value : ''));
      t.append(tr);
    }
    out.append(t);
  }
  if (d.methods.length) {
    out.append(el('h3', 'Methods'));
    const t = el('table');
    for (const m of d.methods) {
      const tr = el('tr');
      tr.append(el('td', m.part), el('td', m.name), el('td', m.args + ' args' + (m.returns ? ', ' + m.returns + ' returns' : '')));
      t.append(tr);
    }
    out.append(t);
  }
}

// --- start -----------------------------------------------------------------------------

async function tick() {
  try { await refreshProcesses(); await refreshSeries(); }
  catch (e) { document.getElementById('status').textContent = 'error: ' + e.message; }
}

async function start() {
  const s = await api('/api/session');
  state.csrf = s.csrf;
  state.sampleMs = s.sampleMs;
  document.getElementById('w-process').addEventListener('change', ev => {
    state.process = ev.target.value; browse('');
  });
  document.getElementById('e-form').addEventListener('submit', ev => {
    ev.preventDefault(); lookUp(document.getElementById('e-query').value.trim());
  });
  document.getElementById('logout').addEventListener('click', async () => {
    try { await api('/logout', {}); } finally { location.reload(); }
  });
  await tick();
  await browse('');
  setInterval(tick, Math.max(1000, state.sampleMs));
}

document.addEventListener('DOMContentLoaded', () => { start().catch(e => {
  document.getElementById('status').textContent = 'error: ' + e.message;
}); });
