// The operator page's script (GET /ui/app.js): reads the operator API of the gateway that
// served it (same origin) with the token the operator pasted, and renders the replies.
// Held operations carry provider- and agent-supplied strings (targets, task names, evidence),
// so every value reaches the page as text (textContent, text nodes), never as markup.
'use strict';

const TOKEN_KEY = 'write-gateway.operator-token';
const $ = (id) => document.getElementById(id);

// An element with text children; `attrs` sets properties (className, type, ...), never HTML.
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  Object.assign(node, attrs || {});
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function token() { return sessionStorage.getItem(TOKEN_KEY) || ''; }

class ApiError extends Error {
  constructor(status, body) {
    const code = body && body.code ? body.code : 'http_' + status;
    const detail = body && body.detail ? body.detail : '';
    super(detail ? code + ': ' + detail : code);
    this.status = status;
    this.code = code;
  }
}

// One call to the operator API. No cookies, no referrer, no cache: the token is the only credential.
async function api(method, path, body) {
  const headers = { Authorization: 'Bearer ' + token() };
  const init = { method, headers, credentials: 'omit', cache: 'no-store', referrerPolicy: 'no-referrer', redirect: 'error' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const reply = await fetch(path, init);
  let data = null;
  try { data = await reply.json(); } catch (e) { data = null; }
  if (!reply.ok) throw new ApiError(reply.status, data);
  return data;
}

const segment = encodeURIComponent;
// A label may be "." or "..", which fetch() turns into a step up the path
// (encoded as %2e too): such an operation is named in the query instead.
const dotSegment = (label) => label === '.' || label === '..';
function operationPath(tenant, task, id, action) {
  if ([tenant, task, id].some(dotSegment))
    return '/v1/admin/operation' + (action ? '/' + action : '') + query({ tenant, task, id });
  let path = '/v1/admin/operations/' + segment(tenant) + '/' + segment(task) + '/' + segment(id);
  if (action) path += '/' + action;
  return path;
}
function query(params) {
  const parts = [];
  for (const [key, value] of Object.entries(params))
    if (value !== '' && value !== null && value !== undefined) parts.push(key + '=' + encodeURIComponent(value));
  return parts.length ? '?' + parts.join('&') : '';
}

function time(ms) { return ms === null || ms === undefined ? '' : new Date(ms).toISOString(); }
function duration(ms) {
  let s = Math.floor(ms / 1000);
  const h = Math.floor(s / 3600); s -= h * 3600;
  const m = Math.floor(s / 60); s -= m * 60;
  return (h ? h + 'h' : '') + (h || m ? m + 'm' : '') + s + 's';
}
function text(v) { return v === null || v === undefined ? '' : String(v); }
function stateCell(state) { return el('span', { className: 'state-' + state }, state); }

function say(id, message, kind) {
  const node = $(id);
  node.textContent = message;
  node.className = 'status' + (kind ? ' ' + kind : '');
}

// Each section counts the loads it finished (data-done), so a test can wait for the next one.
async function load(section, statusId, work) {
  try {
    await work();
  } catch (e) {
    say(statusId, e.message, 'error');
    if (e.status === 401 || e.status === 403) say('token-status', e.message, 'error');
  } finally {
    const node = $(section);
    node.dataset.done = String(Number(node.dataset.done) + 1);
  }
}

function fillRows(tbody, rows, append) {
  if (!append) tbody.replaceChildren();
  for (const cells of rows) tbody.append(el('tr', null, ...cells.map((c) => el('td', null, c))));
}

// ---- held operations

let heldCursor = null;
function heldFilters() {
  return { tenant: $('held-tenant').value.trim(), task: $('held-task').value.trim(), provider: $('held-provider').value.trim() };
}
function loadHeld(more) {
  return load('held-section', 'held-status', async () => {
    const params = heldFilters();
    if (more) params.cursor = heldCursor;
    const page = await api('GET', '/v1/admin/held' + query(params));
    heldCursor = page.next_cursor;
    $('held-more').hidden = !heldCursor;
    // The button first: long names widen the table, and the action must stay in view.
    fillRows($('held-table').tBodies[0], page.held.map((op) => [
      el('button', { type: 'button', className: 'open', onclick: () => openOperation(op.tenant, op.task, op.operation) }, 'Open'),
      op.tenant, op.task, op.operation, stateCell(op.state), op.reason, duration(op.held_for_ms), time(op.held_since_ms),
      op.provider, op.method + ' ' + op.target, text(op.attempts),
    ]), more);
    const shown = $('held-table').tBodies[0].rows.length;
    say('held-status', shown ? shown + ' held operation' + (shown === 1 ? '' : 's') + (heldCursor ? ' (more below)' : '')
                             : 'no held operations', 'ok');
  });
}

// ---- one operation

let current = null;  // {tenant, task, id} of the operation shown
function openOperation(tenant, task, id) {
  $('open-tenant').value = tenant;
  $('open-task').value = task;
  $('open-id').value = id;
  current = { tenant, task, id };
  return load('operation-section', 'operation-status', async () => {
    say('operation-status', 'loading...');
    const reply = await api('GET', operationPath(tenant, task, id));
    showOperation(reply.operation);
    say('operation-status', '');
  });
}

function table(headings, rows) {
  const body = el('tbody');
  fillRows(body, rows);
  return el('table', null, el('thead', null, el('tr', null, ...headings.map((h) => el('th', null, h)))), body);
}

function showOperation(op) {
  const box = $('operation');
  box.replaceChildren();
  $('resolve-form').hidden = true;
  if (!op) return;
  const fields = [
    ['tenant', op.tenant], ['task', op.task], ['operation', op.id], ['state', stateCell(op.state)],
    ['held reason', text(op.held_reason)], ['holds its task', op.holds_task ? 'yes' : 'no'],
    ['request', op.method + ' ' + op.provider + ' ' + op.target], ['upstream key', op.upstream_key],
    ['fingerprint', op.fingerprint], ['expected version', text(op.expected_version)],
    ['committed version', text(op.committed_version)], ['task version', text(op.task_version)],
    ['created', time(op.created_ms)], ['updated', time(op.updated_ms)],
    ['forward deadline', time(op.forward_deadline_ms)],
    ['recorded reply', op.response ? 'HTTP ' + op.response.status + ', ' + text(op.response.length) + ' bytes, sha256 ' + text(op.response.sha256) : ''],
    ['resolution', op.resolution ? op.resolution.source + ' at ' + time(op.resolution.resolved_ms) + ', evidence #' + op.resolution.evidence : ''],
  ];
  const list = el('dl', { id: 'operation-fields' });
  for (const [name, value] of fields) list.append(el('dt', null, name), el('dd', null, value));
  box.append(list);
  box.append(el('h3', null, 'Attempts'), table(
    ['attempt', 'grant (owner, epoch, realm)', 'admitted', 'outcome', 'at', 'provider status', 'detail'],
    op.attempts.map((a) => [text(a.attempt), a.owner + ' epoch ' + a.epoch + ' realm ' + a.realm, time(a.admitted_ms),
                            text(a.outcome), time(a.outcome_ms), text(a.upstream_status), text(a.detail)])));
  box.lastChild.id = 'attempts-table';
  box.append(el('h3', null, 'Evidence'), table(
    ['#', 'attempt', 'source', 'outcome', 'provider status', 'detail', 'reference', 'actor', 'recorded', 'body'],
    op.evidence.map((e) => [text(e.id), text(e.attempt), e.source, text(e.outcome), text(e.upstream_status), text(e.detail),
                            text(e.reference), text(e.actor), time(e.recorded_ms),
                            e.sha256 ? text(e.length) + ' bytes, sha256 ' + e.sha256 : ''])));
  box.lastChild.id = 'evidence-table';
  const held = op.state === 'unknown' || op.state === 'in_flight';
  $('resolve-form').hidden = !held;
}

function resolveCurrent() {
  if (!current) return Promise.resolve();
  const outcome = $('resolve-outcome').value;
  const evidence = $('resolve-evidence').value.trim();
  if (!outcome || !evidence) {
    say('operation-status', 'choose an outcome and give the evidence', 'error');
    return Promise.resolve();
  }
  const body = { outcome, evidence };
  const note = $('resolve-note').value.trim();
  if (note) body.note = note;
  const { tenant, task, id } = current;
  return load('operation-section', 'operation-status', async () => {
    const reply = await api('POST', operationPath(tenant, task, id, 'resolve'), body);
    showOperation(reply.operation);
    $('resolve-form').reset();
    say('operation-status', 'resolved ' + outcome + ' (evidence #' + reply.evidence + ')', 'ok');
    await loadHeld(false);
  });
}

function reconcileCurrent() {
  if (!current) return Promise.resolve();
  const { tenant, task, id } = current;
  return load('operation-section', 'operation-status', async () => {
    const reply = await api('POST', operationPath(tenant, task, id, 'reconcile'), {});
    showOperation(reply.operation);
    const l = reply.lookup;
    say('operation-status', 'lookup: ' + l.decision + (l.outcome ? ' ' + l.outcome : '') + (l.detail ? ' (' + l.detail + ')' : ''), 'ok');
    await loadHeld(false);
  });
}

// ---- rejection audit

let rejectionsCursor = null;
function loadRejections(more) {
  return load('rejections-section', 'rejections-status', async () => {
    const params = { tenant: $('rejections-tenant').value.trim(), task: $('rejections-task').value.trim(), code: $('rejections-code').value.trim() };
    if (more) params.cursor = rejectionsCursor;
    const page = await api('GET', '/v1/admin/rejections' + query(params));
    rejectionsCursor = page.next_cursor;
    $('rejections-more').hidden = !rejectionsCursor;
    fillRows($('rejections-table').tBodies[0], page.rejections.map((r) => [
      time(r.authority_ms), r.tenant, r.task, text(r.operation), r.code,
      r.owner === null ? 'none' : r.owner + ' epoch ' + r.epoch + ' realm ' + r.realm,
      r.method + ' ' + r.provider + ' ' + r.target, text(r.expected_version), text(r.request_id),
    ]), more);
    const shown = $('rejections-table').tBodies[0].rows.length;
    say('rejections-status', shown ? shown + ' rejected attempt' + (shown === 1 ? '' : 's') : 'no rejected attempts', 'ok');
  });
}

// ---- wiring

function start() {
  $('main').hidden = false;
  say('token-status', 'token set for this tab', 'ok');
  loadHeld(false);
  loadRejections(false);
}

function submitted(form, action) {
  $(form).addEventListener('submit', (event) => { event.preventDefault(); action(); });
}

document.addEventListener('DOMContentLoaded', () => {
  submitted('token-form', () => {
    const value = $('token').value.trim();
    $('token').value = '';
    if (!value) { say('token-status', 'paste an operator token', 'error'); return; }
    sessionStorage.setItem(TOKEN_KEY, value);
    start();
    const node = $('token-section');
    node.dataset.done = String(Number(node.dataset.done) + 1);
  });
  $('token-forget').addEventListener('click', () => {
    sessionStorage.removeItem(TOKEN_KEY);
    $('main').hidden = true;
    for (const id of ['held-table', 'rejections-table']) $(id).tBodies[0].replaceChildren();
    $('operation').replaceChildren();
    $('resolve-form').hidden = true;
    current = null;
    say('token-status', 'token forgotten');
  });
  submitted('held-filter', () => loadHeld(false));
  $('held-more').addEventListener('click', () => loadHeld(true));
  submitted('open-form', () => {
    const tenant = $('open-tenant').value.trim(), task = $('open-task').value.trim(), id = $('open-id').value.trim();
    if (tenant && task && id) openOperation(tenant, task, id);
    else say('operation-status', 'give a tenant, a task and an operation id', 'error');
  });
  submitted('resolve-form', resolveCurrent);
  $('reconcile').addEventListener('click', reconcileCurrent);
  submitted('rejections-filter', () => loadRejections(false));
  $('rejections-more').addEventListener('click', () => loadRejections(true));
  if (token()) start();
});
