// DOM helpers. Everything that comes from the server or the user becomes a text node or an
// attribute value set through the DOM API: nothing here parses HTML, so data cannot become markup.

const ATTRIBUTE = /^(class|id|title|type|name|value|for|href|role|colspan|placeholder|list|min|max|step|rows|autocomplete|spellcheck|checked|disabled|hidden|tabindex|data-[a-z-]+|aria-[a-z-]+)$/;

/**
 * Creates an element: h('td', {class: 'num'}, 'text', otherNode, null, ['more', 'children']).
 * Strings become text nodes; null/undefined/false children are skipped; arrays are flattened.
 * Attributes are limited to a fixed list (no event handlers, no style); `on` takes listeners.
 */
export function h(tag, attributes, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === 'on') {
      for (const [event, listener] of Object.entries(value)) el.addEventListener(event, listener);
    } else if (ATTRIBUTE.test(key)) {
      if (key === 'checked' || key === 'disabled' || key === 'hidden') el[key] = Boolean(value);
      else if (key === 'value') el.value = String(value);
      else el.setAttribute(key, value === true ? '' : String(value));
    } else {
      throw new Error('attribute not allowed: ' + key);
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else if (child instanceof Node) el.appendChild(child);
    else el.appendChild(document.createTextNode(String(child)));
  }
}

/** Replaces the children of `el` (by id or element) with `children`. */
export function show(el, ...children) {
  const target = typeof el === 'string' ? document.getElementById(el) : el;
  const fragment = document.createDocumentFragment();
  append(fragment, children);
  target.replaceChildren(fragment);
  return target;
}

export function byId(id) {
  return document.getElementById(id);
}

const NUMBER = new Intl.NumberFormat('en-US');

export function num(value) {
  return typeof value === 'number' && Number.isFinite(value) ? NUMBER.format(value) : '—';
}

/** "2026-11-21 11:02:03" in local time, or the text as given when it does not parse. */
export function time(value) {
  if (!value) return '—';
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) return String(value);
  const pad = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} `
    + `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** A small coloured label, e.g. a state or a severity. */
export function chip(text, kind) {
  return h('span', {class: 'chip chip-' + String(kind || text || 'none').toLowerCase().replace(/[^a-z0-9]+/g, '-')}, text ?? '—');
}

/** A muted one-line placeholder for an empty or unavailable panel. */
export function note(text, kind) {
  return h('p', {class: 'note' + (kind ? ' note-' + kind : '')}, text);
}

/** A table with a header row; `rows` are arrays of cells (nodes or text) or ready <tr> elements. */
export function table(className, headers, rows) {
  return h('table', {class: 'grid ' + className},
    h('thead', null, h('tr', null, headers.map((title) =>
      typeof title === 'string' ? h('th', null, title) : title))),
    h('tbody', null, rows.map((row) => row instanceof Node ? row : h('tr', null, row.map((cell) =>
      cell instanceof Node && cell.tagName === 'TD' ? cell : h('td', null, cell))))));
}
