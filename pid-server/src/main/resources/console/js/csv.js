// Parsing what operators paste: PIDs as CSV (id,secret,monthlyQuota) and lists of PID ids.
// Messages name the line and the column and quote ids, never a secret.

export class InputError extends Error {
  constructor(message, field) {
    super(message);
    this.field = field || null;
  }
}

const HEADER = ['id', 'secret', 'monthlyquota'];
const WHOLE = /^\d{1,18}$/;

/** Splits CSV text into records of fields (RFC 4180 quoting: "a,b" and "" inside quotes). */
function records(text) {
  const rows = [];
  let row = [];
  let field = '';
  let quoted = false;
  let line = 1;
  let rowLine = 1;
  let wasQuoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else {
          quoted = false;
        }
      } else {
        if (c === '\n') line++;
        field += c;
      }
    } else if (c === '"' && field === '' && !wasQuoted) {
      quoted = true;
      wasQuoted = true;
    } else if (c === ',') {
      row.push(wasQuoted ? field : field.trim());
      field = '';
      wasQuoted = false;
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(wasQuoted ? field : field.trim());
      rows.push({line: rowLine, fields: row});
      row = [];
      field = '';
      wasQuoted = false;
      line++;
      rowLine = line;
    } else if (wasQuoted) {
      if (c.trim() !== '') throw new InputError(`line ${line}: text after a closing quote`, 'csv');
    } else {
      field += c;
    }
  }
  if (quoted) throw new InputError(`line ${rowLine}: a quoted field is not closed`, 'csv');
  row.push(wasQuoted ? field : field.trim());
  rows.push({line: rowLine, fields: row});
  return rows.filter((r) => !(r.fields.length === 1 && r.fields[0] === '') && !r.fields[0].startsWith('#'));
}

/**
 * Parses `id,secret,monthlyQuota` lines (an optional header line with those names is skipped;
 * blank lines and lines starting with # are ignored). Returns {pids, lines}: the PID specs for an
 * ADD operation and, for each, the line it came from. Throws InputError for the first bad line.
 */
export function parsePidCsv(text) {
  const rows = records(String(text || ''));
  if (rows.length > 0 && rows[0].fields.map((f) => f.toLowerCase()).join() === HEADER.join()) {
    rows.shift();
  }
  if (rows.length === 0) {
    throw new InputError('no PIDs: paste one line per PID as id,secret,monthlyQuota', 'csv');
  }
  const pids = [];
  const lines = [];
  const seen = new Map();
  for (const {line, fields} of rows) {
    if (fields.length !== 3) {
      throw new InputError(`line ${line}: expected 3 columns (id,secret,monthlyQuota), found ${fields.length}`, 'csv');
    }
    const [id, secret, quota] = fields;
    if (id === '') throw new InputError(`line ${line}: id is empty`, 'csv');
    if (seen.has(id)) {
      throw new InputError(`line ${line}: PID '${id}' is already on line ${seen.get(id)}`, 'csv');
    }
    if (secret === '') throw new InputError(`line ${line}: secret of '${id}' is empty`, 'csv');
    if (!WHOLE.test(quota)) {
      throw new InputError(`line ${line}: monthlyQuota of '${id}' must be a whole number of commands, was '${quota}'`, 'csv');
    }
    seen.set(id, line);
    pids.push({id, secret, monthlyQuota: Number(quota)});
    lines.push(line);
  }
  return {pids, lines};
}

/** Splits PID ids separated by commas, spaces or new lines; duplicates are dropped. */
export function parseIds(text) {
  const ids = [...new Set(String(text || '').split(/[\s,;]+/).filter((id) => id !== ''))];
  if (ids.length === 0) throw new InputError('enter at least one PID id', 'pids');
  return ids;
}

/**
 * "operations[0].pids[2].monthlyQuota" → 2 (the PID's index in its operation), or -1.
 */
export function pidIndexOf(field) {
  const match = /^operations\[\d+\]\.pids\[(\d+)\]/.exec(field || '');
  return match ? Number(match[1]) : -1;
}
