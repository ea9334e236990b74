// Read-only panels: each renders one part of the state into its own container.
import {h, show, num, time, chip, note, table} from './dom.js';

/** What a panel shows when its endpoint failed: "not available" for a missing endpoint. */
export function failure(error, what) {
  if (error.notAvailable) return note(`${what}: not available on this server`, 'muted');
  if (error.status === 403) return note(`${what}: your token's role may not read this (${error.message})`, 'muted');
  if (error.status === 503) return note(`${what}: ${error.message}`, 'muted');
  return note(`${what}: ${error.message}`, 'error');
}

// ------------------------------------------------------------------ header and summary

export function renderCluster(result) {
  if (!result.ok) {
    show('cluster-line', h('span', {class: 'bad'}, 'cluster unavailable: ' + result.error.message));
    show('health', null);
    return;
  }
  const c = result.data;
  const leader = c.leader
    ? h('span', {id: 'leader', class: 'mono'}, c.leader)
    : h('span', {id: 'leader', class: 'bad'}, 'no leader');
  show('cluster-line',
    h('span', {class: 'label'}, 'cluster'), h('span', {id: 'cluster-name', class: 'mono'}, c.cluster), ' ',
    h('span', {class: 'label'}, 'leader'), leader, ' ',
    h('span', {class: 'label'}, 'epoch'), h('span', {class: 'mono'}, c.epoch ?? '—'), ' ',
    h('span', {class: 'label'}, 'answered by'), h('span', {class: 'mono'}, c.self ?? '—'));
  const components = (c.health && c.health.components) || {};
  show('health', Object.keys(components).sort().map((name) => {
    const component = components[name];
    return h('span', {class: 'health health-' + String(component.status).toLowerCase(), title: component.detail || ''},
      h('span', {class: 'dot'}), name);
  }));
  const members = c.members || [];
  show('members', members.length === 0 ? note('no members') : table('members-table', ['Server', 'Role'],
    members.map((m) => [h('span', {class: 'mono'}, m.id), m.leader ? chip('leader', 'leader') : chip('follower', 'follower')])));
}

export function renderSummary(state) {
  const modules = state.modules.ok ? state.modules.data : [];
  const instances = modules.flatMap((m) => m.instances || []);
  const live = instances.filter((i) => i.live).length;
  const pids = modules.reduce((n, m) => n + (m.pids || 0), 0);
  const held = modules.reduce((n, m) => n + (m.held || 0), 0);
  const assignable = modules.reduce((n, m) => n + (m.assignable || 0), 0);
  const alerts = state.alerts.ok ? state.alerts.data.length : null;
  const tile = (label, value, sub, kind) => h('div', {class: 'tile' + (kind ? ' tile-' + kind : '')},
    h('div', {class: 'tile-value'}, value), h('div', {class: 'tile-label'}, label), sub ? h('div', {class: 'tile-sub'}, sub) : null);
  show('summary',
    tile('modules', num(modules.length)),
    tile('live instances', num(live), instances.length > live ? `${num(instances.length - live)} gone` : null),
    tile('PIDs', num(pids), `${num(assignable)} assignable`),
    tile('held', num(held), assignable > 0 ? `${Math.round((100 * held) / assignable)} % of assignable` : null,
      held < assignable ? 'warn' : null),
    tile('open alerts', alerts === null ? 'n/a' : num(alerts), null, alerts ? 'bad' : null));
}

// ------------------------------------------------------------------ modules

export function renderModules(state) {
  const result = state.modules;
  if (!result.ok) {
    show('modules-body', failure(result.error, 'modules'));
    return;
  }
  if (result.data.length === 0) {
    show('modules-body', note('No modules yet. Add PIDs to a module (department#module#system) with the form on the right.'));
    return;
  }
  const usage = state.usage.ok ? state.usage.data.modules : null;
  show('modules-body', h('div', {class: 'module-cards'}, result.data.map((m) => moduleCard(m, usage && usage.get(m.module)))));
}

