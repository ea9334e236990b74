// The operation forms. Each validates what it can locally, sends one request and shows either the
// batch's outcome or the server's {"error", "field"} answer next to the form.
import {h, show} from './dom.js';
import {ApiError, pid, submitBatch, setServers} from './api.js';
import {InputError, parsePidCsv, parseIds, pidIndexOf} from './csv.js';
import {batchOutcome} from './panels.js';

/**
 * Wires every form. `hooks`: selection() → ids checked in the PID table; modules() → module views;
 * submitted(batch) → called with each batch the server recorded (also on failure).
 */
export function wireForms(hooks) {
  document.querySelectorAll('.tab').forEach((tab) => tab.addEventListener('click', () => selectTab(tab.dataset.tab)));
  document.querySelectorAll('.use-selection').forEach((button) => button.addEventListener('click', () => {
    const area = button.form.querySelector('textarea[name=pids]');
    area.value = [...hooks.selection()].join('\n');
    area.focus();
  }));

  handle('form-add', hooks, async (form) => {
    const module = value(form, 'module');
    if (!module) throw new InputError('enter the module the PIDs belong to', 'module');
    const parsed = parsePidCsv(form.elements.csv.value);
    form.dataset.csvLines = JSON.stringify(parsed.lines);
    const answer = await submitBatch([{type: 'ADD', module, pids: parsed.pids}]);
    return {answer, done: `${parsed.pids.length} PID${parsed.pids.length === 1 ? '' : 's'} added to ${module}`,
      clear: () => { form.elements.csv.value = ''; }};
  });

  handle('form-migrate', hooks, async (form) => {
    const pids = parseIds(form.elements.pids.value);
    const to = value(form, 'to');
    if (!to) throw new InputError('enter the module to move the PIDs to', 'to');
    const answer = await submitBatch([{type: 'MIGRATE', pids, to}]);
    return {answer, done: `${pids.length} PID${pids.length === 1 ? '' : 's'} moved to ${to}`,
      clear: () => { form.elements.pids.value = ''; }};
  });

  handle('form-reset', hooks, async (form) => {
    const pids = parseIds(form.elements.pids.value);
    const answer = await submitBatch([{type: 'RESET_QUOTA', pids}]);
    return {answer, done: `quota reset for ${pids.length} PID${pids.length === 1 ? '' : 's'}`,
      clear: () => { form.elements.pids.value = ''; }};
  });

  handle('form-delete', hooks, async (form) => {
    const pids = parseIds(form.elements.pids.value);
    if (!form.elements.confirm.checked) throw new InputError('tick the box to confirm the deletion', 'confirm');
    const answer = await submitBatch([{type: 'DELETE', pids}]);
    return {answer, done: `${pids.length} PID${pids.length === 1 ? '' : 's'} deleted`,
      clear: () => { form.elements.pids.value = ''; form.elements.confirm.checked = false; }};
  });

  handle('form-update', hooks, async (form) => {
    const ids = parseIds(form.elements.pids.value);
    const quota = wholeNumber(form, 'monthlyQuota', false);
    const secret = form.elements.secret.value;
    if (quota === null && secret === '') {
      throw new InputError('enter a new monthly quota, a new password, or both', 'monthlyQuota');
    }
    // UPDATE replaces quota, allowance and attributes: send the current ones for what is not changed
    const specs = [];
    for (const id of ids) {
      const current = (await pid(id)).data;
      const spec = {id, monthlyQuota: quota ?? current.monthlyQuota,
        overageAllowance: current.overageAllowance, attributes: current.attributes || {}};
      if (secret !== '') spec.secret = secret;
      specs.push(spec);
    }
    const answer = await submitBatch([{type: 'UPDATE', pids: specs}]);
    const what = [quota !== null ? `quota ${quota}` : null, secret !== '' ? 'new password' : null].filter(Boolean);
    return {answer, done: `${what.join(' and ')} for ${ids.length} PID${ids.length === 1 ? '' : 's'}`,
      clear: () => { form.elements.secret.value = ''; }};
  });

  const servers = document.getElementById('form-servers');
  servers.elements.module.addEventListener('change', () => {
    const known = hooks.modules().find((m) => m.module === value(servers, 'module'));
    if (known) {
      servers.elements.servers.value = known.servers;
      servers.elements.monthlyDemand.value = known.monthlyDemand || '';
      servers.elements.rebalanceDelaySeconds.value =
        known.rebalanceDelayMs === null || known.rebalanceDelayMs === undefined ? '' : known.rebalanceDelayMs / 1000;
    }
  });
  handle('form-servers', hooks, async (form) => {
    const module = value(form, 'module');
    if (!module) throw new InputError('enter the module', 'module');
    const count = wholeNumber(form, 'servers', true);
    // the API sets a left-out monthlyDemand to 0 and a left-out delay to the default: the form
    // shows the known values, so what is not changed is sent as it was
    const demand = wholeNumber(form, 'monthlyDemand', false) ?? 0;
    const delaySeconds = wholeNumber(form, 'rebalanceDelaySeconds', false);
    const delay = delaySeconds === null ? null : delaySeconds * 1000;
    const answer = await setServers(module, count, demand, delay);
    return {answer, done: `${module}: servers ${count}${demand ? `, monthly demand ${demand}` : ''}`
      + (delay === null ? ', default rebalance delay' : `, rebalance delay ${delaySeconds} s`)};
  });
}

