// The console's entry point: sign-in, the refresh loop and the state the panels render.
import {byId, h, show, time} from './dom.js';
import {ApiError, acknowledgeAlert, allPids, batch, get, onUnauthenticated, token} from './api.js';
import {
  AUDIT_PAGE, renderAlerts, renderAudit, renderBatches, renderCluster, renderModules, renderPids,
  renderRecommendations, renderSummary,
} from './panels.js';
import {selectTab, wireForms} from './forms.js';

const REFRESH_MS = 5000;
const FAST_REFRESH_MS = 1000;
const FAST_FOR_MS = 20000;
const LOCAL_BATCHES = 'pidpool.batches';

const pending = {ok: false, error: new ApiError(0, 'loading…')};
const state = {
  cluster: pending, modules: pending, pids: pending, usage: pending, alerts: pending,
  recommendations: pending, batches: pending, audit: pending,
};
const filter = {text: '', module: '', state: ''};
/**
 * The audit panel: page 0 is the newest; cursors[i] is the `before` of page i (the server's `next`
 * of page i-1), so an older page stays put while new entries arrive. `text` filters the page shown.
 */
const auditView = {page: 0, cursors: [null], text: '', next: null};
/** The token's role as GET /api/v1/cluster says ("viewer", "operator", "admin"); null before. */
let role = null;
const selection = new Set();
/** Batches sent from this tab (shown when the server has no batch list), newest first. */
const localBatches = new Map();
let timer = null;
let fastUntil = 0;
let running = null;
let again = false;

// ------------------------------------------------------------------ loading

const list = (data, ...keys) => {
  if (Array.isArray(data)) return data;
  for (const key of keys) if (data && Array.isArray(data[key])) return data[key];
  return [];
};

/** Tolerates {modules, pids} at the top or under "usage"/"report"; keys by module and PID id. */
function usageMaps(data) {
  const root = (data && (data.usage || data.report)) || data || {};
  const modules = new Map(list(root.modules).map((m) => [m.module || m.key, m]));
  const pids = new Map(list(root.pids).map((p) => [p.id || p.pid, p]));
  return {modules, pids};
}

const loaders = {
  cluster: async () => (await get('/api/v1/cluster')).data,
  modules: async () => list((await get('/api/v1/modules')).data, 'modules'),
  pids: () => allPids(),
  usage: async () => usageMaps((await get('/api/v1/usage')).data),
  alerts: async () => list((await get('/api/v1/alerts')).data, 'alerts', 'open'),
  recommendations: async () => {
    const {data} = await get('/api/v1/recommendations');
    return {items: list(data, 'recommendations', 'moves'), summary: Array.isArray(data) ? null : data};
  },
  batches: async () => list((await get('/api/v1/batches')).data, 'batches', 'items').slice(0, 50),
  audit: async () => {
    if (role !== 'admin') return {entries: [], next: null};
    const before = auditView.cursors[auditView.page];
    const {data} = await get(`/api/v1/audit?limit=${AUDIT_PAGE}` + (before ? '&before=' + encodeURIComponent(before) : ''));
    return {entries: list(data, 'entries', 'audit', 'events', 'items'), next: (data && data.next) || null};
  },
};

async function load(name) {
  try {
    state[name] = {ok: true, data: await loaders[name]()};
  } catch (e) {
    // an answer of an unexpected shape fails this panel only
    state[name] = {ok: false, error: e instanceof ApiError ? e : new ApiError(0, 'unexpected answer: ' + e.message)};
  }
}

async function refreshLocalBatches() {
  const open = [...localBatches.values()].filter((b) => b.status !== 'DEALED' && b.status !== 'FAILED');
  await Promise.all(open.map(async (b) => {
    try {
      remember((await batch(b.id)).data);
    } catch (e) {
      // keep what we had; the next refresh asks again
    }
  }));
}

/** Reloads everything, one refresh at a time (a request during a refresh queues one more). */
export async function refresh() {
  if (!token.get()) return;
  if (running) {
    again = true;
    return running;
  }
  running = (async () => {
    do {
      again = false;
      await load('cluster'); // first: it says the token's role, which decides what is shown
      applyRole();
      await Promise.all([...Object.keys(loaders).filter((n) => n !== 'cluster').map(load), refreshLocalBatches()]);
      render();
    } while (again);
  })();
  try {
    await running;
  } finally {
    running = null;
    schedule();
  }
}

function schedule() {
  clearTimeout(timer);
  if (!token.get()) return;
  const fast = Date.now() < fastUntil;
  timer = setTimeout(() => {
    if (document.hidden && !fast) schedule();
    else refresh();
  }, fast ? FAST_REFRESH_MS : REFRESH_MS);
}

// ------------------------------------------------------------------ rendering

/** Runs one panel's renderer; a failure shows in that panel instead of stopping the others. */
function safely(panel, draw) {
  try {
    draw();
  } catch (e) {
    show(panel, h('p', {class: 'note note-error'}, 'cannot show this: ' + e.message));
  }
}

function render() {
  safely('cluster-line', () => renderCluster(state.cluster));
  safely('summary', () => renderSummary(state));
  safely('modules-body', () => renderModules(state));
  safely('pids-body', renderPidTable);
  safely('alerts-body', () => renderAlerts(state.alerts, role === 'operator' || role === 'admin', acknowledge));
  safely('recommendations-body', () => renderRecommendations(state.recommendations, role === 'viewer' ? null : prefillMigrate));
  safely('batches-body', () => renderBatches(state.batches, [...localBatches.values()].reverse()));
  safely('audit-body', renderAuditPanel);
  safely('module-list', updateModuleChoices);
  show('refreshed', 'updated ' + time(new Date()).slice(11));
  document.body.dataset.refreshed = String(Date.now());
}