function moduleCard(m, usage) {
  const instances = m.instances || [];
  const most = Math.max(1, ...instances.map((i) => i.held || 0));
  const rows = instances.map((i) => h('tr', {'data-instance': i.instance},
    h('td', {class: 'dotcell'}, h('span', {class: 'live ' + (i.live ? 'live-yes' : 'live-no'), title: i.live ? 'live' : 'gone'})),
    h('td', null, h('div', {class: 'mono instance-id'}, i.instance), i.host ? h('div', {class: 'muted small'}, i.host) : null),
    h('td', {class: 'num instance-held'}, num(i.held)),
    h('td', {class: 'barcell'}, meter((i.held || 0) / most, 'held'),
      i.pending ? h('div', {class: 'muted small'}, `${num(i.pending)} pending`) : null)));
  return h('article', {class: 'module-card', 'data-module': m.module},
    h('header', null,
      h('h3', {class: 'mono'}, m.module),
      h('span', {class: 'module-servers', title: 'configured server count'}, `servers ${num(m.servers)}`)),
    h('div', {class: 'module-stats'},
      stat('PIDs', m.pids), stat('assignable', m.assignable), stat('held', m.held, m.held < m.assignable ? 'warn' : null),
      m.monthlyDemand ? stat('monthly demand', m.monthlyDemand) : null,
      usage ? stat('used', usage.used) : null,
      usage && usage.projectedOverageCost !== undefined ? stat('projected overage cost', usage.projectedOverageCost, null, true) : null),
    instances.length === 0
      ? note('No client instance is connected.', 'muted')
      : table('instances', ['', 'Instance', h('th', {class: 'num'}, 'Held'), ''], rows));
}

function stat(label, value, kind, text) {
  return h('div', {class: 'stat' + (kind ? ' stat-' + kind : '')},
    h('span', {class: 'stat-value'}, text ? String(value) : num(value)), h('span', {class: 'stat-label'}, label));
}

function meter(fraction, kind) {
  const fill = h('div', {class: 'fill fill-' + kind});
  fill.style.width = Math.max(0, Math.min(100, fraction * 100)).toFixed(1) + '%';
  return h('div', {class: 'meter'}, fill);
}

// ------------------------------------------------------------------ PIDs

const SHOWN = 500;

/** The PID table, filtered; `selection` is the Set of checked ids (kept across refreshes). */
export function renderPids(state, filter, selection, onSelect) {
  const result = state.pids;
  if (!result.ok) {
    show('pids-body', failure(result.error, 'PIDs'));
    show('pids-count', null);
    return;
  }
  const holders = new Map();
  if (state.modules.ok) {
    for (const m of state.modules.data) for (const i of m.instances || []) holders.set(i.instance, i);
  }
  const usage = state.usage.ok ? state.usage.data.pids : null;
  const text = filter.text.trim().toLowerCase();
  const matching = result.data.pids.filter((p) =>
    (!filter.module || p.module === filter.module)
    && (!filter.state || (filter.state === 'UNASSIGNED' ? !p.instance : p.nodeState === filter.state || p.status === filter.state))
    && (!text || p.id.toLowerCase().includes(text) || (p.instance || '').toLowerCase().includes(text)));
  const rows = matching.slice(0, SHOWN).map((p) => pidRow(p, holders.get(p.instance), usage, selection, onSelect));
  show('pids-count',
    `${num(matching.length)} of ${num(result.data.pids.length)}${result.data.truncated ? '+' : ''} PIDs`,
    matching.length > SHOWN ? ` (first ${SHOWN} shown)` : '',
    selection.size ? ` · ${num(selection.size)} selected` : '');
  if (rows.length === 0) {
    show('pids-body', note(result.data.pids.length === 0 ? 'No PIDs yet.' : 'No PID matches the filter.'));
    return;
  }
  const all = h('input', {type: 'checkbox', title: 'select all shown', 'aria-label': 'select all shown'});
  all.checked = matching.slice(0, SHOWN).every((p) => selection.has(p.id));
  all.addEventListener('change', () => onSelect(matching.slice(0, SHOWN).map((p) => p.id), all.checked));
  show('pids-body', table('pid-table',
    [h('th', {class: 'check'}, all), 'PID', 'Module', 'Status', 'Node', 'Holder', h('th', {class: 'usage-head'}, 'Usage (month)')],
    rows));
}