export function selectTab(name) {
  document.querySelectorAll('.tab').forEach((tab) => tab.classList.toggle('active', tab.dataset.tab === name));
  document.querySelectorAll('[data-tab-panel]').forEach((panel) => { panel.hidden = panel.dataset.tabPanel !== name; });
}

function value(form, name) {
  return form.elements[name].value.trim();
}

function wholeNumber(form, name, required) {
  const text = value(form, name);
  if (text === '' && !required) return null;
  if (!/^\d{1,9}$/.test(text)) throw new InputError(`${name} must be a whole number`, name);
  return Number(text);
}

function handle(id, hooks, action) {
  const form = document.getElementById(id);
  const button = form.querySelector('button[type=submit]');
  const errorBox = form.querySelector('.form-error');
  const resultBox = form.querySelector('.form-result');
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    errorBox.hidden = true;
    resultBox.hidden = true;
    form.querySelectorAll('.invalid').forEach((el) => el.classList.remove('invalid'));
    button.disabled = true;
    const label = button.textContent;
    button.textContent = 'Working…';
    try {
      const {answer, done, clear} = await action(form);
      const batch = answer.data;
      hooks.submitted(batch);
      const failures = batchOutcome(batch);
      if (batch.status === 'FAILED' || failures.length) {
        showError(form, errorBox, new ApiError(0, `batch ${batch.id} ${batch.status}`, null, null), failures);
      } else if (answer.status === 202 || batch.status !== 'DEALED') {
        show(resultBox, h('strong', null, `Batch ${batch.id} is ${batch.status}.`),
          ' The leader is still applying it; follow it in the batch history.');
        resultBox.hidden = false;
        if (clear) clear();
      } else {
        show(resultBox, h('strong', null, `Done: ${done}.`), ' ', h('span', {class: 'muted'}, `batch ${batch.id} DEALED`));
        resultBox.hidden = false;
        if (clear) clear();
      }
    } catch (e) {
      const shown = e instanceof ApiError || e instanceof InputError ? e : new ApiError(0, 'unexpected failure: ' + e.message);
      showError(form, errorBox, shown, []);
    } finally {
      button.disabled = false;
      button.textContent = label;
    }
  });
}

/** The server's message as given, the field it names, and for CSV rows the line it came from. */
function showError(form, box, error, details) {
  const parts = [h('strong', {class: 'error-message'}, error.message)];
  if (error.field) {
    parts.push(h('div', {class: 'error-field'}, 'field: ', h('code', null, error.field), csvHint(form, error.field)));
    const input = fieldInput(form, error.field);
    if (input) input.classList.add('invalid');
  }
  if (error.code && error.status) parts.push(h('div', {class: 'error-code'}, `HTTP ${error.status} · ${error.code}`));
  if (error.status === 403) parts.push(h('div', null, 'Your token\'s role may not do this; an operator or admin token can.'));
  for (const detail of details) parts.push(h('div', {class: 'error-detail'}, detail));
  show(box, parts);
  box.hidden = false;
}

function csvHint(form, field) {
  if (form.id !== 'form-add') return null;
  const index = pidIndexOf(field);
  const lines = JSON.parse(form.dataset.csvLines || '[]');
  return index >= 0 && index < lines.length ? ` (CSV line ${lines[index]})` : null;
}

/** The input a field path points at: "operations[0].to" → the "to" input, "csv" → the textarea. */
function fieldInput(form, field) {
  const last = field.replace(/\[\d+\]/g, '').split('.');
  const names = {csv: 'csv', pids: form.id === 'form-add' ? 'csv' : 'pids', module: 'module', to: 'to',
    servers: 'servers', monthlyDemand: 'monthlyDemand', confirm: 'confirm', monthlyQuota: 'monthlyQuota',
    secret: 'secret', rebalanceDelayMs: 'rebalanceDelaySeconds', rebalanceDelaySeconds: 'rebalanceDelaySeconds', id: 'pids'};
  for (let i = last.length - 1; i >= 0; i--) {
    const name = names[last[i]];
    if (name && form.elements[name]) return form.elements[name];
  }
  return null;
}
