// Instant filtering of the catalog page (`/`). The same rules as `matches` in pages/catalog.ts,
// which renders the filtered page on the server when the form is submitted without this script.
(() => {
  const form = document.querySelector('[data-catalog-filters]');
  const list = document.getElementById('catalog');
  const count = document.getElementById('catalog-count');
  const empty = document.getElementById('catalog-empty');
  if (!form || !list || !count) return;
  const cards = Array.from(list.querySelectorAll('[data-capability]'));
  const total = cards.length;

  function read() {
    const data = new FormData(form);
    const max = String(data.get('max_price') ?? '').trim();
    return {
      q: String(data.get('q') ?? '')
        .trim()
        .toLowerCase(),
      product: String(data.get('product') ?? ''),
      status: String(data.get('status') ?? ''),
      price: String(data.get('price') ?? ''),
      maxPrice: max !== '' && Number.isFinite(Number(max)) && Number(max) >= 0 ? Number(max) : null,
    };
  }

  function matches(card, f) {
    const d = card.dataset;
    if (f.product && d.product !== f.product) return false;
    if (f.status && d.status !== f.status) return false;
    const price = d.price === '' ? null : Number(d.price);
    if (f.price === 'free' && price !== 0) return false;
    if (f.price === 'paid' && !(price !== null && price > 0)) return false;
    if (f.price === 'variable' && price !== null) return false;
    if (f.maxPrice !== null && (price === null || price > f.maxPrice)) return false;
    if (f.q) {
      const text = d.search ?? '';
      if (!f.q.split(/\s+/).every((w) => text.includes(w))) return false;
    }
    return true;
  }

  function apply() {
    const f = read();
    let shown = 0;
    for (const card of cards) {
      const ok = matches(card, f);
      card.hidden = !ok;
      if (ok) shown++;
    }
    count.textContent = `Showing ${shown} of ${total} capabilities.`;
    count.dataset.shown = String(shown);
    if (empty) empty.hidden = shown > 0;
    const params = new URLSearchParams();
    for (const [k, v] of new FormData(form)) if (String(v).trim() !== '') params.set(k, String(v).trim());
    const qs = params.toString();
    history.replaceState(null, '', qs ? `/?${qs}` : '/');
  }

  form.addEventListener('input', apply);
  form.addEventListener('change', apply);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    apply();
  });
})();
