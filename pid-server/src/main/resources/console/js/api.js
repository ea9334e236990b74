// The operator API (docs/design.md §7) as the console uses it. Every failure becomes an ApiError that
// carries the server's {"error", "field", "code"} answer, so forms can show it as it was given.

const TOKEN_KEY = 'pidpool.token';

export class ApiError extends Error {
  constructor(status, message, field, code) {
    super(message);
    this.status = status;
    this.field = field || null;
    this.code = code || null;
  }

  /** The endpoint does not exist on this server (an older or partial build). */
  get notAvailable() {
    return this.status === 404 || this.status === 405 || this.status === 501;
  }
}

export const token = {
  get() {
    return sessionStorage.getItem(TOKEN_KEY);
  },
  set(value) {
    sessionStorage.setItem(TOKEN_KEY, value);
  },
  clear() {
    sessionStorage.removeItem(TOKEN_KEY);
  },
};

const listeners = new Set();

/** Called with the ApiError whenever the server answers 401 (token missing, wrong or revoked). */
export function onUnauthenticated(listener) {
  listeners.add(listener);
}

/**
 * Sends one request. `path` starts with /api/v1; `body` (optional) is sent as JSON. Resolves with
 * {status, data}; rejects with ApiError (status 0 when the server cannot be reached).
 */
export async function request(method, path, body, bearer = token.get()) {
  const headers = {Accept: 'application/json'};
  if (bearer) headers.Authorization = 'Bearer ' + bearer;
  const init = {method, headers, cache: 'no-store'};
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, 'the server cannot be reached (' + e.message + ')', null, 'UNREACHABLE');
  }
  let data = null;
  const type = response.headers.get('Content-Type') || '';
  if (type.includes('json')) {
    try {
      data = await response.json();
    } catch (e) {
      data = null;
    }
  }
  if (!response.ok) {
    const message = data && typeof data.error === 'string'
      ? data.error
      : `HTTP ${response.status} ${response.statusText || ''}`.trim();
    const error = new ApiError(response.status, message, data && data.field, data && data.code);
    if (response.status === 401) listeners.forEach((listener) => listener(error));
    throw error;
  }
  return {status: response.status, data};
}

export const get = (path, bearer) => request('GET', path, undefined, bearer);

/** Every page of GET /api/v1/pids (at most `max` PIDs); resolves with {pids, truncated}. */
export async function allPids(max = 20000) {
  const pids = [];
  let after = null;
  while (pids.length < max) {
    const query = new URLSearchParams({limit: String(Math.min(5000, max - pids.length))});
    if (after) query.set('after', after);
    const {data} = await get('/api/v1/pids?' + query);
    pids.push(...(data.pids || []));
    after = data.next;
    if (!after) return {pids, truncated: false};
  }
  return {pids, truncated: true};
}

/** Submits operations as one batch and waits (server-side) up to `timeoutMs` for the outcome. */
export function submitBatch(operations, timeoutMs = 30000) {
  return request('POST', `/api/v1/batches?wait=true&timeoutMs=${timeoutMs}`, {operations});
}

/**
 * PUT /api/v1/modules/{module}: the module's server count, monthly demand and rebalance delay
 * (null: the server's default).
 */
export function setServers(module, servers, monthlyDemand, rebalanceDelayMs, timeoutMs = 30000) {
  const body = {servers};
  if (monthlyDemand !== null && monthlyDemand !== undefined) body.monthlyDemand = monthlyDemand;
  if (rebalanceDelayMs !== null && rebalanceDelayMs !== undefined) body.rebalanceDelayMs = rebalanceDelayMs;
  return request('PUT', `/api/v1/modules/${encodeURIComponent(module)}?wait=true&timeoutMs=${timeoutMs}`, body);
}

export function batch(id) {
  return get('/api/v1/batches/' + encodeURIComponent(id));
}

/** GET /api/v1/pids/{id}: one PID with its attributes (never its secret). */
export function pid(id) {
  return get('/api/v1/pids/' + encodeURIComponent(id));
}

/** POST /api/v1/alerts/{id}/ack: acknowledges an open alert (operator); resolves with the alert. */
export function acknowledgeAlert(id) {
  return request('POST', '/api/v1/alerts/' + encodeURIComponent(id) + '/ack');
}
