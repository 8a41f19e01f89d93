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

// A refused or failed call: the gateway's code and detail, and the request id it answered with
// (X-Request-Id, on every reply) so an operator can find the call in the gateway's log.
class ApiError extends Error {
  constructor(method, status, body, requestId) {
    const code = body && body.code ? body.code : 'http_' + status;
    const detail = body && body.detail ? body.detail : '';
    super(explain(method, code, detail) + (requestId ? ' (request id ' + requestId + ')' : ''));
    this.status = status;
    this.code = code;
    this.requestId = requestId;
  }
}

// The gateway's own words, except when its database did not answer: then what that means for
// this call. A read changed nothing; a write of this page (resolve, look up) may or may not have
// been recorded before the database went away, so the operator is told to look again.
function explain(method, code, detail) {
  if (code === 'authority_unavailable') {
    if (method === 'GET' || method === 'HEAD')
      return 'authority_unavailable: the gateway\'s database did not answer, so this could not be read; ' +
             'nothing was changed. Try again when it is back';
    return 'authority_unavailable: the gateway\'s database did not answer, so the gateway could not confirm ' +
           'this action; open the operation again to see whether it was recorded';
  }
  return detail ? code + ': ' + detail : code;
}

// One call to the operator API. No cookies, no referrer, no cache: the token is the only credential.
async function api(method, path, body, bearer) {
  const headers = { Authorization: 'Bearer ' + (bearer === undefined ? token() : bearer) };
  const init = { method, headers, credentials: 'omit', cache: 'no-store', referrerPolicy: 'no-referrer', redirect: 'error' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const reply = await fetch(path, init);
  let data = null;
  try { data = await reply.json(); } catch (e) { data = null; }
  if (!reply.ok) throw new ApiError(method, reply.status, data, reply.headers.get('X-Request-Id'));
  if (data && typeof data.now_ms === 'number') serverNow = { at: data.now_ms, seen: Date.now() };
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

// Times: the gateway's authority time, as ISO 8601 UTC and relative to the gateway's "now" (the
// now_ms of its last reply, moved on by this tab's clock since), never raw epoch milliseconds.
let serverNow = null;
function nowMs() { return serverNow ? serverNow.at + (Date.now() - serverNow.seen) : Date.now(); }
function ago(ms) {
  const d = nowMs() - ms;
  if (Math.abs(d) < 1000) return 'just now';
  const span = duration(Math.abs(d));
  return d > 0 ? span + ' ago' : 'in ' + span;
}
function time(ms) { return ms === null || ms === undefined ? '\u2014' : new Date(ms).toISOString() + ' (' + ago(ms) + ')'; }
function duration(ms) {
  let s = Math.floor(ms / 1000);
  const d = Math.floor(s / 86400); s -= d * 86400;
  const h = Math.floor(s / 3600); s -= h * 3600;
  const m = Math.floor(s / 60); s -= m * 60;
  if (d) return d + 'd ' + h + 'h';
  if (h) return h + 'h ' + m + 'min';
  if (m) return m + 'min ' + s + 's';
  return s + 's';
}
// An empty value says so: a dash, never a blank cell.
function text(v) { return v === null || v === undefined || v === '' ? '\u2014' : String(v); }
function stateCell(state) { return el('span', { className: 'state-' + state }, state); }

function say(id, message, kind) {
  const node = $(id);
  node.textContent = message;
  node.className = 'status' + (kind ? ' ' + kind : '');
  return node;
}
// A message about what the operator just did, next to where they did it and scrolled into view.
function tell(id, message, kind) {
  const node = say(id, message, kind);
  if (message) node.scrollIntoView({ block: 'nearest' });
}

function bump(section) {
  const node = $(section);
  node.dataset.done = String(Number(node.dataset.done) + 1);
}

// Each section counts the loads it finished (data-done), so a test can wait for the next one.
async function load(section, statusId, work) {
  try {
    await work();
  } catch (e) {
    tell(statusId, e.message, 'error');
    if (e.status === 401 || e.status === 403) say('token-status', 'token refused by the gateway: ' + e.message, 'error');
  } finally {
    bump(section);
  }
}

function cell(c) { return el('td', null, c === null || c === undefined || c === '' ? '\u2014' : c); }
function fillRows(tbody, rows, append) {
  if (!append) tbody.replaceChildren();
  for (const cells of rows) tbody.append(el('tr', null, ...cells.map(cell)));
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
  say('action-status', '');
  return load('operation-section', 'operation-status', async () => {
    say('operation-status', 'loading...');
    const reply = await api('GET', operationPath(tenant, task, id));
    showOperation(reply.operation);
    say('operation-status', '');
    $('operation-section').scrollIntoView({ block: 'start' });
  });
}

// A table of the operation's record. Each cell carries its column's name (data-label), which the
// style sheet shows when a narrow window stacks a row's cells (ui.css, "narrow").
function table(id, headings, rows) {
  const body = el('tbody');
  fillRows(body, rows);
  for (const tr of body.rows)
    [...tr.cells].forEach((td, i) => {
      td.dataset.label = headings[i];
      td.append(el('div', null, ...td.childNodes));  // one box beside the label when stacked
    });
  return el('table', { id, className: 'record' }, el('thead', null, el('tr', null, ...headings.map((h) => el('th', null, h)))), body);
}

// Why an operation is held, and what the operator can do about it, in words.
function why(op) {
  if (op.state === 'in_flight')
    return op.held_reason === 'forward_abandoned'
      ? 'Its forwarder stopped before recording the provider\'s reply (forward_abandoned): the gateway does not know whether the provider did it.'
      : 'It is being forwarded to the provider now; its forwarder settles it by its forward deadline, ' + time(op.forward_deadline_ms) + '.';
  if (op.state === 'unknown') {
    const last = op.attempts.length ? op.attempts[op.attempts.length - 1] : null;
    const said = last && last.upstream_status ? 'the provider answered HTTP ' + last.upstream_status
                                              : 'no usable reply came back';
    return 'The outcome is unknown (' + text(op.held_reason) + '): ' + said + ', so the gateway cannot tell whether the provider did it. ' +
           (op.holds_task ? 'Until it is settled, no other write on this task is admitted.' : '');
  }
  return 'Settled ' + op.state + (op.resolution ? ' by ' + op.resolution.source + ' evidence at ' + time(op.resolution.resolved_ms) : ' by the provider\'s reply') + '.';
}
function next(op) {
  if (op.state === 'unknown' || (op.state === 'in_flight' && op.held_reason === 'forward_abandoned'))
    return 'Next: check at provider ' + op.provider + ' whether it did ' + op.method + ' ' + op.target +
           ' (its idempotency key is ' + op.upstream_key + '), then resolve below with what it says and where you checked. ' +
           'Or look it up at the provider now.';
  if (op.state === 'in_flight') return 'Next: wait for its forwarder; if the deadline passes, it is held for you to resolve.';
  return 'Next: nothing; this operation is settled.';
}

function showOperation(op) {
  const box = $('operation');
  box.replaceChildren();
  $('resolve-form').hidden = true;
  $('resolve-confirm').hidden = true;
  $('summary').hidden = true;
  if (!op) return;
  const held = op.state === 'unknown' || op.state === 'in_flight';
  $('summary-id').textContent = op.id;
  $('summary-state').replaceChildren(stateCell(op.state), document.createTextNode(
    held ? ' held since ' + time(op.updated_ms) + ', ' + op.attempts.length + ' attempt' + (op.attempts.length === 1 ? '' : 's')
         : ' since ' + time(op.updated_ms)));
  $('summary-why').textContent = why(op);
  $('summary-next').textContent = next(op);
  $('summary').hidden = false;
  $('resolve-form').hidden = !held;

  const reply = op.response;
  const fields = [
    ['tenant', op.tenant], ['task', op.task], ['operation', op.id], ['state', stateCell(op.state)],
    ['held reason', op.held_reason === null ? 'none' : op.held_reason], ['holds its task', op.holds_task ? 'yes' : 'no'],
    ['request', op.method + ' ' + op.provider + ' ' + op.target], ['upstream key', op.upstream_key],
    ['fingerprint', op.fingerprint], ['expected version', text(op.expected_version)],
    ['committed version', text(op.committed_version)], ['task version', text(op.task_version)],
    ['created', time(op.created_ms)], ['updated', time(op.updated_ms)],
    ['forward deadline', time(op.forward_deadline_ms)],
    ['recorded reply', reply ? replyBody(reply, 'HTTP ' + reply.status + ', ') : 'none'],
    ['resolution', op.resolution ? op.resolution.source + ' at ' + time(op.resolution.resolved_ms) + ', evidence #' + op.resolution.evidence : 'none'],
  ];
  const list = el('dl', { id: 'operation-fields' });
  for (const [name, value] of fields) list.append(el('dt', null, name), el('dd', null, value));
  box.append(el('h3', null, 'Record'), list);
  box.append(el('h3', null, 'Attempts'), table('attempts-table',
    ['attempt', 'grant (owner, epoch, realm)', 'admitted', 'outcome', 'at', 'provider status', 'detail'],
    op.attempts.map((a) => [text(a.attempt), a.owner + ' epoch ' + a.epoch + ' realm ' + a.realm, time(a.admitted_ms),
                            text(a.outcome), time(a.outcome_ms), text(a.upstream_status), text(a.detail)])));
  // Repeated identical lookups come folded into one row by the gateway (count, first and last).
  box.append(el('h3', null, 'Evidence'), table('evidence-table',
    ['#', 'recorded', 'source', 'by', 'outcome', 'provider status', 'detail', 'reference', 'reply body'],
    op.evidence.map((e) => [
      (e.count > 1 ? '#' + e.id + '\u2013#' + e.last_id : '#' + e.id) + ' (attempt ' + e.attempt + ')',
      e.count > 1 ? el('span', null, el('strong', { className: 'count' }, e.count + ' identical'), el('br'),
                       'first ' + time(e.recorded_ms), el('br'), 'last ' + time(e.last_recorded_ms))
                  : time(e.recorded_ms),
      e.source, text(e.actor), text(e.outcome), text(e.upstream_status), el('span', { className: 'detail' }, e.detail),
      text(e.reference), e.length === null ? 'none' : replyBody(e, ''),
    ])));
}

// A stored body: size and digest, then the body itself as text (never markup), or what is stored.
function replyBody(b, prefix) {
  // The digest may break anywhere, so it never widens its table column.
  const head = () => el('div', null, prefix + text(b.length) + ' bytes, sha256 ', el('span', { className: 'digest' }, text(b.sha256)));
  if (b.body === null || b.body === undefined) return el('div', null, head(), '(the body itself is not stored)');
  const note = b.body_truncated ? 'first ' + new TextEncoder().encode(b.body).length + ' bytes shown of ' + b.length : '';
  return el('div', { className: 'reply' }, head(),
            b.length === 0 ? el('div', { className: 'hint' }, 'empty body')
                           : el('pre', { className: 'body' }, b.body),
            note ? el('div', { className: 'hint' }, note) : null);
}

// Resolving is for good: the form's submit shows what will be recorded, and only the confirm
// button sends it.
function askResolve() {
  if (!current) return;
  const outcome = $('resolve-outcome').value;
  const evidence = $('resolve-evidence').value.trim();
  if (!outcome || !evidence) {
    tell('action-status', 'choose an outcome and give the evidence', 'error');
    return;
  }
  say('action-status', '');
  $('resolve-confirm-text').textContent = 'Resolve operation ' + current.id + ' of task ' + current.task + ' as ' + outcome +
    ' on evidence "' + evidence + '"? This is recorded for good and frees the task; it cannot be undone.';
  $('resolve-confirm').hidden = false;
  $('resolve-confirm-yes').focus();
  $('resolve-confirm').scrollIntoView({ block: 'nearest' });
}

function resolveCurrent() {
  $('resolve-confirm').hidden = true;
  if (!current) return Promise.resolve();
  const outcome = $('resolve-outcome').value;
  const evidence = $('resolve-evidence').value.trim();
  const body = { outcome, evidence };
  const note = $('resolve-note').value.trim();
  if (note) body.note = note;
  const { tenant, task, id } = current;
  tell('action-status', 'resolving...');
  return load('operation-section', 'action-status', async () => {
    const reply = await api('POST', operationPath(tenant, task, id, 'resolve'), body);
    showOperation(reply.operation);
    $('resolve-form').reset();
    tell('action-status', 'resolved ' + outcome + ' (evidence #' + reply.evidence + ')', 'ok');
    await loadHeld(false);
  });
}

function reconcileCurrent() {
  if (!current) return Promise.resolve();
  const { tenant, task, id } = current;
  tell('action-status', 'looking up at the provider...');
  return load('operation-section', 'action-status', async () => {
    const reply = await api('POST', operationPath(tenant, task, id, 'reconcile'), {});
    showOperation(reply.operation);
    const l = reply.lookup;
    // Still held is not a success: the operator still has to act.
    const settled = l.decision === 'resolved';
    tell('action-status', 'lookup: ' + (settled ? 'resolved ' + text(l.outcome) : 'still held, the provider\'s answer did not settle it') +
         (l.detail ? ' (' + l.detail + ')' : ''), settled ? 'ok' : 'warn');
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

function hide() {
  $('main').hidden = true;
  for (const id of ['held-table', 'rejections-table']) $(id).tBodies[0].replaceChildren();
  $('operation').replaceChildren();
  $('summary').hidden = true;
  $('resolve-form').hidden = true;
  current = null;
}

// A token is "set" only once the gateway accepted it: one cheap authenticated read (the first
// held operation) before the page is shown. Refused, it is dropped from the tab at once.
async function checkToken(value) {
  say('token-status', 'checking the token with the gateway...');
  try {
    await api('GET', '/v1/admin/held?limit=1', undefined, value);
    sessionStorage.setItem(TOKEN_KEY, value);
    say('token-status', 'token set for this tab: the gateway accepted it as an operator token', 'ok');
    $('main').hidden = false;
    loadHeld(false);
    loadRejections(false);
  } catch (e) {
    hide();
    if (e.status === 401 || e.status === 403) {
      sessionStorage.removeItem(TOKEN_KEY);
      say('token-status', 'token refused by the gateway, not kept: ' + e.message, 'error');
    } else {
      say('token-status', 'could not check the token: ' + e.message, 'error');
    }
  } finally {
    bump('token-section');
  }
}

function submitted(form, action) {
  $(form).addEventListener('submit', (event) => { event.preventDefault(); action(); });
}

document.addEventListener('DOMContentLoaded', () => {
  submitted('token-form', () => {
    const value = $('token').value.trim();
    $('token').value = '';
    if (!value) { say('token-status', 'paste an operator token', 'error'); bump('token-section'); return; }
    checkToken(value);
  });
  $('token-forget').addEventListener('click', () => {
    sessionStorage.removeItem(TOKEN_KEY);
    hide();
    say('token-status', 'token forgotten');
  });
  submitted('held-filter', () => loadHeld(false));
  $('held-more').addEventListener('click', () => loadHeld(true));
  submitted('open-form', () => {
    const tenant = $('open-tenant').value.trim(), task = $('open-task').value.trim(), id = $('open-id').value.trim();
    if (tenant && task && id) openOperation(tenant, task, id);
    else say('operation-status', 'give a tenant, a task and an operation id', 'error');
  });
  submitted('resolve-form', askResolve);
  $('resolve-confirm-yes').addEventListener('click', resolveCurrent);
  $('resolve-confirm-no').addEventListener('click', () => {
    $('resolve-confirm').hidden = true;
    say('action-status', 'not resolved');
  });
  $('reconcile').addEventListener('click', reconcileCurrent);
  $('copy-id').addEventListener('click', () => {
    const id = $('summary-id').textContent;
    const done = (ok) => say('action-status', ok ? 'operation id copied' : 'could not copy: select the id and copy it', ok ? 'ok' : 'error');
    if (navigator.clipboard) navigator.clipboard.writeText(id).then(() => done(true), () => done(false));
    else done(false);
  });
  submitted('rejections-filter', () => loadRejections(false));
  $('rejections-more').addEventListener('click', () => loadRejections(true));
  if (token()) checkToken(token());
});