function pidRow(p, holder, usage, selection, onSelect) {
  const box = h('input', {type: 'checkbox', 'aria-label': 'select ' + p.id});
  box.checked = selection.has(p.id);
  box.addEventListener('change', () => onSelect([p.id], box.checked));
  const used = typeof p.used === 'number' ? p.used : usage && usage.has(p.id) ? usage.get(p.id).used : null;
  return h('tr', {'data-pid': p.id, class: p.error ? 'has-error' : null},
    h('td', {class: 'check'}, box),
    h('td', {class: 'mono pid-id'}, p.id, p.error ? h('div', {class: 'pid-error'}, p.error) : null),
    h('td', {class: 'mono pid-module'}, p.module),
    h('td', {class: 'pid-status'}, chip(p.status)),
    h('td', {class: 'pid-state'}, p.nodeState ? chip(p.nodeState) : h('span', {class: 'muted'}, '—')),
    h('td', {class: 'pid-holder'}, p.instance
      ? [h('span', {class: 'mono holder-id'}, p.instance), holder && holder.host ? h('div', {class: 'muted small'}, holder.host) : null]
      : h('span', {class: 'muted unassigned'}, 'unassigned')),
    h('td', {class: 'pid-usage'}, usageBar(used, p.monthlyQuota, p.overageAllowance)));
}

/** used / quota as a bar: green below 80 %, amber to 100 %, red in overage; grey when unknown. */
function usageBar(used, quota, allowance) {
  const known = typeof used === 'number';
  const ratio = !known ? 0 : quota > 0 ? used / quota : used > 0 ? Infinity : 0;
  const level = !known ? 'unknown' : ratio >= 1 ? 'over' : ratio >= 0.8 ? 'high' : 'ok';
  const fill = h('div', {class: 'fill fill-' + level});
  fill.style.width = Math.min(100, ratio * 100).toFixed(1) + '%';
  const title = known
    ? `${num(used)} of ${num(quota)} commands used${allowance ? `, overage allowance ${num(allowance)}` : ''}`
    : `quota ${num(quota)}; usage not available`;
  return h('div', {class: 'usage', title},
    h('div', {class: 'meter'}, fill),
    h('span', {class: 'usage-text'}, known ? `${num(used)} / ${num(quota)}` : `— / ${num(quota)}`));
}

// ------------------------------------------------------------------ alerts, recommendations

/**
 * `canAcknowledge`: the token may write (operator, admin); `onAcknowledge(alert)` sends the
 * acknowledgement. An acknowledged alert says by whom and when instead of offering the button.
 */
export function renderAlerts(result, canAcknowledge, onAcknowledge) {
  if (!result.ok) {
    show('alerts-body', failure(result.error, 'alerts'));
    return;
  }
  if (result.data.length === 0) {
    show('alerts-body', note('No open alerts.', 'good'));
    return;
  }
  show('alerts-body', h('ul', {class: 'items'}, result.data.map((a) => h('li', {class: 'item alert-item', 'data-alert': a.id},
    h('div', {class: 'item-head'}, chip(a.severity || 'INFO'), h('span', {class: 'mono'}, a.kind || ''),
      h('span', {class: 'muted small push'}, a.firstSeen ? 'since ' + time(a.firstSeen) : '')),
    h('div', null, a.message || a.key || ''),
    a.subject ? h('div', {class: 'muted small mono'}, a.subject) : null,
    a.acknowledgedBy
      ? h('div', {class: 'small muted acked'}, `acknowledged by ${a.acknowledgedBy}, ${time(a.acknowledgedAt)}`)
      : canAcknowledge && a.id
        ? h('button', {type: 'button', class: 'link ack', on: {click: (e) => onAcknowledge(a, e.target)}}, 'Acknowledge')
        : null))));
}

/**
 * `result.data`: {items, summary}; summary has costBefore/costAfter/saving when the server gives them.
 * `onPrefill` null: no "Prefill migrate form" buttons (a viewer cannot migrate).
 */
export function renderRecommendations(result, onPrefill) {
  if (!result.ok) {
    show('recommendations-body', failure(result.error, 'recommendations'));
    return;
  }
  const {items, summary: total} = result.data;
  const head = total && total.costBefore !== undefined
    ? h('p', {class: 'small muted'}, `Projected overage cost ${total.costBefore} → ${total.costAfter}`,
      total.saving !== undefined ? ` (saving ${total.saving})` : '', total.month ? ` · ${total.month}` : '')
    : null;
  if (items.length === 0) {
    show('recommendations-body', head, note('No moves would lower the projected overage cost.', 'good'));
    return;
  }
  show('recommendations-body', head, h('ol', {class: 'items'}, items.map((r) => {
    const from = r.source && (r.source.module || r.source);
    const to = r.target && (r.target.module || r.target);
    const pids = r.pids || r.pidIds || [];
    const delta = r.costDelta ?? r.delta ?? null;
    return h('li', {class: 'item recommendation'},
      h('div', {class: 'item-head'},
        h('span', {class: 'mono'}, String(from ?? '?')), h('span', {class: 'arrow'}, '→'), h('span', {class: 'mono'}, String(to ?? '?')),
        h('span', {class: 'muted small'}, `${pids.length} PID${pids.length === 1 ? '' : 's'}`),
        delta !== null ? h('span', {class: 'push saving'}, 'cost ' + String(delta)) : null),
      h('div', {class: 'small'}, r.explanation || pids.join(', ')),
      typeof to === 'string' && pids.length
        ? onPrefill && h('button', {type: 'button', class: 'link prefill', on: {click: () => onPrefill(pids, to)}}, 'Prefill migrate form')
        : null);
  })));
}

