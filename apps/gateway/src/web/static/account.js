// Browser side of the signed-in pages (/providers/{id}, /subscriptions/{id}) and of onboarding:
// an EIP-1193 wallet (window.ethereum), Sign-In with Ethereum against /v1/auth/nonce and
// /v1/auth/token, the JSON API with the bearer token, and RFC 9457 problems as readable text.
//
// The bearer token lives in this tab's sessionStorage (gone when the tab closes; never in a
// cookie, so no request carries it unless this code adds it: no CSRF). The pages load no
// third-party script and the gateway sends a Content-Security-Policy without inline scripts.

(() => {
  const SESSION_KEY = 'acg.session';

  /** An answer of the JSON API that was not 2xx: `status` and the RFC 9457 `problem` body. */
  class ApiError extends Error {
    constructor(status, problem) {
      super(problem?.detail || problem?.title || `HTTP ${status}`);
      this.name = 'ApiError';
      this.status = status;
      this.problem = problem ?? {};
    }
  }

  /** The injected EIP-1193 provider, or an Error saying how to get one. */
  function wallet() {
    const eth = window.ethereum;
    if (!eth || typeof eth.request !== 'function') {
      throw new Error('No browser wallet found. Install or unlock an EIP-1193 wallet (for example MetaMask), then reload this page.');
    }
    return eth;
  }

  /** Asks the wallet for an account (`eth_requestAccounts`); returns its address. */
  async function connect() {
    const accounts = await wallet().request({ method: 'eth_requestAccounts' });
    if (!Array.isArray(accounts) || accounts.length === 0) throw new Error('The wallet shared no account.');
    return accounts[0];
  }

  /** `0x` + hex of the UTF-8 bytes of `text`: how `personal_sign` takes a message. */
  function utf8Hex(text) {
    let hex = '0x';
    for (const b of new TextEncoder().encode(text)) hex += b.toString(16).padStart(2, '0');
    return hex;
  }

  /** EIP-191 signature of `message` by `address` (`personal_sign`). */
  function personalSign(address, message) {
    return wallet().request({ method: 'personal_sign', params: [utf8Hex(message), address] });
  }

  /** Calls the gateway's JSON API; resolves the parsed body, rejects with {@link ApiError}. */
  async function api(method, path, { body, token } = {}) {
    const headers = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (token) headers.authorization = `Bearer ${token}`;
    const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store' });
    const text = await res.text();
    let json;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    if (!res.ok) throw new ApiError(res.status, json ?? { status: res.status, title: res.statusText, detail: text.slice(0, 300) });
    return json;
  }

  /** A problem as lines of text: the detail, then each listed error as `path: message`. */
  function problemLines(error) {
    if (!(error instanceof ApiError)) return [String(error?.message ?? error)];
    const p = error.problem;
    const lines = [`${p.title ?? 'Error'} (HTTP ${error.status}): ${p.detail ?? ''}`.trim()];
    for (const e of Array.isArray(p.errors) ? p.errors : []) {
      const path = Array.isArray(e.path) && e.path.length > 0 ? `${e.path.join('.')}: ` : e.field ? `${e.field}: ` : '';
      lines.push(`${path}${e.message ?? ''}`);
    }
    return lines;
  }

  /** The signed-in session of this tab, if still valid (and for `address`, when given). */
  function currentSession(address) {
    let s;
    try {
      s = JSON.parse(sessionStorage.getItem(SESSION_KEY) ?? 'null');
    } catch {
      s = null;
    }
    if (!s || typeof s.access_token !== 'string' || !(s.expires_at > Date.now() + 30_000)) return null;
    if (address && s.address.toLowerCase() !== address.toLowerCase()) return null;
    return s;
  }

  /**
   * Sign-In with Ethereum (EIP-4361) with the injected wallet: `POST /v1/auth/nonce`, the wallet
   * signs the message (`personal_sign`), `POST /v1/auth/token` → a bearer token kept in this tab's
   * sessionStorage. Reuses a valid session of the same account.
   */
  async function signIn() {
    const address = await connect();
    const existing = currentSession(address);
    if (existing) return existing;
    const { message } = await api('POST', '/v1/auth/nonce', { body: { address } });
    const signature = await personalSign(address, message);
    const token = await api('POST', '/v1/auth/token', { body: { message, signature } });
    const session = { address, access_token: token.access_token, expires_at: Date.now() + token.expires_in * 1000 };
    sessionStorage.setItem(SESSION_KEY, JSON.stringify(session));
    return session;
  }

  /**
   * The one-click dev sign-in `npm start` prints on a dev start (dev chain only): the page's URL
   * fragment `#dev-session=<token>.<address>.<expires_at ms>` becomes this tab's session, then the
   * fragment is removed from the address bar and history. Honoured on a loopback host only
   * (127.0.0.1, localhost, [::1]), where a dev gateway runs; a fragment never reaches the server.
   */
  function adoptDevSession() {
    const m = /^#dev-session=([A-Za-z0-9_-]+)\.(0x[0-9a-fA-F]{40})\.(\d+)$/.exec(location.hash);
    if (!m || !['127.0.0.1', 'localhost', '[::1]'].includes(location.hostname)) return;
    sessionStorage.setItem(SESSION_KEY, JSON.stringify({ address: m[2], access_token: m[1], expires_at: Number(m[3]) }));
    history.replaceState(null, '', location.pathname + location.search);
  }

  /** Forgets this tab's session and revokes its token. */
  async function signOut() {
    const s = currentSession();
    sessionStorage.removeItem(SESSION_KEY);
    if (s) await api('POST', '/v1/auth/revoke', { token: s.access_token, body: {} }).catch(() => undefined);
  }

  /** Writes `lines` into a status element (`role=status` or `role=alert`), one paragraph each. */
  function say(el, lines, kind = 'info') {
    if (!el) return;
    el.replaceChildren(
      ...(Array.isArray(lines) ? lines : [lines]).map((line) => {
        const p = document.createElement('p');
        p.textContent = line;
        return p;
      }),
    );
    el.dataset.kind = kind;
    el.hidden = false;
  }

  // ---- signed-in views: the server renders them; this code fetches them with the bearer token ----

  /**
   * Fetches this page again with the bearer token and puts the server's signed-in rendering of
   * `#account-view` in place. Returns the new view element. A 401 (expired or revoked token) forgets
   * the session and shows the signed-out view the server sent.
   */
  async function loadView(session) {
    const res = await fetch(location.pathname, { headers: { accept: 'text/html', authorization: `Bearer ${session.access_token}` }, cache: 'no-store' });
    if (res.status === 401) sessionStorage.removeItem(SESSION_KEY);
    const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
    const fresh = doc.getElementById('account-view');
    const view = document.getElementById('account-view');
    if (fresh && view) {
      view.replaceWith(document.importNode(fresh, true));
      const title = doc.querySelector('title');
      if (title) document.title = title.textContent;
    }
    return document.getElementById('account-view');
  }

  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

  /**
   * After an action, reloads the view every 1.5 s while it says work is pending
   * (`data-pending` > 0 on `#account-view`), for at most a minute.
   */
  async function settle(session) {
    const deadline = Date.now() + 60_000;
    let view = await loadView(session);
    while (view && Number(view.dataset.pending ?? 0) > 0 && Date.now() < deadline) {
      await sleep(1500);
      view = await loadView(session);
    }
  }

  /** A form with `data-api`: its JSON body is `data-body` merged with its named fields. */
  function formBody(form) {
    const body = form.dataset.body ? JSON.parse(form.dataset.body) : {};
    for (const el of form.elements) {
      if (!el.name || el.disabled) continue;
      body[el.name] = el.value;
    }
    return body;
  }

  /** Submits an action form to the JSON API, says what happened, and reloads the view. */
  async function runAction(form, session) {
    const status = document.getElementById('action-status');
    const button = form.querySelector('button[type=submit], button:not([type])');
    if (button) button.disabled = true;
    try {
      await api(form.dataset.method ?? 'POST', form.dataset.api, { body: formBody(form), token: session.access_token });
      say(status, form.dataset.done ?? 'Done.', 'ok');
      await settle(session);
    } catch (e) {
      say(status, problemLines(e), 'error');
      if (button) button.disabled = false;
    }
  }

  /**
   * Wires a signed-in page: the sign-in and sign-out buttons, action forms (`form[data-api]`), the
   * refresh button; shows the signed-in view at once when this tab already has a session.
   */
  function startAccountPage() {
    const status = () => document.getElementById('action-status');
    document.addEventListener('click', async (event) => {
      const target = event.target instanceof Element ? event.target.closest('button') : null;
      if (!target) return;
      if (target.id === 'sign-in') {
        target.disabled = true;
        say(status(), 'Waiting for your wallet: approve the connection, then sign the sign-in message.');
        try {
          const session = await signIn();
          say(status(), `Signed in as ${session.address}.`, 'ok');
          await loadView(session);
        } catch (e) {
          say(status(), problemLines(e), 'error');
          target.disabled = false;
        }
      } else if (target.id === 'sign-out') {
        await signOut();
        location.reload();
      } else if (target.id === 'refresh') {
        const session = currentSession();
        if (session) await loadView(session);
      }
    });
    document.addEventListener('submit', (event) => {
      const form = event.target;
      if (!(form instanceof HTMLFormElement) || !form.dataset.api) return;
      event.preventDefault();
      const session = currentSession();
      if (!session) {
        say(status(), 'Your session has ended: sign in again.', 'error');
        return;
      }
      void runAction(form, session);
    });
    adoptDevSession();
    const session = currentSession();
    if (session) void loadView(session);
  }

  window.AcgAccount = { ApiError, api, connect, currentSession, personalSign, problemLines, say, signIn, signOut, utf8Hex, wallet };
  if (document.getElementById('account-view')) startAccountPage();
})();
