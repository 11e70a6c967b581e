// scorehub endpoint test page.
//
// List the endpoints of the management API (the public groups' ones
// without signing in, all of them once signed in with the token service),
// and for one endpoint: show its URL, send it a request,
// show the answer as a table and as JSON (and, for an endpoint that
// explains its predictions, a row's contributions as a chart), and build
// the same request as a curl command; for a model endpoint with
// challengers, show how they compare with its model, and let an
// administrator promote one; for a model endpoint whose version has a
// reference, show how the rows it scored lately drift from it. An
// endpoint of a protected group is called with the credential the tester
// chooses among those its group takes: their idToken, a user name and
// password, or an API token. The idToken lives in this script's memory
// only, the password and the API token in their form fields only: never
// in storage, never in a cookie or a URL. Everything the page shows
// comes from the server and is put in the page as text, never as markup.
'use strict';

(() => {
  const $ = (id) => document.getElementById(id);

  // Where the APIs are: configured by the server, else beside the page's
  // parent (/ui/ → /api/v1/…, /api/rest/tokenservice).
  const managementBase = new URL(document.body.dataset.management || '../', location.href);
  const tokenServiceURL = new URL(document.body.dataset.tokenService || '../api/rest/tokenservice', location.href);

  const MAX_TIMER = 2147483647; // setTimeout's largest delay

  // ---------------------------------------------------------------------
  // Exact JSON: numbers keep their source text, objects their key order, so
  // a 20-digit ID is shown as the server sent it, not rounded to a double.

  class JNum {
    constructor(raw) { this.raw = raw; }
  }

  const numberPattern = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

  // parseExact parses strict JSON. Objects become Maps, numbers JNums.
  function parseExact(text) {
    let i = 0;
    const n = text.length;
    const fail = (what) => { throw new SyntaxError(`${what} at character ${i + 1}`); };
    const skip = () => {
      while (i < n) {
        const c = text.charCodeAt(i);
        if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
        i++;
      }
    };
    const string = () => {
      const start = i++;
      while (i < n) {
        const c = text[i];
        if (c === '\\') {
          i += 2;
        } else if (c === '"') {
          i++;
          return JSON.parse(text.slice(start, i)); // checks escapes and control characters
        } else {
          i++;
        }
      }
      return fail('unterminated string');
    };
    const value = (depth) => {
      if (depth > 512) fail('nesting too deep');
      skip();
      if (i >= n) fail('unexpected end of the text');
      const c = text[i];
      if (c === '{') {
        i++;
        const m = new Map();
        skip();
        if (text[i] === '}') { i++; return m; }
        for (;;) {
          skip();
          if (text[i] !== '"') fail('expected a member name');
          const key = string();
          skip();
          if (text[i] !== ':') fail("expected ':'");
          i++;
          m.set(key, value(depth + 1));
          skip();
          if (text[i] === ',') { i++; continue; }
          if (text[i] === '}') { i++; return m; }
          fail("expected ',' or '}'");
        }
      }
      if (c === '[') {
        i++;
        const a = [];
        skip();
        if (text[i] === ']') { i++; return a; }
        for (;;) {
          a.push(value(depth + 1));
          skip();
          if (text[i] === ',') { i++; continue; }
          if (text[i] === ']') { i++; return a; }
          fail("expected ',' or ']'");
        }
      }
      if (c === '"') return string();
      for (const [word, v] of [['true', true], ['false', false], ['null', null]]) {
        if (text.startsWith(word, i)) { i += word.length; return v; }
      }
      numberPattern.lastIndex = i;
      const m = numberPattern.exec(text);
      if (m) { i = numberPattern.lastIndex; return new JNum(m[0]); }
      return fail('unexpected character');
    };
    const v = value(0);
    skip();
    if (i < n) fail('unexpected data after the value');
    return v;
  }

  const isScalar = (v) => !(v instanceof Map) && !Array.isArray(v);

  function scalarText(v) {
    if (v === null) return 'null';
    if (v instanceof JNum) return v.raw;
    if (typeof v === 'string') return JSON.stringify(v);
    return String(v);
  }

  // formatJSON lays out a parsed value with two-space indents, keeping a
  // container of scalars (a typical row) on one line.
  function formatJSON(v, indent = '') {
    if (isScalar(v)) return scalarText(v);
    const inner = indent + '  ';
    if (Array.isArray(v)) {
      if (v.length === 0) return '[]';
      if (v.every(isScalar)) return '[' + v.map(scalarText).join(', ') + ']';
      return '[\n' + v.map((x) => inner + formatJSON(x, inner)).join(',\n') + '\n' + indent + ']';
    }
    if (v.size === 0) return '{}';
    const entries = [...v];
    if (entries.every(([, x]) => isScalar(x))) {
      return '{' + entries.map(([k, x]) => JSON.stringify(k) + ': ' + scalarText(x)).join(', ') + '}';
    }
    return '{\n' + entries.map(([k, x]) => inner + JSON.stringify(k) + ': ' + formatJSON(x, inner)).join(',\n') +
      '\n' + indent + '}';
  }

  // errorOf returns the {type, message, pointer, fields} of a scorehub error
  // answer, or null.
  function errorOf(text) {
    let v;
    try { v = JSON.parse(text); } catch { return null; }
    const e = v && typeof v === 'object' ? v.error : null;
    if (!e || typeof e !== 'object' || typeof e.type !== 'string') return null;
    return {
      type: e.type,
      message: typeof e.message === 'string' ? e.message : '',
      pointer: typeof e.pointer === 'string' ? e.pointer : '',
      fields: Array.isArray(e.fields) ? e.fields : [],
    };
  }

  // shellQuote quotes s for POSIX shells: inside single quotes nothing is
  // special, and a single quote is written as '\'' (close, escaped quote,
  // reopen).
  const shellQuote = (s) => "'" + s.replace(/'/g, "'\\''") + "'";

  // ---------------------------------------------------------------------
  // Small DOM helpers. Text goes in as text nodes only.

  function el(tag, attrs = {}, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') e.className = v;
      else e.setAttribute(k, v === true ? '' : String(v));
    }
    for (const c of children) {
      if (c === null || c === undefined) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }

  function show(id, visible) { $(id).hidden = !visible; }

  function notice(id, text, kind) {
    const p = $(id);
    p.textContent = text || '';
    p.hidden = !text;
    p.classList.toggle('notice-error', kind === 'error');
    p.classList.toggle('notice-ok', kind === 'ok');
  }

  function announce(text) {
    const a = $('announce');
    a.textContent = '';
    // A fresh node makes screen readers speak a message repeated verbatim.
    setTimeout(() => { a.textContent = text; }, 30);
  }

  function busy(button, on, label) {
    if (on) {
      button.dataset.label = button.textContent;
      button.textContent = label;
      button.disabled = true;
    } else if (button.dataset.label) {
      button.textContent = button.dataset.label;
      delete button.dataset.label;
      button.disabled = false;
    }
  }

  function plural(n, one, many) { return `${n} ${n === 1 ? one : many}`; }

  // ---------------------------------------------------------------------
  // Session: the idToken, in memory only.

  const session = {
    token: null,
    login: '',     // the name signed in with, for the curl command
    subject: '',
    admin: false,  // the token's admin claim: an administrator is offered the writes
    expiresAt: 0,  // by this browser's clock
    lifetime: 0,   // of the current token, in milliseconds
    timer: 0,
    gen: 0,        // bumped at every sign-in and sign-out: stale answers are dropped
  };

  class SessionEnded extends Error {}

  const signedIn = () => session.token !== null && Date.now() < session.expiresAt;

  function basicCredentials(user, password) {
    const bytes = new TextEncoder().encode(`${user}:${password}`);
    let s = '';
    for (const b of bytes) s += String.fromCharCode(b);
    return btoa(s);
  }

  // claimsOf returns the claims of a JWT, unverified: they only decide
  // what the page offers (the server checks the token at every call).
  function claimsOf(jwt) {
    try {
      const part = jwt.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
      const bytes = Uint8Array.from(atob(part), (c) => c.charCodeAt(0));
      const claims = JSON.parse(new TextDecoder().decode(bytes));
      return claims && typeof claims === 'object' ? claims : {};
    } catch {
      return {};
    }
  }

  async function signIn(event) {
    event.preventDefault();
    const user = $('username').value.trim();
    const password = $('password').value;
    if (!user || !password) {
      notice('signin-message', 'Enter your username and password.', 'error');
      (user ? $('password') : $('username')).focus();
      return;
    }
    const button = $('signin-submit');
    busy(button, true, 'Signing in…');
    try {
      let res;
      try {
        res = await fetch(tokenServiceURL, {
          headers: { Authorization: 'Basic ' + basicCredentials(user, password), Accept: 'application/json' },
          // No browser credentials: a 401 must not open the browser's own
          // sign-in dialog, and no cookie is wanted.
          credentials: 'omit',
          cache: 'no-store',
        });
      } catch {
        notice('signin-message', 'The token service cannot be reached. Check the connection and try again.', 'error');
        return;
      }
      const text = await res.text();
      if (res.status === 200) {
        let body;
        try { body = JSON.parse(text); } catch { body = null; }
        const expires = body ? Date.parse(body.expirationDate) : NaN;
        if (!body || typeof body.idToken !== 'string' || Number.isNaN(expires)) {
          notice('signin-message', 'The token service answered with something that is not a token.', 'error');
          return;
        }
        $('password').value = '';
        startSession(body.idToken, user, Date.now() + tokenLifetime(res, expires));
        return;
      }
      const err = errorOf(text);
      if (res.status === 401) {
        notice('signin-message', 'Sign-in failed: the username or password is not correct.', 'error');
        $('password').select();
        $('password').focus();
      } else if (res.status === 429) {
        const wait = res.headers.get('Retry-After');
        notice('signin-message', `Too many sign-in attempts. Try again in ${wait ? plural(Number(wait), 'second', 'seconds') : 'a moment'}.`, 'error');
      } else {
        notice('signin-message', `Sign-in failed with status ${res.status}${err ? ` (${err.type}: ${err.message})` : ''}.`, 'error');
      }
    } finally {
      busy(button, false);
    }
  }

  function startSession(token, login, expiresAt) {
    clearTimeout(session.timer);
    if (login !== session.login) $('call-user').value = login;
    session.gen++;
    session.token = token;
    session.login = login;
    const claims = claimsOf(token);
    session.subject = typeof claims.sub === 'string' && claims.sub ? claims.sub : login;
    session.admin = claims.admin === true;
    session.expiresAt = expiresAt;
    session.lifetime = expiresAt - Date.now();
    armTimer();

    notice('signin-message', '');
    $('session-user').textContent = session.subject;
    showExpiry();
    show('signin', false);
    show('session', true);
    show('app', true);
    $('main').focus();
    // An empty row given for want of a token, left as it was, gives way to
    // the process's sample now that it can be read.
    for (const key of state.unsampled) if (state.bodies.get(key) === emptyBody) state.bodies.delete(key);
    state.unsampled.clear();
    loadMenu();
  }

  // tokenLifetime measures how long a token that expires at expires (by the
  // server's clock) has left, from the answer res that brought it, by the
  // server's clock, so a browser whose clock is off neither keeps it too long
  // nor drops it at once. The Date header counts whole seconds, so the
  // server's time may be up to a second past it: the lifetime is taken that
  // much shorter, lest a short-lived token be renewed after it expired.
  function tokenLifetime(res, expires) {
    const serverNow = Date.parse(res.headers.get('Date') || '');
    if (Number.isNaN(serverNow)) return expires - Date.now();
    return expires - serverNow - 1000;
  }

  // armTimer schedules the next renewal of the idToken, a quarter of its
  // lifetime before it expires (at most a minute before, at least a
  // second), and the end of the session should it expire all the same.
  function armTimer() {
    clearTimeout(session.timer);
    const left = session.expiresAt - Date.now();
    if (left <= 0) {
      endSession('Your session expired — sign in again.');
      return;
    }
    const margin = Math.max(1000, Math.min(60000, session.lifetime / 4));
    if (left > margin) {
      session.timer = setTimeout(() => renew(), Math.min(left - margin, MAX_TIMER));
    } else {
      // Renewal failed so far: try again shortly, and end the session when
      // the token expires.
      session.timer = setTimeout(() => renew(), Math.min(left + 50, Math.max(250, left / 2)));
    }
  }

  // renew trades the idToken for a fresh one at the token service, so the
  // tester stays signed in while the page is open without the page keeping
  // the password. A refusal (the password changed, the token was revoked)
  // ends the session; a network failure or a rate limit is retried until
  // the token expires. It reports whether the token was renewed.
  async function renew() {
    if (session.token === null) return false;
    const gen = session.gen;
    let res, text;
    try {
      res = await fetch(new URL(tokenServiceURL.pathname.replace(/\/?$/, '/renew'), tokenServiceURL), {
        headers: { Authorization: 'Bearer ' + session.token, Accept: 'application/json' },
        credentials: 'omit',
        cache: 'no-store',
      });
      text = await res.text();
    } catch {
      res = null;
    }
    if (gen !== session.gen) return false; // signed out or in again meanwhile
    if (res && res.status === 200) {
      let body;
      try { body = JSON.parse(text); } catch { body = null; }
      const expires = body ? Date.parse(body.expirationDate) : NaN;
      if (body && typeof body.idToken === 'string' && !Number.isNaN(expires)) {
        const lifetime = tokenLifetime(res, expires);
        session.token = body.idToken;
        session.admin = claimsOf(body.idToken).admin === true;
        session.expiresAt = Date.now() + lifetime;
        session.lifetime = lifetime;
        showExpiry();
        armTimer();
        return true;
      }
    }
    if (res && (res.status === 401 || res.status === 403)) {
      endSession('Your session ended (the token can no longer be renewed) — sign in again.');
      return false;
    }
    armTimer(); // retried shortly; the session ends when the token expires
    return false;
  }

  function showExpiry() {
    const t = $('session-expiry');
    const at = new Date(session.expiresAt);
    t.dateTime = at.toISOString();
    t.textContent = at.toLocaleTimeString();
  }

  // endSession forgets the token and the secrets typed to call an endpoint,
  // and asks for a sign-in, with message. The endpoint in view and the
  // bodies typed are kept for the next session.
  function endSession(message, kind = 'error') {
    clearTimeout(session.timer);
    const wasSignedIn = session.token !== null;
    session.gen++;
    session.token = null;
    session.admin = false;
    session.expiresAt = 0;
    clearSecrets();
    forgetRivals();
    forgetDrift();
    show('session', false);
    show('signin', true);
    notice('signin-message', message, kind);
    if (wasSignedIn || message) {
      const focus = $('username').value ? $('password') : $('username');
      focus.focus();
    }
    // Public endpoints are testable without signing in.
    show('app', true);
    loadMenu();
  }

  // A tab that slept may have missed its timer.
  document.addEventListener('visibilitychange', () => {
    if (session.token !== null && !signedIn()) endSession('Your session expired — sign in again.');
  });

  // api calls a management route with the idToken, or with no credential
  // at all when anonymous is set and nobody is signed in (the endpoint list
  // answers so with the public groups' endpoints): a GET, or the method
  // given with body as JSON and ifMatch as If-Match. A 401 ends the
  // session; any other failure throws an Error with the answer's status.
  async function api(path, { exact = false, anonymous = false, method = 'GET', body, ifMatch } = {}) {
    const bare = anonymous && session.token === null;
    if (!bare && !signedIn()) {
      endSession('Your session expired — sign in again.');
      throw new SessionEnded();
    }
    const gen = session.gen;
    const headers = { Accept: 'application/json' };
    if (!bare) headers.Authorization = 'Bearer ' + session.token;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (ifMatch) headers['If-Match'] = ifMatch;
    const res = await fetch(new URL(path, managementBase), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'omit',
      cache: 'no-store',
    });
    const text = await res.text();
    if (gen !== session.gen) throw new SessionEnded();
    if (res.status === 401 && !bare) {
      endSession('Your session expired — sign in again.');
      throw new SessionEnded();
    }
    if (!res.ok) {
      const e = errorOf(text);
      const err = new Error(e ? `${e.type}: ${e.message}` : `status ${res.status}`);
      err.status = res.status;
      throw err;
    }
    return exact ? parseExact(text) : JSON.parse(text);
  }

  // ---------------------------------------------------------------------
  // Menu: web API groups → deployments → endpoints, with queue figures.

  const state = {
    endpoints: [],          // GET /api/v1/endpoints
    groups: [],             // GET /api/v1/webapigroups
    queues: new Map(),      // name → GET /executions/queues entry
    processes: new Map(),   // endpoint key → Promise of {output: Set, sample: string|null}
    bodies: new Map(),      // endpoint key → the editor's text
    results: new Map(),     // endpoint key → the last result shown
    unsampled: new Set(),   // endpoint keys given the empty row for want of a token
    current: '',            // endpoint key in view
  };

  const keyOf = (ep) => `${ep.group}/${ep.path}/${ep.alias}`;
  // endpointRoute is ep's place under /api/v1/endpoints/.
  const endpointRoute = (ep) => [ep.group, ep.path, ep.alias].map(encodeURIComponent).join('/');
  const currentEndpoint = () => state.endpoints.find((ep) => keyOf(ep) === state.current) || null;

  async function loadMenu() {
    notice('menu-message', '');
    const anonymous = session.token === null;
    show('menu-signin', anonymous);
    try {
      // Without a token: the public groups' endpoints, no groups, no queues.
      const [endpoints, groups, queues] = await Promise.all(anonymous
        ? [api('api/v1/endpoints', { anonymous }), [], []]
        : [api('api/v1/endpoints'), api('api/v1/webapigroups'), api('executions/queues')]);
      state.endpoints = Array.isArray(endpoints) ? endpoints : [];
      // An endpoint of a model alias runs another version once the alias
      // moves: read what each runs afresh.
      state.processes.clear();
      state.groups = Array.isArray(groups) ? groups : [];
      state.queues = new Map((Array.isArray(queues) ? queues : []).map((q) => [q.name, q]));
    } catch (e) {
      if (!(e instanceof SessionEnded)) notice('menu-message', `The endpoints cannot be loaded (${e.message}).`, 'error');
      return;
    }
    renderMenu();
    const wanted = state.current || hashKey();
    if (wanted && state.endpoints.some((ep) => keyOf(ep) === wanted)) {
      openEndpoint(wanted, false);
    } else {
      state.current = '';
      showUnseen(wanted);
    }
  }

  // hashKey is the endpoint the page's address names, or ''.
  function hashKey() {
    try {
      return decodeURIComponent(location.hash.slice(1));
    } catch {
      return location.hash.slice(1);
    }
  }

  // showUnseen shows the welcome card, or, when the page's address names
  // an endpoint key the menu does not list, why it is not shown: a link to
  // a protected group's endpoint asks a visitor to sign in first; a tester
  // signed in learns that it does not exist or is not theirs to see,
  // which the server does not tell apart.
  function showUnseen(key) {
    show('endpoint', false);
    if (!key) {
      show('unseen', false);
      show('welcome', true);
      return;
    }
    if (signedIn()) {
      $('unseen-title').textContent = 'This endpoint is not available to you';
      $('unseen-message').textContent = `The endpoint ${key} does not exist, or its web API group does not let ${session.subject} see it. Choose an endpoint in the menu.`;
    } else {
      $('unseen-title').textContent = 'Sign in to see this endpoint';
      $('unseen-message').textContent = `The endpoint ${key} is not one of the public endpoints. If it belongs to a protected web API group, sign in with an account the group admits to see and test it.`;
    }
    show('welcome', false);
    show('unseen', true);
  }

  async function refreshQueues() {
    if (!signedIn()) return; // the figures are for signed-in testers only
    try {
      const queues = await api('executions/queues');
      state.queues = new Map((Array.isArray(queues) ? queues : []).map((q) => [q.name, q]));
    } catch {
      return; // the figures stay as they were; the next refresh tries again
    }
    renderQueues();
    const ep = currentEndpoint();
    if (ep) $('endpoint-queue').textContent = queueText(ep.queue);
  }

  function badge(text, kind) {
    return el('span', { class: `badge${kind ? ' badge-' + kind : ''}` }, text);
  }

  function authBadge(mode) {
    return mode === 'token' ? badge('token required', 'token') : badge('public');
  }

  function renderMenu() {
    const tree = $('menu-tree');
    tree.replaceChildren();
    const byGroup = new Map(state.groups.map((g) => [g.name, { group: g, deployments: new Map() }]));
    for (const ep of state.endpoints) {
      if (!byGroup.has(ep.group)) byGroup.set(ep.group, { group: { name: ep.group, description: '', auth: { mode: ep.auth } }, deployments: new Map() });
      const deps = byGroup.get(ep.group).deployments;
      if (!deps.has(ep.path)) deps.set(ep.path, []);
      deps.get(ep.path).push(ep);
    }
    if (byGroup.size === 0) {
      tree.append(el('p', { class: 'menu-empty' }, 'No web API groups yet.'));
    }
    const groups = el('ul', { 'aria-label': 'Web API groups' });
    for (const { group, deployments } of byGroup.values()) {
      const item = el('li', { class: 'menu-group' },
        el('div', { class: 'menu-group-head' }, el('span', {}, group.name), authBadge(group.auth && group.auth.mode)));
      if (group.description) item.append(el('p', { class: 'menu-group-desc' }, group.description));
      if (deployments.size === 0) item.append(el('p', { class: 'menu-empty' }, 'No deployments.'));
      const deps = el('ul', { 'aria-label': `Deployments of ${group.name}` });
      for (const [path, eps] of deployments) {
        const list = el('ul', { 'aria-label': `Endpoints of ${group.name}/${path}` });
        for (const ep of eps) {
          const key = keyOf(ep);
          // The button's name is its visible text, as speech input users
          // say it (WCAG 2.5.3), then, for screen readers, where the
          // endpoint is.
          const button = el('button', {
            type: 'button',
            class: 'menu-endpoint',
            'data-endpoint': key,
            'aria-current': key === state.current ? 'true' : 'false',
          }, el('span', {}, ep.alias), ' ', badge(ep.state, ep.state),
          el('span', { class: 'sr-only' }, `, in ${group.name}/${path}`));
          button.addEventListener('click', () => openEndpoint(key, true));
          list.append(el('li', {}, button));
        }
        deps.append(el('li', { class: 'menu-deployment' }, el('div', { class: 'menu-deployment-head' }, path), list));
      }
      item.append(deps);
      groups.append(item);
    }
    tree.append(groups);
    if (!signedIn()) return;
    tree.append(el('section', { class: 'menu-queues', 'aria-labelledby': 'queues-title' },
      el('h3', { id: 'queues-title' }, 'Execution queues'), el('ul', { id: 'queue-list' })));
    renderQueues();
  }

  function renderQueues() {
    const list = $('queue-list');
    if (!list) return;
    list.replaceChildren();
    for (const q of state.queues.values()) {
      list.append(el('li', { 'data-queue': q.name },
        el('span', {}, q.name),
        el('span', { class: 'muted' }, `${q.running} running · ${q.waiting} waiting · ${q.completed} done`)));
    }
  }

  function queueText(name) {
    const q = state.queues.get(name);
    if (!q) return name;
    return `${name} — ${q.running} of ${q.maxConcurrent} running, ${q.waiting} of ${q.maxWaiting} waiting; ` +
      `${q.completed} completed, ${q.failed} failed, ${q.rejected} rejected, ${q.timedOut} timed out`;
  }

  // ---------------------------------------------------------------------
  // One endpoint.

  // runsText names what ep runs: its catalog process or its model version.
  const runsText = (ep) => (ep.model ? `model ${ep.model}` : `process ${ep.process}`);

  // processInfo returns what ep runs, its catalog process or the model
  // version its reference names, as the endpoint's process route shows it:
  // to anyone for an endpoint of a public group, as the menu lists it.
  function processInfo(ep) {
    const key = keyOf(ep);
    if (!state.processes.has(key)) {
      const p = api(`api/v1/endpoints/${endpointRoute(ep)}/process`, { exact: true, anonymous: true }).then((v) => {
        const output = new Set();
        for (const c of v.get('output') || []) if (c instanceof Map) output.add(c.get('name'));
        const sample = v.get('sample');
        return { output, sample: Array.isArray(sample) ? formatJSON(new Map([['data', sample]])) : null };
      });
      p.catch(() => state.processes.delete(key)); // try again next time
      state.processes.set(key, p);
    }
    return state.processes.get(key);
  }

  async function openEndpoint(key, fromMenu) {
    const ep = state.endpoints.find((e) => keyOf(e) === key);
    if (!ep) return;
    const another = state.current !== key;
    if (state.current && another) state.bodies.set(state.current, $('body').value);
    state.current = key;
    history.replaceState(null, '', '#' + encodeURIComponent(key).replace(/%2F/g, '/'));
    for (const b of document.querySelectorAll('.menu-endpoint')) {
      b.setAttribute('aria-current', b.dataset.endpoint === key ? 'true' : 'false');
    }

    $('endpoint-crumbs').textContent = `${ep.group} / ${ep.path}`;
    $('endpoint-title').textContent = ep.alias;
    $('endpoint-badges').replaceChildren(badge(ep.state, ep.state), authBadge(ep.auth));
    $('endpoint-description').textContent = ep.description || ep.processDescription || '';
    const runs = ep.model ? runsText(ep) : ep.process;
    $('endpoint-process').textContent = ep.processDescription ? `${runs} — ${ep.processDescription}` : runs;
    $('endpoint-queue').textContent = signedIn() ? queueText(ep.queue) : ep.queue;
    $('endpoint-timeout').textContent = ep.timeoutMs > 0 ? `${ep.timeoutMs} ms` : 'the server default';
    $('endpoint-url').value = ep.url;

    const notes = [];
    if (ep.auth === 'token') {
      notes.push(`The group ${ep.group} takes ${listText(schemesOf(ep).map((k) => kinds[k].name))}: Run Test sends the one chosen under Call as.`);
    }
    if (ep.state === 'disabled') notes.push('The deployment is disabled: requests are answered 404 endpoint_disabled.');
    if (ep.state === 'unavailable') {
      notes.push(ep.model
        ? `The model ${ep.model} cannot be loaded in this server: requests are answered 503.`
        : `The process ${ep.process} is not in this server's catalog: requests are answered 503.`);
    }
    notice('endpoint-auth-note', notes.join(' '));

    showCallAs(ep, another);
    $('curl-token').checked = false;
    show('curl-token-row', ep.auth === 'token');
    show('welcome', false);
    show('unseen', false);
    show('endpoint', true);
    fitURL();
    renderResult(state.results.get(key) || null);
    loadChallengers(ep);
    loadDrift(ep);

    const editor = $('body');
    if (state.bodies.has(key)) {
      // Left alone when unchanged: a menu reloaded while the tester types
      // must not move the cursor.
      if (editor.value !== state.bodies.get(key)) editor.value = state.bodies.get(key);
      if (state.unsampled.has(key)) showSampleHint(ep);
      else show('body-sample-hint', false);
    } else {
      editor.value = '';
      editor.placeholder = 'Loading the sample input…';
      const sample = await sampleBody(ep);
      if (state.current !== key) return;
      editor.placeholder = '';
      editor.value = sample;
      state.bodies.set(key, sample);
    }
    updateCurl();
    if (fromMenu) bringIntoView($('endpoint-title'));
  }

  // bringIntoView scrolls the window so that e is at its top when e is
  // not already in the top third: in one column (a phone) the endpoint is
  // below the menu, and brought just over the bottom edge it would go
  // unnoticed.
  function bringIntoView(e) {
    const r = e.getBoundingClientRect();
    if (r.top < 0 || r.bottom > window.innerHeight / 3) e.scrollIntoView({ block: 'start' });
  }

  // emptyBody is the request body of one empty row.
  const emptyBody = '{\n  "data": [\n    {}\n  ]\n}';

  // sampleBody returns the sample input of ep's process, else an empty row
  // to fill in, and says why when it is the empty row.
  async function sampleBody(ep) {
    show('body-sample-hint', false);
    try {
      const p = await processInfo(ep);
      if (p.sample) return p.sample;
    } catch {
      // no sample: an empty row to fill in
    }
    if (!signedIn()) state.unsampled.add(keyOf(ep));
    showSampleHint(ep);
    return emptyBody;
  }

  // showSampleHint says why the body of ep is an empty row.
  function showSampleHint(ep) {
    $('body-sample-hint').textContent = signedIn()
      ? `The ${runsText(ep)} has no sample input: fill in the row's input columns.`
      : `The sample input of the ${runsText(ep)} could not be read: fill in the row's input columns, or sign in.`;
    show('body-sample-hint', true);
  }

  async function resetBody() {
    const ep = currentEndpoint();
    if (!ep) return;
    $('body').value = await sampleBody(ep);
    state.bodies.set(keyOf(ep), $('body').value);
    updateCurl();
    $('body').focus();
  }

  // ---------------------------------------------------------------------
  // Call as: the credential Run Test and the curl command send to an
  // endpoint of a protected group.

  // kinds are the kinds of credentials a group may take, by the name its
  // auth.schemes gives them, in the order the page offers them.
  const kinds = {
    bearer: { name: 'idToken (Bearer)' },
    basic: { name: 'user name and password (Basic)' },
    apitoken: { name: 'API token (apitoken)' },
  };
  const kindOrder = ['bearer', 'basic', 'apitoken'];

  // schemesOf returns the kinds of credentials ep's group takes, in the
  // page's order: none for a public group; the idToken alone from a server
  // that does not list them.
  function schemesOf(ep) {
    if (ep.auth !== 'token') return [];
    const listed = Array.isArray(ep.schemes) ? ep.schemes : ['bearer'];
    return kindOrder.filter((k) => listed.includes(k));
  }

  function listText(items) {
    if (items.length <= 1) return items.join('');
    return items.slice(0, -1).join(', ') + ' or ' + items[items.length - 1];
  }

  function callKind() {
    const r = document.querySelector('input[name="call-as"]:checked');
    return r ? r.value : '';
  }

  // showCallAs offers the kinds of credentials ep's group takes. A choice
  // made stays while the group takes it; otherwise the idToken is the
  // default, else the first kind offered. The secrets typed do not outlive
  // the endpoint they were typed for.
  function showCallAs(ep, another) {
    if (another) clearSecrets();
    notice('call-as-message', '');
    const offered = schemesOf(ep);
    for (const k of kindOrder) show(`call-as-${k}-row`, offered.includes(k));
    show('call-as', offered.length > 0);
    if (offered.length > 0 && !offered.includes(callKind())) {
      const kind = signedIn() && offered.includes('bearer') ? 'bearer' : offered.find((k) => k !== 'bearer') || offered[0];
      $(`call-as-${kind}`).checked = true;
    }
    if (!$('call-user').value) $('call-user').value = session.login;
    showCredentialFields();
  }

  function showCredentialFields() {
    const kind = callKind();
    show('call-basic', kind === 'basic');
    show('call-apitoken', kind === 'apitoken');
  }

  function changeCallKind() {
    showCredentialFields();
    notice('call-as-message', '');
    // A tick given to put one kind of secret in the command is not one to
    // put another there.
    $('curl-token').checked = false;
    updateCurl();
  }

  function clearSecrets() {
    $('call-password').value = '';
    $('call-token').value = '';
  }

  // authorization returns the Authorization header Run Test sends to ep and
  // what it is, for a refusal's message: null for a public endpoint, or
  // {missing, field} when the tester has a field to fill in first.
  function authorization(ep) {
    switch (ep.auth === 'token' ? callKind() : '') {
      case 'bearer':
        if (!signedIn()) return { missing: 'Sign in to call with your idToken.', field: 'username' };
        return { kind: 'bearer', value: 'Bearer ' + session.token, who: session.subject };
      case 'basic': {
        const user = $('call-user').value.trim();
        const password = $('call-password').value;
        if (!user) return { missing: 'Enter the user name to call as.', field: 'call-user' };
        if (!password) return { missing: `Enter the password of ${user}.`, field: 'call-password' };
        return { kind: 'basic', value: 'Basic ' + basicCredentials(user, password), who: user };
      }
      case 'apitoken': {
        const token = $('call-token').value.trim();
        if (!token) return { missing: 'Paste the API token to call with.', field: 'call-token' };
        if (!/^[\x21-\x7e]+$/.test(token)) {
          return { missing: 'An API token is printable ASCII without spaces: check what was pasted.', field: 'call-token' };
        }
        return { kind: 'apitoken', value: 'apitoken ' + token, who: '' };
      }
      default:
        return null;
    }
  }

  // challengeSchemes returns the auth schemes a WWW-Authenticate header's
  // challenges name, in lower case: 'Basic realm="x", Bearer' gives basic,
  // bearer.
  function challengeSchemes(header) {
    const out = [];
    // A comma or a word inside a quoted string is not the header's own.
    const bare = header.replace(/"(?:[^"\\]|\\.)*"/g, '""');
    for (const item of bare.split(',')) {
      // A challenge starts with its scheme; an auth-param is name=value.
      const m = /^\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)(?:\s|$)/.exec(item);
      if (!m || /^\s*[^\s=]+\s*=/.test(item)) continue;
      const scheme = m[1].toLowerCase();
      if (!out.includes(scheme)) out.push(scheme);
    }
    return out;
  }

  // refusalText says which credential a 401 or 403 answer refused and what
  // the group takes: the schemes of the answer's challenges, else those the
  // endpoint list named.
  function refusalText(result) {
    const a = result.auth;
    const named = challengeSchemes(result.challenge);
    const takes = (named.length > 0 ? named : result.offered).map((k) => (kinds[k] ? kinds[k].name : k));
    const takesText = takes.length > 0 ? ` The group ${result.group} takes ${listText(takes)}.` : '';
    if (!a) return `The endpoint wants credentials the page did not send: refresh the menu to choose one.${takesText}`;
    const what = {
      bearer: `your idToken as "${a.who}" (Bearer)`,
      basic: `the user name and password of "${a.who}" (Basic)`,
      apitoken: 'the API token (apitoken)',
    }[a.kind];
    if (result.status === 403) {
      return `Not allowed: ${what} was accepted, but may not call the group ${result.group}.`;
    }
    return `Refused: ${what}.${takesText}`;
  }

  // ---------------------------------------------------------------------
  // Run Test: the request the curl command shows, sent from the page.

  function requestHeaders(auth) {
    const h = [['Content-Type', 'application/json']];
    if (auth) h.push(['Authorization', auth.value]);
    return h;
  }

  async function runTest() {
    const ep = currentEndpoint();
    if (!ep) return;
    if (session.token !== null && !signedIn()) {
      endSession('Your session expired — sign in again.');
      return;
    }
    const auth = authorization(ep);
    if (auth && auth.missing) {
      notice('call-as-message', auth.missing, 'error');
      $(auth.field).focus();
      return;
    }
    notice('call-as-message', '');
    const key = keyOf(ep);
    const text = $('body').value;
    state.bodies.set(key, text);
    updateCurl();
    const run = $('run');
    busy(run, true, 'Running…');
    $('result').setAttribute('aria-busy', 'true');
    const gen = session.gen;
    const started = performance.now();
    let result;
    try {
      const res = await fetch(ep.url, {
        method: 'POST',
        headers: requestHeaders(auth),
        body: text,
        credentials: 'omit',
        cache: 'no-store',
      });
      const answer = await res.text();
      result = {
        status: res.status, statusText: res.statusText, ms: performance.now() - started, text: answer, request: text, endpoint: ep,
        auth: auth && { kind: auth.kind, who: auth.who }, challenge: res.headers.get('WWW-Authenticate') || '', group: ep.group, offered: schemesOf(ep),
      };
    } catch (e) {
      result = { failed: `The request did not reach the endpoint (${e.message}). ` +
        'If the endpoint is on another origin, that origin must allow this page in its CORS settings.', ms: performance.now() - started };
    } finally {
      busy(run, false);
      $('result').removeAttribute('aria-busy');
    }
    if (gen !== session.gen) return;
    // A refused idToken is an ended session, unless the group no longer
    // takes idTokens at all.
    const named = result.status === 401 ? challengeSchemes(result.challenge) : [];
    if (result.status === 401 && auth && auth.kind === 'bearer' && (named.length === 0 || named.includes('bearer'))) {
      endSession('Your session expired — sign in again.');
      return;
    }
    state.results.set(key, result);
    if (state.current === key) await renderResult(result);
    refreshQueues();
  }

  const reasons = {
    200: 'OK', 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed',
    413: 'Content Too Large', 415: 'Unsupported Media Type', 429: 'Too Many Requests', 500: 'Internal Server Error',
    502: 'Bad Gateway', 503: 'Service Unavailable', 504: 'Gateway Timeout',
  };

  async function renderResult(result) {
    show('result', !!result);
    if (!result) return;
    const status = $('result-status');
    status.replaceChildren();
    show('result-error', false);
    const refusal = result.status === 401 || result.status === 403 ? refusalText(result) : '';
    $('result-error-auth').textContent = refusal;
    show('result-error-auth', refusal !== '');
    show('result-table-wrap', false);
    show('result-table-hint', false);
    $('raw-json').textContent = '';
    show('waterfall', false);
    const duration = `${Math.round(result.ms)} ms`;

    if (result.failed) {
      status.append(el('span', { class: 'status-error' }, 'No answer'), el('span', { class: 'muted' }, duration));
      showError('network_error', result.failed, '', []);
      return;
    }
    const ok = result.status >= 200 && result.status < 300;
    status.append(
      el('span', { class: ok ? 'status-ok' : 'status-error', id: 'result-code' },
        `${result.status} ${result.statusText || reasons[result.status] || ''}`.trim()),
      el('span', { class: 'muted', id: 'result-duration' }, duration));

    let parsed = null;
    try {
      parsed = parseExact(result.text);
    } catch (e) {
      $('raw-json').textContent = result.text;
      showError('not_json', `The answer is not JSON (${e.message}).`, '', []);
      return;
    }
    $('raw-json').textContent = formatJSON(parsed);
    const err = parsed instanceof Map && parsed.get('error') instanceof Map ? parsed.get('error') : null;
    if (err) {
      const fields = (err.get('fields') || []).filter((f) => f instanceof Map)
        .map((f) => ({ pointer: String(f.get('pointer') || ''), message: String(f.get('message') || '') }));
      showError(String(err.get('type') || 'error'), String(err.get('message') || ''), String(err.get('pointer') || ''), fields);
      return;
    }
    const rows = parsed instanceof Map ? parsed.get('data') : null;
    if (!Array.isArray(rows)) return;
    status.append(el('span', { class: 'muted' }, plural(rows.length, 'row', 'rows')));

    let output = new Set();
    try { output = (await processInfo(result.endpoint)).output; } catch { /* by the request's columns alone */ }
    renderTable(rows, inputColumns(result.request), output);
    renderWaterfall(rows);
  }

  function showError(type, message, pointer, fields) {
    $('result-error-type').textContent = type;
    $('result-error-message').textContent = message;
    const p = $('result-error-pointer');
    p.textContent = pointer ? `At ${pointer} in the request.` : '';
    p.hidden = !pointer;
    const list = $('result-error-fields');
    list.replaceChildren(...fields.map((f) => el('li', {}, el('code', {}, f.pointer), ' ', f.message)));
    list.hidden = fields.length < 2;
    show('result-error', true);
  }

  function inputColumns(requestText) {
    const cols = new Set();
    try {
      const v = parseExact(requestText);
      const rows = v instanceof Map ? v.get('data') : null;
      if (Array.isArray(rows)) for (const r of rows) if (r instanceof Map) for (const k of r.keys()) cols.add(k);
    } catch {
      // an answer to a request that is not JSON has no rows to show
    }
    return cols;
  }

  // renderTable shows the rows: the result columns first, highlighted and
  // pinned at the frame's left edge, then the input columns echoed, so that
  // the prediction of a model of many features is in view without
  // scrolling. A result column is one the process declares as output or
  // one the request did not have.
  function renderTable(rows, inputs, outputs) {
    const cols = [];
    const seen = new Set();
    for (const r of rows) {
      if (!(r instanceof Map)) continue;
      for (const k of r.keys()) if (!seen.has(k)) { seen.add(k); cols.push(k); }
    }
    const isResult = (c) => outputs.has(c) || !inputs.has(c);
    const ordered = cols.filter(isResult).concat(cols.filter((c) => !isResult(c)));
    const results = ordered.filter(isResult);

    const table = $('result-table');
    table.replaceChildren();
    table.append(el('caption', { class: 'sr-only' },
      `${plural(rows.length, 'row', 'rows')}; the result columns ${results.join(', ')}, then the input columns`));
    // The roles are the elements' own, said again: on a phone the rows are
    // laid out as blocks (app.css), which would otherwise lose them.
    const head = el('tr', { role: 'row' }, el('th', { scope: 'col', role: 'columnheader', class: 'row-num' }, '#'));
    for (const c of ordered) {
      head.append(el('th', { scope: 'col', role: 'columnheader', 'data-column': c, class: isResult(c) ? 'result-col' : null, title: isResult(c) ? 'result column' : 'input column' }, c));
    }
    const body = el('tbody', { role: 'rowgroup' });
    rows.forEach((r, i) => {
      const tr = el('tr', { role: 'row', 'data-row': i }, el('td', { role: 'cell', class: 'row-num' }, String(i + 1)));
      for (const c of ordered) {
        const v = r instanceof Map && r.has(c) ? r.get(c) : undefined;
        const classes = [];
        const attrs = { role: 'cell', 'data-column': c };
        if (isResult(c)) classes.push('result-col');
        let text;
        if (v === null || v === undefined) {
          classes.push('missing');
          text = v === null ? 'missing' : '';
        } else if (v instanceof JNum) {
          classes.push('num');
          text = v.raw; // every digit sent: a confidence of 0.9999999999 is not 1
        } else if (isScalar(v)) {
          text = String(v);
        } else {
          text = formatJSON(v);
        }
        attrs.class = classes.join(' ') || null;
        tr.append(el('td', attrs, text));
      }
      body.append(tr);
    });
    table.append(el('thead', { role: 'rowgroup' }, head), body);
    show('result-table-wrap', true);
    pinResults();
    showScrollHint();
  }

  // pinResults pins the row number and the result columns at the frame's
  // left edge while the inputs scroll past them, as many result columns as
  // fit in two thirds of the frame, so that inputs can still be read beside
  // them in a narrow window.
  function pinResults() {
    const wrap = $('result-table-wrap');
    const table = $('result-table');
    for (const c of table.querySelectorAll('.pinned')) {
      c.classList.remove('pinned', 'pinned-last');
      c.style.left = '';
    }
    if (wrap.hidden) return;
    const heads = [...table.querySelectorAll('thead th')];
    const budget = (wrap.clientWidth * 2) / 3;
    let left = 0;
    let pinned = 0;
    for (const th of heads) {
      const width = th.getBoundingClientRect().width;
      const first = pinned === 0; // the row number
      if (!first && (!th.classList.contains('result-col') || left + width > budget)) break;
      left += width;
      pinned++;
    }
    if (pinned < 2) return; // no result column fits: nothing to pin it beside
    let offset = 0;
    heads.slice(0, pinned).forEach((th, i) => {
      const x = `${offset}px`;
      for (const cell of table.querySelectorAll(`tr > :nth-child(${i + 1})`)) {
        cell.classList.add('pinned');
        if (i === pinned - 1) cell.classList.add('pinned-last');
        cell.style.left = x;
      }
      offset += th.getBoundingClientRect().width;
    });
  }

  // showScrollHint says so when the table is wider than its frame: where
  // scroll bars are drawn only while scrolling, the columns past the
  // frame's edge would otherwise go unnoticed.
  function showScrollHint() {
    const wrap = $('result-table-wrap');
    show('result-table-hint', !wrap.hidden && wrap.scrollWidth > wrap.clientWidth + 1);
  }
  new ResizeObserver(() => {
    pinResults();
    showScrollHint();
  }).observe($('result-table-wrap'));

  // ---------------------------------------------------------------------
  // Why: an explained endpoint answers, after each row's prediction, every
  // feature's contribution to the model's margin and the bias, so that the
  // bias plus the contributions is the margin. The chart draws them for
  // one row as a waterfall read at a glance: the bias, then the features
  // largest first, each bar running from the total before it to the total
  // after it, then the margin they add up to. It is a table with the
  // numbers as text, so a screen reader reads what the bars show.

  const chart = {
    rows: [],
    groups: new Map(), // class ('' for the one margin of a row) → {features: [{name, column}], bias}
    prediction: '',    // the predicted class's column, if any
    row: 0,            // the row chosen; the chart shows it unless another is pointed at
  };

  // contributionGroups reads the answer's columns: contribution(<feature>)
  // and contribution(bias), or, for every class, contribution(<class>,
  // <feature>) and contribution(<class>,bias). Empty when none.
  function contributionGroups(cols) {
    const inner = new Map();
    for (const c of cols) {
      const m = /^contribution\((.*)\)$/s.exec(c);
      if (m) inner.set(c, m[1]);
    }
    const groups = new Map();
    const single = [...inner].find(([, x]) => x === 'bias');
    if (single) {
      groups.set('', {
        features: [...inner].filter(([c]) => c !== single[0]).map(([column, name]) => ({ name, column })),
        bias: single[0],
      });
      return groups;
    }
    for (const [column, x] of inner) {
      if (x.endsWith(',bias')) groups.set(x.slice(0, -5), { features: [], bias: column });
    }
    // The longest class that prefixes a column owns it, should one class's
    // name start another's.
    const classes = [...groups.keys()].sort((a, b) => b.length - a.length);
    for (const [column, x] of inner) {
      const cls = classes.find((k) => x.startsWith(k + ','));
      if (cls === undefined || groups.get(cls).bias === column) continue;
      groups.get(cls).features.push({ name: x.slice(cls.length + 1), column });
    }
    return groups;
  }

  const numberOf = (v) => (v instanceof JNum ? Number(v.raw) : NaN);

  // shortNumber writes v with four significant digits, a real minus sign
  // and, with signed, a plus sign too.
  function shortNumber(v, signed = false) {
    const s = String(Number(v.toPrecision(4))).replace('-', '−');
    return signed && v >= 0 ? '+' + s : s;
  }

  // renderWaterfall charts the first row of an answer that carries
  // contributions, and offers the others; for any other answer, nothing.
  function renderWaterfall(rows) {
    const cols = [...new Set(rows.flatMap((r) => (r instanceof Map ? [...r.keys()] : [])))];
    chart.rows = rows;
    chart.groups = contributionGroups(cols);
    chart.prediction = cols.find((c) => /^prediction\(/.test(c)) || '';
    chart.row = 0;
    tip(null);
    show('waterfall', chart.groups.size > 0 && rows.length > 0);
    if (chart.groups.size === 0 || rows.length === 0) return;

    const pick = $('waterfall-row');
    pick.replaceChildren(...rows.map((r, i) => {
      const p = r instanceof Map && chart.prediction ? r.get(chart.prediction) : undefined;
      return el('option', { value: i }, typeof p === 'string' ? `${i + 1}: ${p}` : String(i + 1));
    }));
    pick.value = '0';
    const multi = !chart.groups.has('');
    show('waterfall-class-field', multi);
    if (multi) {
      $('waterfall-class').replaceChildren(el('option', { value: '' }, "the row's predicted class"),
        ...[...chart.groups.keys()].map((k) => el('option', { value: k }, k)));
      $('waterfall-class').value = '';
    }
    drawWaterfall(0);
  }

  // classOf returns the class whose contributions the chart shows for
  // row r: the one chosen, else the row's predicted class, else the first.
  function classOf(r) {
    if (chart.groups.has('')) return '';
    const chosen = $('waterfall-class').value;
    if (chosen && chart.groups.has(chosen)) return chosen;
    const p = r instanceof Map && chart.prediction ? r.get(chart.prediction) : undefined;
    return typeof p === 'string' && chart.groups.has(p) ? p : chart.groups.keys().next().value;
  }

  // waterfallSteps returns row r's waterfall for class cls: the bias, the
  // contributions sent largest first with the totals before and after each,
  // and the total; null when the row has no explanation.
  function waterfallSteps(r, cls) {
    const g = chart.groups.get(cls);
    const bias = numberOf(r instanceof Map ? r.get(g.bias) : undefined);
    if (!Number.isFinite(bias)) return null;
    const features = [];
    let unsent = 0;
    for (const f of g.features) {
      const v = r.get(f.column);
      const n = numberOf(v);
      if (Number.isFinite(n)) features.push({ name: f.name, value: n, raw: v.raw });
      else unsent++;
    }
    // Stable: a tie keeps the answer's order.
    features.sort((a, b) => Math.abs(b.value) - Math.abs(a.value));
    let total = bias;
    for (const f of features) {
      f.from = total;
      total += f.value;
      f.to = total;
    }
    return { bias, biasRaw: r.get(g.bias).raw, features, total, unsent };
  }

  // drawWaterfall draws row i's chart.
  function drawWaterfall(i) {
    const table = $('waterfall-chart');
    const r = chart.rows[i];
    const cls = classOf(r);
    const steps = waterfallSteps(r, cls);
    const of = cls ? ` of the class ${cls}` : '';
    $('waterfall-title').textContent = `Why row ${i + 1}: the contributions to the margin${of}`;
    table.dataset.row = String(i);
    for (const tr of document.querySelectorAll('#result-table tbody tr')) {
      tr.classList.toggle('charted', tr.dataset.row === String(i));
    }
    if (!steps) {
      notice('waterfall-note', `Row ${i + 1} has no explanation${of}: the model gave it no prediction.`);
      table.replaceChildren();
      table.hidden = true;
      return;
    }
    table.hidden = false;
    notice('waterfall-note', steps.unsent > 0
      ? `The answer gives each row's ${plural(steps.features.length, 'largest contribution', 'largest contributions')} only: the ${plural(steps.unsent, 'other feature is', 'other features are')} left out, and the total is of those shown.`
      : '');

    let lo = 0;
    let hi = 0;
    for (const x of [steps.bias, steps.total, ...steps.features.map((f) => f.to)]) {
      lo = Math.min(lo, x);
      hi = Math.max(hi, x);
    }
    const span = hi - lo || 1;
    const at = (x) => ((x - lo) / span) * 100;

    const bar = (from, to, kind) => {
      const track = el('span', { class: 'wf-track', 'aria-hidden': 'true' },
        el('span', { class: 'wf-zero' }), el('span', { class: `wf-bar wf-${kind}` }));
      const [zero, b] = track.children;
      zero.style.left = `${at(0)}%`;
      b.style.left = `${at(Math.min(from, to))}%`;
      b.style.width = `${(Math.abs(to - from) / span) * 100}%`;
      return track;
    };
    const line = (kind, name, nameText, from, to, value, raw, spoken, tipText) => el('tr', {
      role: 'row', class: `wf-row wf-row-${kind}`, 'data-kind': kind, 'data-feature': name, 'data-value': raw, 'data-tip': tipText,
    },
    el('th', { scope: 'row', role: 'rowheader', class: 'wf-name' }, nameText),
    el('td', { role: 'cell', class: 'wf-bar-cell' }, bar(from, to, kind), el('span', { class: 'sr-only' }, spoken)),
    el('td', { role: 'cell', class: 'wf-value' }, value));

    const body = el('tbody', { role: 'rowgroup' });
    body.append(line('bias', 'bias', 'bias', 0, steps.bias, shortNumber(steps.bias), steps.biasRaw,
      'the start', `bias: ${steps.biasRaw}`));
    for (const f of steps.features) {
      const kind = f.value >= 0 ? 'up' : 'down';
      const word = kind === 'up' ? 'raises' : 'lowers';
      body.append(line(kind, f.name, f.name, f.from, f.to, shortNumber(f.value, true), f.raw,
        `${word} the margin from ${shortNumber(f.from)} to ${shortNumber(f.to)}`,
        `${f.name}: ${f.raw}, ${word} the margin from ${shortNumber(f.from)} to ${shortNumber(f.to)}`));
    }
    body.append(line('total', '', 'total', 0, steps.total, shortNumber(steps.total), String(steps.total),
      'the margin: the bias plus the contributions', `total: ${steps.total} (the bias plus the contributions)`));
    table.replaceChildren(
      el('caption', { class: 'sr-only' },
        `Row ${i + 1}: from the bias ${shortNumber(steps.bias)} to the margin ${shortNumber(steps.total)}${of}, ` +
        `${plural(steps.features.length, 'feature', 'features')} largest first`),
      el('thead', { role: 'rowgroup' }, el('tr', { role: 'row' },
        el('th', { scope: 'col', role: 'columnheader' }, 'Feature'),
        el('th', { scope: 'col', role: 'columnheader' }, 'Effect'),
        el('th', { scope: 'col', role: 'columnheader', class: 'wf-value' }, 'Contribution'))),
      body);
  }

  // tip shows the value of the bar pointed at, beside the pointer.
  function tip(tr, x = 0, y = 0) {
    const t = $('waterfall-tip');
    if (!tr || !tr.dataset.tip) {
      t.hidden = true;
      return;
    }
    t.textContent = tr.dataset.tip;
    t.hidden = false;
    const w = t.offsetWidth;
    t.style.left = `${Math.max(4, Math.min(x + 12, document.documentElement.clientWidth - w - 4))}px`;
    t.style.top = `${y + 16}px`;
  }

  $('waterfall-chart').addEventListener('mousemove', (e) => {
    tip(e.target.closest('tr.wf-row'), e.clientX, e.clientY);
  });
  $('waterfall-chart').addEventListener('mouseleave', () => tip(null));
  // Pointing at a row of the result table charts it; leaving the table
  // gives the chart back to the row chosen.
  $('result-table').addEventListener('mouseover', (e) => {
    const tr = e.target.closest('tbody tr');
    if (tr && !$('waterfall').hidden && tr.dataset.row !== $('waterfall-chart').dataset.row) drawWaterfall(Number(tr.dataset.row));
  });
  $('result-table').addEventListener('mouseleave', () => {
    if (!$('waterfall').hidden && $('waterfall-chart').dataset.row !== String(chart.row)) drawWaterfall(chart.row);
  });
  $('result-table').addEventListener('click', (e) => {
    const tr = e.target.closest('tbody tr');
    if (!tr || $('waterfall').hidden) return;
    chart.row = Number(tr.dataset.row);
    $('waterfall-row').value = String(chart.row);
    drawWaterfall(chart.row);
  });
  $('waterfall-row').addEventListener('change', () => {
    chart.row = Number($('waterfall-row').value);
    drawWaterfall(chart.row);
  });
  $('waterfall-class').addEventListener('change', () => drawWaterfall(chart.row));

  // fitURL makes the endpoint URL's field as tall as the wrapped URL, in
  // browsers that do not size it to its content (field-sizing in app.css).
  function fitURL() {
    const url = $('endpoint-url');
    if (CSS.supports('field-sizing', 'content')) return;
    url.style.height = 'auto';
    url.style.height = `${url.scrollHeight + url.offsetHeight - url.clientHeight}px`;
  }
  window.addEventListener('resize', fitURL);

  // ---------------------------------------------------------------------
  // Champion and challengers: a model endpoint may score other models
  // beside its own (its champion): a shadow scores the same rows after the
  // champion answered, compared and never sent; a split challenger answers
  // a share of the rows instead. For a signed-in tester the page shows
  // what each did beside the champion on this server (how often they
  // agreed, how far apart their answers were, how long each took) and,
  // once outcomes are fed back, how well each predicts. An administrator
  // may promote a challenger: move the champion's alias to its version.

  const rivals = {
    key: '',          // the endpoint whose figures the section shows
    seq: 0,           // bumped at every load: an answer to an older one is dropped
    promotion: null,  // what the confirm dialog asks: {ep, name, alias, from, to, etag, opener}
  };

  // refParts splits a model reference: churn@production gives
  // {name: churn, alias: production}; churn@3 gives {name: churn, version: 3}.
  function refParts(ref) {
    const m = /^([^@]+)@(.+)$/.exec(typeof ref === 'string' ? ref : '');
    if (!m) return null;
    return /^[1-9]\d*$/.test(m[2]) ? { name: m[1], version: Number(m[2]) } : { name: m[1], alias: m[2] };
  }

  function hideRivals() {
    show('challengers', false);
    if ($('promote-dialog').open) $('promote-dialog').close();
  }

  // forgetRivals hides the section and empties it, so that nothing of
  // another endpoint or another session is shown with the next figures,
  // or in their stead should they fail to load.
  function forgetRivals() {
    hideRivals();
    rivals.key = '';
    notice('challengers-message', '');
    show('champion-facts', false);
    $('challenger-list').replaceChildren();
    show('performance', false);
  }

  // loadChallengers shows the section of ep when it is a model endpoint
  // whose deployment record names challengers and a tester is signed in,
  // and hides it otherwise. The figures of the endpoint in view stay shown
  // while they are read again.
  async function loadChallengers(ep) {
    const key = keyOf(ep);
    const seq = ++rivals.seq;
    if (rivals.key !== key) {
      forgetRivals();
      rivals.key = key;
    }
    if (!ep.model || !signedIn()) {
      hideRivals();
      return;
    }
    let record, data, performance, info;
    try {
      const deployment = await api(`api/v1/deployments/${encodeURIComponent(ep.group)}/${encodeURIComponent(ep.path)}`);
      record = (Array.isArray(deployment.endpoints) ? deployment.endpoints : []).find((e) => e && e.alias === ep.alias);
      if (!record || !Array.isArray(record.challengers) || record.challengers.length === 0) {
        if (seq === rivals.seq) hideRivals();
        return;
      }
      [data, performance, info] = await Promise.all([
        api(`api/v1/endpoints/${endpointRoute(ep)}/challengers`),
        // The live figures come once outcomes are fed back, and from a
        // server that has the route: none, nothing shown.
        api(`api/v1/endpoints/${endpointRoute(ep)}/performance`).catch((e) => {
          if (e instanceof SessionEnded) throw e;
          return null;
        }),
        processInfo(ep).catch(() => null),
      ]);
    } catch (e) {
      if (e instanceof SessionEnded || seq !== rivals.seq) return;
      if (e.status === 404) {
        hideRivals(); // a process endpoint after all, or no longer one to see
        return;
      }
      show('challengers', true);
      notice('challengers-message', `The figures of the challengers cannot be read (${e.message}).`, 'error');
      return;
    }
    if (seq !== rivals.seq) return;
    const classifier = info ? [...info.output].some((c) => /^confidence\(/.test(c)) : !!performance && performance.task === 'classification';
    renderRivals(ep, record, data, classifier);
    renderPerformance(performance);
    show('challengers', true);
  }

  function renderRivals(ep, record, data, classifier) {
    const champion = data && data.champion ? data.champion : {};
    $('champion-model').textContent = champion.model || ep.model;
    $('champion-version').textContent = champion.version || 'no version: the reference names none now';
    const facts = $('champion-facts');
    for (const extra of facts.querySelectorAll('.rivals-extra')) extra.remove();
    if (record.splitKey) {
      facts.append(el('dt', { class: 'rivals-extra' }, 'Split key'),
        el('dd', { class: 'rivals-extra' }, 'the column ', el('code', {}, record.splitKey), ': one value always meets the same model'));
    }
    if (record.answeredBy) {
      facts.append(el('dt', { class: 'rivals-extra' }, 'Answered by'),
        el('dd', { class: 'rivals-extra' }, 'each row answered names the version that answered it, in the column ', el('code', {}, 'answeredBy')));
    }
    show('champion-facts', true);
    const list = Array.isArray(data && data.challengers) ? data.challengers : [];
    $('challenger-list').replaceChildren(...list.map((c, i) => challengerView(ep, champion, c, i, classifier)));
  }

  // percentText writes a share of 0…1 as a percentage, to a tenth.
  const percentText = (rate) => `${Math.round(rate * 1000) / 10}%`;

  // secondsText writes a duration in seconds, in ms or µs where shorter.
  function secondsText(s) {
    if (s < 0.001) return `${shortNumber(s * 1e6)} µs`;
    return s < 1 ? `${shortNumber(s * 1000)} ms` : `${shortNumber(s)} s`;
  }

  // histogramOf returns h when it is a histogram of the route's shape: a
  // count per bucket, one more than the bounds.
  function histogramOf(h) {
    const ok = h && Array.isArray(h.bounds) && Array.isArray(h.counts) && h.counts.length === h.bounds.length + 1;
    return ok ? h : { bounds: [], counts: [0], count: 0, sum: 0 };
  }

  function challengerView(ep, champion, c, i, classifier) {
    const id = `challenger-${i}`;
    const split = c.mode === 'split';
    const share = typeof c.percent === 'number' ? c.percent : 0;
    const head = el('div', { class: 'challenger-head' },
      el('h3', { id: `${id}-title` }, c.model),
      badge(split ? `split · ${share}%` : c.mode));
    const promote = promoteButton(ep, champion, c);
    if (promote) head.append(promote);

    const facts = el('dl', { class: 'facts' },
      el('dt', {}, 'Version'), el('dd', { class: 'challenger-version' }, c.version || 'none'),
      el('dt', {}, 'Mode'), el('dd', {}, split
        ? `split: answers ${share}% of the rows instead of the champion`
        : 'shadow: scores the rows after the champion answered; its answers are compared, never sent'));

    const figures = el('div', { class: 'challenger-figures' });
    if (split) {
      figures.append(el('div', {}, el('h4', {}, 'Rows answered'),
        el('p', { class: 'challenger-answered' }, `${plural(c.answered || 0, 'row', 'rows')} answered by the challenger instead of the champion.`)));
    } else {
      figures.append(agreementView(c), deltaView(c, `${id}-delta`, classifier));
    }
    figures.append(latencyView(c));

    const counts = [];
    if (c.skipped) counts.push(`${plural(c.skipped, 'row', 'rows')} skipped (too many shadows running at once, or no answer of the champion to compare)`);
    if (c.errors) counts.push(plural(c.errors, 'failed execution', 'failed executions'));
    if (c.unavailable) counts.push(`${plural(c.unavailable, 'request', 'requests')} it could not score`);

    return el('article', { class: 'challenger', 'data-challenger': c.model, 'aria-labelledby': `${id}-title` },
      head,
      c.error ? el('p', { class: 'notice notice-error challenger-error' }, `This challenger cannot score: ${c.error}`) : null,
      facts, figures,
      counts.length ? el('p', { class: 'hint' }, counts.join('; ') + '.') : null);
  }

  // agreementView is the share of compared rows on which the challenger
  // agreed with the champion: a gauge, and its counts in words.
  function agreementView(c) {
    const rate = typeof c.agreementRate === 'number' ? c.agreementRate : null;
    const gauge = el('div', { class: 'gauge', 'aria-hidden': 'true' }, el('span', { class: 'gauge-fill' }));
    gauge.firstChild.style.width = `${(rate || 0) * 100}%`;
    return el('div', { class: 'agreement', 'data-rate': rate === null ? '' : rate },
      el('h4', {}, 'Agreement'),
      rate === null ? null : gauge,
      el('p', { class: 'agreement-text' }, rate === null
        ? 'No row compared yet.'
        : `Agreed on ${c.agreed} of ${plural(c.compared, 'row', 'rows')} compared (${percentText(rate)}).`));
  }

  // deltaView charts how far apart the two answers were on each row
  // compared: one bar per bucket of the route's histogram, labelled with
  // its bounds, its count on hover and in words for screen readers.
  function deltaView(c, id, classifier) {
    const h = histogramOf(c.delta);
    const what = classifier ? "|Δ| of the confidence of the champion's class" : '|Δ| of the prediction';
    const box = el('div', { class: 'delta' }, el('h4', { id }, `Δ distribution: ${what}`));
    if (!h.count) {
      box.append(el('p', {}, 'No difference measured yet.'));
      return box;
    }
    const most = Math.max(...h.counts);
    const bars = h.counts.map((n, i) => {
      const low = i > 0 ? h.bounds[i - 1] : null;
      const high = i < h.bounds.length ? h.bounds[i] : null;
      const label = high === null ? `> ${low}` : low === null ? `≤ ${high}` : `${low}–${high}`;
      const range = high === null ? `above ${low}` : low === null ? `up to ${high}` : `above ${low}, up to ${high}`;
      const bar = el('span', { class: 'histo-bar' });
      bar.style.width = `${(n / most) * 100}%`;
      return el('li', { class: 'histo-row', 'data-count': n, title: `|Δ| ${range}: ${plural(n, 'row', 'rows')}` },
        el('span', { class: 'histo-label', 'aria-hidden': 'true' }, label),
        el('span', { class: 'histo-track', 'aria-hidden': 'true' }, bar),
        el('span', { class: 'histo-count', 'aria-hidden': 'true' }, String(n)),
        el('span', { class: 'sr-only' }, `${range}: ${plural(n, 'row', 'rows')}`));
    });
    box.append(el('ol', { class: 'histo', 'aria-labelledby': id }, ...bars),
      el('p', { class: 'hint' }, `Mean |Δ| ${shortNumber(h.sum / h.count)} over ${plural(h.count, 'row', 'rows')}.`));
    return box;
  }

  // latencyView is the mean time an execution of each model took.
  function latencyView(c) {
    const line = (who, hist) => {
      const h = histogramOf(hist);
      return [el('dt', {}, who), el('dd', {}, h.count
        ? `${secondsText(h.sum / h.count)} on average over ${plural(h.count, 'execution', 'executions')}`
        : 'no execution yet')];
    };
    return el('div', { class: 'latency' }, el('h4', {}, 'Latency'),
      el('dl', { class: 'facts' }, ...line('Champion', c.championLatency), ...line('Challenger', c.challengerLatency)));
  }

  // promoteButton offers an administrator to move the champion's alias to
  // the challenger's version, when the champion names an alias and the
  // challenger is another version of the same model; null for anyone
  // else, or a hint of why not.
  function promoteButton(ep, champion, c) {
    if (!session.admin) return null;
    const from = refParts(champion.version);
    const alias = refParts(champion.model);
    const to = refParts(c.version);
    const named = refParts(c.model);
    const why = (text) => el('p', { class: 'hint promote-hint' }, text);
    // The challenger and the champion trade places in one write: two
    // aliases of one model swap versions, or an endpoint that names a
    // version trades references with its challenger.
    const swap = alias && named && !c.error && champion.etag &&
      ((alias.alias && named.alias && named.name === alias.name) || alias.version);
    if (swap && to && !(from && from.version === to.version && from.name === to.name)) {
      const button = el('button', { type: 'button', class: 'button-primary promote', 'data-version': c.version },
        'Promote', el('span', { class: 'sr-only' }, ` ${c.model} to ${champion.model}`));
      button.addEventListener('click', () => askPromotion({
        ep, swap: true, champion: champion.model, challenger: c.model, mode: c.mode, from: champion.version, to: c.version,
        etag: champion.etag, opener: button,
      }));
      return button;
    }
    if (!alias || !alias.alias || !champion.aliasETag) return why(`To promote, deploy the endpoint on an alias: it names ${champion.model}.`);
    if (!to || !to.version || to.name !== alias.name) return why(`Not a version of ${alias.name}: it cannot take the alias ${champion.model}.`);
    if (c.error) return null;
    if (from && from.version === to.version) return why(`${champion.model} is at this version already.`);
    const button = el('button', { type: 'button', class: 'button-primary promote', 'data-version': c.version },
      'Promote', el('span', { class: 'sr-only' }, ` ${c.version} to ${champion.model}`));
    button.addEventListener('click', () => askPromotion({
      ep, name: alias.name, alias: alias.alias, from: from ? from.version : null, to: to.version, etag: champion.aliasETag, opener: button,
    }));
    return button;
  }

  function askPromotion(p) {
    rivals.promotion = p;
    if (p.swap) {
      $('promote-text').textContent = `Promote ${p.challenger} (${p.to}) to champion? ${p.champion} (${p.from}) becomes its ` +
        `${p.mode} challenger in the same write, and its answers go to clients from then on.`;
      notice('promote-message', '');
      $('promote-dialog').showModal();
      return;
    }
    const ref = `${p.name}@${p.alias}`;
    $('promote-text').textContent = `Move ${ref} from ${p.from === null ? 'no version' : `version ${p.from}`} to version ${p.to}? ` +
      `Every endpoint naming ${ref} will answer with version ${p.to}.`;
    notice('promote-message', '');
    $('promote-dialog').showModal();
  }

  // promote moves the alias, if it is where the page read it, and reads
  // the figures again: the champion is now the version promoted.
  async function promote() {
    const p = rivals.promotion;
    if (!p) return;
    const ref = p.swap ? p.champion : `${p.name}@${p.alias}`;
    const button = $('promote-confirm');
    busy(button, true, 'Promoting…');
    let message, kind;
    try {
      if (p.swap) {
        await api(`api/v1/endpoints/${endpointRoute(p.ep)}/promote`,
          { method: 'POST', body: { challenger: p.challenger }, ifMatch: p.etag });
        message = `${p.challenger} (${p.to}) is the champion now, and ${p.champion} (${p.from}) its challenger.`;
      } else {
        await api(`api/v1/models/${encodeURIComponent(p.name)}/aliases/${encodeURIComponent(p.alias)}`,
          { method: 'PUT', body: { version: p.to }, ifMatch: p.etag });
        message = `${ref} now points to version ${p.to}: every endpoint naming it answers with version ${p.to}.`;
      }
      kind = 'ok';
    } catch (e) {
      if (e instanceof SessionEnded) return;
      if (e.status === 412) {
        message = `Someone moved ${ref} since the page read it, so it was left as it is. The figures are read again: check them, then promote again if you still want to.`;
      } else if (e.status === 403) {
        message = `Only an administrator may move ${ref}.`;
      } else {
        notice('promote-message', `The alias could not be moved (${e.message}).`, 'error');
        return;
      }
      kind = 'error';
    } finally {
      busy(button, false);
    }
    rivals.promotion = null;
    $('promote-dialog').close();
    // What the endpoints of the alias run, and their samples, may have changed.
    state.processes.clear();
    await loadChallengers(p.ep);
    notice('challengers-message', message, kind); // an alert: read out as it shows
    $('challengers-title').focus();
  }

  $('promote-confirm').addEventListener('click', promote);
  $('promote-cancel').addEventListener('click', () => $('promote-dialog').close());
  $('promote-dialog').addEventListener('close', () => {
    const p = rivals.promotion;
    rivals.promotion = null;
    if (p && p.opener.isConnected) p.opener.focus();
  });
  $('challengers-refresh').addEventListener('click', async () => {
    const ep = currentEndpoint();
    if (!ep) return;
    const button = $('challengers-refresh');
    busy(button, true, 'Refreshing…');
    notice('challengers-message', '');
    try {
      await loadChallengers(ep);
    } finally {
      busy(button, false);
    }
  });

  // ---------------------------------------------------------------------
  // Live performance: once outcomes are fed back, how well each model
  // predicts them, over the route's window and in all; for a challenger,
  // the champion on the rows the challenger also predicted too, which is
  // the fair comparison.

  const metricNames = [
    ['accuracy', 'Accuracy'], ['logLoss', 'Log loss'], ['brier', 'Brier score'], ['auc', 'AUC'],
    ['mae', 'MAE'], ['rmse', 'RMSE'], ['r2', 'R²'],
  ];

  function renderPerformance(perf) {
    const models = perf && Array.isArray(perf.models) ? perf.models.filter((m) => m && typeof m === 'object') : [];
    const isFigures = (f) => f && typeof f === 'object' && typeof f.rows === 'number';
    const spans = (m) => [
      [perf.window ? `last ${perf.window}` : 'recent rows', m.window],
      ['all rows', m.total],
      ['the champion on the same rows', m.championOnSameRows],
    ].filter(([, f]) => isFigures(f));
    const shown = models.filter((m) => spans(m).length > 0);
    show('performance', shown.length > 0);
    if (shown.length === 0) return;

    const used = metricNames.filter(([k]) => shown.some((m) => spans(m).some(([, f]) => typeof f[k] === 'number')));
    const fed = perf.rowsWithFeedback;
    const unfed = perf.rowsWithoutFeedback;
    $('performance-summary').textContent = typeof fed === 'number'
      ? `${plural(fed, 'row has', 'rows have')} an outcome fed back` + (typeof unfed === 'number' ? `, ${plural(unfed, 'row', 'rows')} not yet.` : '.')
      : '';
    const none = () => [el('span', { 'aria-hidden': 'true' }, '—'), el('span', { class: 'sr-only' }, 'none')];
    // The roles are the elements' own, said again: on a phone the rows are
    // laid out as blocks (app.css), which would otherwise lose them.
    const cell = (column, cls, ...content) => el('td', { role: 'cell', 'data-column': column, class: cls }, ...content);
    const head = el('tr', { role: 'row' },
      ...[['Model', ''], ['Over', ''], ['Rows', 'num'], ...used.map(([, name]) => [name, 'num'])]
        .map(([name, cls]) => el('th', { scope: 'col', role: 'columnheader', class: cls || null }, name)));
    const bodies = shown.map((m) => {
      const rows = spans(m);
      const body = el('tbody', { role: 'rowgroup', 'data-model': m.model || '' });
      rows.forEach(([over, f], i) => {
        const tr = el('tr', { role: 'row' });
        if (i === 0) {
          tr.append(el('th', { scope: 'rowgroup', role: 'rowheader', rowspan: rows.length },
            el('span', { class: 'perf-model' }, m.model || ''), ' ', el('span', { class: 'muted' }, m.role || '')));
        }
        tr.append(cell('Over', 'perf-over', over), cell('Rows', 'num', String(f.rows)),
          ...used.map(([k, name]) => cell(name, 'num', ...(typeof f[k] === 'number' ? [shortNumber(f[k])] : none()))));
        body.append(tr);
      });
      return body;
    });
    $('performance-table').replaceChildren(el('thead', { role: 'rowgroup' }, head), ...bodies);
  }

  // ---------------------------------------------------------------------
  // Drift: a model endpoint whose version has a reference (the rows it
  // was uploaded with, or what its model declares of its inputs) counts
  // the rows it scores, and its model's answers, over the bins of that
  // reference. For a signed-in tester the page shows, for the prediction
  // and each input, how far the rows of the monitor's window are from the
  // reference: the population stability index against its rules of
  // thumb, both histograms overlaid, the shares out of range, unseen and
  // missing; and, where the model explains, each input's drift against
  // how much the model leans on it. A declared reference has no shapes to
  // compare: the shares outside it are shown instead. Every drawing has
  // its figures beside it or in a table, for screen readers.

  const drift = {
    key: '',           // the endpoint whose drift the section shows
    seq: 0,            // bumped at every load: an answer to an older one is dropped
    opened: new Map(), // column → its histograms opened (true) or closed by the tester, kept over a refresh
  };

  // The rules of thumb of the PSI: under 0.1 stable, over 0.25 shifted.
  // A bar's track ends at psiScale; a larger PSI fills it, marked as off
  // the scale, its figure written beside it as always.
  const psiWatch = 0.1;
  const psiShifted = 0.25;
  const psiScale = 0.5;

  const notMeasured = "Drift is measured once the endpoint has scored rows against its version's reference, " +
    'which a model version has when it was uploaded with verification or reference rows. Score rows, then refresh.';

  const finite = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : null);

  function hideDrift() { show('drift', false); }

  // clearDrift empties the section's figures, so that none of another
  // endpoint, session or version is shown with the next ones, or in their
  // stead should they fail to load.
  function clearDrift() {
    for (const id of ['drift-facts', 'drift-declared', 'drift-legend', 'drift-prediction', 'drift-importance', 'drift-inputs']) show(id, false);
    $('drift-prediction-view').replaceChildren();
    $('drift-scatter').replaceChildren();
    $('drift-importance-table').replaceChildren();
    $('drift-feature-list').replaceChildren();
  }

  function forgetDrift() {
    hideDrift();
    drift.key = '';
    drift.opened.clear();
    notice('drift-message', '');
    clearDrift();
  }

  // loadDrift shows the section of ep when it is a model endpoint and a
  // tester is signed in, and hides it otherwise: the figures when the
  // drift route answers, else why there are none yet. The figures of the
  // endpoint in view stay shown while they are read again. It returns the
  // answer shown, or null.
  async function loadDrift(ep) {
    const key = keyOf(ep);
    const seq = ++drift.seq;
    if (drift.key !== key) {
      forgetDrift();
      drift.key = key;
    }
    if (!ep.model || !signedIn()) {
      hideDrift();
      return null;
    }
    let data;
    try {
      data = await api(`api/v1/endpoints/${endpointRoute(ep)}/drift`);
    } catch (e) {
      if (e instanceof SessionEnded || seq !== drift.seq) return null;
      if (e.status === 404) {
        clearDrift(); // figures read before no longer hold: another version, say
        notice('drift-message', notMeasured);
      } else {
        notice('drift-message', `The drift cannot be read (${e.message}).`, 'error');
      }
      show('drift', true);
      return null;
    }
    if (seq !== drift.seq) return null;
    renderDrift(data);
    show('drift', true);
    return data;
  }

  // groupedNumber writes a count with its thousands grouped: 100,000.
  const groupedNumber = (n) => n.toLocaleString('en');

  // windowText writes a Go duration of whole hours or minutes in words:
  // 1h gives hour, 30m gives 30 minutes.
  function windowText(w) {
    const m = /^(\d+)([hm])$/.exec(typeof w === 'string' ? w : '');
    if (!m) return w || 'window';
    const unit = m[2] === 'h' ? 'hour' : 'minute';
    return m[1] === '1' ? unit : `${m[1]} ${unit}s`;
  }

  function renderDrift(d) {
    notice('drift-message', '');
    clearDrift();
    const declared = d.declared === true;
    const isFeature = (f) => f && typeof f === 'object' && typeof f.name === 'string' && f.reference && f.live &&
      Array.isArray(f.reference.counts) && Array.isArray(f.live.counts);
    const features = Array.isArray(d.features) ? d.features.filter(isFeature) : [];

    $('drift-model').textContent = d.model || '';
    $('drift-version').textContent = d.version || '';
    const rows = finite(d.rows) || 0;
    const most = finite(d.maxRows);
    const rowsText = $('drift-rows');
    rowsText.dataset.rows = String(rows);
    const replicas = finite(d.replicas);
    rowsText.textContent = `${groupedNumber(rows)} ${rows === 1 ? 'row' : 'rows'} scored in the last ${windowText(d.window)}` +
      (replicas > 1 ? ` by ${replicas} replicas` : '') + (most ? ` (the newest ${groupedNumber(most)} at most)` : '');
    const facts = $('drift-facts');
    for (const extra of facts.querySelectorAll('.drift-extra')) extra.remove();
    // An endpoint that measures some of its inputs only names the others.
    const unmeasured = Array.isArray(d.unmeasured) ? d.unmeasured.filter((n) => typeof n === 'string') : [];
    if (unmeasured.length > 0) {
      const names = unmeasured.slice(0, 10).join(', ') + (unmeasured.length > 10 ? ` and ${unmeasured.length - 10} more` : '');
      const by = { importance: 'the most important', order: "the first in the model's order" }[d.rankedBy];
      facts.append(el('dt', { class: 'drift-extra' }, 'Not measured'), el('dd', { class: 'drift-extra' },
        `${names}: the endpoint measures ${plural(features.length, 'input', 'inputs')}${by ? `, ${by}` : ''}, and no more.`));
    }
    show('drift-facts', true);
    show('drift-declared', declared);
    show('drift-legend', !declared);

    if (isFeature(d.prediction)) {
      $('drift-prediction-view').replaceChildren(featureView(d.prediction, 'drift-p', declared, true));
      show('drift-prediction', true);
    }
    if (!declared) importanceView(features);

    // The most drifted first, those with no figure last; a tie keeps the
    // model's order. A declared reference has no PSI: its shares outside
    // it rank the inputs.
    const rank = (f) => {
      const v = declared ? outsideShares(f).reduce((a, o) => Math.max(a, o.share), -1) : finite(f.psi);
      return v === null ? -1 : v;
    };
    const sorted = [...features].sort((a, b) => rank(b) - rank(a));
    // The histograms of a stable input are folded away among many.
    const open = (f) => sorted.length <= 6 || rank(f) >= psiWatch;
    $('drift-feature-list').replaceChildren(...sorted.map((f, i) => featureView(f, `drift-f-${i}`, declared, open(f))));
    show('drift-inputs', sorted.length > 0);
  }

  // psiLevel reads a PSI by the rules of thumb.
  function psiLevel(psi) {
    if (psi >= psiShifted) return { kind: 'shifted', text: 'shifted', spoken: '0.25 or more: shifted' };
    if (psi >= psiWatch) return { kind: 'watch', text: 'moderate shift', spoken: 'from 0.1 to 0.25: a moderate shift' };
    return { kind: 'stable', text: 'stable', spoken: 'under 0.1: stable' };
  }

  // psiText writes a PSI to three decimals, enough to read it against the
  // rules of thumb.
  function psiText(psi) {
    if (psi === 0) return '0';
    if (psi < 0.001) return '< 0.001';
    return psi.toFixed(3);
  }

  // shareText writes a share of 0…1 as a percentage, to a tenth, never
  // rounding a share that is not 0 (or not 1) to 0% (or 100%).
  function shareText(s) {
    if (s > 0 && s < 0.001) return '< 0.1%';
    if (s < 1 && s > 0.999) return '> 99.9%';
    return percentText(s);
  }

  // sharesOf returns counts as shares of their sum: zeros when none.
  function sharesOf(counts) {
    const n = counts.map((c) => finite(c) || 0);
    const sum = n.reduce((a, b) => a + b, 0);
    return n.map((c) => (sum > 0 ? c / sum : 0));
  }

  // edgeTexts writes bin edges with four significant digits, or as many
  // more as it takes to tell neighbours apart.
  function edgeTexts(edges) {
    for (let p = 4; p <= 17; p++) {
      const t = edges.map((x) => String(Number(x.toPrecision(p))));
      if (new Set(t).size === t.length) return t.map((s) => s.replace('-', '−'));
    }
    return edges.map((x) => String(x).replace('-', '−'));
  }

  // binLabels names the bins of f as its histograms count them: a number
  // column's by its edges (≤ the first, between two, > the last), a text
  // column's by its categories, then "other"; bins of their place alone
  // when the answer's bins are not its counts'.
  function binLabels(f) {
    const bins = f.live.counts.length;
    let labels;
    if (f.kind === 'text') {
      const cats = Array.isArray(f.categories) ? f.categories.map(String) : [];
      labels = [...cats.map((c) => (c === '' ? { label: '(empty)', spoken: 'the empty text' } : { label: c, spoken: c })),
        { label: 'other', spoken: 'any other value', other: true }];
    } else {
      const edges = Array.isArray(f.edges) ? f.edges.filter((x) => finite(x) !== null) : [];
      const t = edgeTexts(edges);
      labels = edges.length === 0
        ? [{ label: 'all', spoken: 'every value' }]
        : [{ label: `≤ ${t[0]}`, spoken: `up to ${t[0]}` },
          ...t.slice(1).map((x, i) => ({ label: `${t[i]}–${x}`, spoken: `above ${t[i]}, up to ${x}` })),
          { label: `> ${t[t.length - 1]}`, spoken: `above ${t[t.length - 1]}` }];
    }
    if (labels.length === bins) return labels;
    return Array.from({ length: bins }, (_, i) => ({ label: `bin ${i + 1}`, spoken: `bin ${i + 1}` }));
  }

  // featureView shows one column's drift: its PSI as a bar against the
  // rules of thumb, its figures in words, and its two histograms, shown
  // or folded as open says unless the tester chose; for a declared
  // reference, its shares outside it instead.
  function featureView(f, id, declared, open) {
    const psi = finite(f.psi);
    const text = f.kind === 'text';
    const level = psi === null ? null : psiLevel(psi);
    const head = el('div', { class: 'drift-feature-head' },
      el('h4', { id: `${id}-title` }, f.name),
      badge(text ? 'text' : 'number'),
      declared || !level ? null : badge(level.text, `drift-${level.kind}`));
    const parts = declared ? [declaredView(f)] : [psiView(psi, level)];
    parts.push(figuresView(f, declared));
    if (!declared) {
      const shapes = el('details', { class: 'drift-shapes', open: drift.opened.get(f.name) ?? open },
        el('summary', {}, `Histograms, reference and live (${plural(f.live.counts.length, 'bin', 'bins')})`), histogramView(f, id));
      shapes.addEventListener('toggle', () => {
        if (shapes.open === open) drift.opened.delete(f.name);
        else drift.opened.set(f.name, shapes.open);
      });
      parts.push(shapes);
    }
    return el('article', {
      class: 'drift-feature', 'data-feature': f.name, 'data-psi': psi === null ? '' : psi, 'aria-labelledby': `${id}-title`,
    }, head, ...parts);
  }

  // psiView is the PSI as a bar over 0…psiScale with the rules of thumb
  // marked, and its figure.
  function psiView(psi, level) {
    if (psi === null) return el('p', { class: 'drift-psi-none' }, 'No PSI: the rows measured have no value of this column.');
    const bar = el('span', { class: `drift-psi-bar drift-bar-${level.kind}` });
    bar.style.width = `${Math.min(psi / psiScale, 1) * 100}%`;
    const mark = (at) => {
      const m = el('span', { class: 'drift-psi-mark' });
      m.style.left = `${(at / psiScale) * 100}%`;
      return m;
    };
    const tick = (at, label) => {
      const t = el('span', { class: 'drift-psi-tick' }, label);
      t.style.left = `${(at / psiScale) * 100}%`;
      return t;
    };
    const over = psi > psiScale;
    return el('div', { class: 'drift-psi' },
      el('span', { class: 'drift-psi-name' }, 'PSI'),
      el('span', { class: `drift-psi-track${over ? ' drift-psi-over' : ''}`, 'aria-hidden': 'true' }, bar, mark(psiWatch), mark(psiShifted)),
      el('span', { class: 'drift-psi-value' }, psiText(psi)),
      el('span', { class: 'sr-only' }, `, ${level.spoken}${over ? ', off the drawn scale' : ''}.`),
      el('span', { class: 'drift-psi-ticks', 'aria-hidden': 'true' },
        tick(0, '0'), tick(psiWatch, '0.1'), tick(psiShifted, '0.25'), tick(psiScale, '0.5+')));
  }

  // outsideShares returns the shares of f's live values outside its
  // reference that the route gives: out of its range (a number column),
  // and unseen (a text column, or a number column of declared values).
  function outsideShares(f) {
    const out = [];
    const range = finite(f.outOfRange);
    const unseen = finite(f.unseen);
    if (range !== null) out.push({ share: range, what: 'outside the declared range' });
    if (unseen !== null) out.push({ share: unseen, what: f.kind === 'text' ? 'none of the declared categories' : 'none of the declared values' });
    return out;
  }

  // declaredView is, for a reference declared rather than measured, the
  // shares of live values outside it, as gauges and in words.
  function declaredView(f) {
    const shares = outsideShares(f);
    if (shares.length === 0) return el('p', { class: 'drift-psi-none' }, 'No figure: the rows measured have no value of this column.');
    return el('div', { class: 'drift-declared-share' }, ...shares.flatMap((o) => {
      const gauge = el('div', { class: 'gauge', 'aria-hidden': 'true' }, el('span', { class: 'gauge-fill drift-gauge' }));
      gauge.firstChild.style.width = `${o.share * 100}%`;
      return [el('p', { 'data-share': o.share }, `${shareText(o.share)} of the live values are ${o.what}.`), gauge];
    }));
  }

  // figuresView writes a column's figures: the Jensen–Shannon distance,
  // the shares out of range (a number) and unseen (text, or a number of
  // declared values), the missing rates and the importance; for a
  // declared reference, which declaredView gives the shares outside of,
  // its categories and the missing rate of the rows measured.
  function figuresView(f, declared) {
    const lines = [];
    const add = (name, ...value) => lines.push(el('dt', {}, name), el('dd', {}, ...value));
    const none = 'none: the rows measured have no value of this column';
    if (!declared) {
      const js = finite(f.js);
      add('JS distance', js === null ? none : `${shortNumber(js)}, where 0 is the same and 0.833 disjoint`);
    }
    const count = (n) => (finite(n) ? ` (${plural(n, 'value', 'values')})` : '');
    const text = f.kind === 'text';
    const range = finite(f.outOfRange);
    const unseen = finite(f.unseen);
    if (!declared && !text) {
      add('Out of range', range === null ? none : `${shareText(range)} of the live values${count(f.live.outOfRange)}, outside the reference's least and greatest`);
    }
    if (!declared && (text || unseen !== null)) {
      add('Unseen', unseen === null ? none : `${shareText(unseen)} of the live values${count(f.live.unseen)}, which the reference never had`);
    }
    // What a declared reference admits: a text column's categories, a
    // categorical number's values.
    const few = (items) => (items.length > 10 ? `${items.slice(0, 10).join(', ')} and ${items.length - 10} more` : items.join(', '));
    const cats = Array.isArray(f.categories) ? f.categories.map((c) => (c === '' ? '(empty)' : String(c))) : [];
    const values = Array.isArray(f.values) ? f.values.filter((v) => finite(v) !== null).map((v) => String(v).replace('-', '−')) : [];
    if (declared && text && cats.length > 0) add('Categories', few(cats));
    if (declared && !text && values.length > 0) add('Values', few(values));
    const m = f.missingRate && typeof f.missingRate === 'object' ? f.missingRate : {};
    const missing = `${shareText(finite(m.live) || 0)} of the rows measured`;
    add('Missing', declared ? missing : `${shareText(finite(m.reference) || 0)} of the reference rows, ${missing}`);
    const importance = finite(f.importance);
    if (importance !== null) add('Importance', `${shortNumber(importance)}, its mean |contribution| on the reference rows`);
    return el('dl', { class: 'facts drift-figures' }, ...lines);
  }

  // histogramView overlays the reference's and the live histogram, as
  // shares of each one's values, one line per bin: the reference a grey
  // band, the live a bar across it, both drawn to the largest share of
  // the two. The shares are written in the table too.
  function histogramView(f, id) {
    const labels = binLabels(f);
    const live = sharesOf(f.live.counts);
    const ref = f.reference.counts.length === live.length ? sharesOf(f.reference.counts) : live.map(() => 0);
    const most = Math.max(...ref, ...live) || 1;
    const rows = labels.map((bin, i) => {
      const refBar = el('span', { class: 'drift-bar-ref' });
      const liveBar = el('span', { class: 'drift-bar-live' });
      refBar.style.width = `${(ref[i] / most) * 100}%`;
      liveBar.style.width = `${(live[i] / most) * 100}%`;
      return el('tr', { class: 'drift-bin', 'data-reference': ref[i], 'data-live': live[i] },
        el('th', { scope: 'row', class: `drift-bin-label${bin.other ? ' drift-bin-other' : ''}` },
          el('span', { 'aria-hidden': 'true' }, bin.label), el('span', { class: 'sr-only' }, bin.spoken)),
        el('td', { class: 'drift-bin-bars' }, el('span', { class: 'drift-track', 'aria-hidden': 'true' }, refBar, liveBar),
          el('span', { class: 'sr-only' }, `from ${shareText(ref[i])} to ${shareText(live[i])}`)),
        el('td', { class: 'num' }, shareText(ref[i])),
        el('td', { class: 'num' }, shareText(live[i])));
    });
    return el('table', { class: 'drift-histo', 'aria-describedby': `${id}-title` },
      el('caption', { class: 'sr-only' }, `${f.name}: the share of its values in each bin, in the reference and in the rows measured`),
      el('thead', {}, el('tr', {},
        el('th', { scope: 'col' }, 'Bin'), el('th', { scope: 'col' }, 'Shares'),
        el('th', { scope: 'col', class: 'num' }, 'Reference'), el('th', { scope: 'col', class: 'num' }, 'Live'))),
      el('tbody', {}, ...rows));
  }

  const svgNS = 'http://www.w3.org/2000/svg';

  // svgEl is el for SVG: attributes as given, text as text nodes only.
  function svgEl(tag, attrs = {}, ...children) {
    const e = document.createElementNS(svgNS, tag);
    for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) e.setAttribute(k, String(v));
    for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    return e;
  }

  // niceTicks returns 0 and round steps (1, 2, 2.5 or 5 times a power of
  // ten), about four of them, up to max or just past it.
  function niceTicks(max) {
    const raw = max / 4;
    const p = 10 ** Math.floor(Math.log10(raw));
    const step = [1, 2, 2.5, 5, 10].map((m) => m * p).find((st) => st >= raw * (1 - 1e-9));
    const n = Math.max(1, Math.ceil(max / step - 1e-9));
    return Array.from({ length: n + 1 }, (_, i) => Number((i * step).toPrecision(12)));
  }

  // importanceView plots the inputs that have both a PSI and an
  // importance, PSI against importance, with the rules of thumb as lines,
  // and gives the same figures as a table; it is hidden when no input
  // has both (a model that does not explain).
  function importanceView(features) {
    const points = features.map((f) => ({ name: f.name, psi: finite(f.psi), importance: finite(f.importance) }))
      .filter((p) => p.psi !== null && p.importance !== null);
    show('drift-importance', points.length > 0);
    if (points.length === 0) return;

    const W = 480, H = 250, left = 60, right = 16, top = 14, bottom = 40;
    const ticks = niceTicks(Math.max(...points.map((p) => p.importance)) || 1);
    const maxImportance = ticks[ticks.length - 1];
    const x = (v) => left + (v / maxImportance) * (W - left - right);
    const y = (v) => H - bottom - (Math.min(v, psiScale) / psiScale) * (H - top - bottom);
    const plot = svgEl('svg', { viewBox: `0 0 ${W} ${H}`, class: 'drift-scatter-svg', 'aria-hidden': 'true', focusable: 'false' });
    plot.append(
      svgEl('line', { class: 'drift-axis', x1: left, y1: H - bottom, x2: W - right, y2: H - bottom }),
      svgEl('line', { class: 'drift-axis', x1: left, y1: top, x2: left, y2: H - bottom }));
    for (const [at, label, cls] of [[0, '0', ''], [psiWatch, '0.1', 'drift-threshold'], [psiShifted, '0.25', 'drift-threshold'], [psiScale, '0.5+', '']]) {
      if (cls) plot.append(svgEl('line', { class: cls, x1: left, y1: y(at), x2: W - right, y2: y(at) }));
      plot.append(svgEl('text', { class: 'drift-tick', x: left - 6, y: y(at) + 4, 'text-anchor': 'end' }, label));
    }
    for (const v of ticks) {
      plot.append(svgEl('text', { class: 'drift-tick', x: x(v), y: H - bottom + 15, 'text-anchor': 'middle' }, shortNumber(v)));
    }
    plot.append(
      svgEl('text', { class: 'drift-axis-label', x: (left + W - right) / 2, y: H - 6, 'text-anchor': 'middle' }, 'importance: mean |contribution|'),
      svgEl('text', { class: 'drift-axis-label', x: 12, y: (top + H - bottom) / 2, 'text-anchor': 'middle', transform: `rotate(-90 12 ${(top + H - bottom) / 2})` }, 'PSI'));
    // Names beside the points that matter, or beside all when few.
    const named = (p) => points.length <= 8 || p.psi >= psiWatch;
    for (const p of points) {
      const cx = x(p.importance), cy = y(p.psi);
      const g = svgEl('g', { class: `drift-point drift-point-${psiLevel(p.psi).kind}`, 'data-feature': p.name },
        svgEl('title', {}, `${p.name}: PSI ${psiText(p.psi)}, importance ${shortNumber(p.importance)}`),
        p.psi > psiScale
          ? svgEl('path', { d: `M${cx - 6} ${cy + 5}L${cx} ${cy - 6}L${cx + 6} ${cy + 5}Z` })
          : svgEl('circle', { cx, cy, r: 5 }));
      if (named(p)) {
        const end = cx > W * 0.7;
        g.append(svgEl('text', { class: 'drift-point-label', x: end ? cx - 8 : cx + 8, y: cy - 6, 'text-anchor': end ? 'end' : 'start' }, p.name));
      }
      plot.append(g);
    }
    $('drift-scatter').replaceChildren(plot);

    const byImportance = [...points].sort((a, b) => b.importance - a.importance);
    $('drift-importance-table').replaceChildren(
      el('caption', { class: 'sr-only' }, 'Each input\'s importance and PSI, the most important first'),
      el('thead', {}, el('tr', {},
        el('th', { scope: 'col' }, 'Input'), el('th', { scope: 'col', class: 'num' }, 'Importance'),
        el('th', { scope: 'col', class: 'num' }, 'PSI'), el('th', { scope: 'col' }, 'Reading'))),
      el('tbody', {}, ...byImportance.map((p) => el('tr', { 'data-feature': p.name },
        el('th', { scope: 'row', class: 'drift-input' }, p.name),
        el('td', { class: 'num' }, shortNumber(p.importance)),
        el('td', { class: 'num' }, psiText(p.psi)),
        el('td', {}, psiLevel(p.psi).text)))));
  }

  $('drift-refresh').addEventListener('click', async () => {
    const ep = currentEndpoint();
    if (!ep) return;
    const button = $('drift-refresh');
    busy(button, true, 'Refreshing…');
    let data;
    try {
      data = await loadDrift(ep);
    } finally {
      busy(button, false);
    }
    if (data) announce(`Drift read again: ${$('drift-rows').textContent}.`);
  });

  // ---------------------------------------------------------------------
  // curl: the request Run Test sends, as a command for a POSIX shell.

  // curlCommand builds the command for the credential chosen under Call
  // as. By default it holds no secret: curl asks for the password, and the
  // idToken and the API token come from shell variables. With include, the
  // secret the page has is written in the command itself.
  function curlCommand(ep, body, include) {
    const lines = [];
    const parts = [`curl -sS -X POST ${shellQuote(ep.url)}`];
    const headers = [`-H ${shellQuote('Content-Type: application/json')}`];
    // A variable goes in double quotes, so the shell puts its value in.
    switch (ep.auth === 'token' ? callKind() : '') {
      case 'bearer':
        if (include && signedIn()) {
          headers.push(`-H ${shellQuote('Authorization: Bearer ' + session.token)}`);
          break;
        }
        lines.push(`# ${ep.group} takes an idToken. Get one first (curl asks for the password):`);
        lines.push(`TOKEN=$(curl -sS -u ${shellQuote(session.login || 'USER')} ${shellQuote(tokenServiceURL.href)} | sed -E 's/.*"idToken":"([^"]+)".*/\\1/')`);
        headers.push('-H "Authorization: Bearer $TOKEN"');
        break;
      case 'basic': {
        const user = $('call-user').value.trim() || 'USER';
        const password = $('call-password').value;
        if (include && password) {
          parts.push(`-u ${shellQuote(user + ':' + password)}`);
          break;
        }
        lines.push('# curl asks for the password.');
        parts.push(`-u ${shellQuote(user)}`);
        break;
      }
      case 'apitoken': {
        const token = $('call-token').value.trim();
        if (include && token) {
          headers.push(`-H ${shellQuote('Authorization: apitoken ' + token)}`);
          break;
        }
        lines.push('# Set SCOREHUB_API_TOKEN to your API token first (in bash: read -rs SCOREHUB_API_TOKEN, then paste it).');
        headers.push('-H "Authorization: apitoken $SCOREHUB_API_TOKEN"');
        break;
      }
    }
    parts.push(...headers, `--data-raw ${shellQuote(body)}`);
    lines.push(parts.join(' \\\n  '));
    return lines.join('\n');
  }

  // includeLabels are what the box that puts the secret in the command
  // says, for each kind of credential.
  const includeLabels = {
    bearer: () => ['Put my current idToken in the command instead of ', el('code', {}, '$TOKEN'), ' (it expires with this session)'],
    basic: () => ['Put the password in the command instead of letting curl ask for it (anyone who sees the command can read it)'],
    apitoken: () => ['Put the API token in the command instead of ', el('code', {}, '$SCOREHUB_API_TOKEN'), ' (anyone who sees the command can use it)'],
  };

  function updateCurl() {
    const ep = currentEndpoint();
    if (!ep || $('curl-panel').hidden) return;
    const kind = ep.auth === 'token' ? callKind() : '';
    const label = $('curl-token-label');
    if (kind && label.dataset.kind !== kind) {
      label.replaceChildren(...includeLabels[kind]());
      label.dataset.kind = kind;
    }
    // Nothing to put in the command, nothing to tick.
    const box = $('curl-token');
    box.disabled = !{
      bearer: () => signedIn(),
      basic: () => $('call-password').value !== '',
      apitoken: () => $('call-token').value.trim() !== '',
    }[kind || 'bearer']();
    $('curl').textContent = curlCommand(ep, $('body').value, box.checked && !box.disabled);
  }

  function toggleCurl() {
    const button = $('show-curl');
    const open = button.getAttribute('aria-expanded') !== 'true';
    button.setAttribute('aria-expanded', String(open));
    button.textContent = open ? 'Hide curl command' : 'Show curl command';
    show('curl-panel', open);
    updateCurl();
  }

  async function copy(text, button, what) {
    let done = false;
    try {
      await navigator.clipboard.writeText(text);
      done = true;
    } catch {
      // No clipboard API (a page not served over HTTPS or from localhost):
      // the older way, through a selection.
      const area = el('textarea', { class: 'sr-only', readonly: true });
      area.value = text;
      document.body.append(area);
      area.select();
      try { done = document.execCommand('copy'); } catch { done = false; }
      area.remove();
    }
    announce(done ? `${what} copied to the clipboard.` : `${what} could not be copied: select it and press Ctrl+C.`);
    if (done) {
      const label = button.textContent;
      button.textContent = 'Copied';
      setTimeout(() => { button.textContent = label; }, 1500);
    }
  }

  // ---------------------------------------------------------------------
  // Wiring.

  $('signin-form').addEventListener('submit', signIn);
  $('sign-out').addEventListener('click', () => endSession('You are signed out.', 'info'));
  // Refresh renews the idToken and reloads the menu; should renewal fail
  // for the network's sake, the menu is reloaded with the token there is.
  $('refresh').addEventListener('click', async () => {
    const button = $('refresh');
    busy(button, true, 'Refreshing…');
    try {
      await renew();
      if (signedIn()) loadMenu();
    } finally {
      busy(button, false);
    }
  });
  $('menu-signin').addEventListener('click', () => {
    $('signin').scrollIntoView({ block: 'nearest' });
    $('username').focus();
  });
  $('run').addEventListener('click', runTest);
  $('show-curl').addEventListener('click', toggleCurl);
  $('curl-token').addEventListener('change', updateCurl);
  for (const k of kindOrder) $(`call-as-${k}`).addEventListener('change', changeCallKind);
  for (const id of ['call-user', 'call-password', 'call-token']) {
    $(id).addEventListener('input', updateCurl);
    $(id).addEventListener('keydown', (e) => {
      if (e.key === 'Enter') {
        e.preventDefault();
        runTest();
      }
    });
  }
  $('reset-body').addEventListener('click', resetBody);
  $('copy-url').addEventListener('click', (e) => copy($('endpoint-url').value, e.currentTarget, 'The endpoint URL'));
  $('copy-curl').addEventListener('click', (e) => {
    updateCurl();
    copy($('curl').textContent, e.currentTarget, 'The curl command');
  });
  $('body').addEventListener('input', () => {
    if (state.current) state.bodies.set(state.current, $('body').value);
    updateCurl();
  });
  $('body').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      runTest();
    }
  });
  window.addEventListener('hashchange', () => {
    const key = hashKey();
    if (!key || key === state.current) return;
    if (state.endpoints.some((ep) => keyOf(ep) === key)) {
      openEndpoint(key, false);
    } else {
      state.current = '';
      showUnseen(key);
    }
  });

  endSession('');
  $('username').focus();
})();