/**
 * Shows only what the role may do: a viewer gets no write forms and no acknowledge buttons, only
 * an admin the audit log. The API refuses the rest anyway (403); this keeps them out of sight.
 */
function applyRole() {
  if (state.cluster.ok && state.cluster.data && state.cluster.data.you) role = state.cluster.data.you.role;
  document.body.dataset.role = role || '';
  byId('operations').hidden = role === 'viewer';
  byId('audit').hidden = role !== 'admin';
}

function renderAuditPanel() {
  renderAudit(state.audit, auditView);
  auditView.next = state.audit.ok ? state.audit.data.next : null;
  byId('audit-newer').disabled = auditView.page === 0;
  byId('audit-older').disabled = !auditView.next;
}

/** Shows audit page `page` (0 = newest), read from the server. */
async function auditPage(page) {
  if (page > auditView.page) auditView.cursors[page] = auditView.next;
  auditView.page = page;
  auditView.cursors.length = page + 1;
  await load('audit');
  safely('audit-body', renderAuditPanel);
}

async function acknowledge(alert, button) {
  button.disabled = true;
  try {
    await acknowledgeAlert(alert.id);
    fastUntil = Date.now() + FAST_FOR_MS;
  } catch (e) {
    button.disabled = false;
    button.replaceWith(h('div', {class: 'form-error'}, e.message || String(e)));
    return;
  }
  refresh();
}

function renderPidTable() {
  renderPids(state, filter, selection, (ids, checked) => {
    ids.forEach((id) => (checked ? selection.add(id) : selection.delete(id)));
    renderPidTable();
  });
}

function updateModuleChoices() {
  const names = new Set(state.modules.ok ? state.modules.data.map((m) => m.module) : []);
  if (state.pids.ok) state.pids.data.pids.forEach((p) => names.add(p.module));
  const sorted = [...names].sort();
  show('module-list', sorted.map((m) => h('option', {value: m})));
  const select = byId('pid-module-filter');
  if (filter.module && !names.has(filter.module)) sorted.push(filter.module);
  show(select, h('option', {value: ''}, 'All modules'), sorted.map((m) => h('option', {value: m}, m)));
  select.value = filter.module;
}

function prefillMigrate(pids, to) {
  selectTab('migrate');
  const form = byId('form-migrate');
  form.elements.pids.value = pids.join('\n');
  form.elements.to.value = to;
  form.scrollIntoView({behavior: 'smooth', block: 'nearest'});
}

function remember(b) {
  if (!b || !b.id) return;
  localBatches.set(b.id, b); // a known batch keeps its place; a new one goes last (newest)
  while (localBatches.size > 50) localBatches.delete(localBatches.keys().next().value);
  sessionStorage.setItem(LOCAL_BATCHES, JSON.stringify([...localBatches.values()]));
}

// ------------------------------------------------------------------ sign-in

function signedIn(yes) {
  byId('login').hidden = yes;
  byId('app').hidden = !yes;
  byId('session').hidden = !yes;
  if (!yes) {
    clearTimeout(timer);
    show('cluster-line', null);
    show('health', null);
    byId('token').focus();
  }
}

function signOut(message) {
  token.clear();
  role = null;
  Object.assign(auditView, {page: 0, cursors: [null], text: '', next: null});
  sessionStorage.removeItem(LOCAL_BATCHES);
  localBatches.clear();
  selection.clear();
  signedIn(false);
  const box = byId('login-error');
  if (message) show(box, message);
  box.hidden = !message;
}

async function signIn(candidate) {
  const box = byId('login-error');
  box.hidden = true;
  try {
    await get('/api/v1/cluster', candidate); // proves the token before it is kept
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    show(box, h('strong', null, e.status === 401 ? 'Token rejected: ' : 'Cannot sign in: '), e.message);
    box.hidden = false;
    return;
  }
  token.set(candidate);
  byId('token').value = '';
  signedIn(true);
  await refresh();
}

function start() {
  for (const b of JSON.parse(sessionStorage.getItem(LOCAL_BATCHES) || '[]')) localBatches.set(b.id, b);
  onUnauthenticated((e) => signOut('Signed out: ' + e.message));
  byId('login-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const value = byId('token').value.trim();
    if (value) signIn(value);
  });
  byId('signout').addEventListener('click', () => signOut(null));
  byId('refresh').addEventListener('click', () => refresh());
  byId('pid-filter').addEventListener('input', (e) => { filter.text = e.target.value; renderPidTable(); });
  byId('pid-module-filter').addEventListener('change', (e) => { filter.module = e.target.value; renderPidTable(); });
  byId('pid-state-filter').addEventListener('change', (e) => { filter.state = e.target.value; renderPidTable(); });
  byId('clear-selection').addEventListener('click', () => { selection.clear(); renderPidTable(); });
  byId('audit-filter').addEventListener('input', (e) => { auditView.text = e.target.value; renderAuditPanel(); });
  byId('audit-newer').addEventListener('click', () => auditPage(Math.max(0, auditView.page - 1)));
  byId('audit-older').addEventListener('click', () => { if (auditView.next) auditPage(auditView.page + 1); });
  document.addEventListener('visibilitychange', () => { if (!document.hidden) refresh(); });
  wireForms({
    selection: () => selection,
    modules: () => (state.modules.ok ? state.modules.data : []),
    submitted: (b) => {
      remember(b);
      fastUntil = Date.now() + FAST_FOR_MS;
      refresh();
    },
  });
  if (token.get()) {
    signedIn(true);
    refresh();
  } else {
    signedIn(false);
  }
}

start();
