// /providers/onboard in the browser: connect an EIP-1193 wallet, check the form, get the
// challenge (POST /api/v1/providers/challenge), sign it with EIP-191 (personal_sign) and register
// (POST /api/v1/providers). Field rules come from the server-rendered attributes (required,
// pattern, min/max, from the zod schemas); JSON fields are parsed here; the server's RFC 9457
// problems are shown next to the fields they name.

(() => {
  const { ApiError, api, connect, personalSign, problemLines, say } = window.AcgAccount;
  const form = document.getElementById('onboard-form');
  const offers = document.getElementById('offers');
  const template = document.getElementById('offer-template');
  const summary = document.getElementById('error-summary');
  const status = document.getElementById('action-status');
  const result = document.getElementById('result');
  const MAX_OFFERS = Number(form?.dataset.maxOffers ?? 20);
  let address = null;

  const $ = (id) => document.getElementById(id);

  function offerFieldsets() {
    return [...offers.querySelectorAll('fieldset.offer')];
  }

  function addOffer() {
    const i = offerFieldsets().length;
    if (i >= MAX_OFFERS) return;
    const html = template.innerHTML.replaceAll('__i__', String(i)).replaceAll('__n__', String(i + 1));
    const tpl = document.createElement('template');
    tpl.innerHTML = html;
    offers.append(tpl.content);
    $(`offer-${i}-name`)?.focus();
    $('add-offer').disabled = i + 1 >= MAX_OFFERS;
  }

  // ---- errors: an error summary (links to the fields) and a message under each field ----

  function clearErrors() {
    for (const el of form.querySelectorAll('[aria-invalid="true"]')) el.removeAttribute('aria-invalid');
    for (const el of form.querySelectorAll('.field-error')) {
      el.textContent = '';
      el.hidden = true;
    }
    summary.hidden = true;
    summary.querySelector('ul').replaceChildren();
  }

  /** Shows errors `[{id?, message}]`: under their fields and in the summary, which takes focus. */
  function showErrors(errors) {
    const list = summary.querySelector('ul');
    for (const { id, message } of errors) {
      const li = document.createElement('li');
      const field = id ? $(id) : null;
      if (field) {
        field.setAttribute('aria-invalid', 'true');
        const slot = $(`${id}-error`);
        if (slot) {
          slot.textContent = slot.textContent ? `${slot.textContent} ${message}` : message;
          slot.hidden = false;
        }
        const a = document.createElement('a');
        a.href = `#${id}`;
        a.textContent = `${labelOf(field)}: ${message}`;
        li.append(a);
      } else {
        li.textContent = message;
      }
      list.append(li);
    }
    summary.hidden = false;
    summary.focus();
  }

  function labelOf(field) {
    const label = form.querySelector(`label[for="${field.id}"]`);
    return label ? label.textContent.replace(/\s+/g, ' ').trim() : field.name;
  }

  /** The browser's constraint check of one field (required, pattern, min, max, type=url), as a sentence. */
  function constraintMessage(el) {
    if (el.validity.valid) return null;
    if (el.validity.valueMissing) return 'is required.';
    if (el.validity.patternMismatch) return el.dataset.patternHint ?? 'has the wrong format.';
    if (el.validity.typeMismatch) return 'must be a full URL, e.g. https://provider.example/acg.';
    if (el.validity.rangeUnderflow) return `must be at least ${el.min}.`;
    if (el.validity.rangeOverflow) return `must be at most ${el.max}.`;
    if (el.validity.stepMismatch) return 'must be a whole number.';
    if (el.validity.tooLong) return `must be at most ${el.maxLength} characters.`;
    if (el.validity.tooShort) return `must be at least ${el.minLength} characters.`;
    return el.validationMessage;
  }

  function parseJson(id, errors, { object = false } = {}) {
    const el = $(id);
    const text = el.value.trim();
    if (!text) {
      errors.push({ id, message: 'is required.' });
      return undefined;
    }
    try {
      const value = JSON.parse(text);
      if (object && (value === null || typeof value !== 'object' || Array.isArray(value))) {
        errors.push({ id, message: 'must be a JSON object (a JSON Schema).' });
        return undefined;
      }
      return value;
    } catch (e) {
      errors.push({ id, message: `is not valid JSON (${String(e.message).slice(0, 120)}).` });
      return undefined;
    }
  }

  /** Reads and checks the form; returns `{body, errors}`. */
  function readForm() {
    const errors = [];
    for (const el of form.querySelectorAll('input, textarea, select')) {
      const m = constraintMessage(el);
      if (m) errors.push({ id: el.id, message: m });
    }
    const endpoint = $('endpoint').value.trim();
    if (endpoint && !/^https?:\/\//i.test(endpoint))
      errors.push({ id: 'endpoint', message: 'must start with https:// (http only to a loopback host in development).' });
    const seen = new Map();
    const capabilities = offerFieldsets().map((_fs, i) => {
      const f = (name) => `offer-${i}-${name}`;
      const input_schema = parseJson(f('input_schema'), errors, { object: true });
      const output_schema = parseJson(f('output_schema'), errors, { object: true });
      const example_request = parseJson(f('example_request'), errors);
      if (output_schema && output_schema.type !== 'object')
        errors.push({ id: f('output_schema'), message: 'must describe an object ("type": "object"): a result is a JSON object.' });
      if (input_schema && example_request && typeof example_request === 'object' && Array.isArray(input_schema.required)) {
        const missing = input_schema.required.filter((k) => !(k in example_request));
        if (missing.length) errors.push({ id: f('example_request'), message: `lacks ${missing.join(', ')}, required by the input schema.` });
      }
      const price = $(f('price_usdc')).value.trim();
      if (price && !/[1-9]/.test(price)) errors.push({ id: f('price_usdc'), message: 'must be greater than 0.' });
      const product = $(f('product')).value;
      const name = $(f('name')).value.trim();
      const id = `${product}.${name}`;
      if (name && seen.has(id)) errors.push({ id: f('name'), message: `repeats ${id} (capability ${seen.get(id) + 1}).` });
      seen.set(id, i);
      return {
        name,
        product,
        description: $(f('description')).value.trim(),
        price_usdc: price,
        input_schema,
        output_schema,
        example_request,
        timeout_ms: Number($(f('timeout_ms')).value),
        accepts_objective: $(f('accepts_objective')).checked,
      };
    });
    return { body: { name: $('name').value.trim(), endpoint, capabilities }, errors };
  }

  /** The server's problem as field errors: zod paths (`capabilities.0.price_usdc`), `capabilities[i]` in the detail, `reason`. */
  function serverErrors(error) {
    if (!(error instanceof ApiError)) return [{ message: String(error.message ?? error) }];
    const p = error.problem;
    const out = [];
    const fieldId = (path) => {
      if (path[0] === 'capabilities' && typeof path[1] === 'number' && typeof path[2] === 'string') return `offer-${path[1]}-${path[2]}`;
      if (path.length === 1 && (path[0] === 'name' || path[0] === 'endpoint')) return path[0];
      return undefined;
    };
    const inDetail = /capabilities\[(\d+)\]/.exec(p.detail ?? '');
    for (const e of Array.isArray(p.errors) ? p.errors : []) {
      let id = Array.isArray(e.path) ? fieldId(e.path) : undefined;
      if (!id && e.field && inDetail) id = `offer-${inDetail[1]}-${e.field}`;
      const where = !id && Array.isArray(e.path) && e.path.length ? `${e.path.join('.')}: ` : '';
      out.push({ id, message: `${where}${e.message}` });
    }
    if (out.length === 0) {
      let id;
      if (p.reason === 'endpoint_refused' || p.reason === 'endpoint_unreachable') id = 'endpoint';
      else if (inDetail && p.reason === 'invalid_example') id = `offer-${inDetail[1]}-example_request`;
      else if (inDetail && p.reason === 'invalid_schema')
        id = /output_schema/.test(p.detail) ? `offer-${inDetail[1]}-output_schema` : `offer-${inDetail[1]}-input_schema`;
      else if (p.reason === 'capability_exists' && Array.isArray(p.capability_ids)) {
        const i = offerFieldsets().findIndex((_, k) => p.capability_ids.includes(`${$(`offer-${k}-product`).value}.${$(`offer-${k}-name`).value.trim()}`));
        if (i >= 0) id = `offer-${i}-name`;
      }
      out.push({ id, message: problemLines(error).join(' ') });
    }
    if (p.reason === 'provider_exists' && p.provider_id) {
      out.push({ message: `This address already has a provider: see its dashboard at /providers/${p.provider_id}.` });
    }
    return out;
  }

  function showResult(registered) {
    $('result-id').textContent = registered.provider_id;
    const link = $('result-dashboard');
    link.href = `/providers/${encodeURIComponent(registered.provider_id)}`;
    $('result-secret').value = registered.signing_secret;
    $('result-capabilities').replaceChildren(
      ...registered.capabilities.map((c) => {
        const li = document.createElement('li');
        const a = document.createElement('a');
        a.href = `/capabilities/${encodeURIComponent(c.id)}`;
        a.textContent = c.id;
        li.append(a, ` — ${c.status}`);
        return li;
      }),
    );
    result.hidden = false;
    form.hidden = true;
    $('result-heading').focus();
  }

  async function onConnect() {
    try {
      address = await connect();
      $('wallet-address').textContent = address;
      $('connect').textContent = 'Wallet connected';
      say(status, `Connected ${address}. This address receives your payouts (USDC on Base).`, 'ok');
    } catch (e) {
      say(status, problemLines(e), 'error');
    }
  }

  async function onSubmit(event) {
    event.preventDefault();
    clearErrors();
    const { body, errors } = readForm();
    if (errors.length) {
      showErrors(errors);
      return;
    }
    const submit = $('register');
    submit.disabled = true;
    try {
      if (!address) await onConnect();
      if (!address) return;
      say(status, 'Getting a challenge from the gateway…');
      // the challenge names the action and the SHA-256 of exactly this body: the signature authorizes nothing else
      const challenge = await api('POST', '/api/v1/providers/challenge', { body: { address, action: 'register', ...body } });
      say(status, 'Sign the challenge in your wallet (EIP-191, it costs nothing)…');
      const signature = await personalSign(address, challenge.message);
      say(status, 'Registering: the gateway checks the schemas and calls GET on your endpoint…');
      const registered = await api('POST', '/api/v1/providers', { body: { address, message: challenge.message, signature, ...body } });
      say(status, `Registered as ${registered.provider_id}.`, 'ok');
      showResult(registered);
    } catch (e) {
      say(status, 'The registration was refused; see the errors above the button.', 'error');
      showErrors(serverErrors(e));
    } finally {
      submit.disabled = false;
    }
  }

  if (form) {
    $('connect').addEventListener('click', () => void onConnect());
    $('add-offer').addEventListener('click', addOffer);
    form.addEventListener('submit', (e) => void onSubmit(e));
    $('copy-secret')?.addEventListener('click', async () => {
      const secret = $('result-secret');
      secret.select();
      try {
        await navigator.clipboard.writeText(secret.value);
        say(status, 'The signing secret is copied.', 'ok');
      } catch {
        say(status, 'Copy the selected secret with your keyboard (Ctrl+C or ⌘C).');
      }
    });
  }
})();