// ------------------------------------------------------------------ batches and audit

/** One operation in a line; `pids` is the list (a single batch) or its count (the batch list). */
function summary(op) {
  const n = Array.isArray(op.pids) ? op.pids.length : typeof op.pids === 'number' ? op.pids : null;
  const count = n === null ? '' : `${n} PID${n === 1 ? '' : 's'}`;
  switch (op.type) {
    case 'ADD': return `ADD ${count} to ${op.module}`;
    case 'MIGRATE': return `MIGRATE ${count} to ${op.to}`;
    case 'SET_SERVERS': return `SET_SERVERS ${op.module} = ${op.servers}`;
    default: return `${op.type} ${count}`;
  }
}

/** Failed operations: their messages (a single batch) or their count (the batch list). */
export function batchOutcome(b) {
  const failed = (b.results || []).filter((r) => !r.ok);
  if (failed.length === 0 && b.failed > 0) return [`${b.failed} operation${b.failed === 1 ? '' : 's'} failed`];
  return failed.map((r) => `operation ${r.index + 1}: ${r.message || 'failed'}`);
}

export function renderBatches(result, local) {
  let source;
  let batches;
  if (result.ok) {
    batches = result.data;
    source = null;
  } else if (result.error.notAvailable) {
    batches = local;
    source = note('The server keeps no batch list here (not available); showing the batches sent from this browser tab.', 'muted');
  } else {
    show('batches-body', failure(result.error, 'batches'));
    return;
  }
  if (batches.length === 0) {
    show('batches-body', source, note('No batches yet.'));
    return;
  }
  show('batches-body', source, h('ul', {class: 'items batch-list'}, batches.map((b) => h('li', {class: 'item', 'data-batch': b.id},
    h('div', {class: 'item-head'}, chip(b.status),
      h('span', {class: 'batch-ops'}, (b.operations || []).map(summary).join(' · ')),
      h('span', {class: 'push muted small nowrap'}, time(b.createdAt))),
    batchOutcome(b).map((m) => h('div', {class: 'small bad'}, m)),
    h('div', {class: 'muted small'}, h('span', {class: 'mono'}, 'batch ' + b.id), b.requestedBy ? ' · by ' + b.requestedBy : '')))));
}

export const AUDIT_PAGE = 25;

/**
 * One page of the audit log, newest first: `result.data` = {entries, next} as the server answered
 * for `view.page` (0 = newest); `view.text` filters the entries of that page (who, action, target,
 * details).
 */
export function renderAudit(result, view) {
  if (!result.ok) {
    show('audit-body', failure(result.error, 'audit log'));
    show('audit-page', null);
    return;
  }
  const text = (view.text || '').trim().toLowerCase();
  const entries = result.data.entries;
  const matching = text
    ? entries.filter((e) => [e.actor, e.action, e.target, e.detail, e.outcome]
      .some((field) => String(field ?? '').toLowerCase().includes(text)))
    : entries;
  const first = view.page * AUDIT_PAGE;
  show('audit-count', entries.length
    ? `entries ${first + 1}–${first + entries.length}${result.data.next ? '' : ' (the oldest)'}` : '');
  show('audit-page', `page ${view.page + 1}`);
  if (matching.length === 0) {
    show('audit-body', note(text && entries.length ? 'No entry on this page matches.' : 'No audit entries.'));
    return;
  }
  show('audit-body', table('audit-table', ['When', 'Who', 'What', 'On', 'Details'],
    matching.map((e) => [
      h('span', {class: 'small nowrap', title: e.at ?? ''}, time(e.at)),
      h('span', {class: 'small'}, e.actor ?? ''),
      chip(e.action ?? '—', String(e.action ?? '').endsWith('rejected') ? 'warning' : 'info'),
      h('span', {class: 'small mono'}, e.target ?? ''),
      h('span', {class: 'small wrap'}, e.outcome ?? e.detail ?? '')])));
}
